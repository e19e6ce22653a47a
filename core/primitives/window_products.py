"""window_matvec: a matrix-vector product over a window of the matrix whose bounds are traced
integers, the product `L[j + 1:, :j] @ L[j, :j]` of a rolled loop (core/numpy/windows.py).

    window_matvec(a, x, out_lo, out_hi, k_lo, k_hi, transposed=False)[i]
        = sum(a[i, k] * x[k] for k in [k_lo, k_hi))   for i in [out_lo, out_hi), else 0
    transposed=True: a.T in place of a (the window's rows are contracted: `v @ M[:j, j + 1:]`)

Bounds are int64 scalars, clipped to the matrix (a window past its end is cut there, one
with hi <= lo is empty). Writing the product as a masked matrix times a masked vector would
read, mask and multiply the whole matrix on every iteration (at 400 x 400 a Cholesky loop ran
7x slower than NumPy, 8/10 of it the masking); the lowering instead calls BLAS's gemv on the
window alone where the program may call psc_jit's BLAS targets (core/compile/_blas_calls.c),
the call NumPy itself makes on that slice, and is the masked product otherwise.
"""
from __future__ import annotations

import numpy as np

from ..ir import ShapedArray, Var
from .autodiff import is_linear, partials
from .elementwise import logical_and_p
from .record import Primitive, register

FLOATS = (np.dtype(np.float32), np.dtype(np.float64))
INT = np.dtype(np.int64)
TARGETS = {False: "psc_window_gemv_n", True: "psc_window_gemv_t"}


def _shape_rule(a, x, out_lo, out_hi, k_lo, k_hi, *, transposed):
    if a.ndim != 2 or x.ndim != 1:
        raise TypeError(f"window_matvec takes a matrix and a vector, got {a.shape} and {x.shape}")
    if a.shape[0 if transposed else 1] != x.shape[0]:
        raise TypeError(f"window_matvec: a {a.shape} matrix{'.T' if transposed else ''} "
                        f"times a vector of {x.shape[0]}")
    if any(b.shape != () or b.dtype != INT for b in (out_lo, out_hi, k_lo, k_hi)):
        raise TypeError("window_matvec: the bounds are int64 scalars")
    return (a.shape[1 if transposed else 0],)


def _dtype_rule(a, x, *bounds, transposed):
    if a.dtype != x.dtype or a.dtype not in FLOATS:
        raise TypeError(f"window_matvec: float32 or float64 operands of one dtype, got "
                        f"{a.dtype} and {x.dtype}")
    return a.dtype


def _clipped(lo, hi, n: int) -> tuple[int, int]:
    lo, hi = min(max(int(lo), 0), n), min(max(int(hi), 0), n)
    return lo, max(lo, hi)


def _impl(a, x, out_lo, out_hi, k_lo, k_hi, *, transposed):
    matrix = np.asarray(a).T if transposed else np.asarray(a)
    (ol, oh), (kl, kh) = _clipped(out_lo, out_hi, matrix.shape[0]), \
        _clipped(k_lo, k_hi, matrix.shape[1])
    y = np.zeros(matrix.shape[0], matrix.dtype)
    if oh > ol and kh > kl:
        y[ol:oh] = matrix[ol:oh, kl:kh] @ np.asarray(x)[kl:kh]
    return y


def _lowering(ctx, a, x, out_lo, out_hi, k_lo, k_hi, *, transposed):
    operands = [a, x, out_lo, out_hi, k_lo, k_hi]
    if TARGETS[transposed] in ctx.module.targets:
        return ctx.ffi_call(TARGETS[transposed], operands, ctx.avals_in, ctx.avals_out)
    return [_masked_product(ctx, a, x, out_lo, out_hi, k_lo, k_hi, transposed)]


def _inside(ctx, shape, axis, lo, hi) -> str:
    """A bool of `shape`: lo <= position < hi along axis."""
    aval = ShapedArray(shape, INT)
    scalar = ShapedArray((), INT)
    (iota,) = ctx.op("stablehlo.iota", [], [], [aval], {"iota_dimension": f"{axis} : i64"})

    def spread(bound):
        return ctx.op("stablehlo.broadcast_in_dim", [bound], [scalar], [aval],
                      {"broadcast_dimensions": "array<i64>"})[0]
    above = ctx.compare("GE", iota, spread(lo), aval)
    below = ctx.compare("LT", iota, spread(hi), aval)
    bools = aval.update(dtype=np.dtype(bool))
    return ctx.op("stablehlo.and", [above, below], [bools, bools], [bools])[0]


