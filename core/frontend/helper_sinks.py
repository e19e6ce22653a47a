"""A helper's writes to a global of the notebook that it only writes to: `losses.append(loss)`
in a `train_step` the cell calls, `stats['last'] = v`, `log.n = i`. The cell makes them its
own writes (an `effects.Sink` in the cell's log), made again with each run's values after the
run, as the cell's own writes to such an object are.

A global is such a sink when the helper's code only writes to it, by the statements a cell
may use (`sinks.effect_sinks`: at the helper's top level or in its `for` loops), and the helper
is the notebook's (its globals are the namespace the cell runs in, where the writes are made
again by name). The trace then guards the global's identity, and refuses, at the helper's
line, a sink whose object the traced code read before (an input of the cell, a read of
another helper): plain Python would have read it before the write, the compiled cell after
the run, and code that reads it after the write is refused by `effects.written_by_the_cell`.
"""
from __future__ import annotations

import ast

from ..tracing import UnsupportedError, caller_source
from .sinks import effect_sinks
from .effects import CELL_EFFECTS, HINT, Sink, mark_written, sink_fits
from .sources import Source


def helper_sink_names(fn: ast.FunctionDef, code) -> dict[str, str]:
    """The globals fn only writes to, as a cell only writes to a sink: name -> kind."""
    names = tuple(sorted(set(code.co_names) - set(code.co_varnames) - set(code.co_cellvars)
                         - set(code.co_freevars)))
    if not names:
        return {}
    body = ast.unparse(ast.Module(body=fn.body, type_ignores=[]))
    return effect_sinks(body, names)


def helper_sink(recorder, info, name: str, value, source: Source) -> Sink | None:
    """The sink standing for the global `name`, one of the sinks of the helper `info`, while
    the cell is traced (None: read it as any other global)."""
    cell, kind = CELL_EFFECTS.get(), info.sinks[name]
    if cell is None or info.globals is not cell.namespace or not sink_fits(kind, value):
        return None
    sink = cell.helper_sinks.get(name)
    if sink is None:
        if cell.reaches(value) or recorder.has_read(value):
            raise UnsupportedError(
                f"{name} is written by {info.label} and read by the traced code too (an "
                "input of the cell, or read before): compiled code makes the writes after "
                "the run", caller_source(), HINT)
        recorder.guard(source, "identity", value)
        sink = cell.helper_sinks[name] = Sink(name, kind, value)
        object.__setattr__(sink, "_log", cell.log)
        mark_written(value)
    return sink
