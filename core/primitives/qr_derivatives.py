"""The rules of differentiation of Householder QR (`linalg.py` holds the records): geqrf,
householder_product and householder_apply.

The reflectors' product is Q = H_1 ... H_k = I - V T V^H (V: the unit lower trapezoidal
reflectors, T upper triangular, compact WY), with T = diag(tau) P^-1, P = I + N diag(tau),
N = the strictly upper part of V^H V (the larft recurrence, written without dividing by tau,
which is 0 for a reflector that changes nothing, e.g. the last one of a real square QR).

    householder_product  dQ from (dV, dtau) through that formula
    householder_apply    Q^H c: linear in c (its transpose is conj(Q) ct), dQ^H c + Q^H dc
    geqrf                dQ, dR of A = Q R by JAX's qr_jvp_rule (a wide A: its leading square
                         block, then R2 = Q^H A2); the reflectors' tangents from
                         (I - Q)[:, :k] = V diag(tau) W, an LU factorization (W unit upper)
"""
from __future__ import annotations

from .autodiff import is_linear
from .linalg_derivatives import (adjoint, aval, columns, conj_if_complex, diagonal, eye_mask,
                                 matmul, rows, solve, tri)
from .record import PRIMITIVES


def _columns_range(ctx, x, start, stop, axis=-1):
    """x[..., start:stop] along the last axis (axis=-1) or the rows (axis=-2)."""
    shape = aval(x).shape
    starts, limits = [0] * len(shape), list(shape)
    starts[axis], limits[axis] = start, stop
    return ctx.slice(x, starts, limits)


def _unit_lower(ctx, x):
    """The unit lower trapezoidal matrix of x's strictly lower part (the reflectors)."""
    return ctx.select(eye_mask(ctx, aval(x).shape), ctx.full_like(x, 1), tri(ctx, x, True, -1))


def _compact_wy(ctx, v, taus):
    """(P, and P^-1 applied on the left/right): P = I + N diag(tau), unit upper."""
    vhv = matmul(ctx, adjoint(ctx, v), v)
    n_strict = tri(ctx, vhv, False, 1)
    p = ctx.add(ctx.mul(n_strict, rows(ctx, taus, aval(vhv).shape)),
                ctx.select(eye_mask(ctx, aval(vhv).shape), ctx.full_like(vhv, 1),
                           ctx.zeros_like(vhv)))
    return p, n_strict


def _left(ctx, p, b):
    return solve(ctx, p, b, left_side=True, lower=False, transpose_a="NO_TRANSPOSE",
                  unit_diagonal=True)


def _right(ctx, p, b):
    return solve(ctx, p, b, left_side=False, lower=False, transpose_a="NO_TRANSPOSE",
                  unit_diagonal=True)


def _q_tangent(ctx, v, taus, dv, dtaus, cols: int):
    """dQ[:, :cols] for Q = I - V diag(tau) P^-1 V^H, dv and dtaus its operands' tangents."""
    p, n_strict = _compact_wy(ctx, v, taus)
    square = aval(p).shape
    v1h = adjoint(ctx, _columns_range(ctx, v, 0, cols, axis=-2))        # (k, cols)
    dv1h = adjoint(ctx, _columns_range(ctx, dv, 0, cols, axis=-2))
    y = _left(ctx, p, v1h)                                               # P^-1 V1^H
    z = _right(ctx, p, ctx.mul(v, rows(ctx, taus, aval(v).shape)))    # V diag(tau) P^-1
    y_rows = columns(ctx, taus, aval(y).shape)
    term = matmul(ctx, dv, ctx.mul(y_rows, y))                          # dV diag(tau) Y
    term = ctx.add(term, matmul(ctx, v, ctx.mul(columns(ctx, dtaus, aval(y).shape), y)))
    dn = tri(ctx, ctx.add(matmul(ctx, adjoint(ctx, dv), v), matmul(ctx, adjoint(ctx, v), dv)),
              False, 1)
    dp = ctx.add(ctx.mul(dn, rows(ctx, taus, square)),
                 ctx.mul(n_strict, rows(ctx, dtaus, square)))
    term = ctx.sub(term, matmul(ctx, z, matmul(ctx, dp, y)))
    term = ctx.add(term, matmul(ctx, z, dv1h))
    return ctx.neg(term)


