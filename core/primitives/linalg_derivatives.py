"""The rules of differentiation of the linear-algebra primitives (`linalg.py` holds their
records), the standard formulas (Giles, "An extended collection of matrix derivative
results"; Murray, "Differentiation of the Cholesky decomposition"; JAX's linalg rules):

    triangular_solve  x = op(A)^-1 b:  dx = op(A)^-1 (db - op(dA) x); linear in b, whose
                      transpose is the solve with op(A)^T
    cholesky          dL = L Phi(L^-1 dA L^-H), Phi: the lower triangle, half the diagonal
    lu                P A = L U:  X = L^-1 P dA U^-1,  dL = L tril(X, -1),  dU = triu(X) U
    eigh              dw = diag(V^H dA V),  dV = V (F o V^H dA V),  F_ij = 1/(w_j - w_i)
    svd               ds = Re diag(U^H dA V), dU and dV as JAX's svd_jvp_rule

cholesky and eigh read one triangle of A (as LAPACK does), so their dA is the Hermitian
matrix of that triangle of the tangent. The eigenvector and singular-vector derivatives are
infinite where eigenvalues (singular values) repeat, as they are in JAX: the derivative does
not exist there. A case whose rule would be wrong (the vectors of a full_matrices SVD of a
non-square matrix, the LU of a non-square one) is refused at the line that asked for it.
"""
from __future__ import annotations

import numpy as np

from .autodiff import is_linear
from .record import PRIMITIVES

INT32 = np.dtype(np.int32)
TRANSPOSED = {"NO_TRANSPOSE": "TRANSPOSE", "TRANSPOSE": "NO_TRANSPOSE",
              "ADJOINT": "NO_TRANSPOSE"}


# -- matrix helpers on a rule's context -------------------------------------------------------

def _aval(x):
    return x.aval


def _swap(ctx, x):
    n = _aval(x).ndim
    return ctx.transpose(x, tuple(range(n - 2)) + (n - 1, n - 2))


def _conj(ctx, x):
    return ctx.conj(x) if _aval(x).dtype.kind == "c" else x


def _adjoint(ctx, x):
    return _conj(ctx, _swap(ctx, x))


def _matmul(ctx, a, b):
    n = _aval(a).ndim
    batch = tuple(range(n - 2))
    return ctx.dot_general(a, b, ((n - 1,), (n - 2,)), (batch, batch))


def _triangle_mask(ctx, shape, lower: bool, k: int = 0):
    """True on and below diagonal k (lower), or on and above it (upper): numpy's tril/triu
    offsets (j - i <= k, j - i >= k)."""
    n = len(shape)
    rows, cols = ctx.iota(shape, INT32, n - 2), ctx.iota(shape, INT32, n - 1)
    shifted = ctx.add(rows, ctx.full_like(rows, k)) if k else rows
    return ctx.ge(shifted, cols) if lower else ctx.ge(cols, shifted)


def _tri(ctx, x, lower: bool, k: int = 0):
    """x's lower (upper) triangle from diagonal k, zeros elsewhere (numpy's tril/triu)."""
    mask = _triangle_mask(ctx, _aval(x).shape, lower, k)
    return ctx.select(mask, x, ctx.zeros_like(x))


def _eye_mask(ctx, shape):
    n = len(shape)
    return ctx.eq(ctx.iota(shape, INT32, n - 2), ctx.iota(shape, INT32, n - 1))


def _diagonal(ctx, x):
    """The diagonal of each matrix of a square x, (..., n)."""
    shape = _aval(x).shape
    on = ctx.select(_eye_mask(ctx, shape), x, ctx.zeros_like(x))
    return ctx.reduce_sum(on, (len(shape) - 1,))


def _rows(ctx, v, shape):
    """v (..., n) as matrices whose every row is v: entry (i, j) is v_j."""
    n = len(shape)
    return ctx.broadcast_in_dim(v, shape, tuple(range(n - 2)) + (n - 1,))


def _columns(ctx, v, shape):
    """Entry (i, j) is v_i."""
    n = len(shape)
    return ctx.broadcast_in_dim(v, shape, tuple(range(n - 1)))


def _hermitian_of_triangle(ctx, da, lower: bool):
    """The Hermitian matrix whose `lower` triangle is da's: what a factorization reading
    only that triangle sees of the tangent."""
    strict = _tri(ctx, da, lower, -1 if lower else 1)
    diagonal = ctx.select(_eye_mask(ctx, _aval(da).shape), da, ctx.zeros_like(da))
    if _aval(da).dtype.kind == "c":         # LAPACK reads only the real part of the diagonal
        diagonal = ctx.mul(ctx.add(diagonal, ctx.conj(diagonal)), ctx.full_like(da, 0.5))
    return ctx.add(ctx.add(strict, _adjoint(ctx, strict)), diagonal)


