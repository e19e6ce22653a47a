"""NumPy's sorting, searching and order statistics on tracers.

sort/argsort are the `sort` and `argsort` primitives in the order of the kind asked (NaN last,
as NumPy orders them; the default kind's ties as NumPy's own sort functions leave them, where
the program calls them, core/primitives/sorting.py); searchsorted
is an unrolled binary search (one gather per halving, the number of steps is static);
digitize is searchsorted on the bins or on the bins reversed, as NumPy's monotonicity test
decides (for traced bins, the run decides and checks); median/percentile/quantile sort and
interpolate with NumPy's own formulas, the positions and weights computed by NumPy from the
static `q`. Functions whose result has a data-dependent shape (nonzero, argwhere, flatnonzero,
unique, extract) are refused at trace time.
"""
from __future__ import annotations

import numpy as np
from numpy.lib.array_utils import normalize_axis_tuple
from numpy.lib import _function_base_impl as numpy_function_base

from ..primitives import argsort_p, gather_p, sort_p
from ..tracing import Tracer, bind, current_trace
from .base import (as_array, as_kind, assign_into, broadcast_to, convert, ensure_tracer, imag_part,
                   implements, normalize_axes, real_part, refusing, reshape, result_type,
                   transpose, unsupported)
from .indexing import getitem
from .reductions import np_any, np_argmax, np_mean
from .ufuncs import call_ufunc, np_where


def _sort_axis(a, axis, quirk=False):
    """(array, axis) with axis=None meaning the flattened array; `quirk`: NumPy's C sorts
    (argsort) take axis 0 or -1 of a 0-d array as the flattened one."""
    a = as_array(a)
    if axis is None or (quirk and a.ndim == 0 and axis in (0, -1)):
        return reshape(a, (a.size,)), 0
    return a, normalize_axes(axis, a.ndim)[0]


def _no_order(name, order):
    if order is not None:
        raise unsupported(f"np.{name}(..., order=...) (structured arrays)")


def _along_axis(a: Tracer, order: Tracer, ax: int) -> Tracer:
    """np.take_along_axis for indices known to be in bounds (no run-time check): one gather
    at flat positions."""
    shape = np.broadcast_shapes(a.shape, order.shape)
    if not a.size:
        return as_kind(ensure_tracer(np.zeros(shape, a.dtype)), "array")
    strides = [int(np.prod(a.shape[d + 1:], dtype=np.int64)) for d in range(a.ndim)]
    static = sum(np.arange(n).reshape([-1 if d == k else 1 for k in range(a.ndim)]) * strides[d]
                 for d, n in enumerate(a.shape) if d != ax)
    positions = call_ufunc(np.add, call_ufunc(np.multiply, convert(order, np.int64),
                                              np.int64(strides[ax])), np.asarray(static))
    positions = broadcast_to(positions, shape)
    return _gather_flat(reshape(a, (a.size,)), positions)


def _gather_flat(flat: Tracer, positions) -> Tracer:
    index = reshape(ensure_tracer(positions), tuple(np.shape(positions)) + (1,))
    return as_kind(bind(gather_p, flat, index, num_indexed=1), "array")


def take_in_bounds(a: Tracer, index, ax: int = 0) -> Tracer:
    """np.take(a, index, axis=ax) for indices known to be in bounds (no run-time check)."""
    if not a.size:
        shape = a.shape[:ax] + np.shape(index) + a.shape[ax + 1:]
        return as_kind(ensure_tracer(np.zeros(shape, a.dtype)), "array")
    moved = transpose(a, [ax] + [d for d in range(a.ndim) if d != ax])
    index = ensure_tracer(index)
    gathered = bind(gather_p, moved, reshape(convert(index, np.int64),
                                                        index.shape + (1,)), num_indexed=1)
    k = index.ndim
    order = list(range(k, k + ax)) + list(range(k)) + list(range(k + ax, gathered.ndim))
    return as_kind(transpose(gathered, order), "array")


def sorted_along(a: Tracer, ax: int, stable: bool = False) -> Tracer:
    """a sorted along ax: the values of NumPy's order (`stable`: which of the orders of equal
    values that differ in their bits, -0.0 and 0.0 or NaN payloads, NumPy's stable sort
    gives; else its default sort's)."""
    (result,) = bind(sort_p, a, dimension=ax, num_keys=1, stable=stable)
    return result


