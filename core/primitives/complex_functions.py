"""The complex elementary functions with C99's special values (Annex G), as the C library
computes them: NumPy's complex exp, log, sqrt, the trigonometric and hyperbolic functions and
their inverses call glibc's cexp, clog, csqrt, csin, ... and so match its choices exactly,
down to the sign of a zero part and of an infinity beside a NaN.

XLA's complex ops give NaN + NaN j wherever an infinite or NaN part meets arithmetic (inf * 0,
inf - inf), and lose the sign of zero parts; C treats such inputs case by case:
exp(inf + nan j) = inf + nan j, cosh(0 + inf j) = nan + 0j, tanh(x - 0j) has a -0 imaginary
part. Each function below is a formula on the parts (glibc's, where XLA's op differs for
finite inputs too; otherwise XLA's op) followed by C's cases, written with `Parts`: the
arithmetic and tests of one part of the complex values being lowered. The trigonometric
functions are glibc's hyperbolic ones on swapped parts: sin z = swap(sinh(swap z)),
tan z = swap(tanh(swap z)), atan z = swap(atanh(swap z)), cos(a + bi) = cosh(-b + ai).
"""
from __future__ import annotations

import math

import numpy as np

from .elementwise import copysign, isinf_real, part_aval

PI = math.pi


class Parts:
    """Arithmetic and tests on one part (real or imaginary) of the complex values of aval."""

    def __init__(self, ctx, aval):
        self.ctx, self.aval, self.part = ctx, aval, part_aval(aval)
        self.info = np.finfo(self.part.dtype)

    # complex values <-> parts ---------------------------------------------------------------
    def split(self, z):
        ctx = self.ctx
        return (ctx.unary("stablehlo.real", z, self.aval, self.part),
                ctx.unary("stablehlo.imag", z, self.aval, self.part))

    def join(self, re, im):
        return self.ctx.op("stablehlo.complex", [re, im], [self.part, self.part], [self.aval])[0]

    def const(self, value):
        return self.ctx.constant(np.array(value, self.part.dtype), self.part)

    def _value(self, x):
        return self.const(x) if isinstance(x, (int, float)) else x

    # arithmetic -----------------------------------------------------------------------------
    def fn(self, op_name: str, x):
        return self.ctx.unary(op_name, x, self.part)

    def _binary(self, op_name: str, x, y):
        return self.ctx.binary(op_name, self._value(x), self._value(y), self.part)

    def add(self, x, y):
        return self._binary("stablehlo.add", x, y)

    def sub(self, x, y):
        return self._binary("stablehlo.subtract", x, y)

    def mul(self, x, y):
        return self._binary("stablehlo.multiply", x, y)

    def div(self, x, y):
        return self._binary("stablehlo.divide", x, y)

    def neg(self, x):
        return self.fn("stablehlo.negate", x)

    def abs(self, x):
        return self.fn("stablehlo.abs", x)

    def copysign(self, magnitude, sign_source):
        return copysign(self.ctx, self._value(magnitude), sign_source, self.part)

    def where(self, pred, on_true, on_false):
        return self.ctx.select(pred, self._value(on_true), self._value(on_false), self.part)

    # tests ----------------------------------------------------------------------------------
    def compare(self, direction: str, x, y):
        return self.ctx.compare(direction, self._value(x), self._value(y), self.part)

    def isnan(self, x):
        return self.compare("NE", x, x)

    def isinf(self, x):
        return isinf_real(self.ctx, x, self.part)

    def isfinite(self, x):
        out = self.part.update(dtype=np.dtype(bool), weak_type=False)
        return self.ctx.op("stablehlo.is_finite", [x], [self.part], [out])[0]

    def is_zero(self, x):
        return self.compare("EQ", x, 0.0)

    def signbit(self, x):
        return self.compare("LT", self.copysign(1.0, x), 0.0)

    def _logical(self, op_name: str, first, *rest):
        out = self.part.update(dtype=np.dtype(bool), weak_type=False)
        for pred in rest:
            first = self.ctx.binary(op_name, first, pred, out)
        return first

    def all(self, *preds):
        return self._logical("stablehlo.and", *preds)

    def any(self, *preds):
        return self._logical("stablehlo.or", *preds)

    def not_(self, pred):
        out = self.part.update(dtype=np.dtype(bool), weak_type=False)
        return self.ctx.unary("stablehlo.not", pred, out)


