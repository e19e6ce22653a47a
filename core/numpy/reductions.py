"""NumPy's reductions on tracers: sum, prod, max, min, all, any, mean, var, std, argmax,
argmin, cumsum, cumprod, cumulative_sum, cumulative_prod, with NumPy's accumulator dtypes
and its errors for empty operands.
"""
from __future__ import annotations

import functools
import inspect

import numpy as np

from ..primitives import (argmax_p, argmin_p, concatenate_p, cummax_p, cummin_p, cumprod_p,
                          cumsum_p, reduce_and_p, reduce_max_p, reduce_min_p, reduce_or_p,
                          reduce_prod_p, reduce_sum_p)
from ..tracing import bind
from .base import (as_kind, assign_into, convert, convert_result, dtype_of, ensure_tracer, full,
                   implements, keepdims_shape, kind_of_result, normalize_axes, real_part,
                   reduction_axes, reshape, shape_of, unsupported)
from .ufuncs import call_ufunc


def accumulator_dtype(dtype: np.dtype) -> np.dtype:
    """NumPy's add.reduce/multiply.reduce dtype: small integers and bools widen to the
    platform integer."""
    if dtype == np.bool_ or (dtype.kind == "i" and dtype.itemsize < 8):
        return np.dtype(np.int64)
    if dtype.kind == "u" and dtype.itemsize < 8:
        return np.dtype(np.uint64)
    return dtype


def writes_out(name: str, loops_in_out=None):
    """A reduction with NumPy's `out=`: the result, computed as without it, cast (unsafe, as
    NumPy's reductions cast) into `out`, which is returned. Its shape must be the result's.
    `loops_in_out(input dtype)`: whether NumPy's ufunc reduction, given out and no dtype,
    computes in out's dtype (where the input casts to it safely: float32 data summed into a
    float64 out is summed in float64)."""
    def decorate(fn):
        signature = inspect.signature(fn)

        @functools.wraps(fn)
        def reduce_into(a, *args, out=None, **kwargs):
            if out is not None and loops_in_out is not None:
                bound = signature.bind_partial(a, *args, **kwargs)
                loop = out_loop_dtype(dtype_of(a), out)
                if bound.arguments.get("dtype") is None and loops_in_out(dtype_of(a)) and \
                        loop is not None:
                    bound.arguments["dtype"] = loop
                    a, args, kwargs = bound.args[0], bound.args[1:], bound.kwargs
            return write_out(out, fn(a, *args, **kwargs), name, fn.__name__[3:])
        return reduce_into
    return decorate


def out_loop_dtype(dtype: np.dtype, out) -> np.dtype | None:
    """out's dtype where data of `dtype` casts to it safely (NumPy's ufunc reduction then
    computes in it), else None."""
    target = out[0] if isinstance(out, tuple) else out
    return dtype_of(target) if np.can_cast(dtype, dtype_of(target), "safe") else None


def write_out(out, result, ufunc_name: str, what: str):
    """A reduction's out=: the result cast (unsafe, as NumPy's reductions cast) into out,
    which is returned; its shape must be the result's. No out: the result."""
    if out is None:
        return result
    target = out[0] if isinstance(out, tuple) else out
    check_out_shape(ufunc_name, target, shape_of(result))
    return assign_into(target, result, f"np.{what}(..., out=...)", "unsafe")


def check_out_shape(name: str, out, shape) -> None:
    if tuple(shape_of(out)) == tuple(shape):
        return
    if len(shape_of(out)) != len(shape):
        raise ValueError(f"output parameter for reduction operation {name} has the wrong number "
                         f"of dimensions: Found {len(shape_of(out))} but expected {len(shape)}")
    raise ValueError(f"output parameter for reduction operation {name} has a non-matching "
                     f"shape: {tuple(shape_of(out))} instead of {tuple(shape)}")


def _reduce(prim, x, axis, keepdims, dtype=None):
    x = ensure_tracer(x)
    axes = reduction_axes(axis, x.ndim)
    if dtype is not None:
        x = convert(x, dtype)
    result = bind(prim, x, axes=axes)
    if keepdims:
        result = reshape(result, keepdims_shape(x.shape, axes))
    return as_kind(result, kind_of_result(result.ndim))


def _check_nonempty(x, axes, name):
    if any(x.shape[a] == 0 for a in axes) or (not axes and x.size == 0 and x.ndim):
        raise ValueError(f"zero-size array to reduction operation {name} which has no identity")


def _no_extras(name, out=None, where=None, initial=None, **kwargs):
    if out is not None or where is not None or initial is not None or kwargs:
        extra = [k for k, v in [("out", out), ("where", where), ("initial", initial)]
                 if v is not None] + list(kwargs)
        raise unsupported(f"{name}(..., {', '.join(extra)}=...)")


@implements(np.sum)
@writes_out("add", lambda dtype: True)
def np_sum(a, axis=None, dtype=None, keepdims=False, **extras):
    _no_extras("np.sum", **extras)
    a = ensure_tracer(a)
    return _reduce(reduce_sum_p, a, axis, keepdims, dtype or accumulator_dtype(a.dtype))


