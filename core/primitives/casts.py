"""Casts: NumPy's float-to-int cast where C leaves it undefined, as lowering ops (used by the
convert primitive's lowering), and `bitcast_convert`, the same bytes read as another type of
the same size (`x.view(np.int64)` of a float64 array)."""
from __future__ import annotations

import numpy as np

from .batching import leading_batch
from .record import Primitive, never_weak, register, same_shape_rule


def float_to_int(ctx, x, aval_in, aval_out):
    """NumPy's float-to-int cast (x86-64, contiguous arrays) where C leaves it undefined:
    a 32- or 64-bit conversion gives the type's minimum for NaN and out-of-range values
    (cvttsd2si; XLA saturates instead); 8- and 16-bit types keep the low bits of the 32-bit
    conversion; uint32 and uint64 convert x - 2**(n-1) when x >= 2**(n-1), then flip the top
    bit back (but float16 to uint32 keeps the low bits of the 64-bit conversion)."""
    bits = max(32, 8 * aval_out.dtype.itemsize)
    if aval_in.dtype.itemsize < 4:                       # float16: converted through float32
        wide = aval_in.update(dtype=np.dtype(np.float32))
        x, aval_in = ctx.unary("stablehlo.convert", x, aval_in, wide), wide
        bits = 64 if aval_out.dtype == np.uint32 else bits
    signed = aval_out.update(dtype=np.dtype(f"int{bits}"))
    if aval_out.dtype.kind == "i" or bits != 8 * aval_out.dtype.itemsize:
        result = _cvtt(ctx, x, aval_in, signed, bits)
    else:
        top = ctx.constant(np.asarray(2.0 ** (bits - 1), aval_in.dtype), aval_in)
        high = ctx.compare("GE", x, top, aval_in)
        shifted = _cvtt(ctx, ctx.binary("stablehlo.subtract", x, top, aval_in), aval_in,
                        signed, bits)
        flip = ctx.constant(np.asarray(np.iinfo(signed.dtype).min, signed.dtype), signed)
        shifted = ctx.binary("stablehlo.xor", shifted, flip, signed)
        result = ctx.select(high, shifted, _cvtt(ctx, x, aval_in, signed, bits), signed)
    if signed.dtype == aval_out.dtype:
        return result
    if aval_out.dtype.itemsize == signed.dtype.itemsize:
        return ctx.op("stablehlo.bitcast_convert", [result], [signed], [aval_out])[0]
    return ctx.unary("stablehlo.convert", result, signed, aval_out)     # wraps: low bits


def _cvtt(ctx, x, aval_in, aval_out, bits: int):
    """x86's truncating conversion to a `bits`-bit int: the minimum for NaN or out of range."""
    low = ctx.constant(np.asarray(-(2.0 ** (bits - 1)), aval_in.dtype), aval_in)
    high = ctx.constant(np.asarray(2.0 ** (bits - 1), aval_in.dtype), aval_in)
    inside = ctx.binary("stablehlo.and", ctx.compare("GE", x, low, aval_in),
                        ctx.compare("LT", x, high, aval_in),
                        aval_in.update(dtype=np.dtype(bool), weak_type=False))
    minimum = ctx.constant(np.asarray(np.iinfo(aval_out.dtype).min, aval_out.dtype), aval_out)
    return ctx.select(inside, ctx.unary("stablehlo.convert", x, aval_in, aval_out), minimum,
                      aval_out)


def bitcastable(old: np.dtype, new: np.dtype) -> bool:
    """Whether StableHLO reads old's bytes as new: the same size, and neither a bool nor a
    complex number (whose parts it will not read as one number)."""
    return old.itemsize == new.itemsize and old.kind not in "bc" and new.kind not in "bc"


def _bitcast_dtype_rule(aval, *, new_dtype):
    new_dtype = np.dtype(new_dtype)
    if not bitcastable(aval.dtype, new_dtype):
        raise TypeError(f"bitcast_convert reads {aval.dtype} as a type of its size (neither "
                        f"bool nor complex), not as {new_dtype}")
    return new_dtype


def _bitcast_impl(x, *, new_dtype):
    return np.array(x, order="C").view(new_dtype)


def _bitcast_lowering(ctx, x, *, new_dtype):
    return ctx.op("stablehlo.bitcast_convert", [x], ctx.avals_in, ctx.avals_out)


bitcast_convert_p = register(Primitive(
    "bitcast_convert", same_shape_rule, _bitcast_dtype_rule, _bitcast_impl, _bitcast_lowering,
    weak_type_rule=never_weak, doc="x.view(dtype): the same bytes as a type of the same size",
    differentiable=False, batch=leading_batch))
