"""NumPy's tests, comparisons and statistics built from ufuncs and reductions, on tracers:
nan_to_num, isposinf, isneginf, isclose, allclose, array_equal, array_equiv, ptp, average,
count_nonzero; and the static facts of an array (shape, ndim, size, result_type, ...).

Each follows NumPy's own implementation step by step (same operand conversions, same order
of operations), so dtypes, NaN handling and scalar-or-array results are NumPy's. The
functions that return a Python bool (allclose, array_equal, array_equiv) return a traced
bool of kind "python": a Python bool after the compiled run.
"""
from __future__ import annotations

import numpy as np

from ..primitives import complex_p
from ..tracing import Tracer
from .base import (as_array, as_kind, assign_into, convert, copy_of, elementwise, imag_part,
                   implements, is_weak, normalize_axes, real_part, result_type, unsupported)
from .reductions import np_all, np_max, np_mean, np_min, np_sum
from .ufuncs import call_ufunc, np_where


def _scalar_if_0d(x: Tracer) -> Tracer:
    """NumPy's `result[()]`: a 0-d result is a NumPy scalar."""
    return as_kind(x, "scalar") if x.ndim == 0 else as_kind(x, "array")


# -- nan_to_num, isposinf, isneginf -----------------------------------------------------------

def _replace_non_finite(d: Tracer, nan, posinf, neginf) -> Tracer:
    info = np.finfo(d.dtype)
    maxf = info.max if posinf is None else posinf
    minf = info.min if neginf is None else neginf
    d = np_where(call_ufunc(np.isnan, d), convert(nan, d.dtype), d)
    d = np_where(np_isposinf(d), convert(maxf, d.dtype), d)
    return np_where(np_isneginf(d), convert(minf, d.dtype), d)


@implements(np.nan_to_num)
def np_nan_to_num(x, copy=True, nan=0.0, posinf=None, neginf=None):
    x = as_array(x)
    scalar = x.ndim == 0
    if x.dtype.kind not in "fc":
        result = copy_of(x)
    elif x.dtype.kind == "c":
        parts = [_replace_non_finite(part(x), nan, posinf, neginf) for part in (real_part, imag_part)]
        result = elementwise(complex_p, *parts)
    else:
        result = _replace_non_finite(x, nan, posinf, neginf)
    if not copy:
        assign_into(x, result, "np.nan_to_num(..., copy=False)")
    return as_kind(result, "scalar" if scalar else "array")


def _inf_with_sign(x, negative: bool, out, name):
    is_inf = call_ufunc(np.isinf, x)
    try:
        sign = call_ufunc(np.signbit, x)
    except TypeError as err:
        dtype = x.dtype if isinstance(x, Tracer) else np.asanyarray(x).dtype
        raise TypeError(f"This operation is not supported for {dtype} values because it would "
                        "be ambiguous.") from err
    if not negative:
        sign = call_ufunc(np.logical_not, sign)
    result = call_ufunc(np.logical_and, is_inf, sign)
    return assign_into(out, result, f"np.{name}(..., out=...)") if out is not None else result


@implements(np.isposinf)
def np_isposinf(x, out=None):
    return _inf_with_sign(x, False, out, "isposinf")


@implements(np.isneginf)
def np_isneginf(x, out=None):
    return _inf_with_sign(x, True, out, "isneginf")


# -- isclose, allclose, array_equal -----------------------------------------------------------

def _close_operand(v):
    """isclose keeps Python scalars as they are and makes everything else an array."""
    if is_weak(v):
        return v
    return as_array(v)


@implements(np.isclose)
def np_isclose(a, b, rtol=1.e-5, atol=1.e-8, equal_nan=False):
    x, y = _close_operand(a), _close_operand(b)
    if isinstance(y, Tracer) and not is_weak(y):
        y = convert(y, result_type(y, 1.0))
    elif isinstance(y, int) and not isinstance(y, bool):
        y = float(y)
    tolerance = call_ufunc(np.add, atol, call_ufunc(np.multiply, rtol, call_ufunc(np.absolute, y)))
    close = call_ufunc(np.less_equal, call_ufunc(np.absolute, call_ufunc(np.subtract, x, y)),
                       tolerance)
    result = call_ufunc(np.logical_or, call_ufunc(np.logical_and, close, call_ufunc(np.isfinite,
                                                                                    y)),
                        call_ufunc(np.equal, x, y))
    if equal_nan:
        both_nan = call_ufunc(np.logical_and, call_ufunc(np.isnan, x), call_ufunc(np.isnan, y))
        result = call_ufunc(np.logical_or, result, both_nan)
    return _scalar_if_0d(result)


def _python_bool(x: Tracer) -> Tracer:
    return as_kind(x, "python")


@implements(np.allclose)
def np_allclose(a, b, rtol=1.e-5, atol=1.e-8, equal_nan=False):
    return _python_bool(np_all(np_isclose(a, b, rtol, atol, equal_nan)))


@implements(np.array_equal)
def np_array_equal(a1, a2, equal_nan=False):
    a1, a2 = as_array(a1), as_array(a2)
    if a1.shape != a2.shape:
        return False
    equal = call_ufunc(np.equal, a1, a2)
    if equal_nan and not (_cannot_hold_nan(a1.dtype) and _cannot_hold_nan(a2.dtype)):
        both_nan = call_ufunc(np.logical_and, call_ufunc(np.isnan, a1), call_ufunc(np.isnan, a2))
        equal = call_ufunc(np.logical_or, equal, both_nan)
    return _python_bool(np_all(equal))


