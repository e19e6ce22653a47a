"""np.linalg's other functions on tracers: norm, vector_norm, matrix_norm, cond, matrix_rank,
multi_dot, and the Array API's names for functions NumPy also has elsewhere (matrix_transpose,
vecdot, matmul, tensordot, outer, cross, diagonal, trace; np.vecdot, np.matvec, np.vecmat).
"""
from __future__ import annotations

import numpy as np

from ..tracing import Tracer
from .base import (as_array, as_kind, convert, ensure_tracer, implements, normalize_axes, real_part,
                   reshape, result_type, sum_axes, transpose, unsupported)
from .linalg import (LinAlgError, assert_stacked_square, cast, common_type, linalg_svd, lu_factor,
                     lu_solve, real_of)
from .matrices import np_cross, np_diagonal, np_trace
from .products import matmul, np_dot, np_outer, np_tensordot
from .reductions import np_any, np_max, np_min, np_sum
from .shape import np_moveaxis, np_swapaxes
from .ufuncs import call_ufunc, np_where


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


def _svd_norm(x, row, col, reduce):
    """NumPy's _multi_svd_norm: reduce the singular values of the (row, col) matrices."""
    moved = np_moveaxis(x, (row, col), (-2, -1))
    return reduce(linalg_svd(moved, compute_uv=False), axis=-1)


def _matrix_norm(x, ord, row, col, keepdims):  # noqa: A002
    if ord in (2, -2, "nuc"):
        reduce = {2: lambda s, axis: _max_or_zero(s, s.ndim - 1),    # (amax, initial=0)
                  -2: np_min, "nuc": np_sum}[ord]
        return _keep(_svd_norm(x, row, col, reduce), x.shape, (row, col), keepdims)
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


@implements(np.linalg.vector_norm)
def linalg_vector_norm(x, /, *, axis=None, keepdims=False, ord=2):  # noqa: A002
    x = as_array(x)
    shape = list(x.shape)
    if axis is None:
        flat, along = reshape(x, (x.size,)), 0
    elif isinstance(axis, tuple):
        axes = normalize_axes(axis, x.ndim)
        rest = tuple(i for i in range(x.ndim) if i not in axes)
        moved = transpose(x, axes + rest)
        flat = reshape(moved, (int(np.prod([x.shape[i] for i in axes], dtype=np.int64)),)
                       + tuple(x.shape[i] for i in rest))
        along = 0
    else:
        flat, along = x, axis
    result = np_linalg_norm(flat, axis=along, ord=ord)
    if keepdims:
        for i in normalize_axes(range(len(shape)) if axis is None else axis, len(shape)):
            shape[i] = 1
        result = as_kind(reshape(result, tuple(shape)), "array")
    return result


@implements(np.linalg.matrix_norm)
def linalg_matrix_norm(x, /, *, keepdims=False, ord="fro"):  # noqa: A002
    return np_linalg_norm(x, axis=(-2, -1), keepdims=keepdims, ord=ord)


# -- cond, matrix_rank ------------------------------------------------------------------------

def _inverse_unchecked(x: Tracer) -> Tracer:
    """inv(x) with NumPy's errors ignored (as np.linalg.cond does): inf/NaN when singular."""
    t, result_t = common_type(x)
    lu, _, perm = lu_factor(convert(x, t))
    eye = ensure_tracer(np.broadcast_to(np.eye(x.shape[-1], dtype=t), x.shape))
    return cast(lu_solve(lu, perm, eye), result_t)


