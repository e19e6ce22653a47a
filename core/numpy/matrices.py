"""NumPy's matrix helpers on tracers: diagonal, trace, diag, diagflat, triu, tril, cross,
fill_diagonal.
"""
from __future__ import annotations

import numpy as np

from ..primitives import pad_p, select_p
from ..tracing import Tracer, bind
from .base import (as_array, as_kind, assign_into, broadcast_to, convert, ensure_tracer, implements,
                   normalize_axes, reshape, static_slice, transpose)
from .indexing import getitem, setitem
from .reductions import np_sum
from .shape import np_moveaxis, np_stack
from .ufuncs import call_ufunc


def diagonal_last(x: Tracer, axis1: int, axis2: int, offset: int = 0) -> Tracer:
    """np.diagonal(x, offset, axis1, axis2): the diagonal becomes the last axis. A strided
    slice of the flattened (rows, columns) block, no gather."""
    lead = [d for d in range(x.ndim) if d not in (axis1, axis2)]
    t = transpose(x, lead + [axis1, axis2])
    n, m = t.shape[-2:]
    row0, col0 = (0, offset) if offset >= 0 else (-offset, 0)
    row0, col0 = min(row0, n), min(col0, m)
    block = static_slice(t, (0,) * len(lead) + (row0, col0), t.shape)
    rows, cols = n - row0, m - col0
    length = max(0, min(rows, cols))
    lead_shape = t.shape[:-2]
    flat = reshape(block, lead_shape + (rows * cols,))
    limit = (length - 1) * (cols + 1) + 1 if length else 0
    return static_slice(flat, (0,) * flat.ndim, lead_shape + (limit,),
                        (1,) * len(lead_shape) + (cols + 1,))


@implements(np.diagonal)
def np_diagonal(a, offset=0, axis1=0, axis2=1):
    a = as_array(a)
    if a.ndim < 2:
        raise ValueError("diag requires an array of at least two dimensions")
    ax1, ax2 = (normalize_axes(ax, a.ndim)[0] for ax in (axis1, axis2))
    if ax1 == ax2:
        raise ValueError("axis1 and axis2 cannot be the same")
    return as_kind(diagonal_last(a, ax1, ax2, int(offset)), "array")


