"""NumPy's polynomials, differences and integrals on tracers: polyval, polyder, polyint, vander,
polyfit, gradient, trapezoid, ediff1d, unwrap, sinc.

Each follows NumPy's own implementation (numpy/lib/_polynomial_impl.py, _function_base_impl.py,
_twodim_base_impl.py, _arraysetops_impl.py) step by step: the same operations on the same
operands in the same order, written with the operators NumPy writes (so Python scalars stay
Python scalars, and promote as NumPy's code makes them promote). Dtypes, 0-d and empty results
and errors are NumPy's. Where NumPy writes pieces into an array it allocated (gradient's `out`,
unwrap's `up`, ediff1d's `result`, vander's `v`), the pieces are cast to that array's dtype, as
the write casts, and concatenated.

One choice of NumPy's depends on values: np.gradient takes evenly spaced coordinates as one
scalar spacing. For traced coordinates both formulas are computed and the run picks NumPy's.
"""
from __future__ import annotations

import dataclasses
import operator

import numpy as np
from numpy.lib.array_utils import normalize_axis_tuple

from ..tracing import Tracer, current_trace
from .base import (as_array, as_kind, convert, ensure_tracer, full, implements, reshape,
                   result_type, unsupported)
from .rearrange import np_diff
from .reductions import np_all, np_cumsum, np_sum
from .shape import np_concatenate, np_expand_dims
from .ufuncs import call_ufunc, np_where


def _at(x, axis: int, index):
    """x[..., index, ...] with index at `axis` (NumPy's slice lists: `slice1[axis] = index`,
    an IndexError for an axis the list does not have)."""
    key = [slice(None)] * x.ndim
    key[axis] = index
    return x[tuple(key)]


# -- polynomials ------------------------------------------------------------------------------

@implements(np.polyval)
def np_polyval(p, x):
    if isinstance(x, np.poly1d):
        raise unsupported("np.polyval of a np.poly1d x (its result would be a poly1d)",
                          "evaluate the composition outside the compiled code")
    p, x = as_array(p), as_array(x)
    y = as_kind(full(x.shape, 0, x.dtype), "array")     # np.zeros_like(x)
    for pv in p:
        y = y * x + pv
    return y


def _derivative(p):
    """One step of np.polyder: p[:-1] * [n, n - 1, ..., 1]."""
    n = len(p) - 1
    return p[:-1] * np.arange(n, 0, -1)


@implements(np.polyder)
def np_polyder(p, m=1):
    m = int(m)
    if m < 0:
        raise ValueError("Order of derivative must be positive (see polyint)")
    p = as_array(p)
    while True:
        y = _derivative(p)      # (computed even for m == 0, as NumPy does: its errors)
        if m == 0:
            return p
        p, m = y, m - 1


def _integration_constants(k, m: int):
    """polyint's k: m constants (zeros by default, one repeated), or NumPy's error."""
    k = as_array(np.zeros(m, float) if k is None else k)
    if k.ndim == 0:
        k = reshape(k, (1,))
    if len(k) == 1 and m > 1:
        k = k[0] * np.ones(m, float)
    if len(k) < m:
        raise ValueError("k must be a scalar or a rank-1 array of length 1 or >m.")
    return k


@implements(np.polyint)
def np_polyint(p, m=1, k=None):
    m = int(m)
    if m < 0:
        raise ValueError("Order of integral must be positive (see polyder)")
    k = _integration_constants(k, m)
    p = as_array(p)
    for constant in (k[i] for i in range(m)):
        scaled = p / np.arange(len(p), 0, -1)
        p = np_concatenate([scaled, reshape(constant, (1,) + constant.shape)])
    return p


@implements(np.vander)
def np_vander(x, N=None, increasing=False):
    x = as_array(x)
    if x.ndim != 1:
        raise ValueError("x must be a one-dimensional array or sequence.")
    n = len(x)
    N = n if N is None else operator.index(N)
    if N < 0:
        raise ValueError("negative dimensions are not allowed")
    dtype = np.promote_types(x.dtype, int)
    if N == 0:
        return as_kind(full((n, 0), 0, dtype), "array")
    columns = [full((n,), 1, dtype)]
    if N > 1:
        columns.append(convert(x, dtype))
    for _ in range(2, N):           # np.multiply.accumulate: each power from the one before
        columns.append(columns[-1] * columns[1])
    if not increasing:
        columns.reverse()
    return np_concatenate([reshape(c, (n, 1)) for c in columns], axis=1)