def _cannot_hold_nan(dtype: np.dtype) -> bool:
    return dtype.kind in "biu"


@implements(np.array_equiv)
def np_array_equiv(a1, a2):
    a1, a2 = as_array(a1), as_array(a2)
    try:
        np.broadcast_shapes(a1.shape, a2.shape)
    except ValueError:
        return False
    return _python_bool(np_all(call_ufunc(np.equal, a1, a2)))


# -- statistics -------------------------------------------------------------------------------

@implements(np.ptp)
def np_ptp(a, axis=None, out=None, keepdims=False):
    a = as_array(a)
    result = call_ufunc(np.subtract, np_max(a, axis, keepdims), np_min(a, axis, keepdims))
    return assign_into(out, result, "np.ptp(..., out=...)") if out is not None else result


@implements(np.count_nonzero)
def np_count_nonzero(a, axis=None, *, keepdims=False):
    a = as_array(a)
    nonzero = convert(a, np.bool_)
    return np_sum(nonzero, axis=axis, dtype=np.intp, keepdims=keepdims)


def _average_weights(a_shape, wgt, axis):
    """NumPy's reshaping of 1-d weights along `axis`; works on an ndarray or a tracer."""
    if tuple(a_shape) == np.shape(wgt):
        return wgt
    if axis is None:
        raise TypeError("Axis must be specified when shapes of a and weights differ.")
    if np.shape(wgt) != tuple(a_shape[ax] for ax in axis):
        raise ValueError("Shape of weights must be consistent with shape of a along specified "
                         "axis.")
    wgt = np.transpose(wgt, tuple(np.argsort(axis)))
    return np.reshape(wgt, tuple(s if ax in axis else 1 for ax, s in enumerate(a_shape)))


@implements(np.average)
def np_average(a, axis=None, weights=None, returned=False, *, keepdims=np._NoValue):
    a = as_array(a)
    if axis is not None:
        axis = normalize_axes(axis, a.ndim)
    keep = {} if keepdims is np._NoValue else {"keepdims": keepdims}
    if weights is None:
        avg = np_mean(a, axis, **keep)
        scl = avg.dtype.type(a.size / avg.size)
    else:
        avg, scl = _weighted_average(a, weights, axis, keep)
    if returned:
        if np.shape(scl) != avg.shape:
            scl = np.broadcast_to(scl, avg.shape)
            scl = scl.copy() if isinstance(scl, np.ndarray) else scl
        return avg, scl
    return avg


def _weighted_average(a, weights, axis, keep):
    traced = isinstance(weights, Tracer)
    wgt = as_array(weights) if traced else np.asanyarray(weights)
    if a.dtype.kind in "biu":
        dtype = np.result_type(a.dtype, wgt.dtype, "f8")
    else:
        dtype = np.result_type(a.dtype, wgt.dtype)
    wgt = _average_weights(a.shape, wgt, axis)
    if traced:
        scl = np_sum(wgt, axis=axis, dtype=dtype, **keep)
    else:
        scl = wgt.sum(axis=axis, dtype=dtype, **keep)
        if np.any(scl == 0.0):
            raise ZeroDivisionError("Weights sum to zero, can't be normalized")
    product = call_ufunc(np.multiply, a, wgt, dtype=dtype)
    return call_ufunc(np.divide, np_sum(product, axis=axis, **keep), scl), scl


# -- static facts -----------------------------------------------------------------------------

@implements(np.shape)
def np_shape(a):
    return as_array(a).shape


@implements(np.ndim)
def np_ndim(a):
    return as_array(a).ndim


@implements(np.size)
def np_size(a, axis=None):
    a = as_array(a)
    return a.size if axis is None else a.shape[normalize_axes(axis, a.ndim)[0]]


@implements(np.result_type)
def np_result_type(*arrays_and_dtypes):
    return result_type(*(np.dtype(x) if isinstance(x, (type, str, np.dtype)) else x
                         for x in arrays_and_dtypes))


@implements(np.iscomplexobj)
def np_iscomplexobj(x):
    return as_array(x).dtype.kind == "c"


@implements(np.isrealobj)
def np_isrealobj(x):
    return as_array(x).dtype.kind != "c"


@implements(np.iscomplex)
def np_iscomplex(x):
    x = as_array(x)
    if x.dtype.kind != "c":
        return np.zeros(x.shape, bool)[()]
    return _scalar_if_0d(call_ufunc(np.not_equal, imag_part(x), 0))


@implements(np.isreal)
def np_isreal(x):
    return _scalar_if_0d(call_ufunc(np.equal, imag_part(as_array(x)), 0))


def _refuse_real_if_close(a, tol=100):
    raise unsupported("np.real_if_close (its result dtype depends on the data)",
                      "use np.real(a) when the imaginary parts are known to be small")


implements(np.real_if_close)(_refuse_real_if_close)
_refuse_real_if_close.refused = "np.real_if_close (its result dtype depends on the data)"


@implements(np.fix)
def np_fix(x, out=None):
    x = as_array(x)
    result = np_where(call_ufunc(np.greater_equal, x, 0), call_ufunc(np.floor, x),
                      call_ufunc(np.ceil, x))
    if out is not None:
        return assign_into(out, result, "np.fix(..., out=...)")
    return _scalar_if_0d(result)
