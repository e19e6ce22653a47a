"""Elementwise arithmetic whose NumPy meaning takes more than one StableHLO op: division
(true, floor, remainder, fmod, complex), powers, squares, reciprocals and hypot.

Integer division by zero gives 0 and `remainder` takes the divisor's sign, as in NumPy;
complex division and power follow NumPy's (C99's) formulas where XLA's own ops differ.
Each primitive is one `elementwise(...)` record (see `elementwise.py`) at the end of the file.
"""
from __future__ import annotations

from functools import partial

import numpy as np

from .autodiff import is_linear, partials, zero_jvp
from .complex_functions import complex_power
from .elementwise import (complex_parts, copysign, divisor, elementwise, in_aval, is_float,
                          make_complex, zeros)
from .record import same_dtype_rule


def floor_divide_lowering(ctx, x, y, **_):
    aval = in_aval(ctx)
    if is_float(aval):
        return [_float_floor_divide(ctx, x, divisor(ctx, y, aval), aval)]
    zero = zeros(ctx, aval)
    one = ctx.constant(np.ones((), aval.dtype), aval)
    y_is_zero = ctx.compare("EQ", y, zero, aval)
    safe_y = ctx.select(y_is_zero, one, y, aval)
    quot = ctx.binary("stablehlo.divide", x, safe_y, aval)
    if aval.dtype.kind == "i":
        rem = ctx.binary("stablehlo.remainder", x, safe_y, aval)
        adjust = _signs_differ(ctx, rem, safe_y, aval)
        quot = ctx.select(adjust, ctx.binary("stablehlo.subtract", quot, one, aval), quot, aval)
    return [ctx.select(y_is_zero, zero, quot, aval)]


def _signs_differ(ctx, rem, y, aval):
    """rem != 0 and sign(rem) != sign(y): where C's truncation and NumPy's floor part."""
    zero = zeros(ctx, aval)
    bool_aval = aval.update(dtype=np.dtype(bool))
    rem_nonzero = ctx.compare("NE", rem, zero, aval)
    differ = ctx.compare("NE", ctx.compare("LT", rem, zero, aval),
                      ctx.compare("LT", y, zero, aval), bool_aval)
    return ctx.binary("stablehlo.and", rem_nonzero, differ, bool_aval)


def _float_floor_divide(ctx, x, y, aval):
    """NumPy's npy_floor_divide for floats, op for op."""
    zero = zeros(ctx, aval)
    one = ctx.constant(np.ones((), aval.dtype), aval)
    half = ctx.constant(np.array(0.5, aval.dtype), aval)
    mod = ctx.binary("stablehlo.remainder", x, y, aval)
    div = ctx.binary("stablehlo.divide", ctx.binary("stablehlo.subtract", x, mod, aval), y, aval)
    div = ctx.select(_signs_differ(ctx, mod, y, aval),
                  ctx.binary("stablehlo.subtract", div, one, aval), div, aval)
    floordiv = ctx.unary("stablehlo.floor", div, aval)
    over_half = ctx.compare("GT", ctx.binary("stablehlo.subtract", div, floordiv, aval), half, aval)
    floordiv = ctx.select(over_half, ctx.binary("stablehlo.add", floordiv, one, aval), floordiv, aval)
    true_div = ctx.binary("stablehlo.divide", x, y, aval)
    floordiv = ctx.select(ctx.compare("EQ", div, zero, aval),
                       copysign(ctx, zero, true_div, aval), floordiv, aval)
    return ctx.select(ctx.compare("EQ", y, zero, aval), true_div, floordiv, aval)


def remainder_lowering(ctx, x, y, **_):
    """NumPy's remainder: the divisor's sign; 0 for an integer divisor of 0."""
    aval = in_aval(ctx)
    zero = zeros(ctx, aval)
    if aval.dtype.kind in "iu":
        is_zero = ctx.compare("EQ", y, zero, aval)
        y = ctx.select(is_zero, ctx.constant(np.ones((), aval.dtype), aval), y, aval)
    rem = ctx.binary("stablehlo.remainder", x, y, aval)
    if aval.dtype.kind != "u":
        rem = ctx.select(_signs_differ(ctx, rem, y, aval),
                      ctx.binary("stablehlo.add", rem, y, aval), rem, aval)
    if aval.dtype.kind in "iu":
        return [ctx.select(is_zero, zero, rem, aval)]
    # A zero remainder takes the divisor's sign.
    signed_zero = copysign(ctx, zero, y, aval)
    return [ctx.select(ctx.compare("EQ", rem, zero, aval), signed_zero, rem, aval)]


def divide_lowering(ctx, x, y, **_):
    aval = in_aval(ctx)
    y = divisor(ctx, y, aval)
    if aval.dtype.kind == "c":
        return [_complex_divide(ctx, x, y, aval)]
    return [ctx.binary("stablehlo.divide", x, y, aval)]


