"""correlate: the sliding dot product of two vectors, NumPy's convolve and correlate
(core/numpy/products.py pads and flips around it).

    correlate(a, v)[k] = sum(a[k + j] * v[j] for j in range(len(v)))   k in [0, len(a) - len(v)]

No complex conjugate (np.correlate conjugates v before). Its lowering is the sum of len(v)
shifted slices of a, one loop XLA fuses, for a short kernel (NumPy's own correlate ran 2-8x
slower than that fusion up to 31 taps of 100,000 float64; at 64 taps XLA split the fusion
and ran 1.6x slower than NumPy), and XLA's convolution for a longer float one (1.4-2x faster
than NumPy from 31 to 1,000 taps).
"""
from __future__ import annotations

import numpy as np

from ..ir import ShapedArray, Var
from ..lowering import i64_array
from .autodiff import is_linear, partials
from .record import Primitive, register, same_dtype_rule

UNROLLED_TAPS = 32      # kernels up to this length are summed as shifted slices


def _shape_rule(a, v):
    if a.ndim != 1 or v.ndim != 1 or not 1 <= v.shape[0] <= a.shape[0]:
        raise TypeError(f"correlate takes two vectors, the first at least as long as the "
                        f"second and neither empty, got {a.shape} and {v.shape}")
    return (a.shape[0] - v.shape[0] + 1,)


def _impl(a, v):
    a, v = np.asarray(a), np.asarray(v)
    return np.convolve(a, v[::-1], "valid").astype(a.dtype, copy=False)


def _lowering(ctx, a, v):
    a_aval, v_aval = ctx.avals_in
    (out_aval,) = ctx.avals_out
    if v_aval.shape[0] > UNROLLED_TAPS and a_aval.dtype.kind in "fc":
        return [_convolution(ctx, a, v, a_aval, v_aval, out_aval)]
    return [_shifted_sum(ctx, a, v, a_aval, v_aval, out_aval)]


def _shifted_sum(ctx, a, v, a_aval, v_aval, out_aval) -> str:
    """a[j:j + n] * v[j], summed over j in order."""
    length = out_aval.shape[0]
    tap = ShapedArray((1,), v_aval.dtype)
    total = None
    for j in range(v_aval.shape[0]):
        (window,) = ctx.op("stablehlo.slice", [a], [a_aval], [out_aval], {
            "start_indices": i64_array([j]), "limit_indices": i64_array([j + length]),
            "strides": i64_array([1])})
        (weight,) = ctx.op("stablehlo.slice", [v], [v_aval], [tap], {
            "start_indices": i64_array([j]), "limit_indices": i64_array([j + 1]),
            "strides": i64_array([1])})
        (spread,) = ctx.op("stablehlo.broadcast_in_dim", [weight], [tap], [out_aval],
                           {"broadcast_dimensions": i64_array([0])})
        term = ctx.binary("stablehlo.multiply", window, spread, out_aval)
        total = term if total is None else ctx.binary("stablehlo.add", total, term, out_aval)
    return total


def _convolution(ctx, a, v, a_aval, v_aval, out_aval) -> str:
    """One stablehlo.convolution: a as one batch of one feature, v as one filter."""
    as_3d = [ShapedArray((1, 1, x.shape[0]), x.dtype) for x in (a_aval, v_aval, out_aval)]
    lhs, rhs = (ctx.op("stablehlo.reshape", [x], [aval], [shaped])[0]
                for x, aval, shaped in ((a, a_aval, as_3d[0]), (v, v_aval, as_3d[1])))
    (out,) = ctx.op("stablehlo.convolution", [lhs, rhs], as_3d[:2], as_3d[2:], {
        "batch_group_count": "1 : i64", "feature_group_count": "1 : i64",
        "dimension_numbers": "#stablehlo.conv<[b, f, 0]x[o, i, 0]->[b, f, 0]>",
        "window_strides": i64_array([1]), "padding": "dense<0> : tensor<1x2xi64>",
        "lhs_dilation": i64_array([1]), "rhs_dilation": i64_array([1])})
    return ctx.op("stablehlo.reshape", [out], as_3d[2:], [out_aval])[0]


# -- derivatives: bilinear in (a, v) ---------------------------------------------------------

def _transpose(ctx, ct, a, v):
    """a's cotangent is the full convolution of ct with v (ct padded by len(v) - 1 on both
    sides, correlated with v reversed); v's is a correlated with ct."""
    if is_linear(a) and is_linear(v):
        raise TypeError("a correlation of two tangents is not linear")
    if is_linear(v):
        return [None, ctx.bind(correlate_p, a, ct)]
    taps = v.aval.shape[0]
    padded = ctx.pad(ct, ctx.zeros(ShapedArray((), ct.aval.dtype)), (taps - 1,), (taps - 1,))
    return [ctx.bind(correlate_p, padded, ctx.rev(v, (0,))), None]


def _batch(ctx, operands, batched):
    """Each member's correlation as its shifted sum (`_shifted_sum` in ops), batched by their
    own rules."""
    sub = ctx.new()
    in_vars = [Var(ShapedArray(o.aval.shape[1:] if b else o.aval.shape, o.aval.dtype))
               for o, b in zip(operands, batched, strict=True)]
    a, v = in_vars
    taps, length = v.aval.shape[0], a.aval.shape[0] - v.aval.shape[0] + 1
    total = None
    for j in range(taps):
        term = sub.mul(sub.slice(a, (j,), (j + length,)),
                       sub.broadcast_in_dim(sub.slice(v, (j,), (j + 1,)), (length,), (0,)))
        total = term if total is None else sub.add(total, term)
    graph, _ = ctx.batch_graph(sub.graph(in_vars, [total]), batched, instantiate=True)
    return ctx.inline(graph, operands), [True]


correlate_p = register(Primitive(
    "correlate", _shape_rule, same_dtype_rule, _impl, _lowering,
    doc="the sliding dot product of two vectors (np.convolve, np.correlate)",
    jvp=partials(lambda ctx, t, out, a, v: ctx.bind(correlate_p, t, v),
                 lambda ctx, t, out, a, v: ctx.bind(correlate_p, a, t)),
    linear=True, transpose=_transpose, batch=_batch))