@implements(np.prod)
@writes_out("multiply", lambda dtype: True)
def np_prod(a, axis=None, dtype=None, keepdims=False, **extras):
    _no_extras("np.prod", **extras)
    a = ensure_tracer(a)
    return _reduce(reduce_prod_p, a, axis, keepdims, dtype or accumulator_dtype(a.dtype))


def _extremum(prim, name, a, axis, keepdims, extras):
    """np.max / np.min: no identity, so an empty reduction is NumPy's ValueError."""
    _no_extras(f"np.{name[:3]}", **extras)
    a = ensure_tracer(a)
    _check_nonempty(a, reduction_axes(axis, a.ndim), name)
    return _reduce(prim, a, axis, keepdims)


@implements(np.max, np.amax)
@writes_out("maximum")
def np_max(a, axis=None, keepdims=False, **extras):
    return _extremum(reduce_max_p, "maximum", a, axis, keepdims, extras)


@implements(np.min, np.amin)
@writes_out("minimum")
def np_min(a, axis=None, keepdims=False, **extras):
    return _extremum(reduce_min_p, "minimum", a, axis, keepdims, extras)


@implements(np.all)
@writes_out("logical_and")
def np_all(a, axis=None, keepdims=False, **extras):
    _no_extras("np.all", **extras)
    return _reduce(reduce_and_p, convert(ensure_tracer(a), bool), axis, keepdims)


@implements(np.any)
@writes_out("logical_or")
def np_any(a, axis=None, keepdims=False, **extras):
    _no_extras("np.any", **extras)
    return _reduce(reduce_or_p, convert(ensure_tracer(a), bool), axis, keepdims)


def _count(shape, axes) -> int:
    return int(np.prod([shape[a] for a in axes], dtype=np.int64))


def mean_dtypes(dtype: np.dtype, requested=None) -> tuple[np.dtype, np.dtype]:
    """(dtype to sum in, dtype of the result) of np.mean."""
    if requested is not None:
        requested = np.dtype(requested)
        acc = np.dtype(np.float32) if requested == np.float16 else requested
        return acc, requested
    if dtype.kind in "biu":
        return np.dtype(np.float64), np.dtype(np.float64)
    if dtype == np.float16:
        return np.dtype(np.float32), dtype
    return dtype, dtype


@implements(np.mean)
@writes_out("add", lambda dtype: dtype.kind in "fc")   # (ints: NumPy sums in float64)
def np_mean(a, axis=None, dtype=None, keepdims=False, **extras):
    _no_extras("np.mean", **extras)
    a = ensure_tracer(a)
    axes = normalize_axes(axis, a.ndim)
    acc, out = mean_dtypes(a.dtype, dtype)
    total = _reduce(reduce_sum_p, a, axis, keepdims, acc)
    n = _count(a.shape, axes)
    result = call_ufunc(np.divide, total, np.array(n if n else np.nan, acc)) if n else \
        call_ufunc(np.multiply, total, np.array(np.nan, acc))
    return convert_result(result, out)


@implements(np.var)
@writes_out("add")
def np_var(a, axis=None, dtype=None, ddof=0, keepdims=False, mean=None, correction=None,
           **extras):
    _no_extras("np.var", **extras)
    if correction is not None:          # the Array API's name for ddof
        if ddof != 0:
            raise ValueError("ddof and correction can't be provided simultaneously.")
        ddof = correction
    a = ensure_tracer(a)
    axes = normalize_axes(axis, a.ndim)
    acc, out = mean_dtypes(a.dtype, dtype)
    if mean is None:
        mean = np_mean(convert(a, acc), axis, keepdims=True)
    centered = call_ufunc(np.subtract, convert(a, acc), mean)
    if acc.kind == "c":
        squared = real_part(call_ufunc(np.multiply, centered, call_ufunc(np.conjugate, centered)))
    else:
        squared = call_ufunc(np.multiply, centered, centered)
    total = _reduce(reduce_sum_p, squared, axis, keepdims)
    n = _count(a.shape, axes) - ddof
    result = call_ufunc(np.divide, total, np.array(max(n, 0), total.dtype) if n > 0 else
                        np.array(0, total.dtype))
    out_dtype = np.real(np.zeros((), out)).dtype
    return convert_result(result, out_dtype)


@implements(np.std)
@writes_out("add")
def np_std(a, axis=None, dtype=None, ddof=0, keepdims=False, **extras):
    return call_ufunc(np.sqrt, np_var(a, axis, dtype, ddof, keepdims, **extras))


def _arg_reduce(prim, a, axis, keepdims, name):
    a = ensure_tracer(a)
    if axis is None:
        if a.size == 0:
            raise ValueError(f"attempt to get {name} of an empty sequence")
        flat = reshape(a, (a.size,))
        result = bind(prim, flat, axis=0, index_dtype=np.dtype(np.int64))
        if keepdims:
            result = reshape(result, (1,) * a.ndim)
        return as_kind(result, "array" if keepdims else "scalar")
    if not reduction_axes(axis, a.ndim):     # a 0-d array, axis 0 or -1: index 0
        return as_kind(full((), 0, np.int64), "scalar")
    (ax,) = normalize_axes(axis, a.ndim)
    if a.shape[ax] == 0:
        raise ValueError(f"attempt to get {name} of an empty sequence")
    result = bind(prim, a, axis=ax, index_dtype=np.dtype(np.int64))
    if keepdims:
        result = reshape(result, keepdims_shape(a.shape, (ax,)))
    return as_kind(result, kind_of_result(result.ndim))


