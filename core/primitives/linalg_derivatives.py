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

def aval(x):
    return x.aval


def _swap(ctx, x):
    n = aval(x).ndim
    return ctx.transpose(x, tuple(range(n - 2)) + (n - 1, n - 2))


def conj_if_complex(ctx, x):
    return ctx.conj(x) if aval(x).dtype.kind == "c" else x


def adjoint(ctx, x):
    return conj_if_complex(ctx, _swap(ctx, x))


def matmul(ctx, a, b):
    n = aval(a).ndim
    batch = tuple(range(n - 2))
    return ctx.dot_general(a, b, ((n - 1,), (n - 2,)), (batch, batch))


def _triangle_mask(ctx, shape, lower: bool, k: int = 0):
    """True on and below diagonal k (lower), or on and above it (upper): numpy's tril/triu
    offsets (j - i <= k, j - i >= k)."""
    n = len(shape)
    row, col = ctx.iota(shape, INT32, n - 2), ctx.iota(shape, INT32, n - 1)
    shifted = ctx.add(row, ctx.full_like(row, k)) if k else row
    return ctx.ge(shifted, col) if lower else ctx.ge(col, shifted)


def tri(ctx, x, lower: bool, k: int = 0):
    """x's lower (upper) triangle from diagonal k, zeros elsewhere (numpy's tril/triu)."""
    mask = _triangle_mask(ctx, aval(x).shape, lower, k)
    return ctx.select(mask, x, ctx.zeros_like(x))


def eye_mask(ctx, shape):
    n = len(shape)
    return ctx.eq(ctx.iota(shape, INT32, n - 2), ctx.iota(shape, INT32, n - 1))


def diagonal(ctx, x):
    """The diagonal of each matrix of a square x, (..., n)."""
    shape = aval(x).shape
    on = ctx.select(eye_mask(ctx, shape), x, ctx.zeros_like(x))
    return ctx.reduce_sum(on, (len(shape) - 1,))


def rows(ctx, v, shape):
    """v (..., n) as matrices whose every row is v: entry (i, j) is v_j."""
    n = len(shape)
    return ctx.broadcast_in_dim(v, shape, tuple(range(n - 2)) + (n - 1,))


def columns(ctx, v, shape):
    """Entry (i, j) is v_i."""
    n = len(shape)
    return ctx.broadcast_in_dim(v, shape, tuple(range(n - 1)))


def _hermitian_of_triangle(ctx, da, lower: bool):
    """The Hermitian matrix whose `lower` triangle is da's: what a factorization reading
    only that triangle sees of the tangent."""
    strict = tri(ctx, da, lower, -1 if lower else 1)
    diag_part = ctx.select(eye_mask(ctx, aval(da).shape), da, ctx.zeros_like(da))
    if aval(da).dtype.kind == "c":         # LAPACK reads only the real part of the diagonal
        diag_part = ctx.mul(ctx.add(diag_part, ctx.conj(diag_part)), ctx.full_like(da, 0.5))
    return ctx.add(ctx.add(strict, adjoint(ctx, strict)), diag_part)


def _inverse_differences(ctx, w, shape, dtype, combine=None):
    """F_ij = 1 / (w_j - w_i) off the diagonal, 0 on it (`combine` makes the difference)."""
    wj, wi = rows(ctx, w, shape[:-2] + (shape[-1], shape[-1])), \
        columns(ctx, w, shape[:-2] + (shape[-1], shape[-1]))
    diff = combine(ctx, wj, wi) if combine else ctx.sub(wj, wi)
    eye = eye_mask(ctx, aval(diff).shape)
    safe = ctx.select(eye, ctx.full_like(diff, 1), diff)
    f = ctx.select(eye, ctx.zeros_like(diff), ctx.div(ctx.full_like(diff, 1), safe))
    return ctx.convert(f, dtype) if dtype != aval(f).dtype else f


# -- triangular_solve ------------------------------------------------------------------------

def solve(ctx, a, b, **params):
    return ctx.bind(PRIMITIVES["triangular_solve"], a, b, **params)


def _op(ctx, a, transpose_a: str):
    if transpose_a == "TRANSPOSE":
        return _swap(ctx, a)
    return adjoint(ctx, a) if transpose_a == "ADJOINT" else a