@implements(np.trace)
def np_trace(a, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    diag = np_diagonal(a, offset, axis1, axis2)
    result = np_sum(diag, axis=-1, dtype=dtype)
    return assign_into(out, result, "np.trace(..., out=...)") if out is not None else result


@implements(np.diag)
def np_diag(v, k=0):
    v = as_array(v)
    if v.ndim == 2:
        return np_diagonal(v, k)
    if v.ndim != 1:
        raise ValueError("Input must be 1- or 2-d.")
    k = int(k)
    n = v.shape[0] + abs(k)
    rows = bind(pad_p, v, np.zeros((), v.dtype), low=(max(-k, 0),),
                high=(max(k, 0),), interior=(0,))
    mask = np.eye(n, k=k, dtype=bool)
    values = broadcast_to(reshape(rows, (n, 1)), (n, n))
    zeros = np.zeros((n, n), v.dtype)
    return as_kind(bind(select_p, mask, values, zeros), "array")


@implements(np.diagflat)
def np_diagflat(v, k=0):
    v = as_array(v)
    return np_diag(reshape(v, (v.size,)), k)


def _triangle(m, k, lower: bool):
    m = as_array(m)
    shape = m.shape[-2:]
    mask = np.tri(*shape, k=k if lower else k - 1, dtype=bool)
    zero = np.zeros((), m.dtype)
    out_shape = np.broadcast_shapes(mask.shape, m.shape)
    on_true, on_false = (m, zero) if lower else (zero, m)
    operands = [broadcast_to(ensure_tracer(o).with_kind("array"), out_shape)
                for o in (on_true, on_false)]
    pred = np.broadcast_to(mask, out_shape)
    return as_kind(bind(select_p, pred, *operands), "array")


@implements(np.tril)
def np_tril(m, k=0):
    return _triangle(m, int(k), lower=True)


@implements(np.triu)
def np_triu(m, k=0):
    return _triangle(m, int(k), lower=False)


def _component(x: Tracer, i: int) -> Tracer:
    return getitem(x, (Ellipsis, i))


@implements(np.cross)
def np_cross(a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    if axis is not None:
        axisa, axisb, axisc = (axis,) * 3
    a, b = as_array(a), as_array(b)
    if a.ndim < 1 or b.ndim < 1:
        raise ValueError("At least one array has zero dimension")
    a = np_moveaxis(a, normalize_axes(axisa, a.ndim)[0], -1)
    b = np_moveaxis(b, normalize_axes(axisb, b.ndim)[0], -1)
    if a.shape[-1] not in (2, 3) or b.shape[-1] not in (2, 3):
        raise ValueError("incompatible dimensions for cross product\n"
                         "(dimension must be 2 or 3)")
    dtype = np.promote_types(a.dtype, b.dtype)
    a, b = convert(a, dtype), convert(b, dtype)
    a0, a1, b0, b1 = _component(a, 0), _component(a, 1), _component(b, 0), _component(b, 1)
    z = call_ufunc(np.subtract, call_ufunc(np.multiply, a0, b1), call_ufunc(np.multiply, a1, b0))
    if a.shape[-1] == 2 and b.shape[-1] == 2:
        return as_kind(z, "array")
    if a.shape[-1] == 3 and b.shape[-1] == 3:
        a2, b2 = _component(a, 2), _component(b, 2)
        x = call_ufunc(np.subtract, call_ufunc(np.multiply, a1, b2),
                       call_ufunc(np.multiply, a2, b1))
        y = call_ufunc(np.subtract, call_ufunc(np.multiply, a2, b0),
                       call_ufunc(np.multiply, a0, b2))
    elif a.shape[-1] == 2:
        b2 = _component(b, 2)
        x = call_ufunc(np.multiply, a1, b2)
        y = call_ufunc(np.negative, call_ufunc(np.multiply, a0, b2))
    else:
        a2 = _component(a, 2)
        x = call_ufunc(np.negative, call_ufunc(np.multiply, a2, b1))
        y = call_ufunc(np.multiply, a2, b0)
    return _stack_last([x, y, z], axisc)


def _stack_last(parts, axisc):
    shape = np.broadcast_shapes(*(p.shape for p in parts))
    stacked = np_stack([broadcast_to(p, shape) for p in parts], axis=-1)
    (axc,) = normalize_axes(axisc, stacked.ndim)
    return np_moveaxis(stacked, -1, axc) if axc != stacked.ndim - 1 else stacked


@implements(np.fill_diagonal)
def np_fill_diagonal(a, val, wrap=False):
    """In place, as NumPy's `a.flat[:end:step] = val`: the diagonal's flat positions are
    static; val is repeated (flattened) to their number, as a flat assignment does."""
    if not isinstance(a, Tracer):
        raise TypeError("np.fill_diagonal writes into its array: pass a traced array")
    if a.ndim < 2:
        raise ValueError("array must be at least 2-d")
    if a.ndim == 2:
        step = a.shape[1] + 1
        end = a.size if wrap else min(a.size, a.shape[1] * a.shape[1])
    else:
        if len(set(a.shape)) != 1:
            raise ValueError("All dimensions of input must be of equal length")
        step, end = 1 + int(np.cumprod(a.shape[:-1]).sum()), a.size
    positions = np.arange(0, end, step)
    if positions.size == 0:
        return None
    values = as_array(val)
    values = reshape(values, (values.size,))
    if values.size == 0:
        return None
    if values.size != positions.size:
        repeats = -(-positions.size // values.size)
        tiled = broadcast_to(values, (repeats, values.size))
        values = static_slice(reshape(tiled, (tiled.size,)), (0,), (positions.size,))
    setitem(a, np.unravel_index(positions, a.shape), values)
    return None