@implements(np.argmax)
@writes_out("argmax")
def np_argmax(a, axis=None, out=None, *, keepdims=False):
    if out is not None:
        raise unsupported("np.argmax(..., out=...)")
    return _arg_reduce(argmax_p, a, axis, keepdims, "argmax")


@implements(np.argmin)
@writes_out("argmin")
def np_argmin(a, axis=None, out=None, *, keepdims=False):
    if out is not None:
        raise unsupported("np.argmin(..., out=...)")
    return _arg_reduce(argmin_p, a, axis, keepdims, "argmin")


def _cumulative(prim, a, axis, dtype):
    a = ensure_tracer(a)
    if axis is None or not reduction_axes(axis, a.ndim):
        a = reshape(a, (a.size,))
        axis = 0
    (ax,) = normalize_axes(axis, a.ndim)
    if dtype is not None:
        a = convert(a, dtype)
    return as_kind(bind(prim, a, axis=ax, reverse=False), "array")


@implements(np.cumsum)
@writes_out("add", lambda dtype: True)
def np_cumsum(a, axis=None, dtype=None, out=None):
    if out is not None:
        raise unsupported("np.cumsum(..., out=...)")
    return _cumulative(cumsum_p, a, axis, dtype or accumulator_dtype(dtype_of(a)))


@implements(np.cumprod)
@writes_out("multiply", lambda dtype: True)
def np_cumprod(a, axis=None, dtype=None, out=None):
    if out is not None:
        raise unsupported("np.cumprod(..., out=...)")
    return _cumulative(cumprod_p, a, axis, dtype or accumulator_dtype(dtype_of(a)))


@implements(np.cumulative_sum)
def np_cumulative_sum(x, /, *, axis=None, dtype=None, out=None, include_initial=False):
    return _cumulative_function(np_cumsum, 0, x, axis, dtype, out, include_initial)


@implements(np.cumulative_prod)
def np_cumulative_prod(x, /, *, axis=None, dtype=None, out=None, include_initial=False):
    return _cumulative_function(np_cumprod, 1, x, axis, dtype, out, include_initial)


def _cumulative_function(cumulate, identity, x, axis, dtype, out, include_initial):
    """NumPy's _cumulative_func: at least 1-d, an axis required above 1-d, and the identity
    first along the axis when include_initial."""
    if out is not None:
        raise unsupported("np.cumulative_sum/np.cumulative_prod(..., out=...)")
    x = ensure_tracer(x)
    if x.ndim == 0:
        x = reshape(x, (1,))
    if axis is None:
        if x.ndim >= 2:
            raise ValueError("For arrays which have more than one dimension ``axis`` argument "
                             "is required.")
        axis = 0
    result = cumulate(x, axis, dtype)
    if not include_initial:
        return result
    (ax,) = normalize_axes(axis, result.ndim)
    initial_shape = result.shape[:ax] + (1,) + result.shape[ax + 1:]
    initial = full(initial_shape, identity, result.dtype)
    return as_kind(bind(concatenate_p, initial, result, dimension=ax), "array")


UFUNC_REDUCERS = {
    np.add: lambda a, axis=0, dtype=None, keepdims=False, **k: np_sum(a, axis, dtype, keepdims, **k),
    np.multiply: lambda a, axis=0, dtype=None, keepdims=False, **k: np_prod(a, axis, dtype, keepdims,
                                                                            **k),
    np.maximum: lambda a, axis=0, keepdims=False, **k: np_max(a, axis, keepdims, **k),
    np.minimum: lambda a, axis=0, keepdims=False, **k: np_min(a, axis, keepdims, **k),
    np.logical_and: lambda a, axis=0, keepdims=False, **k: np_all(a, axis, keepdims, **k),
    np.logical_or: lambda a, axis=0, keepdims=False, **k: np_any(a, axis, keepdims, **k),
}


def _accumulate_minmax(prim):
    @writes_out(prim.name)
    def np_accumulate(a, axis=0, dtype=None):
        return _cumulative(prim, a, axis, dtype)
    return np_accumulate


def _accumulate(fn):
    """ufunc.accumulate refuses a 0-d operand (the functions np.cumsum/np.cumprod do not)."""
    def accumulate(a, axis=0, dtype=None, out=None):
        if len(shape_of(a)) == 0:
            raise TypeError("cannot accumulate on a scalar")
        return fn(a, axis, dtype, out=out)
    return accumulate


UFUNC_ACCUMULATORS = {
    np.add: _accumulate(np_cumsum),
    np.multiply: _accumulate(np_cumprod),
    np.maximum: _accumulate(_accumulate_minmax(cummax_p)),
    np.minimum: _accumulate(_accumulate_minmax(cummin_p)),
}