def triangular_solve_jvp(ctx, primals, tangents, *, left_side, lower, transpose_a,
                         unit_diagonal):
    (a, _), (da, db) = primals, tangents
    params = dict(left_side=left_side, lower=lower, transpose_a=transpose_a,
                  unit_diagonal=unit_diagonal)
    (x,) = ctx.primal_outs()
    rhs = db
    if da is not None:
        triangle = tri(ctx, da, lower, (-1 if lower else 1) if unit_diagonal else 0)
        op_da = _op(ctx, triangle, transpose_a)
        change = matmul(ctx, op_da, x) if left_side else matmul(ctx, x, op_da)
        rhs = ctx.neg(change) if rhs is None else ctx.sub(rhs, change)
    if rhs is None:
        return [x], [None]
    return [x], [solve(ctx, a, rhs, **params)]


def triangular_solve_transpose(ctx, ct, a, b, *, left_side, lower, transpose_a, unit_diagonal):
    """b -> op(A)^-1 b (or b op(A)^-1) transposes to ct -> op(A)^-T ct (ct op(A)^-T)."""
    if is_linear(a):
        raise TypeError("triangular_solve is not linear in its matrix")
    matrix = conj_if_complex(ctx, a) if transpose_a == "ADJOINT" else a
    return [None, solve(ctx, matrix, ct, left_side=left_side, lower=lower,
                         transpose_a=TRANSPOSED[transpose_a], unit_diagonal=unit_diagonal)]


# -- cholesky ----------------------------------------------------------------------------------

def cholesky_jvp(ctx, primals, tangents):
    (l_factor,) = ctx.primal_outs()
    (da,) = tangents
    if da is None:
        return [l_factor], [None]
    sym = _hermitian_of_triangle(ctx, da, lower=True)
    left = solve(ctx, l_factor, sym, left_side=True, lower=True, transpose_a="NO_TRANSPOSE",
                  unit_diagonal=False)                                  # L^-1 dA
    x = solve(ctx, l_factor, left, left_side=False, lower=True, transpose_a="ADJOINT",
               unit_diagonal=False)                                     # L^-1 dA L^-H
    half_diagonal = ctx.select(eye_mask(ctx, aval(x).shape), ctx.mul(x, ctx.full_like(x, 0.5)),
                               ctx.zeros_like(x))
    phi = ctx.add(tri(ctx, x, True, -1), half_diagonal)
    return [l_factor], [matmul(ctx, l_factor, phi)]


# -- lu ----------------------------------------------------------------------------------------

def _permutation_matrix(ctx, perm, shape, dtype):
    """P with (P x)_i = x_perm[i]: P_ij = 1 where perm[i] == j."""
    n = len(shape)
    picked = columns(ctx, perm, shape)
    hit = ctx.eq(picked, ctx.iota(shape, INT32, n - 1))
    return ctx.select(hit, ctx.full(aval(picked).update(dtype=dtype), 1),
                      ctx.full(aval(picked).update(dtype=dtype), 0))


def lu_jvp(ctx, primals, tangents):
    outs = ctx.primal_outs()
    (da,) = tangents
    if da is None:
        return outs, [None, None, None]
    lu, _, perm = outs
    shape = aval(lu).shape
    if shape[-1] != shape[-2]:
        raise ctx.error(f"psc_jit cannot differentiate `lu` of a non-square {shape} matrix",
                        "differentiate the LU of square matrices (solve, inv, det, slogdet)")
    permuted = matmul(ctx, _permutation_matrix(ctx, perm, shape, aval(lu).dtype), da)
    left = solve(ctx, lu, permuted, left_side=True, lower=True, transpose_a="NO_TRANSPOSE",
                  unit_diagonal=True)                                   # L^-1 P dA
    x = solve(ctx, lu, left, left_side=False, lower=False, transpose_a="NO_TRANSPOSE",
               unit_diagonal=False)                                     # ... U^-1
    eye = eye_mask(ctx, shape)
    unit_lower = ctx.select(eye, ctx.full_like(lu, 1), tri(ctx, lu, True, -1))
    dl = matmul(ctx, unit_lower, tri(ctx, x, True, -1))
    du = matmul(ctx, tri(ctx, x, False), tri(ctx, lu, False))
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
    vdv = matmul(ctx, adjoint(ctx, v), matmul(ctx, sym, v))
    dw = diagonal(ctx, vdv)
    dw = ctx.real(dw) if aval(dw).dtype.kind == "c" else dw
    if not compute_v:
        return outs, [dw, None]
    f = _inverse_differences(ctx, w, aval(v).shape, aval(v).dtype)
    return outs, [dw, matmul(ctx, v, ctx.mul(f, vdv)), None]


