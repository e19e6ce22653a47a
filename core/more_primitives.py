"""Primitives the NumPy layer needs beyond the core set.

fmod: C's fmod (the dividend's sign), NumPy's np.fmod; an integer divisor of 0 gives 0, as in
NumPy. StableHLO's remainder is exactly C's fmod for floats, so the result is exact (x - y *
trunc(x / y) is not, for a large quotient).
"""
from __future__ import annotations

import numpy as np

from .ir import ShapedArray
from .registry import Primitive, register, same_dtype_rule, same_shape_rule


def _compare(ctx, direction: str, x, y, aval: ShapedArray):
    out = aval.update(dtype=np.dtype(bool), weak_type=False)
    return ctx.op("stablehlo.compare", [x, y], [aval, aval], [out],
                  {"comparison_direction": f"#stablehlo<comparison_direction {direction}>"})[0]


def _select(ctx, pred, on_true, on_false, aval: ShapedArray):
    pred_aval = aval.update(dtype=np.dtype(bool), weak_type=False)
    return ctx.op("stablehlo.select", [pred, on_true, on_false], [pred_aval, aval, aval],
                  [aval])[0]


def fmod_lowering(ctx, x, y, **_):
    aval = ctx.avals_in[0]
    if aval.dtype.kind == "f":
        return [ctx.binary("stablehlo.remainder", x, y, aval)]
    zero = ctx.constant(np.zeros((), aval.dtype), aval)
    one = ctx.constant(np.ones((), aval.dtype), aval)
    divisor_zero = _compare(ctx, "EQ", y, zero, aval)
    safe = _select(ctx, divisor_zero, one, y, aval)
    return [_select(ctx, divisor_zero, zero, ctx.binary("stablehlo.remainder", x, safe, aval),
                    aval)]


def fmod_impl(x, y, **_):
    with np.errstate(all="ignore"):
        return np.asarray(np.fmod(x, y))


def fmod_dtype_rule(x, y, **_):
    dtype = same_dtype_rule(x, y)
    if dtype.kind not in "iuf":
        raise TypeError(f"fmod is defined on integers and floats, not {dtype}")
    return dtype


register(Primitive("fmod", same_shape_rule, fmod_dtype_rule, fmod_impl, fmod_lowering,
                   doc="np.fmod: C's fmod (sign of the dividend); integer x % 0 is 0"))
