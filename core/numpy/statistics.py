"""NumPy's statistics with static result shapes on tracers: cov, corrcoef, interp, histogram,
histogram_bin_edges, bincount.

Their result shapes must be known at trace time: histogram's bins are an int or an array
(not a string rule, whose count depends on the data); bincount's length is NumPy's
max(x.max() + 1, minlength), so it needs `minlength`, and the run checks that every value is
below it (else the cell falls back: NumPy's result would be longer). Data-dependent errors
(negative counts, a non-finite autodetected range) are raised by the run, before anything is
written back.
"""
from __future__ import annotations

import operator
import warnings

import numpy as np

from ..primitives import scatter_p
from ..tracing import (DataDependentShapeError, Tracer, bind, caller_source, current_trace,
                       source_line)
from .base import (as_array, as_kind, broadcast_to, convert, ensure_tracer, implements, real_part,
                   imag_part, reshape, unsupported)
from .creation import np_linspace
from .linalg import conj_transpose, matrix_transpose
from .math import np_average
from .products import matmul
from .reductions import np_all, np_max, np_min, np_sum
from .sorting import np_argsort, np_searchsorted, take_in_bounds
from .ufuncs import call_ufunc, np_clip, np_where


def _require(ok: Tracer, value: Tracer, message: str, error: type) -> None:
    current_trace().require(np_all(ok), convert(value, np.int64), message, error)


def _where_text() -> str:
    source = caller_source()
    return f"line {source.line}: '{source_line(source)}': " if source else ""


# -- cov, corrcoef ----------------------------------------------------------------------------

def _as_rows(m, rowvar: bool, dtype) -> Tracer:
    """np.array(m, ndmin=2, dtype=dtype), variables in rows."""
    x = convert(as_array(m), dtype)
    x = reshape(x, (1,) * (2 - x.ndim) + x.shape)
    if not rowvar and as_array(m).ndim != 1:
        x = matrix_transpose(x)
    return x


def _weights(x: Tracer, fweights, aweights):
    """The product of frequency and analytic weights, NumPy's errors checked (at run time for
    the values)."""
    w = None
    if fweights is not None:
        f = convert(as_array(fweights), np.float64)
        _require(call_ufunc(np.equal, f, call_ufunc(np.rint, f)), ensure_tracer(np.int64(0)),
                 "fweights must be integer", TypeError)
        if f.ndim > 1:
            raise RuntimeError("cannot handle multidimensional fweights")
        if f.shape[0] != x.shape[1]:
            raise RuntimeError("incompatible numbers of samples and fweights")
        _require(call_ufunc(np.greater_equal, f, 0), np_min(f), "fweights cannot be negative",
                 ValueError)
        w = f
    if aweights is not None:
        a = convert(as_array(aweights), np.float64)
        if a.ndim > 1:
            raise RuntimeError("cannot handle multidimensional aweights")
        if a.shape[0] != x.shape[1]:
            raise RuntimeError("incompatible numbers of samples and aweights")
        _require(call_ufunc(np.greater_equal, a, 0), ensure_tracer(np.int64(0)),
                 "aweights cannot be negative", ValueError)
        w = a if w is None else call_ufunc(np.multiply, w, a)
    return w


@implements(np.cov)
def np_cov(m, y=None, rowvar=True, bias=False, ddof=None, fweights=None, aweights=None, *,
           dtype=None):
    m_arr = as_array(m)
    if m_arr.ndim > 2:
        raise ValueError("m has more than 2 dimensions")
    if y is not None and as_array(y).ndim > 2:
        raise ValueError("y has more than 2 dimensions")
    if dtype is None:
        dtype = np.result_type(m_arr.dtype, np.float64) if y is None else np.result_type(
            m_arr.dtype, as_array(y).dtype, np.float64)
    x = _as_rows(m_arr, rowvar, dtype)
    if x.shape[0] == 0:
        return as_kind(ensure_tracer(np.array([]).reshape(0, 0)), "array")
    if y is not None:
        y_rows = _as_rows(y, rowvar or as_array(y).ndim == 1 or as_array(y).shape[0] == 1,
                          dtype)
        x = np.concatenate((x, y_rows), axis=0)
    if ddof is None:
        ddof = 1 if bias == 0 else 0
    w = _weights(x, fweights, aweights)
    avg, w_sum = np_average(x, axis=1, weights=w, returned=True)
    w_sum = w_sum[0]
    if w is None:
        fact = x.shape[1] - ddof
        fact = 0.0 if fact <= 0 else fact
    else:
        fact = _weighted_fact(w, w_sum, ddof, aweights)
    centered = call_ufunc(np.subtract, x, reshape(avg, avg.shape + (1,)))
    weighted = centered if w is None else call_ufunc(np.multiply, centered, w)
    c = matmul(centered, conj_transpose(weighted))
    c = call_ufunc(np.multiply, c, call_ufunc(np.true_divide, 1, fact))
    return as_kind(reshape(c, tuple(d for d in c.shape if d != 1)), "array")