def _stable_kind(kind, stable) -> bool:
    """Whether np.sort's `kind` and `stable` arguments ask for a stable sort (NumPy's rules:
    'quicksort' and 'heapsort' are its default sort, 'stable' and 'mergesort' its stable one,
    by first letter)."""
    if kind is not None and stable is not None:
        raise ValueError("`kind` and keyword parameters can't be provided at the same time. "
                         "Use only one of them.")
    if stable is not None:
        return bool(stable)
    if kind is None:
        return False
    if not isinstance(kind, str):
        raise TypeError(f"sort kind must be str, not {type(kind).__name__}")
    letter = kind[:1].lower()
    if letter not in ("q", "h", "m", "s"):
        raise ValueError(f"sort kind must be one of 'quick', 'heap', or 'stable' (got {kind!r})")
    return letter in ("m", "s")


@implements(np.sort)
def np_sort(a, axis=-1, kind=None, order=None, *, stable=None):
    _no_order("sort", order)
    stable = _stable_kind(kind, stable)
    a, ax = _sort_axis(a, axis)
    return as_kind(sorted_along(a, ax, stable), "array")


@implements(np.argsort)
def np_argsort(a, axis=-1, kind=None, order=None, *, stable=None):
    _no_order("argsort", order)
    stable = _stable_kind(kind, stable)
    a, ax = _sort_axis(a, axis, quirk=True)
    return as_kind(bind(argsort_p, a, dimension=ax, stable=stable), "array")


def sort_in_place(self, axis=-1, kind=None, order=None, *, stable=None):
    """ndarray.sort: sorts the array itself and returns None."""
    assign_into(self, np_sort(self, axis, kind, order, stable=stable), ".sort()")


# -- searchsorted -----------------------------------------------------------------------------

def _before(x, y):
    """x < y in NumPy's sort order (NaN after every number; complex: real part first)."""
    if np.dtype(x.dtype).kind == "c":
        rx, ry = real_part(x), real_part(y)
        same_real = call_ufunc(np.logical_or, call_ufunc(np.equal, rx, ry), call_ufunc(
            np.logical_and, call_ufunc(np.isnan, rx), call_ufunc(np.isnan, ry)))
        return call_ufunc(np.logical_or, _before(rx, ry), call_ufunc(
            np.logical_and, same_real, _before(imag_part(x), imag_part(y))))
    less = call_ufunc(np.less, x, y)
    if np.dtype(x.dtype).kind != "f":
        return less
    x_num = call_ufunc(np.logical_not, call_ufunc(np.isnan, x))
    return call_ufunc(np.logical_or, less, call_ufunc(np.logical_and, x_num,
                                                      call_ufunc(np.isnan, y)))


@implements(np.searchsorted)
def np_searchsorted(a, v, side="left", sorter=None):
    a = as_array(a)
    if a.ndim != 1:
        raise ValueError("object too deep for desired array")
    if side not in ("left", "right"):
        raise ValueError(f"side must be 'left' or 'right' (got {side!r})")
    if sorter is not None:
        a = np_take(a, sorter)          # (user indices: checked at run time, as NumPy does)
    v_arr = as_array(v)
    dtype = np.result_type(a.dtype, v_arr.dtype)
    a, values = convert(a, dtype), convert(v_arr, dtype)
    n = a.shape[0]
    lo = ensure_tracer(np.zeros(values.shape, np.int64))
    hi = ensure_tracer(np.full(values.shape, n, np.int64))
    for _ in range(n.bit_length()):
        lo, hi = _halve(a, values, lo, hi, side)
    return as_kind(lo, "array" if values.ndim else "scalar")


def _halve(a, values, lo, hi, side):
    n = a.shape[0]
    mid = call_ufunc(np.right_shift, call_ufunc(np.add, lo, hi), np.int64(1))
    at_mid = take_in_bounds(a, call_ufunc(np.minimum, mid, np.int64(n - 1)))
    if side == "left":
        go_right = _before(at_mid, values)
    else:
        go_right = call_ufunc(np.logical_not, _before(values, at_mid))
    active = call_ufunc(np.less, lo, hi)
    new_lo = np_where(call_ufunc(np.logical_and, active, go_right),
                      call_ufunc(np.add, mid, np.int64(1)), lo)
    new_hi = np_where(call_ufunc(np.logical_and, active, call_ufunc(np.logical_not, go_right)),
                      mid, hi)
    return new_lo, new_hi


# -- digitize ---------------------------------------------------------------------------------

def _static_monotonicity(bins) -> int:
    """NumPy's own test of constant bins: 1 increasing, -1 decreasing, or its error."""
    mono = numpy_function_base._monotonicity(np.asarray(bins))
    if mono == 0:
        raise ValueError("bins must be monotonically increasing or decreasing")
    return mono


