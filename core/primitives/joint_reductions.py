"""reduce_sums: the sums of several arrays of one shape over the same axes, in one pass.

    reduce_sums(x_1, ..., x_k, axes=A) = (reduce_sum(x_1, A), ..., reduce_sum(x_k, A))

Each sum is reduce_sum's, dtype and all. Why one primitive for several sums: XLA:CPU runs a
lone sum whose operand is computed (`np.where(mask, data, 0).sum()`, the masked sum that
`data[mask].mean()` is) as two kernels, the operand written to memory whole and then summed
by a library kernel, while one reduction with several results is a single loop computing
its operands on the fly. `data[mask].mean()` over 40,000 elements in a loop of 100 passes ran
at 0.6x NumPy as a sum and a count, and 3.8x as one reduce_sums of both (bench/loops.py,
azimint_naive).
"""
from __future__ import annotations

import numpy as np

from ..ir import ShapedArray
from ..lowering import i64_array
from .batching import shifted
from .elementwise import is_float
from .record import Primitive, register
from .reductions import _impl, _positive_zero, reduce_shape_rule, reduce_sum_p

WIDENED = {np.dtype(np.float16): np.dtype(np.float32)}   # as NumPy adds float16 numbers


def _shape_rule(*avals, axes):
    if len({a.shape for a in avals}) > 1:
        raise TypeError(f"reduce_sums: operands of one shape, got {[a.shape for a in avals]}")
    return [reduce_shape_rule(a, axes=axes) for a in avals]


def _dtype_rule(*avals, axes):
    return [a.dtype for a in avals]


def _weak_rule(*avals, axes):
    return [a.weak_type for a in avals]


def _sums_impl(*xs, axes):
    return [_impl(np.sum, x, axes=axes) for x in xs]


def _lowering(ctx, *xs, axes):
    """One variadic stablehlo.reduce per float precision (XLA refuses to mix them in one; the
    integers join the first), float16 operands summed in float32 and rounded once, a float
    sum's zero made +0.0, as reduce_sum does."""
    sums = [None] * len(xs)
    for group in _precision_groups(ctx.avals_in):
        totals = _variadic_sum(ctx, [xs[i] for i in group], [ctx.avals_in[i] for i in group],
                               [ctx.avals_out[i] for i in group], axes)
        for i, total in zip(group, totals, strict=True):
            sums[i] = total
    return sums


def _precision_groups(avals) -> list[list[int]]:
    """Positions of the operands, grouped by the width of their float parts."""
    groups: dict[int | None, list[int]] = {}
    for i, aval in enumerate(avals):
        wide = WIDENED.get(aval.dtype, aval.dtype)
        groups.setdefault(np.finfo(wide).bits if wide.kind in "fc" else None, []).append(i)
    ints = groups.pop(None, [])
    ordered = sorted(groups.values())
    return [ordered[0] + ints, *ordered[1:]] if ordered else [ints]


def _variadic_sum(ctx, xs, avals_in, avals_out, axes) -> list[str]:
    wide_in = [a.update(dtype=WIDENED.get(a.dtype, a.dtype), weak_type=False) for a in avals_in]
    wide_out = [a.update(dtype=WIDENED.get(a.dtype, a.dtype), weak_type=False)
                for a in avals_out]
    operands = [x if a.dtype == w.dtype else ctx.unary("stablehlo.convert", x, a, w)
                for x, a, w in zip(xs, avals_in, wide_in, strict=True)]
    scalars = [ShapedArray((), a.dtype) for a in wide_in]
    inits = [ctx.constant(np.zeros((), s.dtype), s) for s in scalars]
    k = len(scalars)

    def body(sub, args):
        return [(sub.op("stablehlo.add", [args[i], args[k + i]], [s, s], [s])[0], s)
                for i, s in enumerate(scalars)]
    totals = ctx.op("stablehlo.reduce", [*operands, *inits], [*wide_in, *scalars], wide_out,
                    {"dimensions": i64_array(axes)}, regions=[ctx.region(scalars * 2, body)])
    return [_as_numpy_sums(ctx, total, wide, out)
            for total, wide, out in zip(totals, wide_out, avals_out, strict=True)]


def _as_numpy_sums(ctx, total, wide, out):
    if wide.dtype != out.dtype:
        total = ctx.unary("stablehlo.convert", total, wide, out.update(weak_type=False))
    return _positive_zero(ctx, total, out) if is_float(out) else total


def _jvp(ctx, primals, tangents, *, axes):
    """Each sum's tangent is the sum of its operand's tangent (reduce_sum's, transposable)."""
    return ctx.primal_outs(), [None if t is None else ctx.bind(reduce_sum_p, t, axes=axes)
                               for t in tangents]


reduce_sums_p = register(Primitive(
    "reduce_sums", _shape_rule, _dtype_rule, _sums_impl, _lowering, multiple_results=True,
    weak_type_rule=_weak_rule,
    doc="np.sum of several arrays of one shape over the same static axes, in one pass",
    jvp=_jvp, batch=shifted("axes")))