def _zeroed(ctx, value, aval, mask) -> str:
    zero = ctx.constant(np.zeros(aval.shape, aval.dtype), aval)
    return ctx.select(mask, value, zero, aval)


def _masked_product(ctx, a, x, out_lo, out_hi, k_lo, k_hi, transposed) -> str:
    """XLA's own ops: the matrix and the vector zero outside the contracted bounds (a select:
    0 * NaN would be NaN), their dot, zero outside the result's bounds."""
    a_aval, x_aval = ctx.avals_in[:2]
    (out_aval,) = ctx.avals_out
    k_axis = 0 if transposed else 1
    a_masked = _zeroed(ctx, a, a_aval, _inside(ctx, a_aval.shape, k_axis, k_lo, k_hi))
    x_masked = _zeroed(ctx, x, x_aval, _inside(ctx, x_aval.shape, 0, k_lo, k_hi))
    dnums = (f"#stablehlo.dot<lhs_batching_dimensions = [], rhs_batching_dimensions = [], "
             f"lhs_contracting_dimensions = [{k_axis}], rhs_contracting_dimensions = [0]>")
    (product,) = ctx.op("stablehlo.dot_general", [a_masked, x_masked], [a_aval, x_aval],
                        [out_aval], {"dot_dimension_numbers": dnums})
    return _zeroed(ctx, product, out_aval, _inside(ctx, out_aval.shape, 0, out_lo, out_hi))


# -- derivatives: bilinear in (a, x); the bounds have none ------------------------------------

def _transpose(ctx, ct, a, x, out_lo, out_hi, k_lo, k_hi, *, transposed):
    """x's cotangent is the product of the other way round (the bounds swap roles); a's is
    the outer product of ct and x inside the window, zero outside."""
    if is_linear(a) and is_linear(x):
        raise TypeError("a product of two tangents is not linear")
    bounds = [None] * 4
    if is_linear(x):
        return [None, ctx.bind(window_matvec_p, a, ct, k_lo, k_hi, out_lo, out_hi,
                               transposed=not transposed), *bounds]
    shape = a.aval.shape
    out_axis, k_axis = (1, 0) if transposed else (0, 1)
    outer = ctx.mul(ctx.broadcast_in_dim(ct, shape, (out_axis,)),
                    ctx.broadcast_in_dim(x, shape, (k_axis,)))
    inside = ctx.bind(logical_and_p, _between(ctx, shape, out_axis, out_lo, out_hi),
                      _between(ctx, shape, k_axis, k_lo, k_hi))
    return [ctx.select(inside, outer, ctx.zeros_like(outer)), None, *bounds]


def _between(ctx, shape, axis, lo, hi):
    position = ctx.iota(shape, INT, axis)
    return ctx.bind(logical_and_p, ctx.ge(position, ctx.broadcast_in_dim(lo, shape, ())),
                    ctx.lt(position, ctx.broadcast_in_dim(hi, shape, ())))


def _batch(ctx, operands, batched, *, transposed):
    """Each member's product: the product above as ops on the member's operands, batched
    by their own rules."""
    sub = ctx.new()
    in_vars = [Var(ShapedArray(o.aval.shape[1:] if b else o.aval.shape, o.aval.dtype))
               for o, b in zip(operands, batched, strict=True)]
    a, x, out_lo, out_hi, k_lo, k_hi = in_vars
    k_axis = 0 if transposed else 1
    a_masked = sub.select(_between(sub, a.aval.shape, k_axis, k_lo, k_hi), a,
                          sub.zeros_like(a))
    x_masked = sub.select(_between(sub, x.aval.shape, 0, k_lo, k_hi), x, sub.zeros_like(x))
    product = sub.dot_general(a_masked, x_masked, ((k_axis,), (0,)), ((), ()))
    out = sub.select(_between(sub, product.aval.shape, 0, out_lo, out_hi), product,
                     sub.zeros_like(product))
    graph, _ = ctx.batch_graph(sub.graph(in_vars, [out]), batched, instantiate=True)
    return ctx.inline(graph, operands), [True]


window_matvec_p = register(Primitive(
    "window_matvec", _shape_rule, _dtype_rule, _impl, _lowering,
    doc="a matrix-vector product over a window of traced bounds (rolled triangular loops)",
    jvp=partials(
        lambda ctx, t, out, a, x, *bounds, **p: ctx.bind(window_matvec_p, t, x, *bounds, **p),
        lambda ctx, t, out, a, x, *bounds, **p: ctx.bind(window_matvec_p, a, t, *bounds, **p),
        None, None, None, None),
    linear=True, transpose=_transpose, batch=_batch))
