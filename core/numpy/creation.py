"""NumPy's array creation with traced arguments: linspace, logspace, geomspace, copyto, and
the creation functions reached through `like=`.

NumPy only hands creation functions to `__array_function__` where a traced value can reach
them: linspace, logspace and geomspace dispatch on start/stop (and base); zeros, ones, empty,
full, eye, identity, tri, arange and fromfunction dispatch on `like=` only.
`np.full(shape, traced)` without `like=` never dispatches: NumPy converts the fill value with
`np.asarray` (a concretization error that says so) or, given `dtype=`, copies it with
`np.copyto` into a fresh NumPy array (refused here with a hint). `np.full_like` and
`np.broadcast_to` are the traced spellings.
"""
from __future__ import annotations

import operator
from typing import Callable

import numpy as np

from ..tracing import Buffer, Tracer, current_trace
from .base import (NUMPY_FUNCTIONS, as_array, as_kind, assign_into, broadcast_to, convert,
                   ensure_tracer, full, implements, reshape, result_type, unsupported)
from .indexing import setitem
from .reductions import np_all, np_any
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


def _require_nonzero_ends(start, stop) -> None:
    """geomspace's ValueError for a zero start or stop: now for constants, by the run for
    traced values."""
    message = "Geometric sequence cannot include zero"
    for value in (start, stop):
        if isinstance(value, Tracer):
            nonzero = np_all(call_ufunc(np.not_equal, value, 0))
            current_trace().require(nonzero, ensure_tracer(np.int64(0)), message, ValueError)
        elif np.any(np.asanyarray(value) == 0):
            raise ValueError(message)


@implements(np.geomspace)
def np_geomspace(start, stop, num=50, endpoint=True, dtype=None, axis=0):
    _require_nonzero_ends(start, stop)
    start, stop = as_array(start), as_array(stop)
    dt = np.result_type(start.dtype, stop.dtype, float(num), np.zeros((), dtype).dtype)
    dtype = dt if dtype is None else np.dtype(dtype)
    start, stop = convert(start, dt), convert(stop, dt)
    # negative and complex ends: rotated onto the positive reals, and back at the end
    out_sign = call_ufunc(np.sign, start)
    start = call_ufunc(np.divide, start, out_sign)
    stop = call_ufunc(np.divide, stop, out_sign)
    result = np_logspace(call_ufunc(np.log10, start), call_ufunc(np.log10, stop), num=num,
                         endpoint=endpoint, base=10.0, dtype=dt)
    result = as_kind(result, "array")
    if num > 0:                 # the ends exactly as given (10 ** log10(x) may not be x)
        setitem(result, 0, start)
        if num > 1 and endpoint:
            setitem(result, -1, stop)
    result = call_ufunc(np.multiply, result, out_sign)
    if axis != 0:
        result = np_moveaxis(result, 0, axis)
    return as_kind(convert(result, dtype), "array")


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


# -- arrays made inside the trace -------------------------------------------------------------
#
# `np.zeros(n)` never sees a tracer, so NumPy's dispatch cannot catch it: the rolling pass
# rewrites each call of a creation function in traced code into `runtime.create(np.zeros, n)`,
# which lands here while tracing. The array it makes is traced from the start: a buffer of its
# own with NumPy's memory layout, whose value is known while only constants are written into it
# (so it still works as an index, a mask or a bound). Every reference, view and alias of it is
# then a tracer, so writing a traced value into any of them keeps NumPy's meaning.

_TRACEABLE_KINDS = "biufc"


def traced_creator(fn) -> Callable | None:
    """The traced version of a NumPy creation function (None: fn is not one)."""
    try:
        return _CREATORS.get(fn)
    except TypeError:             # an unhashable callable
        return None


def _fresh(value: Tracer, strides) -> Tracer:
    """A new array with its own buffer, holding value, laid out with these strides."""
    buffer = Buffer(value.ir_var, current_trace(), tuple(strides))
    return Tracer(buffer, kind="array")


def _filled(layout: np.ndarray, fill) -> Tracer:
    """A traced array like `layout` (shape, dtype, memory order), every element `fill`."""
    return _fresh(full(layout.shape, np.asarray(fill, layout.dtype), layout.dtype),
                  layout.strides)


def _constant(arr):
    """A traced copy of an array NumPy made from constants (left alone if it cannot be traced)."""
    if not isinstance(arr, np.ndarray) or arr.dtype.kind not in _TRACEABLE_KINDS \
            or arr.dtype.itemsize > 16 or arr.dtype == np.longdouble:
        return arr
    return _fresh(as_kind(ensure_tracer(arr), "array"), arr.strides)


