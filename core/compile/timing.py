"""Timing plain against compiled, on copies of the inputs, within a time budget.

The two sides take turns, round after round (`time_interleaved`), so that a verdict drawn
from their medians and spreads (`report.Verdict`) holds from one run of a cell to the next.
Copies are made before the clock starts, so their cost is not timed, and timing never
changes the caller's data. The number of rounds adapts to the cost of one, like %timeit.
"""
from __future__ import annotations

import time
from typing import Any, Callable

import numpy as np
from numpy.lib.array_utils import byte_bounds


def copy_inputs(values: dict[str, Any]) -> dict[str, Any]:
    """Copies of the values for one timed run: each array copied in its own layout, the lists,
    tuples and dicts that hold arrays rebuilt around the copies, every other object the very
    same (a copy of an object that code reads as a static value would be another call, and
    compiled code changes no such object). An array bound to several names, or held twice,
    gets one copy (an update through one is seen through the other, as in the originals)."""
    copies: dict[int, tuple[Any, Any]] = {}
    return {name: _copy(value, copies) for name, value in values.items()}


def _copy(value, copies: dict[int, tuple[Any, Any]]):
    found = copies.get(id(value))
    if found is not None:
        return found[1]
    if isinstance(value, np.ndarray):
        copied = copy_laid_out_like(value)
    elif type(value) is list:
        copied = []
        copies[id(value)] = (value, copied)        # (before its items: a list may hold itself)
        copied.extend(_copy(v, copies) for v in value)
    elif type(value) is dict:
        copied = {}
        copies[id(value)] = (value, copied)
        copied.update((k, _copy(v, copies)) for k, v in value.items())
    elif isinstance(value, tuple) and (type(value) is tuple or hasattr(type(value), "_fields")):
        items = [_copy(v, copies) for v in value]
        copied = tuple(items) if type(value) is tuple else type(value)(*items)
    else:
        return value
    copies[id(value)] = (value, copied)     # (the original kept: its id is not reused)
    return copied


def copy_laid_out_like(array: np.ndarray) -> np.ndarray:
    """A copy laid out as the array is: the same strides (a transpose stays a transpose, a
    step or a reversal keeps its step, a broadcast its zero strides), its data at the same
    offset from a 64-byte boundary, read-only when the array is. A call's signature holds the
    layout of an array not in C order, and XLA copies misaligned inputs: a copy must be the
    same call and cost what the original costs."""
    if array.dtype.hasobject:
        return array.copy(order="K")
    low, high = byte_bounds(array)
    buffer = np.empty(high - low + 64, np.uint8)
    start = (low - buffer.ctypes.data) % 64          # the same offset from a 64-byte boundary
    out = np.ndarray(array.shape, array.dtype, buffer=buffer,
                     offset=start + array.ctypes.data - low, strides=array.strides)
    out[...] = array
    out.flags.writeable = array.flags.writeable
    return out


Side = tuple[Callable[[dict], Any], dict[str, Any]]     # (run, the inputs it gets copies of)


def time_interleaved(sides: dict[str, Side], budget: float = 1.0, max_rounds: int = 50,
                     min_rounds: int = 5, reset: Callable[[], None] = lambda: None,
                     clock: Callable[[], float] = time.perf_counter
                     ) -> tuple[dict[str, list[float]], dict[str, Any]]:
    """Time the sides in rounds, each side once per round, taking turns (the order flips
    from round to round), so that whatever slows the machine for a while (another process,
    a warm or cold cache, frequency scaling) touches both sides alike and their ratio holds.
    Returns each side's seconds per run and its last result.

    At least one round; at least `min_rounds` while they fit in `budget` seconds per side;
    never more than `max_rounds`, nor a round that would take the whole past three times
    the budget. The first round warms caches up: it is left out when `min_rounds` others
    were run. Each run gets fresh copies of its inputs (made before the clock starts), and
    `reset()` runs, untimed, before each run (see `KeptArrays`)."""
    names = list(sides)
    times: dict[str, list[float]] = {name: [] for name in names}
    results: dict[str, Any] = {}
    limit = budget * len(names)
    spent = 0.0
    while len(times[names[0]]) < max_rounds:
        order = names if len(times[names[0]]) % 2 == 0 else names[::-1]
        round_seconds = sum(_timed_run(sides[name], reset, clock, times[name], results, name)
                            for name in order)
        spent += round_seconds
        rounds = len(times[names[0]])
        if rounds >= min_rounds and spent >= limit or spent + round_seconds > 3 * limit:
            break
    if len(times[names[0]]) > min_rounds:
        times = {name: runs[1:] for name, runs in times.items()}
    return times, results


def _timed_run(side: Side, reset, clock, into: list[float], results: dict, name: str) -> float:
    run, inputs = side
    fresh = copy_inputs(inputs)
    reset()
    start = clock()
    results[name] = run(fresh)
    elapsed = clock() - start
    into.append(elapsed)
    return elapsed


class KeptArrays:
    """The values of arrays that timed runs update in place and that are not among the copied
    inputs (an attribute of the user's object, `model.w += g`): `restore` writes them back, so
    that every timed run starts where the cell's own run ended, and the user's arrays end
    there too."""

    def __init__(self, arrays: list[np.ndarray]):
        self._kept = [(a, a.copy(order="K")) for a in arrays if a.flags.writeable]

    def restore(self) -> None:
        for array, value in self._kept:
            np.copyto(array, value)


def largest_difference(expected: Any, got: Any) -> float:
    """max |expected - got| over the elements (NaN where both are NaN counts as equal;
    inf vs inf of the same sign too). inf when shapes or kinds disagree."""
    try:
        e = np.asarray(expected)
        g = np.asarray(got)
    except (TypeError, ValueError):
        return 0.0 if expected == got else float("inf")
    if e.dtype.kind not in "biufc" or g.dtype.kind not in "biufc":
        return 0.0 if np.array_equal(e, g) else float("inf")
    if e.shape != g.shape:
        return float("inf")
    if e.size == 0:
        return 0.0
    e = e.astype(np.complex128)
    g = g.astype(np.complex128)
    same = (e == g) | (np.isnan(e) & np.isnan(g))
    with np.errstate(invalid="ignore", over="ignore"):      # inf - inf: nan, counted as inf
        diff = np.where(same, 0.0, np.abs(e - g))
    return float(np.nanmax(np.where(np.isnan(diff), np.inf, diff)))