def _reflector_tangents(ctx, a, taus, da, dtaus):
    k = aval(taus).shape[-1]
    v = _unit_lower(ctx, _columns_range(ctx, a, 0, k))
    dv = tri(ctx, _columns_range(ctx, da, 0, k), True, -1) if da is not None \
        else ctx.zeros_like(v)
    dtaus = ctx.zeros_like(taus) if dtaus is None else dtaus
    return v, dv, dtaus


def householder_product_jvp(ctx, primals, tangents):
    (q,) = ctx.primal_outs()
    (a, taus), (da, dtaus) = primals, tangents
    if da is None and dtaus is None:
        return [q], [None]
    v, dv, dtaus = _reflector_tangents(ctx, a, taus, da, dtaus)
    return [q], [_q_tangent(ctx, v, taus, dv, dtaus, aval(a).shape[-1])]


def _apply_q(ctx, a, taus, x):
    """Q x = x - V diag(tau) P^-1 V^H x."""
    k = aval(taus).shape[-1]
    v = _unit_lower(ctx, _columns_range(ctx, a, 0, k))
    p, _ = _compact_wy(ctx, v, taus)
    inner = _left(ctx, p, matmul(ctx, adjoint(ctx, v), x))
    return ctx.sub(x, matmul(ctx, v, ctx.mul(columns(ctx, taus, aval(inner).shape), inner)))


def householder_apply_jvp(ctx, primals, tangents):
    (out,) = ctx.primal_outs()
    (a, taus, c), (da, dtaus, dc) = primals, tangents
    total = None
    if dc is not None:
        total = ctx.bind(ctx.prim, a, taus, dc)
    if da is not None or dtaus is not None:
        v, dv, dtaus = _reflector_tangents(ctx, a, taus, da, dtaus)
        dq = _q_tangent(ctx, v, taus, dv, dtaus, aval(a).shape[-2])
        total = ctx.add_any(total, matmul(ctx, adjoint(ctx, dq), c))
    return [out], [total]


def householder_apply_transpose(ctx, ct, a, taus, c):
    """c -> Q^H c transposes to ct -> conj(Q) ct = conj(Q conj(ct))."""
    if is_linear(a) or is_linear(taus):
        raise TypeError("householder_apply is linear in c only")
    return [None, None, conj_if_complex(ctx, _apply_q(ctx, a, taus, conj_if_complex(ctx, ct)))]


# -- geqrf -----------------------------------------------------------------------------------

def _qr_tangents(ctx, q, r, da):
    """(dQ, dR) of a tall or square A = Q R (JAX's qr_jvp_rule)."""
    dx_rinv = solve(ctx, r, da, left_side=False, lower=False, transpose_a="NO_TRANSPOSE",
                     unit_diagonal=False)                                # dA R^-1
    qt = matmul(ctx, adjoint(ctx, q), dx_rinv)
    low = tri(ctx, qt, True, -1)
    do = ctx.sub(low, adjoint(ctx, low))
    if aval(qt).dtype.kind == "c":      # i Im(diag(qt)): R's diagonal is real
        imaginary = ctx.mul(ctx.sub(qt, ctx.conj(qt)), ctx.full_like(qt, 0.5))
        do = ctx.add(do, ctx.select(eye_mask(ctx, aval(qt).shape), imaginary,
                                    ctx.zeros_like(qt)))
    dq = ctx.add(matmul(ctx, q, ctx.sub(do, qt)), dx_rinv)
    return dq, matmul(ctx, ctx.sub(qt, do), r)


