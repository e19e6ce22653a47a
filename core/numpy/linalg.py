"""np.linalg on tracers: norm.
"""
from __future__ import annotations

import numpy as np

from .base import (as_array, as_kind, convert, ensure_tracer, implements, normalize_axes, real_part,
                   reshape, sum_axes, unsupported)
from .reductions import np_max, np_min, np_sum
from .ufuncs import call_ufunc


def _abs_sum(x, axis):
    return np_sum(call_ufunc(np.absolute, x), axis=axis)


def _max_or_zero(x, axis):
    if x.shape[axis] == 0:
        shape = tuple(d for i, d in enumerate(x.shape) if i != axis)
        return ensure_tracer(np.zeros(shape, x.dtype))
    return call_ufunc(np.maximum, np_max(x, axis=axis), np.zeros((), x.dtype))


def _squared_abs(x):
    return real_part(call_ufunc(np.multiply, call_ufunc(np.conjugate, x), x))


def _vector_norm(x, ord, axis, keepdims):  # noqa: A002  (NumPy's name)
    absx = call_ufunc(np.absolute, x)
    if ord == np.inf:
        result = _max_or_zero(absx, axis)
    elif ord == -np.inf:
        result = np_min(absx, axis=axis)
    elif ord == 0:
        nonzero = convert(call_ufunc(np.not_equal, x, 0), absx.dtype)
        result = np_sum(nonzero, axis=axis)
    elif ord == 1:
        result = np_sum(absx, axis=axis)
    elif ord is None or ord == 2:
        result = call_ufunc(np.sqrt, np_sum(_squared_abs(x), axis=axis))
    elif isinstance(ord, str):
        raise ValueError(f"Invalid norm order '{ord}' for vectors")
    else:
        total = np_sum(call_ufunc(np.power, absx, ord), axis=axis)
        result = call_ufunc(np.power, total, np.reciprocal(np.asarray(ord, total.dtype)))
    return _keep(result, x.shape, (axis,), keepdims)


def _keep(result, shape, axes, keepdims):
    if not keepdims:
        return result
    return as_kind(reshape(result, tuple(1 if i in axes else d for i, d in enumerate(shape))),
                   "array")


def _matrix_norm(x, ord, row, col, keepdims):  # noqa: A002
    if ord in (2, -2, "nuc"):
        raise unsupported(f"np.linalg.norm(..., ord={ord!r}) of a matrix (it needs an SVD)")
    if ord in (1, -1):
        sums, other = _abs_sum(x, row), col - (col > row)
    elif ord in (np.inf, -np.inf):
        sums, other = _abs_sum(x, col), row - (row > col)
    elif ord in (None, "fro", "f"):
        result = call_ufunc(np.sqrt, np_sum(_squared_abs(x), axis=(row, col)))
        return _keep(result, x.shape, (row, col), keepdims)
    else:
        raise ValueError("Invalid norm order for matrices.")
    result = _max_or_zero(sums, other) if ord in (1, np.inf) else np_min(sums, axis=other)
    return _keep(result, x.shape, (row, col), keepdims)


@implements(np.linalg.norm)
def np_linalg_norm(x, ord=None, axis=None, keepdims=False):  # noqa: A002
    x = as_array(x)
    if x.dtype.kind not in "fc":
        x = convert(x, np.float64)
    if axis is None and (ord is None or (ord in ("f", "fro") and x.ndim == 2)
                         or (ord == 2 and x.ndim == 1)):
        flat = reshape(x, (x.size,))
        result = call_ufunc(np.sqrt, sum_axes(_squared_abs(flat), (0,)).with_kind("scalar"))
        return _keep(result, x.shape, tuple(range(x.ndim)), keepdims)
    axes = tuple(range(x.ndim)) if axis is None else (
        (axis,) if not isinstance(axis, tuple) else axis)
    if len(axes) == 1:
        return _vector_norm(x, ord, normalize_axes(axes[0], x.ndim)[0], keepdims)
    if len(axes) == 2:
        row, col = (normalize_axes(a, x.ndim)[0] for a in axes)
        if row == col:
            raise ValueError("Duplicate axes given.")
        return _matrix_norm(x, ord, row, col, keepdims)
    raise ValueError("Improper number of dimensions to norm.")