@implements(np.linalg.cond)
def linalg_cond(x, p=None):
    x = as_array(x)
    if x.size == 0 and int(np.prod(x.shape[-2:])) == 0:
        raise LinAlgError("cond is not defined on empty arrays")
    if p is None or p == 2 or p == -2:
        s = linalg_svd(x, compute_uv=False)
        big, small = s[..., 0], s[..., -1]
        r = call_ufunc(np.divide, small, big) if p == -2 else call_ufunc(np.divide, big, small)
    else:
        assert_stacked_square(x)
        _, result_t = common_type(x)
        inverse = _inverse_unchecked(x)
        r = call_ufunc(np.multiply, np_linalg_norm(x, p, axis=(-2, -1)),
                       np_linalg_norm(inverse, p, axis=(-2, -1)))
        r = convert(r, real_of(result_t))
    x_has_nan = np_any(call_ufunc(np.isnan, x), axis=(-2, -1))
    to_inf = call_ufunc(np.logical_and, call_ufunc(np.isnan, r), call_ufunc(np.logical_not,
                                                                            x_has_nan))
    r = np_where(to_inf, np.asarray(np.inf, r.dtype), r)
    return as_kind(r, "array" if r.ndim else "scalar")


@implements(np.linalg.matrix_rank)
def linalg_matrix_rank(A, tol=None, hermitian=False, *, rtol=None):  # noqa: N803
    if rtol is not None and tol is not None:
        raise ValueError("`tol` and `rtol` can't be both set.")
    A = as_array(A)                                                  # noqa: N806
    if A.ndim < 2:
        nonzero = np_any(call_ufunc(np.not_equal, A, 0))
        return as_kind(convert(nonzero, np.int64), "python")
    S = linalg_svd(A, compute_uv=False, hermitian=hermitian)         # noqa: N806
    if tol is None:
        if rtol is None:
            rtol = max(A.shape[-2:]) * np.finfo(S.dtype).eps
        else:
            rtol = reshape(as_array(rtol), np.shape(rtol) + (1,))
        largest = (np_max(S, axis=-1, keepdims=True) if S.shape[-1] else
                   ensure_tracer(np.zeros(S.shape[:-1] + (1,), S.dtype)))
        tol = call_ufunc(np.multiply, largest, rtol)
    else:
        tol = reshape(as_array(tol), np.shape(tol) + (1,))
    above = call_ufunc(np.greater, S, tol)
    return np_sum(above, axis=-1, dtype=np.intp)


# -- multi_dot --------------------------------------------------------------------------------

def _chain_order(shapes):
    """NumPy's matrix-chain order (the split of each sub-chain), the same ties broken alike."""
    p = [s[0] for s in shapes] + [shapes[-1][1]]
    n = len(shapes)
    cost = np.zeros((n, n))
    split = np.zeros((n, n), dtype=int)
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            cost[i, j] = np.inf
            for k in range(i, j):
                q = cost[i, k] + cost[k + 1, j] + p[i] * p[k + 1] * p[j + 1]
                if q < cost[i, j]:
                    cost[i, j], split[i, j] = q, k
    return split


def _chain(arrays, split, i, j):
    if i == j:
        return arrays[i]
    k = split[i, j]
    return np_dot(_chain(arrays, split, i, k), _chain(arrays, split, k + 1, j))


def _three(a, b, c):
    """NumPy's _multi_dot_three: the cheaper of (ab)c and a(bc)."""
    (a0, a1), (b1, c1) = a.shape, c.shape
    cost_left = a0 * b1 * (a1 + c1)
    cost_right = a1 * c1 * (a0 + b1)
    return np_dot(np_dot(a, b), c) if cost_left < cost_right else np_dot(a, np_dot(b, c))


@implements(np.linalg.multi_dot)
def linalg_multi_dot(arrays, *, out=None):
    if out is not None:
        raise unsupported("np.linalg.multi_dot(..., out=...)")
    n = len(arrays)
    if n < 2:
        raise ValueError("Expecting at least two arrays.")
    if n == 2:
        return np_dot(arrays[0], arrays[1])
    arrays = [as_array(a) for a in arrays]
    first, last = arrays[0].ndim, arrays[-1].ndim
    if first == 1:
        arrays[0] = reshape(arrays[0], (1,) + arrays[0].shape)
    if last == 1:
        arrays[-1] = reshape(arrays[-1], arrays[-1].shape + (1,))
    for a in arrays:
        if a.ndim != 2:
            raise LinAlgError(f"{a.ndim}-dimensional array given. Array must be two-dimensional")
    result = _three(*arrays) if n == 3 else _chain(arrays, _chain_order([a.shape for a in arrays]),
                                                   0, n - 1)
    if first == 1 and last == 1:
        return as_kind(reshape(result, ()), "scalar")
    if first == 1 or last == 1:
        return as_kind(reshape(result, (result.size,)), "array")
    return result


