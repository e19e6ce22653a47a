"""Elementwise transcendental primitives: exponentials, logarithms, roots, trigonometry.

Each is one `elementwise(...)` record (see `elementwise.py`) at the end of the file. For
complex operands NumPy calls the C library (glibc's cexp, csin, casinh, ...): their lowerings
are in `complex_functions.py`, with C99's special values where XLA's own ops differ (signed
zeros on branch cuts, infinities beside NaNs); log1p, expm1 and exp2 are NumPy's own formulas.
"""
from __future__ import annotations

from functools import partial

import numpy as np

from . import complex_functions as cf
from .arithmetic import hypot
from .autodiff import partials
from .elementwise import (complex_parts, elementwise, in_aval, make_complex, map_parts,
                          single_op)


def log1p_lowering(ctx, x, **_):
    aval = in_aval(ctx)
    if aval.dtype.kind != "c":
        return [ctx.unary("stablehlo.log_plus_one", x, aval)]
    # NumPy's own formula: log(|x + 1|) + i atan2(im, re + 1) (so log1p(max + max*j) is inf)
    re, im, part = complex_parts(ctx, x, aval)
    re_plus_one = ctx.binary("stablehlo.add", re, ctx.constant(np.ones((), part.dtype), part),
                             part)
    out_re = ctx.unary("stablehlo.log", hypot(ctx, re_plus_one, im, part), part)
    out_im = ctx.binary("stablehlo.atan2", im, re_plus_one, part)
    return [make_complex(ctx, out_re, out_im, part, aval)]


def log_base_lowering(base: float, ctx, x, **_):
    """log2 and log10: log(x) / log(base); for complex x part by part, as NumPy scales clog."""
    aval = in_aval(ctx)
    if aval.dtype.kind == "c":
        log = cf.apply(cf.clog, ctx, x, aval)
    else:
        log = ctx.unary("stablehlo.log", x, aval)

    def scale(value, value_aval):
        log_base = ctx.constant(np.log(np.array(base, value_aval.dtype)), value_aval)
        return ctx.binary("stablehlo.divide", value, log_base, value_aval)
    if aval.dtype.kind == "c":
        return [map_parts(ctx, scale, log, aval)]
    return [scale(log, aval)]


def exp2_lowering(ctx, x, **_):
    """2**x; for complex x NumPy takes exp of x's parts each times log(2)."""
    aval = in_aval(ctx)
    if aval.dtype.kind != "c":
        two = ctx.constant(np.array(2.0, aval.dtype), aval)
        return [ctx.binary("stablehlo.power", two, x, aval)]

    def times_log2(value, part):
        log2 = ctx.constant(np.log(np.array(2.0, part.dtype)), part)
        return ctx.binary("stablehlo.multiply", value, log2, part)
    return [cf.complex_exp(ctx, map_parts(ctx, times_log2, x, aval), aval)]


def expm1_lowering(ctx, x, **_):
    aval = in_aval(ctx)
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
    return [make_complex(ctx, out_re, out_im, part, aval)]


def nextafter_lowering(ctx, x, y, **_):
    """The next float after x towards y; where x == y, C's nextafter gives y (so 0.0 towards
    -0.0 is -0.0) but NumPy's float16 loop gives x."""
    aval = in_aval(ctx)
    step = ctx.binary("chlo.next_after", x, y, aval)
    if aval.dtype != np.float16:
        return [step]
    return [ctx.select(ctx.compare("EQ", x, y, aval), x, step, aval)]


def real_or_complex(real_op: str, complex_function):
    """A lowering: one op for real x, `complex_function` (complex_functions.py) for complex x."""
    return partial(_real_or_complex, real_op, complex_function)


def _real_or_complex(real_op: str, complex_function, ctx, x, **_):
    aval = in_aval(ctx)
    if aval.dtype.kind == "c":
        return [cf.apply(complex_function, ctx, x, aval)]
    return [ctx.unary(real_op, x, aval)]


# -- derivatives: t times the derivative, as a function of the operand x and the result out ----

def _slope(slope):
    """A JVP from `slope(ctx, out, x)`, the derivative at x."""
    return partials(lambda ctx, t, out, x: ctx.mul(t, slope(ctx, out, x)))


def _inverse_slope(denominator):
    """A JVP from `denominator(ctx, out, x)`: the derivative is 1 / that."""
    return partials(lambda ctx, t, out, x: ctx.div(t, denominator(ctx, out, x)))


def _one(ctx, like):
    return ctx.full_like(like, 1)


def _one_minus_square(ctx, x):
    return ctx.sub(_one(ctx, x), ctx.square(x))


def _log_of(base: float):
    """x log(base), as a function of (ctx, out, x)."""
    return lambda ctx, out, x: ctx.mul(x, ctx.full_like(x, np.log(base)))


def _arctan2_partials():
    def of_x(ctx, t, out, x, y):
        return ctx.div(ctx.mul(t, y), ctx.add(ctx.square(x), ctx.square(y)))

    def of_y(ctx, t, out, x, y):
        return ctx.neg(ctx.div(ctx.mul(t, x), ctx.add(ctx.square(x), ctx.square(y))))
    return partials(of_x, of_y)