# -- gradient ---------------------------------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class _TracedCoordinates:
    """Traced coordinates along an axis: their differences, and whether they are all equal
    (then NumPy uses the first one as a scalar spacing)."""
    diffs: Tracer
    even: Tracer


@implements(np.polyfit)
def np_polyfit(x, y, deg, rcond=None, full=False, w=None, cov=False):
    """Least squares on the scaled Vandermonde matrix, as NumPy solves it. NumPy's
    RankWarning for a rank-deficient fit (a value-dependent warning) is not given."""
    if cov:
        raise unsupported("np.polyfit(..., cov=True)", "fit with cov=False and compute the "
                          "covariance from the residuals outside the cell")
    order = operator.index(deg) + 1
    x, y = as_array(x) + 0.0, as_array(y) + 0.0
    if deg < 0:
        raise ValueError("expected deg >= 0")
    if x.ndim != 1:
        raise TypeError("expected 1D vector for x")
    if x.size == 0:
        raise TypeError("expected non-empty vector for x")
    if y.ndim < 1 or y.ndim > 2:
        raise TypeError("expected 1D or 2D array for y")
    if x.shape[0] != y.shape[0]:
        raise TypeError("expected x and y to have same length")
    if rcond is None:
        rcond = len(x) * np.finfo(x.dtype).eps
    lhs, rhs = np_vander(x, order), y
    if w is not None:
        w = as_array(w) + 0.0
        if w.ndim != 1:
            raise TypeError("expected a 1-d array for weights")
        if w.shape[0] != y.shape[0]:
            raise TypeError("expected w and y to have the same length")
        lhs = lhs * w[:, np.newaxis]
        rhs = rhs * (w[:, np.newaxis] if rhs.ndim == 2 else w)
    scale = np.sqrt((lhs * lhs).sum(axis=0))
    lhs = lhs / scale
    c, resids, rank, s = np.linalg.lstsq(lhs, rhs, rcond)
    c = (c.T / scale).T
    return (c, resids, rank, s, rcond) if full else c


def _axis_spacing(distances, length: int):
    """One spacing argument of np.gradient: a scalar as it is; coordinates as their
    differences (one scalar when evenly spaced, NumPy decides now for constants)."""
    traced = isinstance(distances, Tracer)
    coords = as_array(distances) if traced else np.asanyarray(distances)
    if coords.ndim == 0:
        return distances
    if coords.ndim != 1:
        raise ValueError("distances must be either scalars or 1d")
    if len(coords) != length:
        raise ValueError("when 1d, distances must match the length of the corresponding "
                         "dimension")
    if np.issubdtype(coords.dtype, np.integer):
        coords = convert(coords, np.float64) if traced else coords.astype(np.float64)
    if not traced:
        diffx = np.diff(coords)
        return diffx[0] if (diffx == diffx[0]).all() else diffx
    diffx = np_diff(coords)
    return _TracedCoordinates(diffx, np_all(diffx == diffx[0]))


def _spacings(f: Tracer, axes, varargs) -> list:
    if not varargs:
        return [1.0] * len(axes)
    if len(varargs) == 1 and np.ndim(varargs[0]) == 0:
        return list(varargs) * len(axes)
    if len(varargs) != len(axes):
        raise TypeError("invalid number of arguments")
    return [_axis_spacing(d, f.shape[ax]) for d, ax in zip(varargs, axes, strict=True)]