# -- the Array API's names --------------------------------------------------------------------

@implements(np.linalg.matrix_transpose, np.matrix_transpose)
def linalg_matrix_transpose(x, /):
    x = as_array(x)
    if x.ndim < 2:
        raise ValueError(f"Input array must be at least 2-dimensional, but it is {x.ndim}")
    return np_swapaxes(x, -1, -2)


def vecdot(x1, x2, axis=-1, dtype=None):
    """sum(conj(x1) * x2) along axis (np.vecdot: the dtype of x1 * x2, no wider sum)."""
    x1, x2 = as_array(x1), as_array(x2)
    dtype = np.dtype(dtype) if dtype is not None else result_type(x1, x2)
    shape = np.broadcast_shapes(x1.shape, x2.shape)
    ax = normalize_axes(axis, len(shape))[0]
    if x1.shape[ax - len(shape) + x1.ndim] != x2.shape[ax - len(shape) + x2.ndim]:
        raise ValueError("vecdot: the two arrays differ in length along the axis")
    a = convert(x1, dtype)
    if dtype.kind == "c":
        a = call_ufunc(np.conjugate, a)
    product = call_ufunc(np.multiply, a, convert(x2, dtype))
    return as_kind(convert(sum_axes(product, (ax,)), dtype), "array" if len(shape) > 1
                   else "scalar")


@implements(np.linalg.vecdot)
def linalg_vecdot(x1, x2, /, *, axis=-1):
    return vecdot(x1, x2, axis)


def matvec(x1, x2):
    """np.matvec: matrices (..., m, n) times vectors (..., n)."""
    x2 = as_array(x2)
    product = matmul(x1, reshape(x2, x2.shape + (1,)))
    return as_kind(reshape(product, product.shape[:-1]), "array")


def vecmat(x1, x2):
    """np.vecmat: conj(vectors (..., m)) times matrices (..., m, n)."""
    x1 = as_array(x1)
    if x1.dtype.kind == "c":
        x1 = call_ufunc(np.conjugate, x1)
    product = matmul(reshape(x1, x1.shape[:-1] + (1,) + x1.shape[-1:]), x2)
    return as_kind(reshape(product, product.shape[:-2] + product.shape[-1:]), "array")


GUFUNCS = {np.vecdot: vecdot, np.matvec: matvec, np.vecmat: vecmat}


@implements(np.linalg.matmul)
def linalg_matmul(x1, x2, /):
    return matmul(x1, x2)


@implements(np.linalg.tensordot)
def linalg_tensordot(x1, x2, /, *, axes=2):
    return np_tensordot(x1, x2, axes)


@implements(np.linalg.outer)
def linalg_outer(x1, x2, /):
    x1, x2 = as_array(x1), as_array(x2)
    if x1.ndim != 1 or x2.ndim != 1:
        raise ValueError("Input arrays must be one-dimensional, but they are "
                         f"x1.ndim={x1.ndim} and x2.ndim={x2.ndim}.")
    return np_outer(x1, x2)


@implements(np.linalg.cross)
def linalg_cross(x1, x2, /, *, axis=-1):
    x1, x2 = as_array(x1), as_array(x2)
    if x1.shape[axis] != 3 or x2.shape[axis] != 3:
        raise ValueError("Both input arrays must be (arrays of) 3-dimensional vectors, but "
                         f"they are {x1.shape[axis]} and {x2.shape[axis]} dimensional instead.")
    return np_cross(x1, x2, axis=axis)


@implements(np.linalg.diagonal)
def linalg_diagonal(x, /, *, offset=0):
    return np_diagonal(x, offset, axis1=-2, axis2=-1)


@implements(np.linalg.trace)
def linalg_trace(x, /, *, offset=0, dtype=None):
    return np_trace(x, offset, axis1=-2, axis2=-1, dtype=dtype)