def _rising(bins: Tracer):
    """Whether traced bins are increasing (else decreasing), the run checking that they are
    one or the other. NumPy's test (on the bins as float64): the first pair of neighbours that
    differ (NaN differs) sets the direction, and no pair may go the other way."""
    if bins.ndim == 0:
        raise ValueError("object of too small depth for desired array")
    if bins.ndim > 1:
        raise ValueError("object too deep for desired array")
    if not np.can_cast(bins.dtype, np.float64, "safe"):
        raise TypeError(f"Cannot cast array data from dtype('{bins.dtype}') to "
                        "dtype('float64') according to the rule 'safe'")
    edges = convert(bins, np.float64)
    if edges.shape[0] < 2:
        return True
    lower, upper = getitem(edges, slice(None, -1)), getitem(edges, slice(1, None))
    rises, falls = call_ufunc(np.less, lower, upper), call_ufunc(np.greater, lower, upper)
    differs = call_ufunc(np.not_equal, lower, upper)
    first_rises = take_in_bounds(rises, np_argmax(differs))
    all_equal = call_ufunc(np.logical_not, np_any(differs))
    rising = call_ufunc(np.logical_or, all_equal, call_ufunc(
        np.logical_and, first_rises, call_ufunc(np.logical_not, np_any(falls))))
    falling = call_ufunc(np.logical_not, call_ufunc(np.logical_or, first_rises, np_any(rises)))
    current_trace().require(call_ufunc(np.logical_or, rising, falling),
                            ensure_tracer(np.int64(0)),
                            "bins must be monotonically increasing or decreasing", ValueError)
    return rising


@implements(np.digitize)
def np_digitize(x, bins, right=False):
    x, bins = as_array(x), as_array(bins)
    if x.dtype.kind == "c":
        raise TypeError("x may not be complex")
    known = bins.known_value()
    rising = _rising(bins) if known is None else _static_monotonicity(known) == 1
    side = "left" if right else "right"     # (searchsorted's sides are digitize's reversed)
    increasing = np_searchsorted(bins, x, side=side)
    if rising is True:
        return increasing
    decreasing = len(bins) - np_searchsorted(getitem(bins, slice(None, None, -1)), x, side=side)
    if rising is False:
        return decreasing
    return as_kind(np_where(rising, increasing, decreasing), increasing.kind)


# -- take, take_along_axis, select ------------------------------------------------------------

def _wrap_indices(indices, n, mode):
    if mode == "wrap":
        return call_ufunc(np.remainder, indices, np.int64(n))
    if mode == "clip":
        return call_ufunc(np.clip, indices, np.int64(0), np.int64(max(n - 1, 0)))
    if mode != "raise":
        raise ValueError(f"clipmode must be one of 'clip', 'raise', or 'wrap' (got {mode!r})")
    return indices


@implements(np.take)
def np_take(a, indices, axis=None, out=None, mode="raise"):
    a = as_array(a)
    if axis is None or (a.ndim == 0 and axis in (0, -1)):   # (NumPy's 0-d quirk)
        a, ax = reshape(a, (a.size,)), 0
    else:
        (ax,) = normalize_axes(axis, a.ndim)
    if isinstance(indices, Tracer):
        if indices.dtype.kind not in "iu":
            raise TypeError(f"Cannot cast array data from dtype('{indices.dtype}') to "
                            "dtype('int64') according to the rule 'safe'")
        index = _wrap_indices(convert(indices, np.int64), a.shape[ax], mode)
        if mode != "raise" and a.shape[ax]:
            result = take_in_bounds(a, index, ax)
            return _take_result(result, index, a, out)
    else:
        index = np.asarray(indices)
        if mode != "raise":
            index = np.take(np.arange(a.shape[ax]), index, mode=mode)
    return _take_result(getitem(a, (slice(None),) * ax + (index,)), index, a, out)


def _take_result(result, index, a, out):
    kind = "scalar" if np.ndim(index) == 0 and a.ndim == 1 else "array"
    result = as_kind(result, kind)
    return assign_into(out, result, "np.take(..., out=...)") if out is not None else result


def _open_index(shape, indices, axis):
    fancy = []
    for d, n in enumerate(shape):
        if d == axis:
            fancy.append(indices)
        else:
            open_shape = [1] * len(shape)
            open_shape[d] = n
            fancy.append(np.arange(n).reshape(open_shape))
    return tuple(fancy)


