"""Writes to the user's objects inside a rolled loop: `losses.append(loss)` in a training loop
of `for step in range(n)`, where `losses` is a list the cell only writes to
(`frontend.effects.Sink`).

Each pass of the loop body collects its writes (`collect_writes`, below). The loop carries
every traced value they hold in an array of one row per pass, which the body fills at the
pass's position; after the loop the writes are one entry of the cell's effects (`ROWS`: the
number of passes, the entries with their stacked values, and the kind of value each pass
wrote), made again after each run, pass by pass (`frontend.effects.replay_effects`). This needs the
number of passes before the run: a loop whose bounds or exit the data decides is refused.
"""
from __future__ import annotations

import weakref
from dataclasses import dataclass, field

import numpy as np

from .. import tree_util
from ..ir import ShapedArray
from ..numpy.base import reshape
from ..numpy.ufuncs import call_ufunc
from ..primitives import dynamic_update_slice_p
from ..tracing import Tracer, bind, current_trace
from .carry import INDEX_AVAL, CannotConvert, Slot, coerce, zeros_like_slot
from .subtrace import SubTrace

# A rolled loop's pass collects the writes to sinks (frontend/effects.py) made in it
# (`collect_writes`), which the loop carries out stacked, one row per pass, and hands on as one
# entry (`ROWS`): `StackedWrites`.
LOOP_WRITES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
ROWS = "__rows__"


def collect_writes(trace) -> list:
    """The (log, entry) writes to sinks made while `trace` (a rolled loop's pass) is current."""
    found = LOOP_WRITES[trace] = []
    return found


def record_write(log, entry: tuple) -> None:
    """A write to a sink (or a loop's rows of them), in the current trace: the cell's log at
    its top level, else the pass of the rolled loop it is in."""
    trace = current_trace()
    if trace is log.trace:
        log.entries.append(entry)
    else:
        LOOP_WRITES[trace].append((log, entry))


@dataclass
class StackedWrites:
    """The rows a rolled loop carries for the writes its passes make (none: an empty one)."""
    passes: int = 0
    log: object = None
    entries: list = field(default_factory=list)     # (structure, leaves, kinds) per write
    inputs: list = field(default_factory=list)      # the body's input per stacked leaf
    exits: list = field(default_factory=list)       # ... and its value after the pass

    @property
    def slots(self) -> list[Slot]:
        return [Slot(t.aval, "array") for t in self.inputs]

    def inits(self) -> list[Tracer]:
        return [zeros_like_slot(slot) for slot in self.slots]

    def finish(self, rows: list) -> None:
        """After the loop: its writes, as one entry of the cell's effects (rows: the stacked
        arrays, in the order of `inputs`)."""
        if not self.entries:
            return
        rows = iter(rows)
        entries, kinds = [], []
        for structure, leaves, leaf_kinds in self.entries:
            stacked = [next(rows) if kind is not None else leaf
                       for leaf, kind in zip(leaves, leaf_kinds, strict=True)]
            entries.append(tree_util.unflatten(structure, stacked))
            kinds.append(tuple(leaf_kinds))
        record_write(self.log, (ROWS, self.passes, tuple(entries), tuple(kinds)))


def stack_writes(sub: SubTrace, writes: list, index: Tracer | None, bounds, trip_count: dict
                 ) -> StackedWrites:
    """The rows for the writes a loop's pass made (`writes`: (log, entry) pairs), filled at
    the pass's position, (index - start) // step."""
    if not writes:
        return StackedWrites()
    name = writes[0][1][0] if writes[0][1][0] != ROWS else "an object"
    passes = trip_count.get("trip_count")
    if passes is None or index is None:
        raise CannotConvert(
            f"`{name}` is written in a loop whose number of passes the data decides: compiled "
            "code cannot replay such writes", "collect the values in an array the loop fills, "
            "and write them after the loop")
    stacked = StackedWrites(passes, writes[0][0])
    start, _, step = bounds
    with sub.active():
        position = call_ufunc(np.subtract, index, start)
        if step != 1:
            position = call_ufunc(np.floor_divide, position, step)
        position = coerce(position, Slot(INDEX_AVAL, "python"))
        for _, entry in writes:
            leaves, structure = tree_util.flatten(entry)
            kinds = []
            for leaf in leaves:
                if not isinstance(leaf, Tracer):
                    kinds.append(None)
                    continue
                row = sub.input(ShapedArray((passes,) + leaf.shape, leaf.dtype), "array")
                starts = [position] + [coerce(0, Slot(INDEX_AVAL, "python"))] * leaf.ndim
                stacked.inputs.append(row)
                stacked.exits.append(bind(dynamic_update_slice_p, row,
                                          reshape(leaf, (1,) + leaf.shape), *starts))
                kinds.append(leaf.kind)
            stacked.entries.append((structure, leaves, kinds))
    return stacked
