"""A write at a place the loop does not move, made once after the loop instead of on every pass.

An inner loop of a scalar loop nest updates one element again and again
(`for k in range(i + 1, j): table[i, j] = max(table[i, j], table[i, k] + table[k + 1, j])`).
Forwarding (forwarding.py) already carries the element from pass to pass; the array is still
written on every pass and read beside the write (`table[i, k]`, `table[k + 1, j]`), and XLA,
which orders the kernels of a pass freely, copies the whole array twice a pass to keep those
reads right (nussinov's 60 x 60 table: 34,220 passes, 1 GB copied a call).

When the write's place does not depend on the pass (its start indices are computed from
values the loop does not change), the array is the same at the start of every pass but for
that one slice, whose value is the carried one. So the body leaves the array as it is, reads
of it take the carried value where they read the slice written, and the slice is written
once after the loop with the carried value (after no pass, it is the value read before the
loop: writing it back changes nothing). A read of the array is:
- provably apart from the slice (`forwarding.IndexFacts.apart`): read as it is;
- a single element, and the slice a single element: the carried value where the indices
  are equal (as XLA clamps them), else the read (`forwarding.guarded`);
- anything else: the write is left in the loop.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

from ..ir import Eqn, Graph, Literal, Var
from ..passes import dead_code_elimination
from ..primitives import dynamic_update_slice_p
from ..tracing import bind, current_trace, to_atom
from .forwarding import READ, Forwarded, IndexFacts, LoopBounds, guarded, one_element

MAX_INDEX_EQUATIONS = 16      # replayed after the loop: a short scalar computation


@dataclass(frozen=True)
class Sunk:
    """A write taken out of the loop: the array's carried position, the carried position of
    the value it writes, and the equations that compute its start indices, in order."""
    array: int
    value: int
    write: Eqn
    index_eqns: tuple[Eqn, ...]


def sink_writes(body: Graph, n_lead: int, bounds: LoopBounds | None,
                forwarded: Sequence[Forwarded], n_carried: int) -> tuple[Graph, list[Sunk]]:
    """The body with the writes it may leave to after the loop removed (see the module's
    docstring), and those writes. `forwarded`: the reads carried instead (forward_reads),
    whose values are carried after the loop's own `n_carried` values."""
    sunk = []
    for k, f in enumerate(forwarded):
        if bounds is None:
            break
        found = _sinkable(body, n_lead, bounds, f.write, n_carried + k)
        if found is not None:
            body, done = found
            sunk.append(done)
    return body, sunk


def _sinkable(body: Graph, n_lead: int, bounds: LoopBounds, write: Eqn, value: int):
    array = write.inputs[0]
    carried = body.in_vars[n_lead:]
    position = next((k for k, v in enumerate(carried) if v is array), None)
    if position is None or not _only_next_value(body, write, position):
        return None
    index_eqns = _invariant_eqns(body, n_lead, write.inputs[2:])
    if index_eqns is None:
        return None
    guard = _Guard(write, carried[value], IndexFacts(body, n_lead, bounds))
    eqns: list[Eqn] = []
    for eqn in body.eqns:
        if eqn is write:
            continue
        taken = guard.read(eqn) if any(a is array for a in eqn.inputs) else [eqn]
        if taken is None:
            return None
        eqns += taken
    outs = list(body.out_atoms)
    outs[position] = array
    graph = dead_code_elimination(Graph(body.in_vars, tuple(eqns), tuple(outs)))
    return graph, Sunk(position, value, write, index_eqns)


def _only_next_value(body: Graph, write: Eqn, position: int) -> bool:
    """Whether the write's result is the array's next value and nothing else, and the array
    is not itself a result."""
    result, array = write.outs[0], write.inputs[0]
    return body.out_atoms[position] is result and \
        not any(a is result for e in body.eqns for a in e.inputs) and \
        sum(a is result or a is array for a in body.out_atoms) == 1


class _Guard:
    """How a read of the array stays right once the array is no longer written in the loop."""

    def __init__(self, write: Eqn, value: Var, facts: IndexFacts):
        self.write = write
        self.array = write.inputs[0]
        self.value = value
        self.facts = facts

    def read(self, eqn: Eqn) -> list[Eqn] | None:
        """The read as it is (apart from the slice), the read and its guard (a single
        element), or None."""
        if eqn.prim.name != READ or any(a is self.array for a in eqn.inputs[1:]):
            return None
        sizes = tuple(eqn.params["slice_sizes"])
        update = self.write.inputs[1]
        if self.facts.apart(eqn.inputs[1:], sizes, self.write.inputs[2:], update.aval.shape,
                            self.array.aval.shape):
            return [eqn]
        if not one_element(sizes, update, eqn):
            return None
        read = Eqn(eqn.prim, eqn.inputs, eqn.params, (Var(eqn.outs[0].aval),), eqn.source)
        return [read, *guarded(eqn, self.write, self.value, read.outs[0], self.facts)]


def _invariant_eqns(body: Graph, n_lead: int, atoms) -> tuple[Eqn, ...] | None:
    """The equations computing `atoms` from values the loop does not change (the body's
    leading inputs) and literals, in order; None if some atom depends on anything else."""
    producers = {id(v): e for e in body.eqns for v in e.outs}
    lead = {id(v) for v in body.in_vars[:n_lead]}
    needed: list[Eqn] = []

    def visit(atom) -> bool:
        if isinstance(atom, Literal) or id(atom) in lead:
            return True
        eqn = producers.get(id(atom))
        if eqn is None or eqn.prim.multiple_results or len(needed) > MAX_INDEX_EQUATIONS:
            return False
        if any(e is eqn for e in needed):
            return True
        if not all(visit(a) for a in eqn.inputs):
            return False
        needed.append(eqn)
        return True

    return tuple(needed) if all(visit(a) for a in atoms) else None


def write_after(sunk: Sequence[Sunk], outs: list, lead_vars: Sequence[Var],
                lead_values: Sequence[Any]) -> list:
    """The loop's results with each sunk write made on them: the array's final value is its
    value before the loop with the carried value written at the write's place."""
    outs = list(outs)
    trace = current_trace()
    for s in sunk:
        env = {id(v): to_atom(x) for v, x in zip(lead_vars, lead_values, strict=True)}
        for eqn in s.index_eqns:
            inputs = [a if isinstance(a, Literal) else env[id(a)] for a in eqn.inputs]
            (out,) = trace.bind(eqn.prim, *inputs, **eqn.params)
            env[id(eqn.outs[0])] = out
        starts = [a if isinstance(a, Literal) else env[id(a)] for a in s.write.inputs[2:]]
        outs[s.array] = bind(dynamic_update_slice_p, outs[s.array], outs[s.value], *starts)
    return outs

