"""Elementwise primitives: NumPy's ufuncs applied to operands of one shape and one dtype.

Each primitive means exactly what its NumPy ufunc means on same-dtype operands (integer
division by zero gives 0, `remainder` takes the divisor's sign, `maximum` propagates NaN).
Promotion and broadcasting happen before, in the NumPy layer. The table below is the data;
the few lowerings that are not a single StableHLO op are small functions.
"""
from __future__ import annotations

from functools import partial

import numpy as np

from .ir import ShapedArray
from .registry import (Primitive, bool_dtype_rule, never_weak, register, same_dtype_rule,
                       same_shape_rule)


def _aval(ctx, i=0) -> ShapedArray:
    return ctx.avals_in[i]


def _out(ctx, i=0) -> ShapedArray:
    return ctx.avals_out[i]


def single_op_lowering(op_name: str, ctx, *args, **_):
    return ctx.op(op_name, list(args), ctx.avals_in, ctx.avals_out)


def _is_float(aval) -> bool:
    return aval.dtype.kind in "fc"


def _zeros(ctx, aval):
    return ctx.constant(np.zeros((), aval.dtype), aval)


def _compare(ctx, direction: str, x, y, aval):
    out = aval.update(dtype=np.dtype(bool), weak_type=False)
    return ctx.op("stablehlo.compare", [x, y], [aval, aval], [out],
                  {"comparison_direction": f"#stablehlo<comparison_direction {direction}>"})[0]


def _select(ctx, pred, on_true, on_false, aval):
    pred_aval = aval.update(dtype=np.dtype(bool), weak_type=False)
    return ctx.op("stablehlo.select", [pred, on_true, on_false], [pred_aval, aval, aval], [aval])[0]


def _isnan(ctx, x, aval):
    return _compare(ctx, "NE", x, x, aval)


def _both(ctx, op_name, a, b, aval):
    """and/or of two predicates of aval's shape."""
    return ctx.binary(op_name, a, b, aval.update(dtype=np.dtype(bool), weak_type=False))


def _real_dtype(dtype) -> np.dtype:
    return np.real(np.zeros((), dtype)).dtype


def _part(aval):
    """The abstract value of a complex value's real (or imaginary) part."""
    return aval.update(dtype=_real_dtype(aval.dtype))


def complex_parts(ctx, z, aval):
    """The real and imaginary parts of a complex value, and their abstract value."""
    part = _part(aval)
    return (ctx.unary("stablehlo.real", z, aval, part), ctx.unary("stablehlo.imag", z, aval, part),
            part)


def _complex(ctx, re, im, part, aval):
    return ctx.op("stablehlo.complex", [re, im], [part, part], [aval])[0]


def _map_parts(ctx, fn, z, aval):
    """fn applied to the real and to the imaginary part (NumPy's complex rint, log2, ...)."""
    re, im, part = complex_parts(ctx, z, aval)
    return _complex(ctx, fn(re, part), fn(im, part), part, aval)


# -- lowerings that NumPy's meaning makes more than one op -------------------------------------

def floor_divide_lowering(ctx, x, y, **_):
    aval = _aval(ctx)
    if _is_float(aval):
        return [_float_floor_divide(ctx, x, y, aval)]
    zero = _zeros(ctx, aval)
    one = ctx.constant(np.ones((), aval.dtype), aval)
    y_is_zero = _compare(ctx, "EQ", y, zero, aval)
    safe_y = _select(ctx, y_is_zero, one, y, aval)
    quot = ctx.binary("stablehlo.divide", x, safe_y, aval)
    if aval.dtype.kind == "i":
        rem = ctx.binary("stablehlo.remainder", x, safe_y, aval)
        adjust = _signs_differ(ctx, rem, safe_y, aval)
        quot = _select(ctx, adjust, ctx.binary("stablehlo.subtract", quot, one, aval), quot, aval)
    return [_select(ctx, y_is_zero, zero, quot, aval)]


def _signs_differ(ctx, rem, y, aval):
    """rem != 0 and sign(rem) != sign(y): where C's truncation and NumPy's floor part."""
    zero = _zeros(ctx, aval)
    bool_aval = aval.update(dtype=np.dtype(bool))
    rem_nonzero = _compare(ctx, "NE", rem, zero, aval)
    differ = _compare(ctx, "NE", _compare(ctx, "LT", rem, zero, aval),
                      _compare(ctx, "LT", y, zero, aval), bool_aval)
    return ctx.binary("stablehlo.and", rem_nonzero, differ, bool_aval)


def _float_floor_divide(ctx, x, y, aval):
    """NumPy's npy_floor_divide for floats, op for op."""
    zero = _zeros(ctx, aval)
    one = ctx.constant(np.ones((), aval.dtype), aval)
    half = ctx.constant(np.array(0.5, aval.dtype), aval)
    mod = ctx.binary("stablehlo.remainder", x, y, aval)
    div = ctx.binary("stablehlo.divide", ctx.binary("stablehlo.subtract", x, mod, aval), y, aval)
    div = _select(ctx, _signs_differ(ctx, mod, y, aval),
                  ctx.binary("stablehlo.subtract", div, one, aval), div, aval)
    floordiv = ctx.unary("stablehlo.floor", div, aval)
    over_half = _compare(ctx, "GT", ctx.binary("stablehlo.subtract", div, floordiv, aval), half, aval)
    floordiv = _select(ctx, over_half, ctx.binary("stablehlo.add", floordiv, one, aval), floordiv, aval)
    true_div = ctx.binary("stablehlo.divide", x, y, aval)
    floordiv = _select(ctx, _compare(ctx, "EQ", div, zero, aval),
                       _copysign(ctx, zero, true_div, aval), floordiv, aval)
    return _select(ctx, _compare(ctx, "EQ", y, zero, aval), true_div, floordiv, aval)