def _weighted_fact(w, w_sum, ddof, aweights):
    if ddof == 0:
        fact = w_sum
    elif aweights is None:
        fact = call_ufunc(np.subtract, w_sum, ddof)
    else:
        a = convert(as_array(aweights), np.float64)
        fact = call_ufunc(np.subtract, w_sum, call_ufunc(np.divide, call_ufunc(
            np.multiply, ddof, np_sum(call_ufunc(np.multiply, w, a))), w_sum))
    return np_where(call_ufunc(np.less_equal, fact, 0), 0.0, fact)


@implements(np.corrcoef)
def np_corrcoef(x, y=None, rowvar=True, *, dtype=None):
    c = np_cov(x, y, rowvar, dtype=dtype)
    if c.ndim == 0:
        return call_ufunc(np.divide, c, c)
    d = np.diagonal(c)
    stddev = call_ufunc(np.sqrt, real_part(d))
    c = call_ufunc(np.divide, c, reshape(stddev, stddev.shape + (1,)))
    c = call_ufunc(np.divide, c, reshape(stddev, (1,) + stddev.shape))
    if c.dtype.kind != "c":
        return np_clip(c, -1, 1)
    parts = [np_clip(part(c), -1, 1) for part in (real_part, imag_part)]
    return call_ufunc(np.add, parts[0], call_ufunc(np.multiply, parts[1], 1j))


# -- interp -----------------------------------------------------------------------------------

def _periodic(x, xp, fp, period):
    """NumPy's normalization of periodic data: everything modulo period, xp sorted, one point
    added at each end."""
    if period == 0:
        raise ValueError("period must be a non-zero value")
    period = abs(period)
    x = call_ufunc(np.remainder, x, period)
    xp = call_ufunc(np.remainder, xp, period)
    order = np_argsort(xp)
    xp, fp = xp[order], fp[order]
    xp = np.concatenate((call_ufunc(np.subtract, xp[-1:], period), xp,
                         call_ufunc(np.add, xp[0:1], period)))
    fp = np.concatenate((fp[-1:], fp, fp[0:1]))
    return x, xp, fp


@implements(np.interp)
def np_interp(x, xp, fp, left=None, right=None, period=None):
    fp = as_array(fp)
    dtype = np.dtype(np.complex128) if fp.dtype.kind == "c" else np.dtype(np.float64)
    for values in (x, xp):
        if as_array(values).dtype.kind == "c":
            raise TypeError(f"Cannot cast array data from dtype('{as_array(values).dtype}') to "
                            "dtype('float64') according to the rule 'safe'")
    x_t = convert(as_array(x), np.float64)
    xp, fp = convert(as_array(xp), np.float64), convert(fp, dtype)
    if xp.ndim != 1 or fp.ndim != 1:
        raise ValueError("Data points must be 1-D sequences")
    if xp.shape[0] != fp.shape[0]:
        raise ValueError("fp and xp are not of the same length.")
    if xp.shape[0] == 0:
        raise ValueError("array of sample points is empty")
    if period is not None:
        left = right = None
        x_t, xp, fp = _periodic(x_t, xp, fp, period)
    result = _interpolate(x_t, xp, fp, left, right, dtype)
    return as_kind(result, "array" if np.ndim(x) else "scalar")


def _interpolate(x, xp, fp, left, right, dtype):
    """NumPy's arr_interp, elementwise: the bin by binary search, the slope of its ends, the
    end values (or left/right) outside, x itself where x is NaN."""
    n = xp.shape[0]
    lval = fp[0] if left is None else convert(ensure_tracer(np.asarray(left)), dtype)
    rval = fp[-1] if right is None else convert(ensure_tracer(np.asarray(right)), dtype)
    if n == 1:                            # (NumPy's own branch: NaN takes fp[0] here)
        return np_where(call_ufunc(np.less, x, xp[0]), lval,
                        np_where(call_ufunc(np.greater, x, xp[0]), rval, fp[0]))
    j = call_ufunc(np.subtract, np_searchsorted(xp, x, side="right"), 1)
    j = np_clip(j, 0, n - 2)
    x0, x1 = take_in_bounds(xp, j), take_in_bounds(xp, call_ufunc(np.add, j, 1))
    y0, y1 = take_in_bounds(fp, j), take_in_bounds(fp, call_ufunc(np.add, j, 1))
    slope = call_ufunc(np.divide, call_ufunc(np.subtract, y1, y0), call_ufunc(np.subtract, x1, x0))
    value = call_ufunc(np.add, call_ufunc(np.multiply, slope, call_ufunc(np.subtract, x, x0)), y0)
    again = call_ufunc(np.add, call_ufunc(np.multiply, slope, call_ufunc(np.subtract, x, x1)), y1)
    value = np_where(_isnan(value), again, value)
    value = np_where(call_ufunc(np.logical_and, _isnan(value), call_ufunc(np.equal, y0, y1)), y0,
                     value)
    value = np_where(call_ufunc(np.equal, x, x0), y0, value)
    value = np_where(call_ufunc(np.equal, x, xp[-1]), fp[-1], value)
    value = np_where(call_ufunc(np.less, x, xp[0]), lval, value)
    value = np_where(call_ufunc(np.greater, x, xp[-1]), rval, value)
    return np_where(call_ufunc(np.isnan, x), convert(x, dtype), value)