def _complex_divide(ctx, x, y, aval):
    """NumPy's complex division (Smith's method, as its loop writes it). With r the ratio of
    y's smaller part to its larger:
        |yr| >= |yi|:  ((xr + xi r) + i (xi - xr r)) / (yr + yi r)
        otherwise:     ((xi + xr r) + i (xi r - xr)) / (yi + yr r)
    and a zero y divides part by part (NumPy's infinities and NaNs). It divides where NumPy
    multiplies by 1/denominator, which XLA would flush to zero where it is subnormal."""
    (xr, xi, part), (yr, yi, _) = complex_parts(ctx, x, aval), complex_parts(ctx, y, aval)
    add, sub, mul, div = (partial(ctx.binary, f"stablehlo.{op}", aval=part)
                          for op in ("add", "subtract", "multiply", "divide"))
    abs_yr = ctx.unary("stablehlo.abs", yr, part)
    by_real = ctx.compare("GE", abs_yr, ctx.unary("stablehlo.abs", yi, part), part)

    def pick(if_by_real, otherwise):
        return ctx.select(by_real, if_by_real, otherwise, part)
    big, small = pick(yr, yi), pick(yi, yr)
    ratio = div(small, big)
    denominator = add(big, mul(small, ratio))
    first, second = pick(xr, xi), pick(xi, xr)
    re = div(add(first, mul(second, ratio)), denominator)
    first_ratio = mul(first, ratio)
    im = div(pick(sub(second, first_ratio), sub(first_ratio, second)), denominator)
    y_is_zero = ctx.compare("EQ", y, zeros(ctx, aval), aval)
    re = ctx.select(y_is_zero, div(xr, abs_yr), re, part)
    im = ctx.select(y_is_zero, div(xi, abs_yr), im, part)
    return make_complex(ctx, re, im, part, aval)


def square_lowering(ctx, x, **_):
    return [ctx.binary("stablehlo.multiply", x, x, in_aval(ctx))]


def reciprocal_lowering(ctx, x, **_):
    aval = in_aval(ctx)
    if aval.dtype.kind == "c":
        return [_complex_reciprocal(ctx, x, aval)]
    one = ctx.constant(np.ones((), aval.dtype), aval)
    return [ctx.binary("stablehlo.divide", one, divisor(ctx, x, aval), aval)]


def _complex_reciprocal(ctx, z, aval):
    """NumPy's loop: divide by the larger part, so 1/0 is NaN and 1/inf is 0. The ratio goes
    through a select: XLA rewrites (a/b)/c as a/(b*c), and b*c can underflow."""
    re, im, part = complex_parts(ctx, z, aval)
    add, mul, div = (partial(ctx.binary, f"stablehlo.{op}", aval=part)
                     for op in ("add", "multiply", "divide"))
    by_real = ctx.compare("LE", ctx.unary("stablehlo.abs", im, part),
                       ctx.unary("stablehlo.abs", re, part), part)
    big, small = ctx.select(by_real, re, im, part), ctx.select(by_real, im, re, part)
    ratio = ctx.select(by_real, div(im, re), div(re, im), part)
    denominator = add(big, mul(small, ratio))
    one_over = div(ctx.constant(np.ones((), part.dtype), part), denominator)
    ratio_over = div(ratio, denominator)
    out_re = ctx.select(by_real, one_over, ratio_over, part)
    out_im = ctx.unary("stablehlo.negate", ctx.select(by_real, ratio_over, one_over, part), part)
    return make_complex(ctx, out_re, out_im, part, aval)


def power_lowering(ctx, x, y, **_):
    aval = in_aval(ctx)
    if aval.dtype.kind in "iu":
        return [_integer_power(ctx, x, y, aval)]
    if aval.dtype.kind == "c":
        return [complex_power(ctx, x, y, aval)]
    return [ctx.binary("stablehlo.power", x, y, aval)]


def _integer_power(ctx, x, y, aval):
    """Square and multiply over every bit of the exponent, wrapping around as NumPy does.
    (XLA's own integer power looks at the low 6 bits only: it gives 0**64 == 1.)"""
    zero, one = zeros(ctx, aval), ctx.constant(np.ones((), aval.dtype), aval)
    mul = partial(ctx.binary, "stablehlo.multiply", aval=aval)
    result, base, exponent = one, x, y
    for _ in range(aval.dtype.itemsize * 8):
        odd = ctx.compare("NE", ctx.binary("stablehlo.and", exponent, one, aval), zero, aval)
        result = ctx.select(odd, mul(result, base), result, aval)
        base = mul(base, base)
        exponent = ctx.binary("stablehlo.shift_right_logical", exponent, one, aval)
    return result


def hypot_lowering(ctx, x, y, **_):
    return [hypot(ctx, x, y, in_aval(ctx))]