def _inverse_differences(ctx, w, shape, dtype, combine=None):
    """F_ij = 1 / (w_j - w_i) off the diagonal, 0 on it (`combine` makes the difference)."""
    wj, wi = _rows(ctx, w, shape[:-2] + (shape[-1], shape[-1])), \
        _columns(ctx, w, shape[:-2] + (shape[-1], shape[-1]))
    diff = combine(ctx, wj, wi) if combine else ctx.sub(wj, wi)
    eye = _eye_mask(ctx, _aval(diff).shape)
    safe = ctx.select(eye, ctx.full_like(diff, 1), diff)
    f = ctx.select(eye, ctx.zeros_like(diff), ctx.div(ctx.full_like(diff, 1), safe))
    return ctx.convert(f, dtype) if dtype != _aval(f).dtype else f


# -- triangular_solve ------------------------------------------------------------------------

def _solve(ctx, a, b, **params):
    return ctx.bind(PRIMITIVES["triangular_solve"], a, b, **params)


def _op(ctx, a, transpose_a: str):
    if transpose_a == "TRANSPOSE":
        return _swap(ctx, a)
    return _adjoint(ctx, a) if transpose_a == "ADJOINT" else a


def triangular_solve_jvp(ctx, primals, tangents, *, left_side, lower, transpose_a,
                         unit_diagonal):
    (a, _), (da, db) = primals, tangents
    params = dict(left_side=left_side, lower=lower, transpose_a=transpose_a,
                  unit_diagonal=unit_diagonal)
    (x,) = ctx.primal_outs()
    rhs = db
    if da is not None:
        tri = _tri(ctx, da, lower, (-1 if lower else 1) if unit_diagonal else 0)
        op_da = _op(ctx, tri, transpose_a)
        change = _matmul(ctx, op_da, x) if left_side else _matmul(ctx, x, op_da)
        rhs = ctx.neg(change) if rhs is None else ctx.sub(rhs, change)
    if rhs is None:
        return [x], [None]
    return [x], [_solve(ctx, a, rhs, **params)]


def triangular_solve_transpose(ctx, ct, a, b, *, left_side, lower, transpose_a, unit_diagonal):
    """b -> op(A)^-1 b (or b op(A)^-1) transposes to ct -> op(A)^-T ct (ct op(A)^-T)."""
    if is_linear(a):
        raise TypeError("triangular_solve is not linear in its matrix")
    matrix = _conj(ctx, a) if transpose_a == "ADJOINT" else a
    return [None, _solve(ctx, matrix, ct, left_side=left_side, lower=lower,
                         transpose_a=TRANSPOSED[transpose_a], unit_diagonal=unit_diagonal)]


# -- cholesky ----------------------------------------------------------------------------------

def cholesky_jvp(ctx, primals, tangents):
    (l_factor,) = ctx.primal_outs()
    (da,) = tangents
    if da is None:
        return [l_factor], [None]
    sym = _hermitian_of_triangle(ctx, da, lower=True)
    left = _solve(ctx, l_factor, sym, left_side=True, lower=True, transpose_a="NO_TRANSPOSE",
                  unit_diagonal=False)                                  # L^-1 dA
    x = _solve(ctx, l_factor, left, left_side=False, lower=True, transpose_a="ADJOINT",
               unit_diagonal=False)                                     # L^-1 dA L^-H
    half_diagonal = ctx.select(_eye_mask(ctx, _aval(x).shape), ctx.mul(x, ctx.full_like(x, 0.5)),
                               ctx.zeros_like(x))
    phi = ctx.add(_tri(ctx, x, True, -1), half_diagonal)
    return [l_factor], [_matmul(ctx, l_factor, phi)]


# -- lu ----------------------------------------------------------------------------------------

def _permutation_matrix(ctx, perm, shape, dtype):
    """P with (P x)_i = x_perm[i]: P_ij = 1 where perm[i] == j."""
    n = len(shape)
    picked = _columns(ctx, perm, shape)
    hit = ctx.eq(picked, ctx.iota(shape, INT32, n - 1))
    return ctx.select(hit, ctx.full(_aval(picked).update(dtype=dtype), 1),
                      ctx.full(_aval(picked).update(dtype=dtype), 0))


def lu_jvp(ctx, primals, tangents):
    outs = ctx.primal_outs()
    (da,) = tangents
    if da is None:
        return outs, [None, None, None]
    lu, _, perm = outs
    shape = _aval(lu).shape
    if shape[-1] != shape[-2]:
        raise ctx.error(f"psc_jit cannot differentiate `lu` of a non-square {shape} matrix",
                        "differentiate the LU of square matrices (solve, inv, det, slogdet)")
    permuted = _matmul(ctx, _permutation_matrix(ctx, perm, shape, _aval(lu).dtype), da)
    left = _solve(ctx, lu, permuted, left_side=True, lower=True, transpose_a="NO_TRANSPOSE",
                  unit_diagonal=True)                                   # L^-1 P dA
    x = _solve(ctx, lu, left, left_side=False, lower=False, transpose_a="NO_TRANSPOSE",
               unit_diagonal=False)                                     # ... U^-1
    eye = _eye_mask(ctx, shape)
    unit_lower = ctx.select(eye, ctx.full_like(lu, 1), _tri(ctx, lu, True, -1))
    dl = _matmul(ctx, unit_lower, _tri(ctx, x, True, -1))
    du = _matmul(ctx, _tri(ctx, x, False), _tri(ctx, lu, False))
    return outs, [ctx.add(dl, du), None, None]