def apply(function, ctx, z, aval):
    """`function(parts, re, im, z) -> (re, im)` applied to z = re + i im of aval."""
    p = Parts(ctx, aval)
    return p.join(*function(p, *p.split(z), z))


def complex_exp(ctx, z, aval):
    return apply(cexp, ctx, z, aval)


def _overflow_threshold(p: Parts, divisor: int = 1) -> int:
    """glibc's t: the largest whole x whose exp(x) (over `divisor`) is finite."""
    return int((p.info.maxexp - 1) * math.log(2) / divisor)


def _sincos(p: Parts, x):
    """(sin x, cos x), glibc's way: (x, 1) where |x| is below the smallest normal number."""
    tiny = p.compare("LE", p.abs(x), float(p.info.tiny))
    return (p.where(tiny, x, p.fn("stablehlo.sine", x)),
            p.where(tiny, 1.0, p.fn("stablehlo.cosine", x)))


def _exp_times(p: Parts, x, factors, half: bool = False):
    """exp(x) * f (/ 2) for each f in factors, without overflowing exp(x) where the product is
    finite: above glibc's t, exp(x - t) * (f * exp(t))."""
    t = _overflow_threshold(p)
    big = p.compare("GT", x, float(t))
    exp_x = p.fn("stablehlo.exponential", p.where(big, p.sub(x, float(t)), x))
    scale = p.where(big, float(math.exp(t)), 1.0)
    if half:
        scale = p.mul(scale, 0.5)
    return [p.mul(exp_x, p.mul(f, scale)) for f in factors]


# -- exp, log, sqrt ---------------------------------------------------------------------------

def cexp(p: Parts, a, b, z=None):
    sin_b, cos_b = _sincos(p, b)
    re, im = _exp_times(p, a, (cos_b, sin_b))
    im = p.where(p.is_zero(b), b, im)
    b_not_finite = p.not_(p.isfinite(b))
    minus_inf = p.compare("EQ", a, -math.inf)
    re = p.where(p.all(p.compare("EQ", a, math.inf), b_not_finite), math.inf, re)
    re = p.where(p.all(minus_inf, b_not_finite), 0.0, re)
    im = p.where(p.all(minus_inf, b_not_finite), p.copysign(0.0, b), im)
    return re, im


def clog(p: Parts, a, b, z):
    """XLA's log, but an infinite part makes the real part +inf, even beside a NaN."""
    re, im = p.split(p.ctx.unary("stablehlo.log", z, p.aval))
    return p.where(p.any(p.isinf(a), p.isinf(b)), math.inf, re), im


def csqrt(p: Parts, a, b, z):
    """XLA's square root, with C's cases for infinite and NaN parts."""
    re, im = p.split(p.ctx.unary("stablehlo.sqrt", z, p.aval))
    im = p.copysign(im, b)                       # XLA drops the sign of a -0.0 part
    b_inf, b_nan = p.isinf(b), p.isnan(b)
    re = p.where(b_inf, math.inf, re)
    im = p.where(b_inf, b, im)
    plus_inf, minus_inf = p.compare("EQ", a, math.inf), p.compare("EQ", a, -math.inf)
    re = p.where(p.all(b_nan, plus_inf), math.inf, re)
    re = p.where(p.all(b_nan, minus_inf), math.nan, re)
    im = p.where(p.all(b_nan, minus_inf), p.copysign(math.inf, b), im)
    return re, im


# -- hyperbolic and trigonometric -------------------------------------------------------------

def _hyperbolic(p: Parts, a, b, kind: str):
    """sinh(a + bi) = sinh a cos b + i cosh a sin b, cosh(a + bi) = cosh a cos b +
    i sinh a sin b, scaled above glibc's t as glibc does."""
    sin_b, cos_b = _sincos(p, b)
    sinh_a, cosh_a = p.fn("chlo.sinh", a), p.fn("chlo.cosh", a)
    negative = p.signbit(a)
    if kind == "sinh":
        small = (p.mul(sinh_a, cos_b), p.mul(cosh_a, sin_b))
        signed = (p.where(negative, p.neg(cos_b), cos_b), sin_b)
    else:
        small = (p.mul(cosh_a, cos_b), p.mul(sinh_a, sin_b))
        signed = (cos_b, p.where(negative, p.neg(sin_b), sin_b))
    big = p.compare("GT", p.abs(a), float(_overflow_threshold(p)))
    scaled = _exp_times(p, p.abs(a), signed, half=True)
    return [p.where(big, s, x) for s, x in zip(scaled, small, strict=True)]