def _interior(f, ax, dx):
    """Central differences at 1..n-2 (second order, for uneven spacing too)."""
    if np.ndim(dx) == 0:
        return (_at(f, ax, slice(2, None)) - _at(f, ax, slice(None, -2))) / (2. * dx)
    dx1, dx2 = dx[0:-1], dx[1:]
    a = -(dx2) / (dx1 * (dx1 + dx2))
    b = (dx2 - dx1) / (dx1 * dx2)
    c = dx1 / (dx2 * (dx1 + dx2))
    shape = [1] * f.ndim
    shape[ax] = -1
    a, b, c = a.reshape(shape), b.reshape(shape), c.reshape(shape)
    return (a * _at(f, ax, slice(None, -2)) + b * _at(f, ax, slice(1, -1))
            + c * _at(f, ax, slice(2, None)))


def _first_order_edges(f, ax, dx):
    uniform = np.ndim(dx) == 0
    first = (_at(f, ax, 1) - _at(f, ax, 0)) / (dx if uniform else dx[0])
    last = (_at(f, ax, -1) - _at(f, ax, -2)) / (dx if uniform else dx[-1])
    return first, last


def _second_order_edges(f, ax, dx):
    if np.ndim(dx) == 0:
        a, b, c = -1.5 / dx, 2. / dx, -0.5 / dx
    else:
        dx1, dx2 = dx[0], dx[1]
        a = -(2. * dx1 + dx2) / (dx1 * (dx1 + dx2))
        b = (dx1 + dx2) / (dx1 * dx2)
        c = - dx1 / (dx2 * (dx1 + dx2))
    first = a * _at(f, ax, 0) + b * _at(f, ax, 1) + c * _at(f, ax, 2)
    if np.ndim(dx) == 0:
        a, b, c = 0.5 / dx, -2. / dx, 1.5 / dx
    else:
        dx1, dx2 = dx[-2], dx[-1]
        a = (dx2) / (dx1 * (dx1 + dx2))
        b = - (dx2 + dx1) / (dx1 * dx2)
        c = (2. * dx2 + dx1) / (dx2 * (dx1 + dx2))
    last = a * _at(f, ax, -3) + b * _at(f, ax, -2) + c * _at(f, ax, -1)
    return first, last


def _derivative_along(f, ax, dx, edge_order, otype):
    """np.gradient's `out` for one axis: the edges and the interior, written as `otype`."""
    interior = _interior(f, ax, dx)
    edges = _first_order_edges if edge_order == 1 else _second_order_edges
    first, last = edges(f, ax, dx)
    pieces = [np_expand_dims(first, ax), interior, np_expand_dims(last, ax)]
    return np_concatenate([convert(piece, otype) for piece in pieces], axis=ax)


def _gradient_operand(f: Tracer):
    """(f, dtype of the result): integers are differenced as float64; bool stays bool (and
    NumPy's subtraction refuses it), with a float64 result."""
    if f.dtype.kind in "fc":
        return f, f.dtype
    if f.dtype.kind in "iu":
        f = convert(f, np.float64)
    return f, np.dtype(np.float64)


def _either_spacing(f, ax, coords: _TracedCoordinates, edge_order, otype):
    """Both of NumPy's formulas, the run picking the one NumPy picks. Only the even one
    subtracts f's values: for bool f it raises NumPy's TypeError when the run finds the
    coordinates evenly spaced."""
    uneven = _derivative_along(f, ax, coords.diffs, edge_order, otype)
    try:
        even = _derivative_along(f, ax, coords.diffs[0], edge_order, otype)
    except TypeError as err:
        message = str(err).replace("{", "{{").replace("}", "}}")
        current_trace().require(call_ufunc(np.logical_not, coords.even),
                                ensure_tracer(np.int64(0)), message, TypeError)
        return uneven
    return np_where(coords.even, even, uneven)


@implements(np.gradient)
def np_gradient(f, *varargs, axis=None, edge_order=1):
    f = as_array(f)
    axes = tuple(range(f.ndim)) if axis is None else normalize_axis_tuple(axis, f.ndim)
    spacings = _spacings(f, axes, varargs)
    if edge_order > 2:
        raise ValueError("'edge_order' greater than 2 not supported")
    f, otype = _gradient_operand(f)
    outvals = []
    for ax, dx in zip(axes, spacings, strict=True):
        if f.shape[ax] < edge_order + 1:
            raise ValueError("Shape of array too small to calculate a numerical gradient, at "
                             "least (edge_order + 1) elements are required.")
        if isinstance(dx, _TracedCoordinates):
            out = _either_spacing(f, ax, dx, edge_order, otype)
        else:
            out = _derivative_along(f, ax, dx, edge_order, otype)
        outvals.append(as_kind(out, "array"))
    return outvals[0] if len(axes) == 1 else tuple(outvals)