def remainder_lowering(ctx, x, y, **_):
    """NumPy's remainder: the divisor's sign; 0 for an integer divisor of 0."""
    aval = _aval(ctx)
    zero = _zeros(ctx, aval)
    if aval.dtype.kind in "iu":
        is_zero = _compare(ctx, "EQ", y, zero, aval)
        y = _select(ctx, is_zero, ctx.constant(np.ones((), aval.dtype), aval), y, aval)
    rem = ctx.binary("stablehlo.remainder", x, y, aval)
    if aval.dtype.kind != "u":
        rem = _select(ctx, _signs_differ(ctx, rem, y, aval),
                      ctx.binary("stablehlo.add", rem, y, aval), rem, aval)
    if aval.dtype.kind in "iu":
        return [_select(ctx, is_zero, zero, rem, aval)]
    # A zero remainder takes the divisor's sign.
    signed_zero = _copysign(ctx, zero, y, aval)
    return [_select(ctx, _compare(ctx, "EQ", rem, zero, aval), signed_zero, rem, aval)]


def _sign_of(ctx, y, aval):
    """+1.0 or -1.0 by the sign bit of y (so that -0.0 counts as negative)."""
    one = ctx.constant(np.ones((), aval.dtype), aval)
    return _copysign(ctx, one, y, aval)


def _copysign(ctx, magnitude, sign_source, aval):
    bits = {2: np.dtype(np.int16), 4: np.dtype(np.int32), 8: np.dtype(np.int64)}[aval.dtype.itemsize]
    int_aval = aval.update(dtype=bits)
    as_int = ctx.op("stablehlo.bitcast_convert", [sign_source], [aval], [int_aval])[0]
    negative = _compare(ctx, "LT", as_int, ctx.constant(np.zeros((), bits), int_aval), int_aval)
    absval = ctx.unary("stablehlo.abs", magnitude, aval)
    return _select(ctx, negative, ctx.unary("stablehlo.negate", absval, aval), absval, aval)


def copysign_lowering(ctx, x, y, **_):
    return [_copysign(ctx, x, y, _aval(ctx))]


def divide_lowering(ctx, x, y, **_):
    aval = _aval(ctx)
    if aval.dtype.kind == "c":
        return [_complex_divide(ctx, x, y, aval)]
    return [ctx.binary("stablehlo.divide", x, y, aval)]


def _complex_divide(ctx, x, y, aval):
    """NumPy's complex division (Smith's method, as its loop writes it). With r the ratio of
    y's smaller part to its larger:
        |yr| >= |yi|:  ((xr + xi r) + i (xi - xr r)) / (yr + yi r)
        otherwise:     ((xi + xr r) - i (xr - xi r)) / (yi + yr r)
    and a zero y divides part by part (NumPy's infinities and NaNs). It divides where NumPy
    multiplies by 1/denominator, which XLA would flush to zero where it is subnormal."""
    (xr, xi, part), (yr, yi, _) = complex_parts(ctx, x, aval), complex_parts(ctx, y, aval)
    add, sub, mul, div = (partial(ctx.binary, f"stablehlo.{op}", aval=part)
                          for op in ("add", "subtract", "multiply", "divide"))
    abs_yr = ctx.unary("stablehlo.abs", yr, part)
    by_real = _compare(ctx, "GE", abs_yr, ctx.unary("stablehlo.abs", yi, part), part)

    def pick(if_by_real, otherwise):
        return _select(ctx, by_real, if_by_real, otherwise, part)
    big, small = pick(yr, yi), pick(yi, yr)
    ratio = div(small, big)
    denominator = add(big, mul(small, ratio))
    first, second = pick(xr, xi), pick(xi, xr)
    re = div(add(first, mul(second, ratio)), denominator)
    im = div(sub(second, mul(first, ratio)), denominator)
    im = pick(im, ctx.unary("stablehlo.negate", im, part))
    y_is_zero = _compare(ctx, "EQ", y, _zeros(ctx, aval), aval)
    re = _select(ctx, y_is_zero, div(xr, abs_yr), re, part)
    im = _select(ctx, y_is_zero, div(xi, abs_yr), im, part)
    return _complex(ctx, re, im, part, aval)


def extremum_lowering(kind: str, skip_nan: bool, ctx, x, y, **_):
    return [extremum(ctx, kind, x, y, _aval(ctx), skip_nan)]


def extremum(ctx, kind: str, x, y, aval, skip_nan: bool = False):
    """NumPy's maximum or minimum (kind "max", "min") of x and y: a NaN wins (fmax and fmin:
    loses); complex numbers are ordered lexicographically, x kept where NumPy's loop keeps it."""
    if aval.dtype.kind == "c":
        direction = "GE" if kind == "max" else "LE"
        keep_x = _both(ctx, "stablehlo.or", _isnan(ctx, y if skip_nan else x, aval),
                       _complex_order(ctx, direction, x, y, aval), aval)
        return _select(ctx, keep_x, x, y, aval)
    both = ctx.binary(f"stablehlo.{kind}imum", x, y, aval)
    if not skip_nan or aval.dtype.kind != "f":
        return both
    take_y = _isnan(ctx, x, aval)
    take_x = _isnan(ctx, y, aval)
    return _select(ctx, take_y, y, _select(ctx, take_x, x, both, aval), aval)