def _pad_to(ctx, x, shape):
    have = aval(x).shape
    if have == tuple(shape):
        return x
    zero = ctx.full(aval(x).update(shape=()), 0)
    return ctx.pad(x, zero, [0] * len(shape), [s - h for s, h in zip(shape, have, strict=True)])


def _lu_tangents(ctx, v, u, dm, taus):
    """(dV, dU) of M = V U (V unit lower trapezoidal m x k, U upper k x k), no pivoting. A zero
    diagonal entry of U (a reflector that changes nothing) is taken as 1: it only reaches its
    own tau's tangent, which is 0 there."""
    k = aval(u).shape[-1]
    eye = eye_mask(ctx, aval(u).shape)
    safe_u = ctx.select(eye, ctx.select(ctx.eq(u, ctx.zeros_like(u)), ctx.full_like(u, 1), u), u)
    v1 = _columns_range(ctx, v, 0, k, axis=-2)
    x = solve(ctx, v1, _columns_range(ctx, dm, 0, k, axis=-2), left_side=True, lower=True,
               transpose_a="NO_TRANSPOSE", unit_diagonal=True)
    x = solve(ctx, safe_u, x, left_side=False, lower=False, transpose_a="NO_TRANSPOSE",
               unit_diagonal=False)
    dv = matmul(ctx, v1, tri(ctx, x, True, -1))
    du = matmul(ctx, tri(ctx, x, False), u)
    m = aval(v).shape[-2]
    if m > k:
        rest = ctx.sub(_columns_range(ctx, dm, k, m, axis=-2),
                       matmul(ctx, _columns_range(ctx, v, k, m, axis=-2), du))
        rest = solve(ctx, safe_u, rest, left_side=False, lower=False,
                      transpose_a="NO_TRANSPOSE", unit_diagonal=False)
        dv = ctx.concatenate([dv, rest], aval(v).ndim - 2)
    dtaus = diagonal(ctx, du)
    return dv, ctx.select(ctx.eq(taus, ctx.zeros_like(taus)), ctx.zeros_like(dtaus), dtaus)


def geqrf_jvp(ctx, primals, tangents):
    outs = ctx.primal_outs()
    (a,), (da,) = primals, tangents
    if da is None:
        return outs, [None, None]
    h, taus = outs
    shape = aval(h).shape
    m, n = shape[-2:]
    k = min(m, n)
    hk = _columns_range(ctx, h, 0, k)
    q = ctx.bind(PRIMITIVES["householder_product"], hk, taus)                # (m, k)
    r1 = tri(ctx, _columns_range(ctx, hk, 0, k, axis=-2), False)
    dq, dr = _qr_tangents(ctx, q, r1, _columns_range(ctx, da, 0, k))
    if n > k:                                                             # R2 = Q^H A2
        a2, da2 = _columns_range(ctx, a, k, n), _columns_range(ctx, da, k, n)
        dr2 = ctx.add(matmul(ctx, adjoint(ctx, dq), a2), matmul(ctx, adjoint(ctx, q), da2))
        dr = ctx.concatenate([dr, dr2], len(shape) - 1)
    v = _unit_lower(ctx, hk)
    eye_k = ctx.select(eye_mask(ctx, aval(r1).shape), ctx.full_like(r1, 1),
                       ctx.zeros_like(r1))
    m1 = ctx.sub(eye_k, _columns_range(ctx, q, 0, k, axis=-2))          # (I - Q)[:k, :k]
    u = tri(ctx, solve(ctx, _columns_range(ctx, v, 0, k, axis=-2), m1, left_side=True,
                         lower=True, transpose_a="NO_TRANSPOSE", unit_diagonal=True), False)
    dv, dtaus = _lu_tangents(ctx, v, u, ctx.neg(dq), taus)
    upper = tri(ctx, _pad_to(ctx, dr, shape), False)
    return outs, [ctx.add(upper, tri(ctx, _pad_to(ctx, dv, shape), True, -1)), dtaus]