@implements(np.take_along_axis)
def np_take_along_axis(arr, indices, axis=-1):
    arr = as_array(arr)
    indices = indices if isinstance(indices, Tracer) else np.asarray(indices)
    if axis is None:
        if indices.ndim != 1:
            raise ValueError("when axis=None, `indices` must have a single dimension.")
        arr, axis = reshape(arr, (arr.size,)), 0
    (ax,) = normalize_axes(axis, arr.ndim)
    if indices.ndim != arr.ndim:
        raise ValueError("`indices` and `arr` must have the same number of dimensions")
    if indices.dtype.kind not in "iu":
        raise IndexError("`indices` must be an integer array")
    return as_kind(getitem(arr, _open_index(arr.shape, indices, ax)), "array")


@implements(np.select)
def np_select(condlist, choicelist, default=0):
    if len(condlist) != len(choicelist):
        raise ValueError("list of cases must be same length as list of conditions")
    if len(condlist) == 0:
        raise ValueError("select with an empty condition list is not possible")
    choices = [c if isinstance(c, (Tracer, int, float, complex)) and not isinstance(c, bool)
               else np.asarray(c) for c in choicelist]
    default = default if isinstance(default, (Tracer, int, float, complex)) and not isinstance(
        default, bool) else np.asarray(default)
    dtype = result_type(*choices, default)
    if not isinstance(default, Tracer):     # NumPy fills with it casting unsafely (-1 -> 255)
        default = np.asarray(default).astype(dtype)
    conds = [as_array(c) for c in condlist]
    for i, cond in enumerate(conds):
        if cond.dtype != np.bool_:
            raise TypeError(f"invalid entry {i} in condlist: should be boolean ndarray")
    cond_shape = np.broadcast_shapes(*(c.shape for c in conds))
    choice_shape = np.broadcast_shapes(*(np.shape(c) for c in choices + [default]))
    shape = np.broadcast_shapes(cond_shape, choice_shape) if choice_shape else cond_shape
    result = broadcast_to(ensure_tracer(convert(default, dtype)).with_kind("array"), shape)
    for choice, cond in zip(choices[::-1], conds[::-1], strict=True):
        result = np_where(broadcast_to(cond, cond_shape), convert(choice, dtype), result)
        result = broadcast_to(result, shape)
    return as_kind(result, "array")


# -- order statistics -------------------------------------------------------------------------

def axes_to_front(a: Tracer, axis):
    """a with the reduced axes flattened into axis 0 (NumPy's _ureduce); the kept shape."""
    axes = tuple(range(a.ndim)) if axis is None else normalize_axis_tuple(axis, a.ndim)
    kept = [d for d in range(a.ndim) if d not in axes]
    moved = transpose(a, list(axes) + kept)
    n = int(np.prod([a.shape[d] for d in axes], dtype=np.int64))
    return reshape(moved, (n,) + tuple(a.shape[d] for d in kept)), axes


def quantile_keepdims_shape(shape, axes, q_shape=()):
    return tuple(q_shape) + tuple(1 if d in axes else n for d, n in enumerate(shape))


def _sorted_front(a, axis):
    a = as_array(a)
    front, axes = axes_to_front(a, axis)
    return a, sorted_along(front, 0), axes


def _row(x: Tracer, index) -> Tracer:
    """x[index] along axis 0 for a static integer (array) index."""
    return getitem(x, (np.asarray(index),))


def _nan_rows(ordered: Tracer):
    """Does each slice contain a NaN? (Sorted NaN-last: look at the last row.)"""
    if ordered.dtype.kind not in "fc" or ordered.shape[0] == 0:
        return None
    last = _row(ordered, -1)
    return last, call_ufunc(np.isnan, last)