def _complex_order(ctx, direction: str, x, y, aval):
    """NumPy's order of complex numbers: by real part, then by imaginary part; false where
    the real parts decide but an imaginary part is NaN."""
    (xr, xi, part), (yr, yi, _) = complex_parts(ctx, x, aval), complex_parts(ctx, y, aval)
    strict = direction[0] + "T"
    no_nan = _both(ctx, "stablehlo.and", _compare(ctx, "EQ", xi, xi, part),
                   _compare(ctx, "EQ", yi, yi, part), part)
    by_real = _both(ctx, "stablehlo.and", _compare(ctx, strict, xr, yr, part), no_nan, part)
    by_imag = _both(ctx, "stablehlo.and", _compare(ctx, "EQ", xr, yr, part),
                    _compare(ctx, direction, xi, yi, part), part)
    return _both(ctx, "stablehlo.or", by_real, by_imag, part)


def ordered(ctx, direction: str, x, y, aval):
    """x <direction> y (LT, LE, GT, GE, EQ, NE) as NumPy compares numbers of aval's dtype."""
    if aval.dtype.kind == "c" and direction not in ("EQ", "NE"):
        return _complex_order(ctx, direction, x, y, aval)
    return _compare(ctx, direction, x, y, aval)


def compare_lowering(direction: str, ctx, x, y, **_):
    return [ordered(ctx, direction, x, y, _aval(ctx))]


def _truth(ctx, x, aval):
    """x != 0: the truth value NumPy's logical functions take of a number."""
    if aval.dtype == np.bool_:
        return x
    return _compare(ctx, "NE", x, _zeros(ctx, aval), aval)


def logical_lowering(op_name: str, ctx, x, y, **_):
    aval = _aval(ctx)
    return [ctx.binary(op_name, _truth(ctx, x, aval), _truth(ctx, y, aval), _out(ctx))]


def logical_not_lowering(ctx, x, **_):
    return [ctx.unary("stablehlo.not", _truth(ctx, x, _aval(ctx)), _out(ctx))]


def abs_lowering(ctx, x, **_):
    aval = _aval(ctx)
    if aval.dtype == np.bool_ or aval.dtype.kind == "u":
        return [x]
    if aval.dtype.kind == "c":
        return [_complex_abs(ctx, x, aval)]
    return [ctx.unary("stablehlo.abs", x, aval)]


def _complex_abs(ctx, z, aval):
    """hypot's rule: an infinite part makes |z| infinite, even beside a NaN."""
    part = _part(aval)
    inf = ctx.constant(np.array(np.inf, part.dtype), part)
    return _select(ctx, _isinf_complex(ctx, z, aval), inf,
                   ctx.unary("stablehlo.abs", z, aval, part), part)


def sign_lowering(ctx, x, **_):
    aval = _aval(ctx)
    if aval.dtype.kind == "c":
        return [_complex_sign(ctx, x, aval)]
    zero = _zeros(ctx, aval)
    if aval.dtype.kind == "u":
        one = ctx.constant(np.ones((), aval.dtype), aval)
        return [_select(ctx, _compare(ctx, "EQ", x, zero, aval), zero, one, aval)]
    # NumPy's sign of -0.0 is +0.0.
    return [_select(ctx, _compare(ctx, "EQ", x, zero, aval), zero,
                    ctx.unary("stablehlo.sign", x, aval), aval)]


def _complex_sign(ctx, z, aval):
    """NumPy's z / |z|, with its cases: 0 at 0, NaN for NaN, and for an infinite |z| the
    unit of the infinite part (NaN if both are)."""
    re, im, part = complex_parts(ctx, z, aval)
    absval = _complex_abs(ctx, z, aval)
    zero, nan = _zeros(ctx, part), ctx.constant(np.array(np.nan, part.dtype), part)
    unit = _complex(ctx, ctx.binary("stablehlo.divide", re, absval, part),
                    ctx.binary("stablehlo.divide", im, absval, part), part, aval)
    re_inf, im_inf = _isinf_real(ctx, re, part), _isinf_real(ctx, im, part)
    on_axis = _select(ctx, re_inf, _complex(ctx, ctx.unary("stablehlo.sign", re, part), zero,
                                            part, aval),
                      _complex(ctx, zero, ctx.unary("stablehlo.sign", im, part), part, aval), aval)
    both_inf = _both(ctx, "stablehlo.and", re_inf, im_inf, part)
    on_axis = _select(ctx, both_inf, _complex(ctx, nan, nan, part, aval), on_axis, aval)
    result = _select(ctx, _isinf_real(ctx, absval, part), on_axis, unit, aval)
    return _select(ctx, _compare(ctx, "EQ", z, _zeros(ctx, aval), aval), _zeros(ctx, aval),
                   result, aval)


def square_lowering(ctx, x, **_):
    return [ctx.binary("stablehlo.multiply", x, x, _aval(ctx))]


def reciprocal_lowering(ctx, x, **_):
    aval = _aval(ctx)
    if aval.dtype.kind == "c":
        return [_complex_reciprocal(ctx, x, aval)]
    one = ctx.constant(np.ones((), aval.dtype), aval)
    return [ctx.binary("stablehlo.divide", one, x, aval)]


