"""Numbers read from outside that the code needs as Python values. A float the traced code
reads from a global, an attribute or an item is first an input of the program, so that a new
value needs no new trace. When the code needs a value computed from such numbers alone as a
Python value (`sorted(..., key=lambda i: weights[i])`, `range(int(cfg.steps))`, a label
`f"lr={cfg.lr}"`), the trace stops with a `ConcretizationError`; `numbers_behind` names those
numbers, and the trace is made again reading them as values guarded by value
(`reads.Recorder(static_sources=...)`): a change of one of them is then a cache miss that
names it. A value that also depends on the call's own arguments is not made static. (The
same for the bounds of a slice of traced length that the code uses where only a static length
will do: `tracing.TraceError.needed`.)"""
from __future__ import annotations

from ..ir import Var
from .sources import ImplicitInput

# How many numbers one trace may make static before the code's need is refused as before.
LIMIT = 64


def numbers_behind(trace, recorder, needed) -> frozenset:
    """The source keys of the numbers read from outside (0-d implicit inputs) that `needed`, a
    variable of `trace` (the outermost) or a tuple of them, was computed from alone; empty when
    it depends on anything else (an argument, a loop's carry) or is not the trace's."""
    if needed is None:
        return frozenset()
    implicit = (item for item in recorder.items if isinstance(item, ImplicitInput))
    numbers = {tracer.ir_var: item.source.key
               for item, tracer in zip(implicit, recorder.input_tracers, strict=True)
               if tracer.aval.shape == () and tracer.kind in ("python", "scalar")}
    producers = {out: eqn for eqn in trace.eqns for out in eqn.outs}
    found, seen = set(), set()
    todo = list(needed) if isinstance(needed, tuple) else [needed]
    while todo:
        atom = todo.pop()
        if not isinstance(atom, Var) or atom in seen:
            continue                                    # (a literal)
        seen.add(atom)
        if atom in numbers:
            found.add(numbers[atom])
        elif atom in producers:
            todo.extend(producers[atom].inputs)
        elif trace.known_value(atom) is None:
            return frozenset()
    return frozenset(found)