def csinh(p: Parts, a, b, z=None):
    re, im = _hyperbolic(p, a, b, "sinh")
    b_not_finite = p.not_(p.isfinite(b))
    re = p.where(p.all(p.is_zero(a), b_not_finite), a, re)
    re = p.where(p.all(p.isinf(a), b_not_finite), math.inf, re)
    return re, p.where(p.is_zero(b), b, im)


def ccosh(p: Parts, a, b, z=None):
    re, im = _hyperbolic(p, a, b, "cosh")
    b_not_finite = p.not_(p.isfinite(b))
    im = p.where(p.all(p.is_zero(a), b_not_finite), 0.0, im)
    re = p.where(p.all(p.isinf(a), b_not_finite), math.inf, re)
    b_signed_by_a = p.where(p.isnan(a), b, p.mul(b, p.copysign(1.0, a)))
    return re, p.where(p.is_zero(b), b_signed_by_a, im)


def ctanh(p: Parts, a, b, z=None):
    """glibc's tanh(a + bi) = (sinh a cosh a + i sin b cos b) / (sinh² a + cos² b), with
    a real part of ±1 above half of t, then its cases for infinite and NaN parts."""
    sin_b, cos_b = _sincos(p, b)
    a_inf = p.isinf(a)
    big_b = p.all(p.isfinite(b), p.compare("GT", p.abs(b), 1.0))
    inf_re = p.copysign(1.0, a)
    inf_im = p.copysign(0.0, p.where(big_b, p.mul(sin_b, cos_b), b))
    nan_re = p.where(p.is_zero(b), a, p.where(p.is_zero(a), a, math.nan))
    nan_im = p.where(p.is_zero(b), b, math.nan)
    special = p.where(a_inf, inf_re, nan_re), p.where(a_inf, inf_im, nan_im)
    return _special(p, a, b, _ctanh_finite(p, a, sin_b, cos_b), special)


def _ctanh_finite(p: Parts, a, sin_b, cos_b):
    t = _overflow_threshold(p, 2)
    abs_a = p.abs(a)
    # above t: ±1 + i 4 sin b cos b / exp(2|a|), divided in two steps as glibc does
    rest = p.sub(abs_a, float(t))
    exp_2t = float(math.exp(2 * t))
    second = p.where(p.compare("GT", rest, float(t)), exp_2t,
                     p.fn("stablehlo.exponential", p.mul(2.0, rest)))
    big_im = p.div(p.div(p.mul(4.0, p.mul(sin_b, cos_b)), exp_2t), second)
    # below: the quotient
    tiny_a = p.compare("LE", abs_a, float(p.info.tiny))
    sinh_a = p.where(tiny_a, a, p.fn("chlo.sinh", a))
    cosh_a = p.where(tiny_a, 1.0, p.fn("chlo.cosh", a))
    cos_sq = p.mul(cos_b, cos_b)
    sinh_counts = p.compare("GT", p.abs(sinh_a), p.mul(p.abs(cos_b), float(p.info.eps)))
    den = p.where(sinh_counts, p.add(p.mul(sinh_a, sinh_a), cos_sq), cos_sq)
    big = p.compare("GT", abs_a, float(t))
    re = p.where(big, p.copysign(1.0, a), p.div(p.mul(sinh_a, cosh_a), den))
    im = p.where(big, big_im, p.div(p.mul(sin_b, cos_b), den))
    return re, im


def swapped(function):
    """f(a + bi) = swap(g(b + ai)): sin from sinh, tan from tanh, atan from atanh."""
    def on_swapped_parts(p: Parts, a, b, z=None):
        re, im = function(p, b, a, p.join(b, a))
        return im, re
    on_swapped_parts.__name__ = f"swapped_{function.__name__}"
    return on_swapped_parts


csin, ctan = swapped(csinh), swapped(ctanh)


def ccos(p: Parts, a, b, z=None):
    return ccosh(p, p.neg(b), a)


# -- inverse functions: CHLO's values, then C's signs and cases -------------------------------

def _chlo(p: Parts, op_name: str, z, real_sign=None, imag_sign=None):
    """CHLO's value of op_name(z) (accurate over the whole range), with the parts' signs of
    zero taken from the input's parts (CHLO drops them on the branch cuts)."""
    re, im = p.split(p.ctx.unary(op_name, z, p.aval))
    if real_sign is not None:
        re = p.copysign(re, real_sign)
    if imag_sign is not None:
        im = p.copysign(im, imag_sign)
    return re, im