def _has_tracer(args, kwargs) -> bool:
    values = list(args) + list(kwargs.values())
    while values:
        value = values.pop()
        if isinstance(value, Tracer):
            return True
        if isinstance(value, (list, tuple)):
            values.extend(value)
    return False


def _traced_impl(fn):
    """NumPy's function on traced arguments (psc_jit's implementation)."""
    impl = NUMPY_FUNCTIONS.get(fn)
    if impl is None:
        raise unsupported(f"np.{fn.__name__} of a traced value")
    return impl


def _known_args(args, kwargs) -> tuple[tuple, dict]:
    """Arguments with each tracer whose value is known replaced by that value (a shape or a
    bound computed from constants)."""
    def known(value):
        if isinstance(value, Tracer):
            found = value.known_value()
            return value if found is None else found
        if isinstance(value, (list, tuple)):
            return type(value)(known(v) for v in value)
        return value
    return tuple(known(a) for a in args), {k: known(v) for k, v in kwargs.items()}


def _uniform(fn, fill):
    """zeros/ones/empty: NumPy lays the array out (an untouched allocation), psc_jit fills it."""
    def create(*args, like=None, **kwargs):
        args, kwargs = _known_args(args, kwargs)
        if _has_tracer(args, kwargs):
            return fn(*args, **kwargs)
        return _filled(np.empty(*args, **kwargs), fill)
    return create


def _uniform_like(fn, fill):
    def create(a, *args, **kwargs):
        if isinstance(a, Tracer) or _has_tracer(args, kwargs):
            return _traced_impl(fn)(a, *args, **kwargs)
        return _filled(np.empty_like(a, *args, **kwargs), fill)
    return create


def _create_full(shape, fill_value, dtype=None, order="C", *, device=None, like=None):
    if isinstance(fill_value, Tracer):
        value = np_full(shape, fill_value, dtype)
        return _fresh(value, np.empty(value.shape, value.dtype, order).strides)
    if np.ndim(fill_value):
        return _constant(np.full(shape, fill_value, dtype, order))
    scalar = np.full((), fill_value, dtype)          # NumPy's dtype and casting of the fill
    return _filled(np.empty(shape, scalar.dtype, order), scalar)


def _create_full_like(a, fill_value, *args, **kwargs):
    if isinstance(a, Tracer) or isinstance(fill_value, Tracer):
        return _traced_impl(np.full_like)(a, fill_value, *args, **kwargs)
    if np.ndim(fill_value):
        return _constant(np.full_like(a, fill_value, *args, **kwargs))
    layout = np.empty_like(a, *args, **kwargs)
    return _filled(layout, np.full((), fill_value, layout.dtype))


def _create_ndarray(shape, dtype=None, buffer=None, offset=0, strides=None, order=None):
    if buffer is not None:           # a view of memory that exists: not a new array
        return np.ndarray(shape, dtype, buffer, offset, strides, order)
    return _filled(np.ndarray(shape, dtype, strides=strides, order=order), 0)


def _eagerly(fn):
    """arange, eye, identity, tri, copy: NumPy makes the constant, psc_jit traces a copy."""
    def create(*args, **kwargs):
        args, kwargs = _known_args(args, kwargs)
        if _has_tracer(args, kwargs):
            return _traced_impl(fn)(*args, **kwargs)
        return _constant(fn(*args, **kwargs))
    return create


def _converting(fn):
    """array, asarray, asanyarray, ascontiguousarray: a new array is traced; an existing NumPy array handed
    back as it is (asarray's alias) stays that array."""
    def create(obj, *args, **kwargs):
        if _has_tracer((obj,) + args, kwargs):
            return _traced_impl(fn)(obj, *args, **kwargs)
        result = fn(obj, *args, **kwargs)
        if isinstance(obj, np.ndarray) and np.shares_memory(result, obj):
            return result
        return _constant(result)
    return create


_CREATORS: dict[Callable, Callable] = {
    np.zeros: _uniform(np.zeros, 0), np.ones: _uniform(np.ones, 1),
    np.empty: _uniform(np.empty, 0),
    np.zeros_like: _uniform_like(np.zeros_like, 0), np.ones_like: _uniform_like(np.ones_like, 1),
    np.empty_like: _uniform_like(np.empty_like, 0),
    np.full: _create_full, np.full_like: _create_full_like, np.ndarray: _create_ndarray,
    **{fn: _eagerly(fn) for fn in (np.arange, np.eye, np.identity, np.tri, np.copy)},
    **{fn: _converting(fn) for fn in (np.array, np.asarray, np.asanyarray, np.ascontiguousarray)},
}