def _isnan(x):
    if x.dtype.kind == "c":
        return call_ufunc(np.logical_or, call_ufunc(np.isnan, real_part(x)),
                          call_ufunc(np.isnan, imag_part(x)))
    return call_ufunc(np.isnan, x)


# -- bincount ---------------------------------------------------------------------------------

def scatter_add(length: int, positions: Tracer, updates: Tracer) -> Tracer:
    """zeros(length) with updates[i] added at positions[i] (positions within [0, length))."""
    zeros = ensure_tracer(np.zeros(length, updates.dtype))
    indices = reshape(convert(positions, np.int64), positions.shape + (1,))
    return as_kind(bind(scatter_p, zeros, indices, updates, num_indexed=1, mode="add"), "array")


@implements(np.bincount)
def np_bincount(x, weights=None, minlength=0):
    x = as_array(x)
    if x.dtype.kind not in "biu":
        raise TypeError(f"Cannot cast array data from dtype('{x.dtype}') to dtype('int64') "
                        "according to the rule 'safe'")
    if x.ndim != 1:
        raise ValueError("object too deep for desired array" if x.ndim else
                         "object of too small depth for desired array")
    minlength = operator.index(minlength)
    if minlength < 0:
        raise ValueError("'minlength' must not be negative")
    if minlength == 0:
        raise unsupported("np.bincount without minlength (its length, x.max() + 1, depends on "
                          "the data)", "give an upper bound of the values: "
                          "np.bincount(x, minlength=K)")
    counts = ensure_tracer(np.ones(x.shape, np.intp)) if weights is None else convert(
        as_array(weights), np.float64)
    if weights is not None and counts.shape != x.shape:
        raise ValueError("The weights and list don't have the same length.")
    if x.size == 0:
        return as_kind(ensure_tracer(np.zeros(minlength, counts.dtype)), "array")
    values = convert(x, np.int64)
    _require(call_ufunc(np.greater_equal, values, 0), np_min(values),
             "'list' argument must have no negative elements", ValueError)
    _require(call_ufunc(np.less, values, minlength), np_max(values),
             f"{_where_text()}np.bincount: the value {{}} is not below minlength={minlength}, so "
             f"NumPy's result is longer than the compiled program's ({minlength})",
             DataDependentShapeError)
    return scatter_add(minlength, values, counts)


# -- histogram --------------------------------------------------------------------------------

def _outer_edges(a: Tracer, value_range):
    """(first edge, last edge): the range given, or a's min and max (checked finite at run
    time; a range of one value widened by 0.5 each way), as NumPy's _get_outer_edges."""
    if value_range is not None:
        first, last = value_range
        if first > last:
            raise ValueError("max must be larger than min in range parameter.")
        if not (np.isfinite(first) and np.isfinite(last)):
            raise ValueError(f"supplied range of [{first}, {last}] is not finite")
    elif a.size == 0:
        first, last = 0, 1
    else:
        first, last = np_min(a), np_max(a)
        finite = call_ufunc(np.logical_and, call_ufunc(np.isfinite, first),
                            call_ufunc(np.isfinite, last))
        _require(finite, ensure_tracer(np.int64(0)), "autodetected range of a is not finite",
                 ValueError)
    if not isinstance(first, Tracer) and first == last:
        first, last = first - 0.5, last + 0.5
    elif isinstance(first, Tracer):
        same = call_ufunc(np.equal, first, last)
        first = np_where(same, call_ufunc(np.subtract, first, 0.5), first)
        last = np_where(same, call_ufunc(np.add, last, 0.5), last)
    return first, last