def _special(p: Parts, a, b, finite, special):
    """`finite` (re, im) where both parts are finite, else `special` (re, im)."""
    either = p.not_(p.all(p.isfinite(a), p.isfinite(b)))
    return tuple(p.where(either, s, f) for s, f in zip(special, finite, strict=True))


def casinh(p: Parts, a, b, z):
    finite = _chlo(p, "chlo.asinh", z, real_sign=a, imag_sign=b)
    b_inf, a_finite = p.isinf(b), p.isfinite(a)
    angle = p.where(a_finite, PI / 2, PI / 4)
    on_b_inf = (p.copysign(math.inf, a), p.where(p.isnan(a), math.nan, p.copysign(angle, b)))
    zero_im = p.any(p.all(p.isinf(a), p.isfinite(b)), p.all(p.isnan(a), p.is_zero(b)))
    on_a = (a, p.where(zero_im, p.copysign(0.0, b), math.nan))
    special = tuple(p.where(b_inf, x, p.where(a_finite, math.nan, y))
                    for x, y in zip(on_b_inf, on_a, strict=True))
    return _special(p, a, b, finite, special)


def casin_special(p: Parts, a, b):
    """glibc's casin where a part is not finite."""
    any_nan = p.any(p.isnan(a), p.isnan(b))
    any_inf = p.any(p.isinf(a), p.isinf(b))
    nan_re = p.where(p.is_zero(a), a, math.nan)
    nan_im = p.where(p.is_zero(a), b, p.where(any_inf, p.copysign(math.inf, b), math.nan))
    angle = p.where(p.isfinite(b), PI / 2, PI / 4)
    a_inf = p.isinf(a)
    inf_re = p.where(a_inf, p.copysign(angle, a), p.copysign(0.0, a))
    inf_im = p.where(a_inf, p.copysign(math.inf, b), b)
    return p.where(any_nan, nan_re, inf_re), p.where(any_nan, nan_im, inf_im)


def casin(p: Parts, a, b, z):
    finite = _chlo(p, "chlo.asin", z, real_sign=a, imag_sign=b)
    return _special(p, a, b, finite, casin_special(p, a, b))


def cacos(p: Parts, a, b, z):
    finite = _chlo(p, "chlo.acos", z, imag_sign=p.neg(b))
    asin_re, asin_im = casin_special(p, a, b)
    return _special(p, a, b, finite, (p.sub(PI / 2, asin_re), p.neg(asin_im)))


def cacosh(p: Parts, a, b, z):
    finite = _chlo(p, "chlo.acosh", z, imag_sign=b)
    a_nan, a_inf, b_inf = p.isnan(a), p.isinf(a), p.isinf(b)
    a_negative = p.compare("LT", a, 0.0)
    corner = p.where(a_negative, PI - PI / 4, PI / 4)
    on_b_inf = p.where(a_nan, math.nan, p.copysign(p.where(a_inf, corner, PI / 2), b))
    on_a_inf = p.where(p.isfinite(b), p.copysign(p.where(a_negative, PI, 0.0), b), math.nan)
    on_nan = p.where(p.is_zero(a), PI / 2, math.nan)
    im = p.where(b_inf, on_b_inf, p.where(a_inf, on_a_inf, on_nan))
    re = p.where(p.any(b_inf, a_inf), math.inf, math.nan)
    return _special(p, a, b, finite, (re, im))


def catanh(p: Parts, a, b, z):
    re, im = _chlo(p, "chlo.atanh", z, real_sign=a, imag_sign=b)
    # at a = ±1 and a tiny b, b² underflows in CHLO's formula: glibc's own
    near_pole = p.all(p.compare("EQ", p.abs(a), 1.0),
                      p.compare("LT", p.abs(b), float(p.info.eps) ** 2))
    log_b = p.fn("stablehlo.log", p.abs(b))
    pole_re = p.mul(p.copysign(0.5, a), p.sub(math.log(2), log_b))
    finite = p.where(near_pole, pole_re, re), im
    b_inf = p.isinf(b)
    a_inf_or_zero = p.any(p.isinf(a), p.is_zero(a))
    re = p.where(p.any(b_inf, a_inf_or_zero), p.copysign(0.0, a), math.nan)
    half_pi = p.copysign(PI / 2, b)
    im = p.where(b_inf, half_pi,
                 p.where(p.all(a_inf_or_zero, p.isfinite(b)), half_pi, math.nan))
    return _special(p, a, b, finite, (re, im))


