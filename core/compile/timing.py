"""Timing plain against compiled, on copies of the inputs, within a time budget.

Copies are made before the clock starts, so their cost is not timed, and timing never
changes the caller's data. The repeat count adapts to the cost of one run, like %timeit.
"""
from __future__ import annotations

import copy
import time
from typing import Any, Callable

import numpy as np


def copy_inputs(values: dict[str, Any]) -> dict[str, Any]:
    """Copies of the values; names bound to one object get one copy (an update through one
    name is seen through the other, as in the originals)."""
    copies: dict[int, Any] = {}
    for value in values.values():
        if id(value) not in copies:
            copies[id(value)] = _copy(value)
    return {k: copies[id(v)] for k, v in values.items()}


def _copy(value):
    if isinstance(value, np.ndarray):
        return copy_aligned_like(value)
    if isinstance(value, (list, dict, tuple)):
        return copy.deepcopy(value)
    return value


def copy_aligned_like(array: np.ndarray) -> np.ndarray:
    """A copy whose data starts at the same offset from a 64-byte boundary as the array's
    (XLA copies misaligned inputs: a copy must cost what the original costs)."""
    offset = array.ctypes.data % 64
    if not array.flags.c_contiguous or offset % array.itemsize:
        return array.copy()
    buffer = np.empty(array.nbytes + 128, np.uint8)
    start = (-buffer.ctypes.data) % 64 + offset
    out = buffer[start:start + array.nbytes].view(array.dtype).reshape(array.shape)
    out[...] = array
    return out


def time_runs(run: Callable[[dict], Any], inputs: dict[str, Any], budget: float = 1.0,
              max_runs: int = 50, min_runs: int = 3,
              reset: Callable[[], None] = lambda: None) -> tuple[list[float], Any]:
    """Run `run(copy of inputs)` repeatedly; return the seconds of each run and the last result.
    At least one run; at least `min_runs` when they fit in the budget; never more than
    `max_runs` or (after the first) more than the budget allows. `reset()` runs, untimed,
    before each run (see `KeptArrays`)."""
    times: list[float] = []
    result = None
    spent = 0.0
    while len(times) < max_runs:
        result = fresh = None       # (the last run's copies and results go before new ones come)
        fresh = copy_inputs(inputs)
        reset()
        start = time.perf_counter()
        result = run(fresh)
        elapsed = time.perf_counter() - start
        times.append(elapsed)
        spent += elapsed
        if len(times) >= min_runs and spent + elapsed > budget:
            break
        if len(times) >= 1 and elapsed > budget:
            break
    return times, result


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


DIFFERENCE_CHUNK = 1 << 16      # elements compared at a time: a bounded temporary, whatever
#                                 the outputs' size (at once, in complex128, it was 12x them)


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
    e, g = e.reshape(-1), g.reshape(-1)
    return max((_chunk_difference(e[k:k + DIFFERENCE_CHUNK], g[k:k + DIFFERENCE_CHUNK])
                for k in range(0, e.size, DIFFERENCE_CHUNK)), default=0.0)


def _chunk_difference(e: np.ndarray, g: np.ndarray) -> float:
    kind = np.complex128 if "c" in (e.dtype.kind + g.dtype.kind) else np.float64
    e, g = e.astype(kind), g.astype(kind)
    same = (e == g) | (np.isnan(e) & np.isnan(g))
    with np.errstate(invalid="ignore", over="ignore"):      # inf - inf: nan, counted as inf
        diff = np.where(same, 0.0, np.abs(e - g))
    return float(np.nanmax(np.where(np.isnan(diff), np.inf, diff)))