def _complex_reciprocal(ctx, z, aval):
    """NumPy's loop: divide by the larger part, so 1/0 is NaN and 1/inf is 0. The ratio goes
    through a select: XLA rewrites (a/b)/c as a/(b*c), and b*c can underflow."""
    re, im, part = complex_parts(ctx, z, aval)
    add, mul, div = (partial(ctx.binary, f"stablehlo.{op}", aval=part)
                     for op in ("add", "multiply", "divide"))
    by_real = _compare(ctx, "LE", ctx.unary("stablehlo.abs", im, part),
                       ctx.unary("stablehlo.abs", re, part), part)
    big, small = _select(ctx, by_real, re, im, part), _select(ctx, by_real, im, re, part)
    ratio = _select(ctx, by_real, div(im, re), div(re, im), part)
    denominator = add(big, mul(small, ratio))
    one_over = div(ctx.constant(np.ones((), part.dtype), part), denominator)
    ratio_over = div(ratio, denominator)
    out_re = _select(ctx, by_real, one_over, ratio_over, part)
    out_im = ctx.unary("stablehlo.negate", _select(ctx, by_real, ratio_over, one_over, part), part)
    return _complex(ctx, out_re, out_im, part, aval)


def power_lowering(ctx, x, y, **_):
    aval = _aval(ctx)
    if aval.dtype.kind in "iu":
        return [_integer_power(ctx, x, y, aval)]
    if aval.dtype.kind == "c":
        return [_complex_power(ctx, x, y, aval)]
    return [ctx.binary("stablehlo.power", x, y, aval)]


def _integer_power(ctx, x, y, aval):
    """Square and multiply over every bit of the exponent, wrapping around as NumPy does.
    (XLA's own integer power looks at the low 6 bits only: it gives 0**64 == 1.)"""
    zero, one = _zeros(ctx, aval), ctx.constant(np.ones((), aval.dtype), aval)
    mul = partial(ctx.binary, "stablehlo.multiply", aval=aval)
    result, base, exponent = one, x, y
    for _ in range(aval.dtype.itemsize * 8):
        odd = _compare(ctx, "NE", ctx.binary("stablehlo.and", exponent, one, aval), zero, aval)
        result = _select(ctx, odd, mul(result, base), result, aval)
        base = mul(base, base)
        exponent = ctx.binary("stablehlo.shift_right_logical", exponent, one, aval)
    return result


def _complex_power(ctx, x, y, aval):
    """exp(y log x), as the C library's cpow computes it (XLA's own power overflows for |x|
    near the largest float), after NumPy's cases: x**0 is 1; 0**y is 0 for y.real > 0, else
    NaN."""
    zero, part = _zeros(ctx, aval), _part(aval)
    nan = ctx.constant(np.array(complex(np.nan, np.nan), aval.dtype), aval)
    y_re_positive = _compare(ctx, "GT", ctx.unary("stablehlo.real", y, aval, part),
                             _zeros(ctx, part), part)
    of_zero = _select(ctx, y_re_positive, zero, nan, aval)
    y_log_x = ctx.binary("stablehlo.multiply", y, ctx.unary("stablehlo.log", x, aval), aval)
    result = _select(ctx, _compare(ctx, "EQ", x, zero, aval), of_zero,
                     _complex_exp(ctx, y_log_x, aval), aval)
    one = ctx.constant(np.ones((), aval.dtype), aval)
    return _select(ctx, _compare(ctx, "EQ", y, zero, aval), one, result, aval)


def hypot_lowering(ctx, x, y, **_):
    return [_hypot(ctx, x, y, _aval(ctx))]


def _hypot(ctx, x, y, aval):
    """sqrt(x*x + y*y) without overflow: big * sqrt(1 + (small/big)**2); inf beats NaN."""
    ax, ay = ctx.unary("stablehlo.abs", x, aval), ctx.unary("stablehlo.abs", y, aval)
    big = ctx.binary("stablehlo.maximum", ax, ay, aval)
    small = ctx.binary("stablehlo.minimum", ax, ay, aval)
    zero = _zeros(ctx, aval)
    one = ctx.constant(np.ones((), aval.dtype), aval)
    big_is_zero = _compare(ctx, "EQ", big, zero, aval)
    safe_big = _select(ctx, big_is_zero, one, big, aval)
    ratio = ctx.binary("stablehlo.divide", small, safe_big, aval)
    root = ctx.unary("stablehlo.sqrt", ctx.binary("stablehlo.add", one, ctx.binary(
        "stablehlo.multiply", ratio, ratio, aval), aval), aval)
    result = _select(ctx, big_is_zero, zero, ctx.binary("stablehlo.multiply", big, root, aval), aval)
    inf = ctx.constant(np.array(np.inf, aval.dtype), aval)
    either_inf = ctx.binary("stablehlo.or", _compare(ctx, "EQ", ax, inf, aval),
                            _compare(ctx, "EQ", ay, inf, aval), aval.update(dtype=np.dtype(bool)))
    return _select(ctx, either_inf, inf, result, aval)