@implements(np.median)
def np_median(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    a, ordered, axes = _sorted_front(a, axis)
    n = ordered.shape[0]
    middle = [n // 2 - 1, n // 2] if n % 2 == 0 and n else [n // 2] if n else [0]
    rows = _row(ordered, middle) if n else ordered
    result = np_mean(rows, axis=0)
    nans = _nan_rows(ordered)
    if nans is not None:
        result = np_where(nans[1], convert(nans[0], result.dtype), result)
    if keepdims:
        result = reshape(result, quantile_keepdims_shape(a.shape, axes))
    result = as_kind(result, "array" if result.ndim or keepdims else "scalar")
    return _out(out, result, "np.median")


def _out(out, result, name):
    return assign_into(out, result, f"{name}(..., out=...)") if out is not None else result


def _quantile_plan(q: np.ndarray, n: int, method: str, dtype: np.dtype, weak_q: bool):
    """NumPy's own positions for a static q (its `_QuantileMethods` table, `_get_indexes`,
    `_get_gamma`): (indexes,) when no interpolation is needed, else (previous, next, gamma)."""
    props = numpy_function_base._QuantileMethods.get(method)
    if props is None:
        raise ValueError(f"{method!r} is not a valid method. Use one of: "
                         f"{numpy_function_base._QuantileMethods.keys()}")
    virtual = np.asanyarray(props["get_virtual_index"](n, q))
    if props["fix_gamma"] is None or (
            method == "linear" and np.issubdtype(virtual.dtype, np.integer)):
        return (virtual,)
    previous, following = numpy_function_base._get_indexes(np.empty(0, dtype), virtual, n)
    gamma = numpy_function_base._get_gamma(virtual, previous, props)
    return previous, following, float(gamma) if weak_q else gamma


def _lerp(a, b, t):
    """NumPy's _lerp: a + (b-a)*t, and b - (b-a)*(1-t) where t >= 0.5 (t is static)."""
    diff = call_ufunc(np.subtract, b, a)
    low = call_ufunc(np.add, a, call_ufunc(np.multiply, diff, t))
    high = convert(call_ufunc(np.subtract, b, call_ufunc(np.multiply, diff, 1 - t)), low.dtype)
    upper = np.broadcast_to(np.asarray(t) >= 0.5, low.shape)
    return as_kind(np_where(upper, high, low), low.kind)


def _quantile(a, q, axis, method, keepdims, weak_q):
    a_arr, ordered, axes = _sorted_front(a, axis)
    if q.ndim > 2:
        raise ValueError("q must be a scalar or 1d")
    n = ordered.shape[0]
    plan = _quantile_plan(q, n, method, a_arr.dtype, weak_q)
    if len(plan) == 1:
        result = _row(ordered, plan[0])
    else:
        previous, following, gamma = plan
        if not weak_q:
            gamma = gamma.reshape(gamma.shape + (1,) * (ordered.ndim - 1))
        result = _lerp(_row(ordered, previous), _row(ordered, following), gamma)
    nans = _nan_rows(ordered)
    if nans is not None:
        last = broadcast_to(convert(nans[0], result.dtype), result.shape)
        result = np_where(broadcast_to(nans[1], result.shape), last, result)
    if keepdims:
        result = reshape(result, quantile_keepdims_shape(a_arr.shape, axes, q.shape))
    return as_kind(result, "array" if result.ndim or keepdims else "scalar")


def _quantile_args(name, a, q, weights):
    if weights is not None:
        raise unsupported(f"np.{name}(..., weights=...)")
    if isinstance(q, Tracer):
        raise unsupported(f"np.{name} with a traced q", "pass q as a static value")
    a = as_array(a)
    if a.dtype.kind == "c":
        raise TypeError("a must be an array of real numbers")
    return a, type(q) in (int, float)


@implements(np.quantile)
def np_quantile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
                keepdims=False, *, weights=None):
    a, weak_q = _quantile_args("quantile", a, q, weights)
    q = np.asanyarray(q)
    if not np.all((q >= 0) & (q <= 1)):
        raise ValueError("Quantiles must be in the range [0, 1]")
    return _out(out, _quantile(a, q, axis, method, keepdims, weak_q), "np.quantile")


@implements(np.percentile)
def np_percentile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
                  keepdims=False, *, weights=None):
    a, weak_q = _quantile_args("percentile", a, q, weights)
    q = np.asanyarray(np.true_divide(q, 100))
    if not np.all((q >= 0) & (q <= 1)):
        raise ValueError("Percentiles must be in the range [0, 100]")
    return _out(out, _quantile(a, q, axis, method, keepdims, weak_q), "np.percentile")


# -- data-dependent shapes --------------------------------------------------------------------

for _fn, _hint in [
        (np.nonzero, "use np.where(condition, x, y) or a mask multiply instead"),
        (np.argwhere, "use np.where(condition, x, y) or a mask multiply instead"),
        (np.flatnonzero, "use np.where(condition, x, y) or a mask multiply instead"),
        (np.extract, "use np.where(condition, x, 0) instead"),
        (np.unique, "compute it outside the compiled cell"),
        (np.unique_all, "compute it outside the compiled cell"),
        (np.unique_counts, "compute it outside the compiled cell"),
        (np.unique_inverse, "compute it outside the compiled cell"),
        (np.unique_values, "compute it outside the compiled cell")]:
    implements(_fn)(refusing(f"np.{_fn.__name__} (its result has a data-dependent shape)",
                             _hint, f"np_{_fn.__name__}"))
