"""NumPy's NaN-ignoring functions on tracers: nansum, nanprod, nancumsum, nancumprod, nanmax,
nanmin, nanargmax, nanargmin, nanmean, nanvar, nanstd, nanmedian, nanquantile, nanpercentile.

Each follows numpy/lib/_nanfunctions_impl.py step by step: NaN replaced by the identity of the
reduction (0 for sums, 1 for products, -inf / +inf for the arg-extrema), then the plain
function; integer and bool operands go straight to the plain function, as NumPy sends them.
nanmax/nanmin are NumPy's fmax/fmin reductions: NaN where a slice holds nothing else.
nanmedian and nanquantile sort each slice (NaN last) and take NumPy's positions for the
traced count of the slice's non-NaN values.

What only the values decide: nanargmax/nanargmin's ValueError for an all-NaN slice is raised
by the run, before anything is written back (a `tracing.RuntimeCheck`). NumPy's warnings for
all-NaN or empty slices ("All-NaN slice encountered", "Mean of empty slice", "Degrees of
freedom <= 0") are not given: compiled code does not warn, as it does not for 1 / 0. Where
NumPy's result dtype hangs on the values (nanquantile of float16/float32 with an array q
takes the dtype of its first slice's result: the input's when that slice is all NaN), the run
raises DataDependentShapeError and the cell runs as plain Python.
"""
from __future__ import annotations

import numpy as np
from numpy.lib.array_utils import normalize_axis_tuple

from ..primitives import gather_p
from ..tracing import DataDependentShapeError, Tracer, bind
from .base import (as_array, as_kind, assign_into, broadcast_to, convert, convert_result,
                   implements, real_part, reduction_axes, reshape, static_slice, unsupported)
from .checks import require
from .reductions import (mean_dtypes, np_all, np_any, np_argmax, np_argmin, np_cumprod,
                         np_cumsum, np_max, np_mean, np_min, np_prod, np_sum, np_var,
                         out_loop_dtype, write_out)
from .sorting import axes_to_front, np_median, np_quantile, quantile_keepdims_shape, sorted_along
from .ufuncs import call_ufunc, np_where

ALL_NAN = "All-NaN slice encountered"


def _refuse(name: str, **arguments) -> None:
    """unsupported(...) for the arguments psc_jit does not honour here (given, not None)."""
    given = [k for k, v in arguments.items() if v is not None]
    if given:
        raise unsupported(f"np.{name}(..., {', '.join(given)}=...)")


def _replace_nan(a, value):
    """NumPy's _replace_nan: (a with NaN replaced by value, the NaN mask); (a, None) when a
    cannot hold NaN."""
    a = as_array(a)
    if a.dtype.kind not in "fc":
        return a, None
    mask = call_ufunc(np.isnan, a)
    return as_kind(np_where(mask, convert(value, a.dtype), a), "array"), mask


def _sum_dtype(a: Tracer, dtype, out):
    """The dtype a reduction sums in: dtype=, else out's dtype where a casts to it safely (as
    NumPy's ufunc.reduce picks its loop), else None (the reduction's own)."""
    return dtype if dtype is not None or out is None else out_loop_dtype(a.dtype, out)


def _not(x):
    return call_ufunc(np.logical_not, x)


# -- sums, products, cumulative ones ----------------------------------------------------------