def log1p_lowering(ctx, x, **_):
    aval = _aval(ctx)
    if aval.dtype.kind != "c":
        return [ctx.unary("stablehlo.log_plus_one", x, aval)]
    # NumPy's own formula: log(|x + 1|) + i atan2(im, re + 1) (so log1p(max + max*j) is inf)
    re, im, part = complex_parts(ctx, x, aval)
    re_plus_one = ctx.binary("stablehlo.add", re, ctx.constant(np.ones((), part.dtype), part),
                             part)
    out_re = ctx.unary("stablehlo.log", _hypot(ctx, re_plus_one, im, part), part)
    out_im = ctx.binary("stablehlo.atan2", im, re_plus_one, part)
    return [_complex(ctx, out_re, out_im, part, aval)]


def log_base_lowering(base: float, ctx, x, **_):
    """log2 and log10: log(x) / log(base); for complex x part by part, as NumPy scales clog."""
    aval = _aval(ctx)
    log = ctx.unary("stablehlo.log", x, aval)

    def scale(value, value_aval):
        log_base = ctx.constant(np.log(np.array(base, value_aval.dtype)), value_aval)
        return ctx.binary("stablehlo.divide", value, log_base, value_aval)
    if aval.dtype.kind == "c":
        return [_map_parts(ctx, scale, log, aval)]
    return [scale(log, aval)]


def exp2_lowering(ctx, x, **_):
    """2**x; for complex x NumPy takes exp of x's parts each times log(2)."""
    aval = _aval(ctx)
    if aval.dtype.kind != "c":
        two = ctx.constant(np.array(2.0, aval.dtype), aval)
        return [ctx.binary("stablehlo.power", two, x, aval)]

    def times_log2(value, part):
        log2 = ctx.constant(np.log(np.array(2.0, part.dtype)), part)
        return ctx.binary("stablehlo.multiply", value, log2, part)
    return [_complex_exp(ctx, _map_parts(ctx, times_log2, x, aval), aval)]


def exp_lowering(ctx, x, **_):
    aval = _aval(ctx)
    if aval.dtype.kind == "c":
        return [_complex_exp(ctx, x, aval)]
    return [ctx.unary("stablehlo.exponential", x, aval)]


def _complex_exp(ctx, z, aval):
    """exp(z), and 0 where z's real part is -inf, whatever its imaginary part (C99's cexp;
    XLA's gives NaN for exp(-inf + inf*j), as does exp(-inf + nan*j))."""
    part = _part(aval)
    minus_inf = ctx.constant(np.array(-np.inf, part.dtype), part)
    zero_magnitude = _compare(ctx, "EQ", ctx.unary("stablehlo.real", z, aval, part), minus_inf,
                              part)
    return _select(ctx, zero_magnitude, _zeros(ctx, aval),
                   ctx.unary("stablehlo.exponential", z, aval), aval)


def expm1_lowering(ctx, x, **_):
    aval = _aval(ctx)
    if aval.dtype.kind != "c":
        return [ctx.unary("stablehlo.exponential_minus_one", x, aval)]
    # NumPy's own formula: (expm1(a) cos(b) - 2 sin(b/2)**2) + i exp(a) sin(b)
    re, im, part = complex_parts(ctx, x, aval)
    mul, sub = (partial(ctx.binary, f"stablehlo.{op}", aval=part) for op in ("multiply", "subtract"))
    fn = partial(ctx.unary, aval_in=part)
    half_sin = fn("stablehlo.sine", mul(im, ctx.constant(np.array(0.5, part.dtype), part)))
    two = ctx.constant(np.array(2.0, part.dtype), part)
    out_re = sub(mul(fn("stablehlo.exponential_minus_one", re), fn("stablehlo.cosine", im)),
                 mul(two, mul(half_sin, half_sin)))
    out_im = mul(fn("stablehlo.exponential", re), fn("stablehlo.sine", im))
    return [_complex(ctx, out_re, out_im, part, aval)]


def chlo_lowering(op_name: str, branch_sign, ctx, x, **_):
    """One CHLO op; for complex x, the sign of f(x)'s part on the branch cuts (CHLO_UNARY)."""
    aval = _aval(ctx)
    result = ctx.unary(op_name, x, aval)
    if aval.dtype.kind != "c":
        return [result]
    which, negated = branch_sign
    re, im, part = complex_parts(ctx, result, aval)
    sign_source = ctx.unary(f"stablehlo.{which}", x, aval, part)
    if negated:
        sign_source = ctx.unary("stablehlo.negate", sign_source, part)
    if which == "real":
        re = _copysign(ctx, re, sign_source, part)
    else:
        im = _copysign(ctx, im, sign_source, part)
    return [_complex(ctx, re, im, part, aval)]


_REAL_TRIG = {"sin": "stablehlo.sine", "cos": "stablehlo.cosine", "sinh": "chlo.sinh",
              "cosh": "chlo.cosh"}


def trig_lowering(kind: str, ctx, x, **_):
    """sin, cos, sinh, cosh; for complex x from the real functions of its parts, with
    0 * inf = 0 (XLA's own give cos(100j) = inf + nan*j in complex64, NumPy inf - 0j; and
    CHLO's complex sinh(1e-8) is 0):
        sin(a+ib) = sin a cosh b + i cos a sinh b     sinh(a+ib) = sinh a cos b + i cosh a sin b
        cos(a+ib) = cos a cosh b - i sin a sinh b     cosh(a+ib) = cosh a cos b + i sinh a sin b
    """
    aval = _aval(ctx)
    if aval.dtype.kind != "c":
        return [ctx.unary(_REAL_TRIG[kind], x, aval)]
    re, im, part = complex_parts(ctx, x, aval)
    fn = partial(ctx.unary, aval_in=part)
    if kind in ("sin", "cos"):
        sin, cos = fn("stablehlo.sine", re), fn("stablehlo.cosine", re)
        sinh, cosh = fn("chlo.sinh", im), fn("chlo.cosh", im)
    else:
        sin, cos = fn("stablehlo.sine", im), fn("stablehlo.cosine", im)
        sinh, cosh = fn("chlo.sinh", re), fn("chlo.cosh", re)
    times = partial(_times, ctx, aval=part)
    if kind == "sin":
        out = times(sin, cosh), times(cos, sinh)
    elif kind == "cos":
        out = times(cos, cosh), fn("stablehlo.negate", times(sin, sinh))
    elif kind == "sinh":
        out = times(cos, sinh), times(sin, cosh)
    else:
        out = times(cos, cosh), times(sin, sinh)
    return [_complex(ctx, *out, part, aval)]