# -- integrals and differences ----------------------------------------------------------------

@implements(np.trapezoid)
def np_trapezoid(y, x=None, dx=1.0, axis=-1):
    y = as_array(y)
    if x is None:
        d = dx
    else:
        x = as_array(x)
        if x.ndim == 1:
            d = np_diff(x)
            shape = [1] * y.ndim
            shape[axis] = d.shape[0]
            d = d.reshape(shape)
        else:
            d = np_diff(x, axis=axis)
    heights = _at(y, axis, slice(1, None)) + _at(y, axis, slice(None, -1))
    return np_sum(d * heights / 2.0, axis)


def _ediff1d_edge(values, dtype: np.dtype, name: str):
    """to_begin / to_end: raveled, cast to the input's dtype if NumPy's same_kind rule allows."""
    values = as_array(values)
    if not np.can_cast(values.dtype, dtype, casting="same_kind"):
        raise TypeError(f"dtype of `{name}` must be compatible with input `ary` under the "
                        "`same_kind` rule.")
    return convert(reshape(values, (values.size,)), dtype)


@implements(np.ediff1d)
def np_ediff1d(ary, to_end=None, to_begin=None):
    ary = as_array(ary)
    ary = as_kind(reshape(ary, (ary.size,)), "array")
    if to_begin is None and to_end is None:
        return ary[1:] - ary[:-1]
    pieces = [] if to_begin is None else [_ediff1d_edge(to_begin, ary.dtype, "to_begin")]
    end = None if to_end is None else _ediff1d_edge(to_end, ary.dtype, "to_end")
    pieces.append(convert(call_ufunc(np.subtract, ary[1:], ary[:-1]), ary.dtype))
    if end is not None:
        pieces.append(end)
    return as_kind(np_concatenate(pieces), "array")


def _unwrap_interval(period, dtype: np.dtype):
    """(interval_high, whether a jump of exactly half a period is ambiguous) of np.unwrap."""
    if not np.issubdtype(dtype, np.integer):
        return period / 2, True
    if isinstance(period, Tracer):
        raise unsupported("np.unwrap with a traced integer period",
                          "pass the period as a static value, or as a float")
    interval_high, rem = divmod(period, 2)
    return interval_high, rem == 0


@implements(np.unwrap)
def np_unwrap(p, discont=None, axis=-1, *, period=2 * np.pi):
    p = as_array(p)
    dd = np_diff(p, axis=axis)
    if discont is None:
        discont = period / 2
    dtype = result_type(dd, period)
    interval_high, boundary_ambiguous = _unwrap_interval(period, dtype)
    interval_low = -interval_high
    ddmod = call_ufunc(np.remainder, dd - interval_low, period) + interval_low
    if boundary_ambiguous:      # a jump of exactly +period/2 stays +period/2
        ambiguous = (ddmod == interval_low) & (dd > 0)
        ddmod = np_where(ambiguous, convert(interval_high, ddmod.dtype), ddmod)
    ph_correct = ddmod - dd
    ph_correct = np_where(abs(dd) < discont, convert(0, ph_correct.dtype), ph_correct)
    (ax,) = normalize_axis_tuple(axis, p.ndim)
    corrected = _at(p, ax, slice(1, None)) + np_cumsum(ph_correct, ax)
    first = _at(p, ax, slice(None, 1))
    return as_kind(np_concatenate([convert(first, dtype), convert(corrected, dtype)], axis=ax),
                   "array")


@implements(np.sinc)
def np_sinc(x):
    x = np.pi * as_array(x)
    eps = np.finfo(x.dtype).eps if x.dtype.kind == "f" else 1e-20
    y = np_where(x != 0, x, eps)
    return call_ufunc(np.sin, y) / y
