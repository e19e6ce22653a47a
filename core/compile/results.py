"""A call's results as the caller's values: outputs rebuilt as NumPy's views of inputs or
of other outputs, constants copied fresh, and in-place updates written into the caller's
arrays (all checked writable first, so a refused write changes nothing)."""
from __future__ import annotations

from typing import Sequence

import numpy as np

from . import hostmemory
from .trace import OutSpec


def write_back(mutated, leaves, outputs) -> None:
    """Copy the updated arrays into the caller's. A read-only one is refused before any is
    written (marked as a run-time check: a cell then runs as plain Python, which binds the
    names of the lines before the update and raises NumPy's own error at its line; a jit
    call makes the plain call too, since NumPy's text depends on the operation that wrote)."""
    for leaf_pos, _ in mutated:
        if not leaves[leaf_pos].flags.writeable:
            error = ValueError("assignment destination is read-only")
            error.psc_run_check = error.psc_plain_raises = True
            raise error
    for leaf_pos, out_index in mutated:
        np.copyto(leaves[leaf_pos], outputs[out_index])


def _fresh_copy(value: np.ndarray) -> np.ndarray:
    """A constant result, copied: aligned like XLA's results when it is in C order, else in
    its own layout (as np.copy keeps it)."""
    return (hostmemory.aligned_copy(value) if value.flags.c_contiguous
            else np.copy(value, order="K"))


def _const(out: OutSpec, bases: dict) -> np.ndarray:
    """A constant result: one fresh copy per run of the array it is (a view of); a view is
    the same view of that copy (the copy has the original's layout, so the view fits)."""
    base, view = out.value
    key = ("const", out.index)
    fresh = bases.get(key) if out.index >= 0 else None
    if fresh is None:
        fresh = bases[key] = _fresh_copy(base)
    if view is None:
        return fresh
    offset, shape, strides = view
    return np.ndarray(shape, base.dtype, buffer=fresh, offset=offset, strides=strides)


def rebuild(out: OutSpec, outputs: Sequence[np.ndarray], leaves: Sequence, bases: dict):
    """One output leaf of a run, as `out` says, from the graph's outputs and the call's leaves
    (after write-back); `bases` shares the arrays that several leaves are (views of)."""
    if out.how == "view":
        leaf_pos, steps = out.value
        if leaf_pos >= 0:
            value = leaves[leaf_pos]
        else:
            value = bases.get(out.index)
            if value is None:
                value = bases[out.index] = outputs[out.index]
        for fn, operand_outs in steps:
            value = fn(value, *(outputs[k][()] for k in operand_outs))
        return value
    if out.how == "static":
        return out.value
    if out.how == "choice":       # the array of the branch the run took (`trace.Choice`)
        return rebuild(out.value[int(outputs[out.index])], outputs, leaves, bases)
    if out.how == "const":
        return _const(out, bases) if isinstance(out.value, tuple) else out.value
    value = outputs[out.index]
    if out.kind == "scalar":
        return value[()]
    if out.kind == "python":
        return value.item()
    return value     # XLA's result buffer: writable, the caller's own, not a copy
