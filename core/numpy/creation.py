"""NumPy's array creation with traced arguments: linspace, logspace, copyto, and the
creation functions reached through `like=`.

NumPy only hands creation functions to `__array_function__` where a traced value can reach
them: linspace and logspace dispatch on start/stop (and base); zeros, ones, empty, full, eye,
identity, tri, arange and fromfunction dispatch on `like=` only. `np.full(shape, traced)`
without `like=` never dispatches: NumPy converts the fill value with `np.asarray` (a
concretization error that says so) or, given `dtype=`, copies it with `np.copyto` into a
fresh NumPy array (refused here with a hint). `np.full_like` and `np.broadcast_to` are the
traced spellings.
"""
from __future__ import annotations

import operator

import numpy as np

from ..tracing import Tracer
from .base import (as_array, as_kind, assign_into, broadcast_to, convert, ensure_tracer, implements,
                   reshape, result_type, unsupported)
from .indexing import setitem
from .reductions import np_any
from .shape import np_expand_dims, np_moveaxis
from .ufuncs import call_ufunc, np_where


@implements(np.linspace)
def np_linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0, *,
                device=None):
    num = operator.index(num)
    if num < 0:
        raise ValueError(f"Number of samples, {num}, must be non-negative.")
    div = (num - 1) if endpoint else num
    dt = result_type(start, stop, 0.0)
    integer_dtype = dtype is not None and np.issubdtype(dtype, np.integer)
    start_t = ensure_tracer(convert(start, dt))
    stop_t = ensure_tracer(convert(stop, dt))
    delta = call_ufunc(np.subtract, stop_t, start_t)
    y = np.arange(0, num, dtype=dt).reshape((-1,) + (1,) * delta.ndim)
    if div > 0:
        step = call_ufunc(np.divide, delta, div)
        by_step = call_ufunc(np.multiply, y, step)
        tiny_step = call_ufunc(np.multiply, call_ufunc(np.divide, y, div), delta)
        any_zero = np_any(call_ufunc(np.equal, step, 0))   # NumPy tests the whole step
        y = np_where(any_zero, tiny_step, by_step)
    else:
        step = np.nan
        y = call_ufunc(np.multiply, y, delta)
    y = convert(call_ufunc(np.add, y, start_t), dt)
    if endpoint and num > 1:
        y = as_kind(y, "array")
        setitem(y, (-1, Ellipsis), stop_t)
    if axis != 0:
        y = np_moveaxis(y, 0, axis)
    if integer_dtype:
        y = call_ufunc(np.floor, y)
    y = as_kind(convert(y, dtype if dtype is not None else dt), "array")
    return (y, step) if retstep else y


@implements(np.logspace)
def np_logspace(start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0):
    if not isinstance(base, (float, int)) and np.ndim(base):
        ndmax = len(np.broadcast_shapes(*(np.shape(v) for v in (start, stop, base))))
        start, stop, base = (_ndmin(as_array(v), ndmax) for v in (start, stop, base))
        base = np_expand_dims(base, axis)
    y = np_linspace(start, stop, num=num, endpoint=endpoint, axis=axis)
    result = call_ufunc(np.power, base, y)
    return result if dtype is None else as_kind(convert(result, dtype), "array")


def _ndmin(x: Tracer, ndim: int) -> Tracer:
    return reshape(x, (1,) * (ndim - x.ndim) + x.shape) if x.ndim < ndim else x


@implements(np.copyto)
def np_copyto(dst, src, casting="same_kind", where=True):
    if not isinstance(dst, Tracer):
        raise unsupported("np.copyto into a NumPy array that is not traced (np.full(shape, "
                          "traced_value, dtype=...) does this)",
                          "use np.full_like(x, value) or np.broadcast_to(value, shape)")
    if not np.can_cast(result_type(src), dst.dtype, casting=casting) and casting != "unsafe":
        raise TypeError(f"Cannot cast scalar from dtype('{result_type(src)}') to "
                        f"dtype('{dst.dtype}') according to the rule '{casting}'")
    value = broadcast_to(ensure_tracer(convert(src, dst.dtype)), dst.shape)
    if where is not True:
        value = np_where(where, value, dst)
    assign_into(dst, value, "np.copyto")


# -- creation through like= -------------------------------------------------------------------

@implements(np.full)
def np_full(shape, fill_value, dtype=None, order="C", *, device=None, like=None):
    """np.full(..., like=traced): a traced fill value is broadcast; a static one is NumPy's."""
    if not isinstance(fill_value, Tracer):
        return np.full(shape, fill_value, dtype, order)
    shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
    value = as_array(fill_value)
    if np.broadcast_shapes(value.shape, shape) != shape:
        raise ValueError(f"could not broadcast input array from shape {value.shape} into "
                         f"shape {shape}")
    value = convert(value, dtype if dtype is not None else value.dtype)
    return as_kind(broadcast_to(value, shape), "array")


def _eager(fn):
    """A creation function whose arguments are all static, called with like=traced: NumPy
    builds the array now (it enters the graph as a constant)."""
    def create(*args, like=None, **kwargs):
        return fn(*args, **kwargs)
    create.__name__ = f"np_{fn.__name__}"
    return create


for _fn in (np.zeros, np.ones, np.empty, np.eye, np.identity, np.tri, np.arange):
    implements(_fn)(_eager(_fn))


@implements(np.fromfunction)
def np_fromfunction(function, shape, *, dtype=float, like=None, **kwargs):
    return function(*np.indices(shape, dtype=dtype), **kwargs)