def _times(ctx, trig, hyperbolic, aval):
    """trig * hyperbolic, where a zero trig factor gives a zero even beside an infinity."""
    product = ctx.binary("stablehlo.multiply", trig, hyperbolic, aval)
    signed_zero = ctx.binary("stablehlo.multiply", trig,
                             ctx.unary("stablehlo.sign", hyperbolic, aval), aval)
    return _select(ctx, _compare(ctx, "EQ", trig, _zeros(ctx, aval), aval), signed_zero,
                   product, aval)


def sqrt_lowering(ctx, x, **_):
    aval = _aval(ctx)
    root = ctx.unary("stablehlo.sqrt", x, aval)
    if aval.dtype.kind != "c":
        return [root]
    # The principal root's imaginary part has x's sign, -0.0 included (XLA drops it), and
    # an infinite imaginary part gives inf + i*that infinity, even beside a NaN.
    re, im, part = complex_parts(ctx, root, aval)
    x_im = ctx.unary("stablehlo.imag", x, aval, part)
    root = _complex(ctx, re, _copysign(ctx, im, x_im, part), part, aval)
    inf = ctx.constant(np.array(np.inf, part.dtype), part)
    return [_select(ctx, _isinf_real(ctx, x_im, part), _complex(ctx, inf, x_im, part, aval),
                    root, aval)]


def complex_part_lowering(op_name: str, ctx, x, **_):
    aval = _aval(ctx)
    if aval.dtype.kind != "c":
        return [x] if op_name == "stablehlo.real" else [_zeros(ctx, _out(ctx))]
    return [ctx.unary(op_name, x, aval, _out(ctx))]


def conjugate_lowering(ctx, x, **_):
    aval = _aval(ctx)
    if aval.dtype.kind != "c":
        return [x]
    re, im, part = complex_parts(ctx, x, aval)
    return [_complex(ctx, re, ctx.unary("stablehlo.negate", im, part), part, aval)]


def _isinf_real(ctx, x, aval):
    inf = ctx.constant(np.array(np.inf, aval.dtype), aval)
    return _compare(ctx, "EQ", ctx.unary("stablehlo.abs", x, aval), inf, aval)


def _isinf_complex(ctx, z, aval):
    re, im, part = complex_parts(ctx, z, aval)
    return _both(ctx, "stablehlo.or", _isinf_real(ctx, re, part), _isinf_real(ctx, im, part), part)


def isfinite_lowering(ctx, x, **_):
    aval = _aval(ctx)
    if aval.dtype.kind == "c":
        re, im, part = complex_parts(ctx, x, aval)
        finite = [ctx.op("stablehlo.is_finite", [p], [part], [_out(ctx)])[0] for p in (re, im)]
        return [_both(ctx, "stablehlo.and", *finite, aval)]
    if aval.dtype.kind != "f":
        return [ctx.constant(np.ones((), bool), _out(ctx))]
    return [ctx.op("stablehlo.is_finite", [x], [aval], [_out(ctx)])[0]]


def isnan_lowering(ctx, x, **_):
    aval = _aval(ctx)
    if aval.dtype.kind not in "fc":
        return [ctx.constant(np.zeros((), bool), _out(ctx))]
    return [_isnan(ctx, x, aval)]


def isinf_lowering(ctx, x, **_):
    aval = _aval(ctx)
    if aval.dtype.kind == "c":
        return [_isinf_complex(ctx, x, aval)]
    if aval.dtype.kind != "f":
        return [ctx.constant(np.zeros((), bool), _out(ctx))]
    return [_isinf_real(ctx, x, aval)]


def signbit_lowering(ctx, x, **_):
    aval = _aval(ctx)
    one = ctx.constant(np.ones((), aval.dtype), aval)
    signed_one = _copysign(ctx, one, x, aval)
    return [_compare(ctx, "LT", signed_one, _zeros(ctx, aval), aval)]


def select_lowering(ctx, pred, on_true, on_false, **_):
    return ctx.op("stablehlo.select", [pred, on_true, on_false], ctx.avals_in, ctx.avals_out)


def convert_lowering(ctx, x, *, new_dtype, weak_type=False):
    aval_in, aval_out = _aval(ctx), _out(ctx)
    if aval_in.dtype == aval_out.dtype:
        return [x]
    if aval_out.dtype == np.bool_:
        return [_compare(ctx, "NE", x, _zeros(ctx, aval_in), aval_in)]
    if aval_in.dtype.kind == "c" and aval_out.dtype.kind != "c":
        part = aval_in.update(dtype=np.real(np.zeros((), aval_in.dtype)).dtype)
        x = ctx.unary("stablehlo.real", x, aval_in, part)
        aval_in = part
        if part.dtype == aval_out.dtype:
            return [x]
    return [ctx.unary("stablehlo.convert", x, aval_in, aval_out)]


