"""A call's results as the caller's values: outputs rebuilt as NumPy's views of inputs or
of other outputs, constants copied fresh, and in-place updates written into the caller's
arrays (all checked writable first, so a refused write changes nothing)."""
from __future__ import annotations

from typing import Sequence

import numpy as np

from . import hostmemory
from .trace import OutSpec


def write_back(mutated, leaves, outputs) -> None:
    for leaf_pos, _ in mutated:
        if not leaves[leaf_pos].flags.writeable:
            raise ValueError("assignment destination is read-only")
    for leaf_pos, out_index in mutated:
        np.copyto(leaves[leaf_pos], outputs[out_index])


def fresh_copy(value: np.ndarray) -> np.ndarray:
    """A constant result, copied: aligned like XLA's results when it is in C order, else in
    its own layout (as np.copy keeps it)."""
    return hostmemory.aligned_copy(value) if value.flags.c_contiguous else np.copy(value)


def rebuild(out: OutSpec, outputs: Sequence[np.ndarray], leaves: Sequence, bases: dict):
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
    if out.how == "const":
        return fresh_copy(out.value) if isinstance(out.value, np.ndarray) else out.value
    value = outputs[out.index]
    if out.kind == "scalar":
        return value[()]
    if out.kind == "python":
        return value.item()
    return value     # XLA's result buffer: writable, the caller's own, not a copy