# -- svd ---------------------------------------------------------------------------------------

def _sum_times_difference(ctx, sj, si):
    return ctx.mul(ctx.add(sj, si), ctx.sub(sj, si))


def _scale_columns(ctx, x, s, divide=False):
    """x with column j multiplied (divided) by s_j."""
    cols = rows(ctx, ctx.convert(s, aval(x).dtype) if aval(s).dtype != aval(x).dtype else s,
                 aval(x).shape)
    return ctx.div(x, cols) if divide else ctx.mul(x, cols)


def svd_jvp(ctx, primals, tangents, *, full_matrices, compute_uv):
    outs = ctx.primal_outs()
    (a,), (da,) = primals, tangents
    if da is None:
        return outs, [None] * len(outs)
    m, n = aval(a).shape[-2:]
    if compute_uv and full_matrices and m != n:
        raise ctx.error(f"psc_jit cannot differentiate `svd` with full_matrices=True of a "
                        f"non-square {m}x{n} matrix: the extra singular vectors have no "
                        "derivative", "use full_matrices=False")
    s, u, vt = outs[:3] if compute_uv else \
        ctx.bind(ctx.prim, a, full_matrices=False, compute_uv=True)[:3]
    v = adjoint(ctx, vt)
    ds_full = matmul(ctx, adjoint(ctx, u), matmul(ctx, da, v))        # U^H dA V
    ds = diagonal(ctx, ds_full)
    ds = ctx.real(ds) if aval(ds).dtype.kind == "c" else ds
    if not compute_uv:
        return outs, [ds, None]
    return outs, [ds, *_singular_vector_tangents(ctx, da, s, u, v, vt, ds_full), None]


def _singular_vector_tangents(ctx, da, s, u, v, vt, ds_full):
    """(dU, dVt): JAX's svd_jvp_rule."""
    dtype = aval(u).dtype
    k = aval(s).shape[-1]
    square = aval(ds_full).shape
    f = _inverse_differences(ctx, s, square, dtype, _sum_times_difference)
    dss = _scale_columns(ctx, ds_full, s)                                # dS diag(s)
    sds = adjoint(ctx, _scale_columns(ctx, adjoint(ctx, ds_full), s))  # diag(s) dS
    inner_u = ctx.mul(f, ctx.add(dss, adjoint(ctx, dss)))
    if dtype.kind == "c":
        skew = ctx.mul(ctx.sub(ds_full, adjoint(ctx, ds_full)), ctx.full_like(ds_full, 0.5))
        inner_u = ctx.add(inner_u, _scale_columns(ctx, skew, _safe_inverse(ctx, s)))
    du = matmul(ctx, u, inner_u)
    dv = matmul(ctx, v, ctx.mul(f, ctx.add(sds, adjoint(ctx, sds))))
    m, n = aval(da).shape[-2:]
    if m > k:
        dav = matmul(ctx, da, v)
        du = ctx.add(du, _scale_columns(ctx, ctx.sub(dav, matmul(ctx, u, matmul(
            ctx, adjoint(ctx, u), dav))), s, divide=True))
    if n > k:
        dahu = matmul(ctx, adjoint(ctx, da), u)
        dv = ctx.add(dv, _scale_columns(ctx, ctx.sub(dahu, matmul(ctx, v, matmul(
            ctx, vt, dahu))), s, divide=True))
    return du, adjoint(ctx, dv)


def _safe_inverse(ctx, s):
    """1/s, 0 where s is 0."""
    zero = ctx.eq(s, ctx.zeros_like(s))
    return ctx.select(zero, ctx.zeros_like(s), ctx.div(ctx.full_like(s, 1),
                                                       ctx.select(zero, ctx.full_like(s, 1), s)))