# StableHLO lacks asin, sinh, ...; CHLO (the client ops XLA expands when it compiles) has them,
# written for accuracy over the whole range, signed zeros and infinities included (formulas
# such as log(x + sqrt(x*x + 1)) overflow and lose -0.0).
exp_p = elementwise("exp", np.exp, real_or_complex("stablehlo.exponential", cf.cexp),
                    jvp=_slope(lambda ctx, out, x: out))
exp2_p = elementwise("exp2", np.exp2, exp2_lowering,
                     jvp=_slope(lambda ctx, out, x: _log_of(2.0)(ctx, x, out)))
expm1_p = elementwise("expm1", np.expm1, expm1_lowering,
                      jvp=_slope(lambda ctx, out, x: ctx.add(out, _one(ctx, out))))
log_p = elementwise("log", np.log, real_or_complex("stablehlo.log", cf.clog),
                    jvp=_inverse_slope(lambda ctx, out, x: x))
log2_p = elementwise("log2", np.log2, partial(log_base_lowering, 2.0), jvp=_inverse_slope(_log_of(2.0)))
log10_p = elementwise("log10", np.log10, partial(log_base_lowering, 10.0),
                      jvp=_inverse_slope(_log_of(10.0)))
log1p_p = elementwise("log1p", np.log1p, log1p_lowering,
                      jvp=_inverse_slope(lambda ctx, out, x: ctx.add(x, _one(ctx, x))))
sqrt_p = elementwise("sqrt", np.sqrt, real_or_complex("stablehlo.sqrt", cf.csqrt),
                     jvp=_inverse_slope(lambda ctx, out, x: ctx.add(out, out)))
cbrt_p = elementwise("cbrt", np.cbrt, single_op("stablehlo.cbrt"),
                     jvp=_inverse_slope(lambda ctx, out, x: ctx.mul(ctx.full_like(out, 3), ctx.square(out))))

sin_p = elementwise("sin", np.sin, real_or_complex("stablehlo.sine", cf.csin),
                    jvp=_slope(lambda ctx, out, x: ctx.cos(x)))
cos_p = elementwise("cos", np.cos, real_or_complex("stablehlo.cosine", cf.ccos),
                    jvp=_slope(lambda ctx, out, x: ctx.neg(ctx.sin(x))))
tan_p = elementwise("tan", np.tan, real_or_complex("stablehlo.tan", cf.ctan),
                    jvp=_slope(lambda ctx, out, x: ctx.add(_one(ctx, out), ctx.square(out))))
sinh_p = elementwise("sinh", np.sinh, real_or_complex("chlo.sinh", cf.csinh),
                     jvp=_slope(lambda ctx, out, x: ctx.cosh(x)))
cosh_p = elementwise("cosh", np.cosh, real_or_complex("chlo.cosh", cf.ccosh),
                     jvp=_slope(lambda ctx, out, x: ctx.sinh(x)))
tanh_p = elementwise("tanh", np.tanh, real_or_complex("stablehlo.tanh", cf.ctanh),
                     jvp=_slope(lambda ctx, out, x: _one_minus_square(ctx, out)))
arctan2_p = elementwise("arctan2", np.arctan2, single_op("stablehlo.atan2"),
                        jvp=_arctan2_partials())
nextafter_p = elementwise("nextafter", np.nextafter, nextafter_lowering,
                          jvp=partials(lambda ctx, t, out, x, y: t, None))
arcsin_p = elementwise("arcsin", np.arcsin, real_or_complex("chlo.asin", cf.casin),
                       jvp=_inverse_slope(lambda ctx, out, x: ctx.sqrt(_one_minus_square(ctx, x))))
arccos_p = elementwise("arccos", np.arccos, real_or_complex("chlo.acos", cf.cacos),
                       jvp=_inverse_slope(lambda ctx, out, x: ctx.neg(ctx.sqrt(_one_minus_square(ctx, x)))))
arctan_p = elementwise("arctan", np.arctan, real_or_complex("chlo.atan", cf.catan),
                       jvp=_inverse_slope(lambda ctx, out, x: ctx.add(_one(ctx, x), ctx.square(x))))
arcsinh_p = elementwise("arcsinh", np.arcsinh, real_or_complex("chlo.asinh", cf.casinh),
                        jvp=_inverse_slope(lambda ctx, out, x: ctx.sqrt(ctx.add(ctx.square(x), _one(ctx, x)))))
arccosh_p = elementwise("arccosh", np.arccosh, real_or_complex("chlo.acosh", cf.cacosh),
                        jvp=_inverse_slope(lambda ctx, out, x: ctx.sqrt(ctx.sub(ctx.square(x), _one(ctx, x)))))
arctanh_p = elementwise("arctanh", np.arctanh, real_or_complex("chlo.atanh", cf.catanh),
                        jvp=_inverse_slope(lambda ctx, out, x: _one_minus_square(ctx, x)))