def hypot(ctx, x, y, aval):
    """sqrt(x*x + y*y) without overflow: big * sqrt(1 + (small/big)**2); inf beats NaN."""
    ax, ay = ctx.unary("stablehlo.abs", x, aval), ctx.unary("stablehlo.abs", y, aval)
    big = ctx.binary("stablehlo.maximum", ax, ay, aval)
    small = ctx.binary("stablehlo.minimum", ax, ay, aval)
    zero = zeros(ctx, aval)
    one = ctx.constant(np.ones((), aval.dtype), aval)
    big_is_zero = ctx.compare("EQ", big, zero, aval)
    safe_big = ctx.select(big_is_zero, one, big, aval)
    ratio = ctx.binary("stablehlo.divide", small, safe_big, aval)
    root = ctx.unary("stablehlo.sqrt", ctx.binary("stablehlo.add", one, ctx.binary(
        "stablehlo.multiply", ratio, ratio, aval), aval), aval)
    result = ctx.select(big_is_zero, zero, ctx.binary("stablehlo.multiply", big, root, aval), aval)
    inf = ctx.constant(np.array(np.inf, aval.dtype), aval)
    either_inf = ctx.binary("stablehlo.or", ctx.compare("EQ", ax, inf, aval),
                            ctx.compare("EQ", ay, inf, aval), aval.update(dtype=np.dtype(bool)))
    return ctx.select(either_inf, inf, result, aval)


def fmod_lowering(ctx, x, y, **_):
    """C's fmod (the dividend's sign): StableHLO's remainder, exact for floats (x - y *
    trunc(x / y) is not, for a large quotient); an integer divisor of 0 gives 0, as in NumPy."""
    aval = in_aval(ctx)
    if aval.dtype.kind == "f":
        return [ctx.binary("stablehlo.remainder", x, y, aval)]
    zero, one = zeros(ctx, aval), ctx.constant(np.ones((), aval.dtype), aval)
    divisor_zero = ctx.compare("EQ", y, zero, aval)
    safe = ctx.select(divisor_zero, one, y, aval)
    return [ctx.select(divisor_zero, zero, ctx.binary("stablehlo.remainder", x, safe, aval),
                       aval)]


def fmod_dtype_rule(x, y, **_):
    dtype = same_dtype_rule(x, y)
    if dtype.kind not in "iuf":
        raise TypeError(f"fmod is defined on integers and floats, not {dtype}")
    return dtype


# -- derivatives (see `record` and `autodiff`) ------------------------------------------------

def divide_transpose(ctx, ct, x, y):
    if is_linear(y):
        raise TypeError("a division by a tangent is not linear")
    return [ctx.div(ct, y), None]


def quotient_partial(ctx, t, out, x, y):
    """remainder and fmod are x - q y for a q that is constant almost everywhere: -q t."""
    return ctx.neg(ctx.mul(t, ctx.div(ctx.sub(x, out), y)))


def power_base_partial(ctx, t, out, x, y):
    """y x**(y-1) t, and 0 where y is 0."""
    slope = ctx.mul(y, ctx.pow(x, ctx.sub(y, ctx.full_like(y, 1))))
    return ctx.select(ctx.eq(y, ctx.zeros_like(y)), ctx.zeros_like(t), ctx.mul(t, slope))


def power_exponent_partial(ctx, t, out, x, y):
    """log(x) x**y t, and 0 where x is 0."""
    slope = ctx.mul(ctx.log(x), out)
    return ctx.select(ctx.eq(x, ctx.zeros_like(x)), ctx.zeros_like(t), ctx.mul(t, slope))


# -- the primitives ---------------------------------------------------------------------------

divide_p = elementwise("divide", np.divide, divide_lowering,
                       jvp=partials(lambda ctx, t, out, x, y: ctx.div(t, y),
                                    lambda ctx, t, out, x, y: ctx.neg(ctx.div(ctx.mul(t, out), y))),
                       linear=True, transpose=divide_transpose)
floor_divide_p = elementwise("floor_divide", np.floor_divide, floor_divide_lowering, jvp=zero_jvp)
remainder_p = elementwise("remainder", np.remainder, remainder_lowering,
                          jvp=partials(lambda ctx, t, out, x, y: t, quotient_partial))
fmod_p = elementwise("fmod", np.fmod, fmod_lowering, dtype_rule=fmod_dtype_rule,
                     doc="np.fmod: C's fmod (sign of the dividend); integer x % 0 is 0",
                     jvp=partials(lambda ctx, t, out, x, y: t, quotient_partial))
power_p = elementwise("power", np.power, power_lowering,
                      jvp=partials(power_base_partial, power_exponent_partial))
square_p = elementwise("square", np.square, square_lowering,
                       jvp=partials(lambda ctx, t, out, x: ctx.mul(t, ctx.add(x, x))))
reciprocal_p = elementwise("reciprocal", np.reciprocal, reciprocal_lowering,
                           jvp=partials(lambda ctx, t, out, x: ctx.neg(ctx.mul(t, ctx.square(out)))))
hypot_p = elementwise("hypot", np.hypot, hypot_lowering,
                      jvp=partials(lambda ctx, t, out, x, y: ctx.mul(t, ctx.div(x, out)),
                                   lambda ctx, t, out, x, y: ctx.mul(t, ctx.div(y, out))))