def round_lowering(ctx, x, **_):
    aval = _aval(ctx)
    if aval.dtype.kind == "c":
        return [_map_parts(ctx, partial(ctx.unary, "stablehlo.round_nearest_even"), x, aval)]
    if aval.dtype.kind != "f":
        return [x]
    return [ctx.unary("stablehlo.round_nearest_even", x, aval)]


def floor_ceil_lowering(op_name: str, ctx, x, **_):
    aval = _aval(ctx)
    if aval.dtype.kind != "f":
        return [x]
    return [ctx.unary(op_name, x, aval)]


# -- rules ------------------------------------------------------------------------------------

def real_dtype_rule(aval, **_):
    return np.real(np.zeros((), aval.dtype)).dtype


def convert_dtype_rule(aval, *, new_dtype, weak_type=False):
    return np.dtype(new_dtype)


def convert_weak_rule(aval, *, new_dtype, weak_type=False):
    return weak_type


def select_shape_rule(pred, on_true, on_false, **_):
    return same_shape_rule(pred, on_true, on_false)


def select_dtype_rule(pred, on_true, on_false, **_):
    if pred.dtype != np.bool_:
        raise TypeError(f"select needs a bool predicate, got {pred.dtype}")
    return same_dtype_rule(on_true, on_false)


def select_weak_rule(pred, on_true, on_false, **_):
    return on_true.weak_type and on_false.weak_type


def _ufunc_impl(ufunc, *args, **_):
    with np.errstate(all="ignore"):
        return ufunc(*args)


def _convert_impl(x, *, new_dtype, weak_type=False):
    with np.errstate(all="ignore"):
        return np.asarray(x).astype(new_dtype)


def _define(name, impl, lowering, dtype_rule=same_dtype_rule, doc="", weak_rule=None):
    return register(Primitive(name, same_shape_rule, dtype_rule, impl, lowering,
                              weak_type_rule=weak_rule, doc=doc))


UNARY_SINGLE_OP = {
    # name: (stablehlo op, NumPy ufunc)
    "negative": ("stablehlo.negate", np.negative),
    "log": ("stablehlo.log", np.log),
    "cbrt": ("stablehlo.cbrt", np.cbrt),
    "tan": ("stablehlo.tan", np.tan),
    "tanh": ("stablehlo.tanh", np.tanh),
    "invert": ("stablehlo.not", np.invert),
}

# StableHLO lacks these; CHLO (the client ops XLA expands when it compiles) has them, written
# for accuracy over the whole range, signed zeros and infinities included (formulas such as
# log(x + sqrt(x*x + 1)) overflow and lose -0.0). For complex z, CHLO drops the sign of a zero
# part on the branch cuts (asin(1.5-0j) should be pi/2 - 0.96j); the principal branch gives
# that sign everywhere: (the part of f(z) whose sign follows the same part of z, negated?).
CHLO_UNARY = {
    "arcsin": ("chlo.asin", np.arcsin, ("imag", False)),
    "arccos": ("chlo.acos", np.arccos, ("imag", True)),
    "arctan": ("chlo.atan", np.arctan, ("real", False)),
    "arcsinh": ("chlo.asinh", np.arcsinh, ("real", False)),
    "arccosh": ("chlo.acosh", np.arccosh, ("imag", False)),
    "arctanh": ("chlo.atanh", np.arctanh, ("imag", False)),
}

BINARY_SINGLE_OP = {
    "add": ("stablehlo.add", np.add),
    "subtract": ("stablehlo.subtract", np.subtract),
    "multiply": ("stablehlo.multiply", np.multiply),
    "arctan2": ("stablehlo.atan2", np.arctan2),
    "bitwise_and": ("stablehlo.and", np.bitwise_and),
    "bitwise_or": ("stablehlo.or", np.bitwise_or),
    "bitwise_xor": ("stablehlo.xor", np.bitwise_xor),
    "left_shift": ("stablehlo.shift_left", np.left_shift),
}

COMPARISONS = {
    "equal": ("EQ", np.equal), "not_equal": ("NE", np.not_equal),
    "less": ("LT", np.less), "less_equal": ("LE", np.less_equal),
    "greater": ("GT", np.greater), "greater_equal": ("GE", np.greater_equal),
}

for _name, (_op, _ufunc) in UNARY_SINGLE_OP.items():
    _define(_name, partial(_ufunc_impl, _ufunc), partial(single_op_lowering, _op))

for _name, (_op, _ufunc, _branch_sign) in CHLO_UNARY.items():
    _define(_name, partial(_ufunc_impl, _ufunc), partial(chlo_lowering, _op, _branch_sign))

for _name, (_op, _ufunc) in BINARY_SINGLE_OP.items():
    _define(_name, partial(_ufunc_impl, _ufunc), partial(single_op_lowering, _op))

for _name, (_direction, _ufunc) in COMPARISONS.items():
    _define(_name, partial(_ufunc_impl, _ufunc), partial(compare_lowering, _direction),
            dtype_rule=bool_dtype_rule, weak_rule=never_weak)


def _shift_right_lowering(ctx, x, y, **_):
    op = "stablehlo.shift_right_arithmetic" if _aval(ctx).dtype.kind == "i" else \
        "stablehlo.shift_right_logical"
    return [ctx.binary(op, x, y, _aval(ctx))]