catan = swapped(catanh)


# -- power: NumPy's npy_cpow ------------------------------------------------------------------

def _cmul(p: Parts, x, y):
    """C's product of complex numbers given as (re, im) pairs (NumPy's cmul)."""
    (xr, xi), (yr, yi) = x, y
    return p.sub(p.mul(xr, yr), p.mul(xi, yi)), p.add(p.mul(xr, yi), p.mul(xi, yr))


def _reciprocal(p: Parts, x):
    """NumPy's cdiv(1, x): Smith's method, multiplying by 1/denominator; 1/0 is inf + nan j."""
    xr, xi = x
    by_real = p.compare("GE", p.abs(xr), p.abs(xi))
    big, small = p.where(by_real, xr, xi), p.where(by_real, xi, xr)
    ratio = p.div(small, big)
    scale = p.div(1.0, p.add(big, p.mul(small, ratio)))
    ratio_plus_zero = p.where(p.is_zero(ratio), 0.0, ratio)    # XLA would fold ratio + 0.0
    re = p.mul(p.where(by_real, p.add(1.0, p.mul(0.0, ratio)), ratio_plus_zero), scale)
    im = p.mul(p.where(by_real, p.sub(0.0, ratio), p.sub(p.mul(0.0, ratio), 1.0)), scale)
    both_zero = p.all(p.is_zero(xr), p.is_zero(xi))
    return (p.where(both_zero, p.div(1.0, p.abs(xr)), re),
            p.where(both_zero, p.div(0.0, p.abs(xi)), im))


def _integer_power(p: Parts, x, n):
    """x**n for a whole |n| < 100 as NumPy's npy_cpow multiplies it out: x, x*x and x*(x*x)
    for n = 1, 2, 3 (so that infinities stay), else square-and-multiply from 1 over n's
    seven bits, and 1/that for n < 0."""
    magnitude = p.abs(n)
    result, power = (p.const(1.0), p.const(0.0)), x
    for bit in range(7):
        shifted = p.fn("stablehlo.floor", p.mul(magnitude, 2.0 ** -bit))
        odd = p.compare("NE", p.sub(shifted, p.mul(2.0, p.fn("stablehlo.floor",
                                                                p.mul(shifted, 0.5)))), 0.0)
        product = _cmul(p, result, power)
        result = tuple(p.where(odd, m, r) for m, r in zip(product, result, strict=True))
        power = _cmul(p, power, power)
    inverse = _reciprocal(p, result)
    negative = p.compare("LT", n, 0.0)
    result = tuple(p.where(negative, i, r) for i, r in zip(inverse, result, strict=True))
    square = _cmul(p, x, x)
    for k, unrolled in ((1, x), (2, square), (3, _cmul(p, x, square))):
        is_k = p.compare("EQ", n, float(k))
        result = tuple(p.where(is_k, u, r) for u, r in zip(unrolled, result, strict=True))
    return result


def cpow(p: Parts, x, y, x_value):
    """NumPy's x**y (npy_cpow): 1 for y = 0; 0 or NaN for x = 0 (by the sign of y's real
    part); multiplied out for a whole real y in (-100, 100); else the C library's
    cexp(y * clog(x))."""
    (xr, xi), (yr, yi) = x, y
    log_x = clog(p, xr, xi, x_value)
    re, im = cexp(p, *_cmul(p, log_x, y))
    whole = p.all(p.is_zero(yi), p.compare("LT", p.abs(yr), 100.0),
                  p.compare("EQ", p.fn("stablehlo.floor", yr), yr))
    re, im = (p.where(whole, i, g) for i, g in zip(_integer_power(p, x, yr), (re, im),
                                                    strict=True))
    x_zero = p.all(p.is_zero(xr), p.is_zero(xi))
    of_zero = p.where(p.compare("GT", yr, 0.0), 0.0, math.nan)
    re, im = p.where(x_zero, of_zero, re), p.where(x_zero, of_zero, im)
    y_zero = p.all(p.is_zero(yr), p.is_zero(yi))
    return p.where(y_zero, 1.0, re), p.where(y_zero, 0.0, im)


def complex_power(ctx, x, y, aval):
    p = Parts(ctx, aval)
    return p.join(*cpow(p, p.split(x), p.split(y), x))