def _bin_edges(a: Tracer, bins, value_range, weights):
    """(edges, n_equal_bins or None): NumPy's _get_bin_edges for an int or array `bins`."""
    if isinstance(bins, str):
        raise unsupported(f"np.histogram(..., bins={bins!r}) (the number of bins depends on the "
                          "data)", "give the number of bins or their edges")
    if np.ndim(bins) == 0:
        n = operator.index(bins)
        if n < 1:
            raise ValueError("`bins` must be positive, when an integer")
        first, last = _outer_edges(a, value_range)
        bin_type = np.result_type(*(f.dtype if isinstance(f, Tracer) else f
                                    for f in (first, last)), a.dtype)
        if bin_type.kind in "iu":
            bin_type = np.result_type(bin_type, float)
        if isinstance(first, Tracer):
            edges = np_linspace(first, last, n + 1, endpoint=True, dtype=bin_type)
        else:
            edges = ensure_tracer(np.linspace(first, last, n + 1, endpoint=True, dtype=bin_type))
        return as_kind(edges, "array"), n
    if np.ndim(bins) != 1:
        raise ValueError("`bins` must be 1d, when an array")
    edges = as_array(bins)
    if not isinstance(bins, Tracer) and np.any(np.asarray(bins)[:-1] > np.asarray(bins)[1:]):
        raise ValueError("`bins` must increase monotonically, when an array")
    return edges, None


def _bin_indices(a: Tracer, edges: Tracer, n_equal) -> Tracer:
    """For each element, its bin: edges[i] <= a < edges[i + 1], the last bin closed; by NumPy's
    arithmetic and its corrections for equal bins, by binary search otherwise."""
    n_bins = edges.shape[0] - 1
    if n_equal is None:
        index = call_ufunc(np.subtract, np_searchsorted(edges, a, side="right"), 1)
        last = call_ufunc(np.equal, a, edges[-1])
        return np_where(last, np.int64(n_bins - 1), index)
    first, last = edges[0], edges[-1]
    scaled = call_ufunc(np.multiply, call_ufunc(np.divide, call_ufunc(np.subtract, a, first),
                                                call_ufunc(np.subtract, last, first)), n_equal)
    index = np_clip(convert(np_where(call_ufunc(np.isfinite, scaled), scaled, 0), np.int64),
                    0, n_bins - 1)
    lower = take_in_bounds(edges, index)
    index = np_where(call_ufunc(np.less, a, lower), call_ufunc(np.subtract, index, 1), index)
    index = np_clip(index, 0, n_bins - 1)
    upper = take_in_bounds(edges, call_ufunc(np.add, index, 1))
    step_up = call_ufunc(np.logical_and, call_ufunc(np.greater_equal, a, upper),
                         call_ufunc(np.not_equal, index, n_bins - 1))
    return np_where(step_up, call_ufunc(np.add, index, 1), index)


@implements(np.histogram_bin_edges)
def np_histogram_bin_edges(a, bins=10, range=None, weights=None):  # noqa: A002
    return _bin_edges(_histogram_operand(a), bins, range, weights)[0]


def _flat(a) -> Tracer:
    a = as_array(a)
    return reshape(a, (a.size,))


def _histogram_operand(a) -> Tracer:
    """a flattened; bools as uint8 (with NumPy's warning); complex values refused."""
    a = _flat(a)
    if a.dtype.kind == "c":
        raise unsupported("np.histogram of complex values (NumPy bins their real parts with a "
                          "warning)", "pass np.real(a)")
    if a.dtype == np.bool_:
        warnings.warn(f"Converting input from {a.dtype} to {np.uint8} for compatibility.",
                      RuntimeWarning, stacklevel=3)
        a = convert(a, np.uint8)
    return a


@implements(np.histogram)
def np_histogram(a, bins=10, range=None, density=None, weights=None):  # noqa: A002
    a = _histogram_operand(a)
    if weights is not None:
        weights = _flat(weights)
        if weights.shape != a.shape:
            raise ValueError("weights should have the same shape as a.")
    edges, n_equal = _bin_edges(a, bins, range, weights)
    n_bins = edges.shape[0] - 1
    ntype = np.dtype(np.intp) if weights is None else weights.dtype
    if a.size == 0 or n_bins == 0:
        counts = ensure_tracer(np.zeros(n_bins, ntype))
    else:
        values = convert(a, edges.dtype)
        keep = call_ufunc(np.logical_and, call_ufunc(np.greater_equal, values, edges[0]),
                          call_ufunc(np.less_equal, values, edges[-1]))
        index = _bin_indices(values, edges, n_equal)
        ones = np.ones((), np.intp) if weights is None else convert(weights, np.float64
                                                                    if ntype.kind != "c" else
                                                                    np.complex128)
        updates = np_where(keep, ones, np.zeros((), np.intp if weights is None else
                                                 ones.dtype))
        updates = broadcast_to(ensure_tracer(updates), a.shape)
        counts = convert(scatter_add(n_bins, np_where(keep, index, 0), updates), ntype)
    counts = as_kind(counts, "array")
    if density:
        widths = convert(call_ufunc(np.subtract, edges[1:], edges[:-1]), np.float64)
        return (call_ufunc(np.divide, call_ufunc(np.divide, counts, widths), np_sum(counts)),
                edges)
    return counts, edges