# -- eigh --------------------------------------------------------------------------------------

def eigh_jvp(ctx, primals, tangents, *, lower, compute_v):
    outs = ctx.primal_outs()
    (a,), (da,) = primals, tangents
    if da is None:
        return outs, [None] * len(outs)
    w, v = (outs[0], outs[1]) if compute_v else \
        ctx.bind(ctx.prim, a, lower=lower, compute_v=True)[:2]
    sym = _hermitian_of_triangle(ctx, da, lower)
    vdv = _matmul(ctx, _adjoint(ctx, v), _matmul(ctx, sym, v))
    dw = _diagonal(ctx, vdv)
    dw = ctx.real(dw) if _aval(dw).dtype.kind == "c" else dw
    if not compute_v:
        return outs, [dw, None]
    f = _inverse_differences(ctx, w, _aval(v).shape, _aval(v).dtype)
    return outs, [dw, _matmul(ctx, v, ctx.mul(f, vdv)), None]


# -- svd ---------------------------------------------------------------------------------------

def _sum_times_difference(ctx, sj, si):
    return ctx.mul(ctx.add(sj, si), ctx.sub(sj, si))


def _scale_columns(ctx, x, s, divide=False):
    """x with column j multiplied (divided) by s_j."""
    cols = _rows(ctx, ctx.convert(s, _aval(x).dtype) if _aval(s).dtype != _aval(x).dtype else s,
                 _aval(x).shape)
    return ctx.div(x, cols) if divide else ctx.mul(x, cols)


def svd_jvp(ctx, primals, tangents, *, full_matrices, compute_uv):
    outs = ctx.primal_outs()
    (a,), (da,) = primals, tangents
    if da is None:
        return outs, [None] * len(outs)
    m, n = _aval(a).shape[-2:]
    if compute_uv and full_matrices and m != n:
        raise ctx.error(f"psc_jit cannot differentiate `svd` with full_matrices=True of a "
                        f"non-square {m}x{n} matrix: the extra singular vectors have no "
                        "derivative", "use full_matrices=False")
    s, u, vt = outs[:3] if compute_uv else \
        ctx.bind(ctx.prim, a, full_matrices=False, compute_uv=True)[:3]
    v = _adjoint(ctx, vt)
    ds_full = _matmul(ctx, _adjoint(ctx, u), _matmul(ctx, da, v))        # U^H dA V
    ds = _diagonal(ctx, ds_full)
    ds = ctx.real(ds) if _aval(ds).dtype.kind == "c" else ds
    if not compute_uv:
        return outs, [ds, None]
    return outs, [ds, *_singular_vector_tangents(ctx, da, s, u, v, vt, ds_full), None]


def _singular_vector_tangents(ctx, da, s, u, v, vt, ds_full):
    """(dU, dVt): JAX's svd_jvp_rule."""
    dtype = _aval(u).dtype
    k = _aval(s).shape[-1]
    square = _aval(ds_full).shape
    f = _inverse_differences(ctx, s, square, dtype, _sum_times_difference)
    dss = _scale_columns(ctx, ds_full, s)                                # dS diag(s)
    sds = _adjoint(ctx, _scale_columns(ctx, _adjoint(ctx, ds_full), s))  # diag(s) dS
    inner_u = ctx.mul(f, ctx.add(dss, _adjoint(ctx, dss)))
    if dtype.kind == "c":
        skew = ctx.mul(ctx.sub(ds_full, _adjoint(ctx, ds_full)), ctx.full_like(ds_full, 0.5))
        inner_u = ctx.add(inner_u, _scale_columns(ctx, skew, _safe_inverse(ctx, s)))
    du = _matmul(ctx, u, inner_u)
    dv = _matmul(ctx, v, ctx.mul(f, ctx.add(sds, _adjoint(ctx, sds))))
    m, n = _aval(da).shape[-2:]
    if m > k:
        dav = _matmul(ctx, da, v)
        du = ctx.add(du, _scale_columns(ctx, ctx.sub(dav, _matmul(ctx, u, _matmul(
            ctx, _adjoint(ctx, u), dav))), s, divide=True))
    if n > k:
        dahu = _matmul(ctx, _adjoint(ctx, da), u)
        dv = ctx.add(dv, _scale_columns(ctx, ctx.sub(dahu, _matmul(ctx, v, _matmul(
            ctx, vt, dahu))), s, divide=True))
    return du, _adjoint(ctx, dv)


def _safe_inverse(ctx, s):
    """1/s, 0 where s is 0."""
    zero = ctx.eq(s, ctx.zeros_like(s))
    return ctx.select(zero, ctx.zeros_like(s), ctx.div(ctx.full_like(s, 1),
                                                       ctx.select(zero, ctx.full_like(s, 1), s)))