_define("right_shift", partial(_ufunc_impl, np.right_shift), _shift_right_lowering)
_define("logical_and", partial(_ufunc_impl, np.logical_and),
        partial(logical_lowering, "stablehlo.and"), dtype_rule=bool_dtype_rule)
_define("logical_or", partial(_ufunc_impl, np.logical_or),
        partial(logical_lowering, "stablehlo.or"), dtype_rule=bool_dtype_rule)
_define("logical_xor", partial(_ufunc_impl, np.logical_xor),
        partial(logical_lowering, "stablehlo.xor"), dtype_rule=bool_dtype_rule)
_define("logical_not", partial(_ufunc_impl, np.logical_not), logical_not_lowering,
        dtype_rule=bool_dtype_rule)
_define("divide", partial(_ufunc_impl, np.divide), divide_lowering)
_define("floor_divide", partial(_ufunc_impl, np.floor_divide), floor_divide_lowering)
_define("remainder", partial(_ufunc_impl, np.remainder), remainder_lowering)
_define("power", partial(_ufunc_impl, np.power), power_lowering)
_define("maximum", partial(_ufunc_impl, np.maximum), partial(extremum_lowering, "max", False))
_define("minimum", partial(_ufunc_impl, np.minimum), partial(extremum_lowering, "min", False))
_define("fmax", partial(_ufunc_impl, np.fmax), partial(extremum_lowering, "max", True))
_define("fmin", partial(_ufunc_impl, np.fmin), partial(extremum_lowering, "min", True))
_define("sqrt", partial(_ufunc_impl, np.sqrt), sqrt_lowering)
for _name in ("sin", "cos", "sinh", "cosh"):
    _define(_name, partial(_ufunc_impl, getattr(np, _name)), partial(trig_lowering, _name))
_define("expm1", partial(_ufunc_impl, np.expm1), expm1_lowering)
_define("log1p", partial(_ufunc_impl, np.log1p), log1p_lowering)
_define("hypot", partial(_ufunc_impl, np.hypot), hypot_lowering)
_define("copysign", partial(_ufunc_impl, np.copysign), copysign_lowering)
_define("abs", partial(_ufunc_impl, np.abs), abs_lowering, dtype_rule=real_dtype_rule)
_define("sign", partial(_ufunc_impl, np.sign), sign_lowering)
_define("square", partial(_ufunc_impl, np.square), square_lowering)
_define("reciprocal", partial(_ufunc_impl, np.reciprocal), reciprocal_lowering)
_define("rint", partial(_ufunc_impl, np.rint), round_lowering)
_define("floor", partial(_ufunc_impl, np.floor), partial(floor_ceil_lowering, "stablehlo.floor"))
_define("ceil", partial(_ufunc_impl, np.ceil), partial(floor_ceil_lowering, "stablehlo.ceil"))
_define("real", partial(_ufunc_impl, np.real), partial(complex_part_lowering, "stablehlo.real"),
        dtype_rule=real_dtype_rule)
_define("imag", partial(_ufunc_impl, np.imag), partial(complex_part_lowering, "stablehlo.imag"),
        dtype_rule=real_dtype_rule)
_define("conjugate", partial(_ufunc_impl, np.conjugate), conjugate_lowering)
_define("isfinite", partial(_ufunc_impl, np.isfinite), isfinite_lowering,
        dtype_rule=bool_dtype_rule, weak_rule=never_weak)
_define("isnan", partial(_ufunc_impl, np.isnan), isnan_lowering,
        dtype_rule=bool_dtype_rule, weak_rule=never_weak)
_define("isinf", partial(_ufunc_impl, np.isinf), isinf_lowering,
        dtype_rule=bool_dtype_rule, weak_rule=never_weak)
_define("signbit", partial(_ufunc_impl, np.signbit), signbit_lowering,
        dtype_rule=bool_dtype_rule, weak_rule=never_weak)

_define("log2", partial(_ufunc_impl, np.log2), partial(log_base_lowering, 2.0))
_define("log10", partial(_ufunc_impl, np.log10), partial(log_base_lowering, 10.0))
_define("exp", partial(_ufunc_impl, np.exp), exp_lowering)
_define("exp2", partial(_ufunc_impl, np.exp2), exp2_lowering)


def _make_complex_impl(re, im, **_):
    """complex(re, im) exactly (re + 1j*im would make 0 + 1j*inf a NaN)."""
    out = np.empty(np.shape(re), np.result_type(re, np.complex64))
    out.real, out.imag = re, im
    return out


def _make_complex_lowering(ctx, re, im, **_):
    return ctx.op("stablehlo.complex", [re, im], ctx.avals_in, ctx.avals_out)


def _make_complex_dtype(re, im, **_):
    return np.result_type(same_dtype_rule(re, im), np.complex64)


_define("complex", _make_complex_impl, _make_complex_lowering, dtype_rule=_make_complex_dtype)

register(Primitive("select", select_shape_rule, select_dtype_rule,
                   lambda pred, a, b, **_: np.where(pred, a, b), select_lowering,
                   weak_type_rule=select_weak_rule, doc="np.where on one shape and dtype"))
register(Primitive("convert_element_type", same_shape_rule, convert_dtype_rule, _convert_impl,
                   convert_lowering, weak_type_rule=convert_weak_rule, doc="astype"))