@implements(np.nansum)
def np_nansum(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
    _refuse("nansum", initial=initial, where=where)
    a, _ = _replace_nan(a, 0)
    return np_sum(a, axis, _sum_dtype(a, dtype, out), keepdims, out=out)


@implements(np.nanprod)
def np_nanprod(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
    _refuse("nanprod", initial=initial, where=where)
    a, _ = _replace_nan(a, 1)
    return np_prod(a, axis, _sum_dtype(a, dtype, out), keepdims, out=out)


@implements(np.nancumsum)
def np_nancumsum(a, axis=None, dtype=None, out=None):
    a, _ = _replace_nan(a, 0)
    return np_cumsum(a, axis, _sum_dtype(a, dtype, out), out=out)


@implements(np.nancumprod)
def np_nancumprod(a, axis=None, dtype=None, out=None):
    a, _ = _replace_nan(a, 1)
    return np_cumprod(a, axis, _sum_dtype(a, dtype, out), out=out)


# -- extrema and their positions --------------------------------------------------------------

def _fmax_reduce(reduce, ufunc_name, a, axis, out, keepdims, initial, where):
    """NumPy's fmax.reduce / fmin.reduce: the extremum of the non-NaN values, NaN for a slice
    of NaN only; no identity, so an empty reduction raises."""
    _refuse(f"nan{ufunc_name[1:]}", initial=initial, where=where)
    a = as_array(a)
    axes = reduction_axes(axis, a.ndim)
    if any(a.shape[d] == 0 for d in axes) or (not axes and a.size == 0 and a.ndim):
        raise ValueError(f"zero-size array to reduction operation {ufunc_name} which has no "
                         "identity")
    replaced, mask = _replace_nan(a, -np.inf if ufunc_name == "fmax" else np.inf)
    result = reduce(replaced, axis, keepdims)
    if mask is not None:
        all_nan = np_all(mask, axis, keepdims=keepdims)
        result = as_kind(np_where(all_nan, convert(np.nan, a.dtype), result), result.kind)
    return write_out(out, result, ufunc_name, f"nan{ufunc_name[1:]}")


@implements(np.nanmax)
def np_nanmax(a, axis=None, out=None, keepdims=False, initial=None, where=None):
    return _fmax_reduce(np_max, "fmax", a, axis, out, keepdims, initial, where)


@implements(np.nanmin)
def np_nanmin(a, axis=None, out=None, keepdims=False, initial=None, where=None):
    return _fmax_reduce(np_min, "fmin", a, axis, out, keepdims, initial, where)


def _nan_arg_reduce(arg_reduce, fill, name, a, axis, out, keepdims):
    """NumPy's nanargmax/nanargmin: NaN replaced by fill, the run raises ValueError for a
    slice of NaN only, then the plain argmax/argmin."""
    _refuse(name, out=out)
    a, mask = _replace_nan(a, fill)
    if mask is not None and mask.size:
        require(_not(np_any(np_all(mask, axis))), ALL_NAN, ValueError)
    return arg_reduce(a, axis, keepdims=keepdims)


@implements(np.nanargmax)
def np_nanargmax(a, axis=None, out=None, *, keepdims=False):
    return _nan_arg_reduce(np_argmax, -np.inf, "nanargmax", a, axis, out, keepdims)


@implements(np.nanargmin)
def np_nanargmin(a, axis=None, out=None, *, keepdims=False):
    return _nan_arg_reduce(np_argmin, np.inf, "nanargmin", a, axis, out, keepdims)


# -- mean, var, std ---------------------------------------------------------------------------

def _check_inexact(dtype, out):
    """NumPy's TypeErrors of nanmean/nanvar for an inexact operand."""
    if dtype is not None and np.dtype(dtype).kind not in "fc":
        raise TypeError("If a is inexact, then dtype must be inexact")
    if out is not None and np.dtype(out.dtype).kind not in "fc":
        raise TypeError("If a is inexact, then out must be inexact")


def _divide_by_count(total, count, out=None):
    """NumPy's _divide_by_count: total / count in total's dtype (into out when given)."""
    quotient = call_ufunc(np.divide, total, count)
    if out is not None:
        return assign_into(out, quotient, "np.divide(..., out=...)", "unsafe")
    return convert_result(quotient, total.dtype)


def _count(mask, axis, keepdims):
    """The number of non-NaN values of each slice (int64, NumPy's intp)."""
    return np_sum(_not(mask), axis, np.int64, keepdims)


@implements(np.nanmean)
def np_nanmean(a, axis=None, dtype=None, out=None, keepdims=False, *, where=None):
    _refuse("nanmean", where=where)
    arr, mask = _replace_nan(a, 0)
    if mask is None:
        return np_mean(arr, axis, dtype, keepdims, out=out)
    _check_inexact(dtype, out)
    count = _count(mask, axis, keepdims)
    total = np_sum(arr, axis, _sum_dtype(arr, dtype, out), keepdims, out=out)
    return _divide_by_count(total, count, out)


@implements(np.nanvar)
def np_nanvar(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None,
              mean=None, correction=None):
    _refuse("nanvar", where=where)
    arr, mask = _replace_nan(a, 0)
    if mask is None:
        return np_var(arr, axis, dtype, ddof, keepdims, mean=mean, correction=correction,
                      out=out)
    _check_inexact(dtype, out)
    if correction is not None:
        if ddof != 0:
            raise ValueError("ddof and correction can't be provided simultaneously.")
        ddof = correction
    count = _count(mask, axis, True)
    if mean is None:
        mean = _divide_by_count(np_sum(arr, axis, dtype, True), count)
    centered = convert(call_ufunc(np.subtract, arr, mean), arr.dtype)
    centered = np_where(mask, convert(0, arr.dtype), centered)
    if arr.dtype.kind == "c":
        squared = real_part(call_ufunc(np.multiply, centered, call_ufunc(np.conjugate, centered)))
    else:
        squared = call_ufunc(np.multiply, centered, centered)
    var = np_sum(squared, axis, _sum_dtype(squared, dtype, out), keepdims, out=out)
    dof = call_ufunc(np.subtract, reshape(count, var.shape), ddof)
    var = _divide_by_count(var, dof, out)
    bad = call_ufunc(np.less_equal, dof, 0)
    result = as_kind(np_where(bad, convert(np.nan, var.dtype), var), var.kind)
    return result if out is None else assign_into(out, result, "np.nanvar(..., out=...)")


@implements(np.nanstd)
def np_nanstd(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None,
              mean=None, correction=None):
    _refuse("nanstd", where=where)
    var = np_nanvar(a, axis, dtype, out, ddof, keepdims, where=where, mean=mean,
                    correction=correction)
    return call_ufunc(np.sqrt, var, out=out)


# -- median and quantiles ---------------------------------------------------------------------

def _check_axes(a: Tracer, axis) -> None:
    """NumPy's _ureduce: its errors for axis (AxisError, "repeated axis")."""
    if axis is not None:
        normalize_axis_tuple(axis, a.ndim)


def _front(a: Tracer, axis):
    """(values sorted along axis 0 with NaN last, the reduced axes flattened into it; the
    count of non-NaN values of each slice; the reduced axes)."""
    front, axes = axes_to_front(a, axis)
    count = np_sum(_not(call_ufunc(np.isnan, front)), 0, np.int64)
    return sorted_along(front, 0), count, axes


def _take_rows(ordered: Tracer, positions: Tracer) -> Tracer:
    """ordered[positions[..., k], k] along axis 0, for positions (int64, shape q + kept)
    within [0, n) (a slice with no values has its positions clamped)."""
    n, kept = ordered.shape[0], ordered.shape[1:]
    width = int(np.prod(kept, dtype=np.int64))
    positions = _ufunc("minimum", _ufunc("maximum", positions, np.int64(0)), np.int64(n - 1))
    offsets = np.arange(width, dtype=np.int64).reshape(kept)
    flat = call_ufunc(np.add, call_ufunc(np.multiply, positions, np.int64(width)), offsets)
    index = reshape(flat, tuple(flat.shape) + (1,))
    return bind(gather_p, reshape(ordered, (ordered.size,)), index, num_indexed=1)


def _with_nan_where_empty(result, count):
    empty = broadcast_to(call_ufunc(np.equal, count, 0), result.shape)
    return np_where(empty, convert(np.nan, result.dtype), result)


def _finish(result, a, axes, keepdims, out, name, q_shape=()):
    """keepdims, NumPy's kind (a NumPy scalar for a 0-d result, unless keepdims), out=."""
    if keepdims:
        result = reshape(result, quantile_keepdims_shape(a.shape, axes, q_shape))
    return _set_out(as_kind(result, "array" if keepdims or result.ndim else "scalar"), out, name)


def _set_out(result, out, name):
    """NumPy's `out[...] = result` (unsafe casting), out returned."""
    return result if out is None else assign_into(out, result, f"np.{name}(..., out=...)",
                                                  "unsafe")


def _middle_mean(lo, hi, odd, one_slice: bool):
    """The median of a slice from its middle values: NumPy's np.median (`one_slice`: the
    mean of the one or two middle values) or np.ma.median's (their sum, halved, in the
    operand's dtype)."""
    dtype = lo.dtype
    acc, result_dtype = mean_dtypes(dtype)
    total = call_ufunc(np.add, convert(lo, acc), convert(hi, acc))
    if one_slice:
        mean = convert(call_ufunc(np.divide, total, convert(2, acc)), result_dtype)
        return np_where(odd, convert(lo, result_dtype), mean)
    return call_ufunc(np.divide, convert(total, dtype), convert(2, dtype))


@implements(np.nanmedian)
def np_nanmedian(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    a = as_array(a)
    if a.size == 0:
        return np_nanmean(a, axis, out=out, keepdims=keepdims)
    _check_axes(a, axis)
    if a.dtype.kind not in "fc":       # (no NaN: np.median's values)
        result = np_median(a, axis, keepdims=keepdims)
        return _set_out(as_kind(result, "array") if keepdims else result, out, "nanmedian")
    ordered, count, axes = _front(a, axis)
    lo = _take_rows(ordered, call_ufunc(np.floor_divide, call_ufunc(np.subtract, count, 1), 2))
    hi = _take_rows(ordered, call_ufunc(np.floor_divide, count, 2))
    odd = call_ufunc(np.equal, call_ufunc(np.remainder, count, 2), 1)
    # NumPy: np.median of each slice alone (one slice, or slices of 600 values or more);
    # else np.ma.median of the slices at once
    one_slice = ordered.ndim == 1 or ordered.shape[0] >= 600
    result = _with_nan_where_empty(_middle_mean(lo, hi, odd, one_slice), count)
    return _finish(result, a, axes, keepdims, out, "nanmedian")


# NumPy's virtual index n*q + (alpha + q*(1 - alpha - beta)) - 1 of its continuous methods
CONTINUOUS = {"interpolated_inverted_cdf": (0, 1), "hazen": (0.5, 0.5), "weibull": (0, 0),
              "median_unbiased": (1 / 3.0, 1 / 3.0), "normal_unbiased": (3 / 8.0, 3 / 8.0)}
INDEX_METHODS = ("inverted_cdf", "closest_observation", "lower", "higher", "nearest")
METHODS = ("linear", "averaged_inverted_cdf", "midpoint") + tuple(CONTINUOUS) + INDEX_METHODS


def _ufunc(name, *args):
    return call_ufunc(getattr(np, name), *args)


def _to_boundaries(index, condition):
    """NumPy's _discrete_interpolation_to_boundaries: floor(index) where condition(gamma,
    index), else the next index; never below 0."""
    previous = _ufunc("floor", index)
    gamma = _ufunc("subtract", index, previous)
    chosen = np_where(condition(gamma, index), previous, _ufunc("add", previous, 1))
    return _ufunc("maximum", convert(chosen, np.int64), np.int64(0))


def _virtual_index(method: str, n, q: np.ndarray):
    """NumPy's get_virtual_index of each method (its `_QuantileMethods`), for a traced
    count n of the q's dtype (NumPy's n is a Python int)."""
    if method in CONTINUOUS:
        alpha, beta = CONTINUOUS[method]
        return _ufunc("subtract", _ufunc("add", _ufunc("multiply", n, q),
                                         alpha + q * (1 - alpha - beta)), 1)
    if method in ("inverted_cdf", "averaged_inverted_cdf", "closest_observation"):
        index = _ufunc("subtract", _ufunc("multiply", n, q), 1)
        if method == "averaged_inverted_cdf":
            return index
        if method == "inverted_cdf":
            return _to_boundaries(index, lambda gamma, _: _ufunc("equal", gamma, 0))
        return _to_boundaries(_ufunc("subtract", index, 0.5), lambda gamma, i: _ufunc(
            "logical_and", _ufunc("equal", gamma, 0),
            _ufunc("equal", _ufunc("remainder", _ufunc("floor", i), 2), 1)))
    scaled = _ufunc("multiply", _ufunc("subtract", n, 1), q)
    rounding = {"lower": "floor", "higher": "ceil", "nearest": "rint"}
    if method in rounding:
        return convert(_ufunc(rounding[method], scaled), np.int64)
    if method == "midpoint":
        return _ufunc("multiply", 0.5, _ufunc("add", _ufunc("floor", scaled),
                                             _ufunc("ceil", scaled)))
    return scaled        # linear


def _indexes(virtual, count):
    """NumPy's _get_indexes for a traced count: (floor, floor + 1), both -1 (the last value)
    at or past the last position, both 0 before the first."""
    previous = _ufunc("floor", virtual)
    following = _ufunc("add", previous, 1)
    above = _ufunc("greater_equal", virtual, _ufunc("subtract", count, 1))
    below = _ufunc("less", virtual, 0)
    for mask, value in ((above, -1), (below, 0)):
        previous = np_where(mask, convert(value, previous.dtype), previous)
        following = np_where(mask, convert(value, following.dtype), following)
    return previous, following


def _gamma(method, virtual, previous):
    """NumPy's _get_gamma: the weight of the following value, fixed by the method."""
    gamma = _ufunc("subtract", virtual, previous)
    if method == "averaged_inverted_cdf":
        gamma = np_where(_ufunc("equal", gamma, 0), convert(0.5, gamma.dtype),
                         convert(1.0, gamma.dtype))
    elif method == "midpoint":
        gamma = np_where(_ufunc("equal", _ufunc("remainder", virtual, 1), 0),
                         convert(0.0, gamma.dtype), convert(0.5, gamma.dtype))
    return convert(gamma, virtual.dtype)


def _position(index, count):
    """A position of NumPy's NaN-free slice (-1: its last) in the sorted slice."""
    index = convert(index, np.int64)
    return np_where(_ufunc("less", index, 0), _ufunc("add", index, count), index)


def _lerp(a, b, t, weak: bool):
    """NumPy's _lerp: a + (b-a)*t, and b - (b-a)*(1-t) where t >= 0.5. `weak`: NumPy's t is
    a Python float (a Python q), so the operands' dtype stays."""
    upper, rest = _ufunc("greater_equal", t, 0.5), _ufunc("subtract", 1, t)
    if weak:
        t, rest = convert(t, a.dtype), convert(rest, a.dtype)
    diff = _ufunc("subtract", b, a)
    low = _ufunc("add", a, _ufunc("multiply", diff, t))
    high = convert(_ufunc("subtract", b, _ufunc("multiply", diff, rest)), low.dtype)
    return np_where(broadcast_to(upper, low.shape), high, low)


def _nan_quantile_values(ordered, count, q: np.ndarray, method: str, weak: bool):
    """The quantiles q (static, shaped to broadcast with count) of each slice's non-NaN
    values: NumPy's _quantile on the slice with its NaN removed."""
    n = convert(count, np.result_type(q.dtype, 1))
    virtual = _virtual_index(method, n, q)
    if method in INDEX_METHODS or (method == "linear" and virtual.dtype.kind in "iu"):
        return _take_rows(ordered, _position(virtual, count))
    previous, following = _indexes(virtual, count)
    gamma = _gamma(method, virtual, previous)
    return _lerp(_take_rows(ordered, _position(previous, count)),
                 _take_rows(ordered, _position(following, count)), gamma, weak)


def _require_first_slice_dtype(result, count, a_dtype, name):
    """NumPy's nanquantile takes its result dtype from its first slice's result: the
    operand's own dtype when that slice is all NaN. The run checks that it is not."""
    if result.dtype == a_dtype:
        return
    first = static_slice(reshape(count, (count.size,)), (0,), (1,))
    require(np_all(_ufunc("greater", first, 0)),
             f"np.{name}'s first slice is all NaN, so NumPy's result would be {a_dtype}; the "
             f"compiled program's is {result.dtype}", DataDependentShapeError)


def _nan_quantile(name, a, q, axis, out, method, keepdims, weights, weak):
    _refuse(name, weights=weights)
    if method not in METHODS:
        raise ValueError(f"{method!r} is not a valid method. Use one of: "
                         f"{np.lib._function_base_impl._QuantileMethods.keys()}")
    if a.size == 0:
        return np_nanmean(a, axis, out=out, keepdims=keepdims)
    _check_axes(a, axis)
    if a.dtype.kind not in "fc":       # (no NaN: np.quantile's values)
        result = np_quantile(a, q, axis, method=method, keepdims=keepdims)
        return _set_out(as_kind(result, "array") if keepdims else result, out, name)
    if q.ndim > 2:
        raise ValueError("q must be a scalar or 1d")
    ordered, count, axes = _front(a, axis)
    shaped_q = q.reshape(q.shape + (1,) * count.ndim)
    result = _nan_quantile_values(ordered, count, shaped_q, method, weak)
    _require_first_slice_dtype(result, count, a.dtype, name)
    result = _with_nan_where_empty(result, count)
    return _finish(result, a, axes, keepdims, out, name, q.shape)


def _quantile_operands(a, q):
    """(a, q as a static value, whether q was a Python scalar): q may be a tracer whose value
    the trace knows (an np.array(...) of constants)."""
    weak = type(q) in (int, float)
    if isinstance(q, Tracer):
        known = q.known_value()
        if known is None:
            raise unsupported("a traced q (quantiles computed from the data)",
                              "pass q as a static value")
        q, weak = known, q.kind == "python"
    a = as_array(a)
    if a.dtype.kind == "c":
        raise TypeError("a must be an array of real numbers")
    return a, q, weak


@implements(np.nanquantile)
def np_nanquantile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
                   keepdims=False, *, weights=None):
    a, q, weak = _quantile_operands(a, q)
    q = np.asanyarray(q)
    if not np.all((q >= 0) & (q <= 1)):
        raise ValueError("Quantiles must be in the range [0, 1]")
    return _nan_quantile("nanquantile", a, q, axis, out, method, keepdims, weights, weak)


@implements(np.nanpercentile)
def np_nanpercentile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
                     keepdims=False, *, weights=None):
    a, q, weak = _quantile_operands(a, q)
    q = np.asanyarray(np.true_divide(q, 100))
    if not np.all((q >= 0) & (q <= 1)):
        raise ValueError("Percentiles must be in the range [0, 100]")
    return _nan_quantile("nanpercentile", a, q, axis, out, method, keepdims, weights, weak)
