"""Elementwise primitives: NumPy's ufuncs applied to operands of one shape and one dtype.

Arithmetic, comparisons, logic, complex parts, predicates, select and conversion live here
(exponentials, logarithms, roots and trigonometry in `transcendental.py`). Each primitive
means exactly what its NumPy ufunc means on same-dtype operands (integer division by zero
gives 0, `remainder` takes the divisor's sign, `maximum` propagates NaN). Promotion and
broadcasting happen before, in the NumPy layer. Each primitive is one `elementwise(...)`
record at the end of the file, naming the ufuncs it is; the lowerings that NumPy's meaning
makes more than one op are small functions above it.
"""
from __future__ import annotations

from functools import partial

import numpy as np

from ..ir import ShapedArray, distinct_part
from .autodiff import (LINEAR, abs_partial, add_transpose, complex_transpose, conjugate_transpose,
                       convert_jvp, convert_transpose, copysign_partial, extremum_jvp,
                       imag_transpose, linear_in, multiply_transpose, negative_transpose,
                       partials, real_transpose, select_transpose, subtract_transpose, zero_jvp)
from .batching import leading_batch
from .casts import float_to_int
from .record import (Primitive, bool_dtype_rule, never_weak, register, same_dtype_rule,
                     same_shape_rule)


def in_aval(ctx, i=0) -> ShapedArray:
    return ctx.avals_in[i]


def out_aval(ctx, i=0) -> ShapedArray:
    return ctx.avals_out[i]


def single_op_lowering(op_name: str, ctx, *args, **_):
    return ctx.op(op_name, list(args), ctx.avals_in, ctx.avals_out)


def is_float(aval) -> bool:
    return aval.dtype.kind in "fc"


def zeros(ctx, aval):
    return ctx.constant(np.zeros((), aval.dtype), aval)


def _isnan(ctx, x, aval):
    return ctx.compare("NE", x, x, aval)


def _both(ctx, op_name, a, b, aval):
    """and/or of two predicates of aval's shape."""
    return ctx.binary(op_name, a, b, aval.update(dtype=np.dtype(bool), weak_type=False))


def _real_dtype(dtype) -> np.dtype:
    return np.real(np.zeros((), dtype)).dtype


def part_aval(aval):
    """The abstract value of a complex value's real (or imaginary) part."""
    return aval.update(dtype=_real_dtype(aval.dtype))


def complex_parts(ctx, z, aval):
    """The real and imaginary parts of a complex value, and their abstract value."""
    part = part_aval(aval)
    return (ctx.unary("stablehlo.real", z, aval, part), ctx.unary("stablehlo.imag", z, aval, part),
            part)


def make_complex(ctx, re, im, part, aval):
    return ctx.op("stablehlo.complex", [re, im], [part, part], [aval])[0]


def map_parts(ctx, fn, z, aval):
    """fn applied to the real and to the imaginary part (NumPy's complex rint, log2, ...)."""
    re, im, part = complex_parts(ctx, z, aval)
    return make_complex(ctx, fn(re, part), fn(im, part), part, aval)


# -- lowerings that NumPy's meaning makes more than one op -------------------------------------

def add_lowering(ctx, x, y, **_):
    return [_sum(ctx, "stablehlo.add", x, y, False)]


def subtract_lowering(ctx, x, y, **_):
    return [_sum(ctx, "stablehlo.subtract", x, y, True)]


def _sum(ctx, op_name: str, x, y, subtract: bool):
    """x + y (x - y). XLA's simplifier folds x + 0.0 to x (and x - -0.0), which IEEE and NumPy
    make +0.0 for x = -0.0: where an operand is a constant that may be zero, a zero result
    gets its sign from the operands' signs: -0.0 only for -0.0 + -0.0 (-0.0 - +0.0)."""
    aval = in_aval(ctx)
    result = ctx.binary(op_name, x, y, aval)
    if aval.dtype.kind not in "fc" or not any(_may_be_a_zero_constant(ctx, i) for i in (0, 1)):
        return result
    if aval.dtype.kind == "c":
        parts = [complex_parts(ctx, v, aval) for v in (result, x, y)]
        part = parts[0][2]
        re, im = (_zero_sum_sign(ctx, *(p[k] for p in parts), subtract, part) for k in (0, 1))
        return make_complex(ctx, re, im, part, aval)
    return _zero_sum_sign(ctx, result, x, y, subtract, aval)


def divisor(ctx, y, aval):
    """y as a float divisor: through an optimization barrier, since XLA's simplifier rewrites
    x / c and x / broadcast(b) into x * (1 / c), which is not x / c correctly rounded
    (float32 -57.5 / 24 is -2.3958333; -57.5 * (1 / 24) is -2.3958335). XLA drops the barrier
    after simplifying, so the division still fuses with what feeds it."""
    if aval.dtype.kind not in "fc":
        return y
    return ctx.unary("stablehlo.optimization_barrier", y, aval)


def _may_be_a_zero_constant(ctx, i) -> bool:
    if not ctx.is_constant(i):
        return False
    value = ctx.constant_value(i)
    return value is None or not np.any(distinct_part(value))


def _zero_sum_sign(ctx, result, x, y, subtract: bool, aval):
    negative = partial(_sign_bit, ctx, aval=aval)
    y_negative = negative(y)
    if subtract:
        y_negative = ctx.unary("stablehlo.not", y_negative,
                               aval.update(dtype=np.dtype(bool), weak_type=False))
    both = _both(ctx, "stablehlo.and", negative(x), y_negative, aval)
    zero = zeros(ctx, aval)
    signed_zero = ctx.select(both, ctx.unary("stablehlo.negate", zero, aval), zero, aval)
    return ctx.select(ctx.compare("EQ", result, zero, aval), signed_zero, result, aval)


def _sign_bit(ctx, x, aval):
    one = ctx.constant(np.ones((), aval.dtype), aval)
    return ctx.compare("LT", copysign(ctx, one, x, aval), zeros(ctx, aval), aval)


def copysign(ctx, magnitude, sign_source, aval):
    bits = {2: np.dtype(np.int16), 4: np.dtype(np.int32), 8: np.dtype(np.int64)}[aval.dtype.itemsize]
    int_aval = aval.update(dtype=bits)
    as_int = ctx.op("stablehlo.bitcast_convert", [sign_source], [aval], [int_aval])[0]
    negative = ctx.compare("LT", as_int, ctx.constant(np.zeros((), bits), int_aval), int_aval)
    absval = ctx.unary("stablehlo.abs", magnitude, aval)
    return ctx.select(negative, ctx.unary("stablehlo.negate", absval, aval), absval, aval)


def copysign_lowering(ctx, x, y, **_):
    return [copysign(ctx, x, y, in_aval(ctx))]


def extremum_lowering(kind: str, skip_nan: bool, ctx, x, y, **_):
    aval = in_aval(ctx)
    if not skip_nan and aval.dtype.kind == "f" and _bound_without_zero(ctx):
        # np.clip(x, -1.0, 1.0), np.maximum(x, eps): no two zeros can tie, so XLA's own op
        # (a NaN wins) is NumPy's, and runs about twice as fast as the select of the tie rule
        return [ctx.binary(f"stablehlo.{kind}imum", x, y, aval)]
    return [extremum(ctx, kind, x, y, aval, skip_nan)]


def _bound_without_zero(ctx) -> bool:
    """Whether an operand of the equation is a constant with no zero in it."""
    for i in (0, 1):
        if ctx.is_constant(i):
            value = ctx.constant_value(i)
            if value is not None and not np.any(distinct_part(value) == 0):
                return True
    return False


def extremum(ctx, kind: str, x, y, aval, skip_nan: bool = False):
    """NumPy's maximum or minimum (kind "max", "min") of x and y: a NaN wins (fmax and fmin:
    loses); complex numbers are ordered lexicographically, x kept where NumPy's loop keeps it."""
    if aval.dtype.kind == "c":
        direction = "GE" if kind == "max" else "LE"
        keep_x = _both(ctx, "stablehlo.or", _isnan(ctx, y if skip_nan else x, aval),
                       _complex_order(ctx, direction, x, y, aval), aval)
        return ctx.select(keep_x, x, y, aval)
    if not skip_nan and aval.dtype.kind == "f":
        return _numpy_extremum(ctx, kind, x, y, aval)
    both = ctx.binary(f"stablehlo.{kind}imum", x, y, aval)
    if not skip_nan or aval.dtype.kind != "f":
        return both
    take_y = _isnan(ctx, x, aval)
    take_x = _isnan(ctx, y, aval)
    return ctx.select(take_y, y, ctx.select(take_x, x, both, aval), aval)


def _numpy_extremum(ctx, kind: str, x, y, aval):
    """np.maximum / np.minimum of floats as NumPy's loops give them: a NaN wins, and of two
    equal numbers (+0.0 and -0.0) the second for float32 and float64, the first for float16
    (XLA's maximum orders -0.0 below +0.0)."""
    ties_to_x = aval.dtype == np.float16
    direction = {("max", False): "GT", ("max", True): "GE", ("min", False): "LT",
                 ("min", True): "LE"}[kind, ties_to_x]
    keep_x = _both(ctx, "stablehlo.or", ctx.compare(direction, x, y, aval),
                   _isnan(ctx, x, aval), aval)
    return ctx.select(keep_x, x, y, aval)


def _complex_order(ctx, direction: str, x, y, aval):
    """NumPy's order of complex numbers: by real part, then by imaginary part; false where
    the real parts decide but an imaginary part is NaN."""
    (xr, xi, part), (yr, yi, _) = complex_parts(ctx, x, aval), complex_parts(ctx, y, aval)
    strict = direction[0] + "T"
    no_nan = _both(ctx, "stablehlo.and", ctx.compare("EQ", xi, xi, part),
                   ctx.compare("EQ", yi, yi, part), part)
    by_real = _both(ctx, "stablehlo.and", ctx.compare(strict, xr, yr, part), no_nan, part)
    by_imag = _both(ctx, "stablehlo.and", ctx.compare("EQ", xr, yr, part),
                    ctx.compare(direction, xi, yi, part), part)
    return _both(ctx, "stablehlo.or", by_real, by_imag, part)


def ordered(ctx, direction: str, x, y, aval):
    """x <direction> y (LT, LE, GT, GE, EQ, NE) as NumPy compares numbers of aval's dtype."""
    if aval.dtype.kind == "c" and direction not in ("EQ", "NE"):
        return _complex_order(ctx, direction, x, y, aval)
    return ctx.compare(direction, x, y, aval)


def compare_lowering(direction: str, ctx, x, y, **_):
    aval = in_aval(ctx)
    result = ordered(ctx, direction, x, y, aval)
    if aval.dtype.kind == "f":
        # XLA's simplifier folds `v >= 0` to true where it takes v as never negative (abs(x),
        # exp(x), x * x), NaN forgotten: NumPy's NaN >= 0 is False. `v == v` (which XLA
        # keeps for floats) makes it NaN-aware again; a no-op where nothing was folded.
        lower_bound = {"GE": (x, 1), "LE": (y, 0)}.get(direction)
        if lower_bound is not None and ctx.is_constant(lower_bound[1]) \
                and not ctx.is_constant(1 - lower_bound[1]):
            v = lower_bound[0]
            result = _both(ctx, "stablehlo.and", result, ctx.compare("EQ", v, v, aval), aval)
    return [result]


def _truth(ctx, x, aval):
    """x != 0: the truth value NumPy's logical functions take of a number."""
    if aval.dtype == np.bool_:
        return x
    return ctx.compare("NE", x, zeros(ctx, aval), aval)


def logical_lowering(op_name: str, ctx, x, y, **_):
    aval = in_aval(ctx)
    return [ctx.binary(op_name, _truth(ctx, x, aval), _truth(ctx, y, aval), out_aval(ctx))]


def logical_not_lowering(ctx, x, **_):
    return [ctx.unary("stablehlo.not", _truth(ctx, x, in_aval(ctx)), out_aval(ctx))]


def abs_lowering(ctx, x, **_):
    aval = in_aval(ctx)
    if aval.dtype == np.bool_ or aval.dtype.kind == "u":
        return [x]
    if aval.dtype.kind == "c":
        return [_complex_abs(ctx, x, aval)]
    return [ctx.unary("stablehlo.abs", x, aval)]


def _complex_abs(ctx, z, aval):
    """hypot's rule: an infinite part makes |z| infinite, even beside a NaN."""
    part = part_aval(aval)
    inf = ctx.constant(np.array(np.inf, part.dtype), part)
    return ctx.select(_isinf_complex(ctx, z, aval), inf,
                   ctx.unary("stablehlo.abs", z, aval, part), part)


def sign_lowering(ctx, x, **_):
    aval = in_aval(ctx)
    if aval.dtype.kind == "c":
        return [_complex_sign(ctx, x, aval)]
    zero = zeros(ctx, aval)
    if aval.dtype.kind == "u":
        one = ctx.constant(np.ones((), aval.dtype), aval)
        return [ctx.select(ctx.compare("EQ", x, zero, aval), zero, one, aval)]
    # NumPy's sign of -0.0 is +0.0.
    return [ctx.select(ctx.compare("EQ", x, zero, aval), zero,
                    ctx.unary("stablehlo.sign", x, aval), aval)]


def _complex_sign(ctx, z, aval):
    """NumPy's z / |z|, with its cases: 0 at 0, NaN for NaN, and for an infinite |z| the
    unit of the infinite part (NaN if both are)."""
    re, im, part = complex_parts(ctx, z, aval)
    absval = _complex_abs(ctx, z, aval)
    zero, nan = zeros(ctx, part), ctx.constant(np.array(np.nan, part.dtype), part)
    unit = make_complex(ctx, ctx.binary("stablehlo.divide", re, absval, part),
                    ctx.binary("stablehlo.divide", im, absval, part), part, aval)
    re_inf, im_inf = isinf_real(ctx, re, part), isinf_real(ctx, im, part)
    on_axis = ctx.select(re_inf, make_complex(ctx, ctx.unary("stablehlo.sign", re, part), zero,
                                            part, aval),
                      make_complex(ctx, zero, ctx.unary("stablehlo.sign", im, part), part, aval), aval)
    both_inf = _both(ctx, "stablehlo.and", re_inf, im_inf, part)
    on_axis = ctx.select(both_inf, make_complex(ctx, nan, nan, part, aval), on_axis, aval)
    result = ctx.select(isinf_real(ctx, absval, part), on_axis, unit, aval)
    return ctx.select(ctx.compare("EQ", z, zeros(ctx, aval), aval), zeros(ctx, aval),
                   result, aval)


def complex_part_lowering(op_name: str, ctx, x, **_):
    aval = in_aval(ctx)
    if aval.dtype.kind != "c":
        return [x] if op_name == "stablehlo.real" else [zeros(ctx, out_aval(ctx))]
    return [ctx.unary(op_name, x, aval, out_aval(ctx))]


def conjugate_lowering(ctx, x, **_):
    aval = in_aval(ctx)
    if aval.dtype.kind != "c":
        return [x]
    re, im, part = complex_parts(ctx, x, aval)
    return [make_complex(ctx, re, ctx.unary("stablehlo.negate", im, part), part, aval)]


def isinf_real(ctx, x, aval):
    inf = ctx.constant(np.array(np.inf, aval.dtype), aval)
    return ctx.compare("EQ", ctx.unary("stablehlo.abs", x, aval), inf, aval)


def _isinf_complex(ctx, z, aval):
    re, im, part = complex_parts(ctx, z, aval)
    return _both(ctx, "stablehlo.or", isinf_real(ctx, re, part), isinf_real(ctx, im, part), part)


def isfinite_lowering(ctx, x, **_):
    aval = in_aval(ctx)
    if aval.dtype.kind == "c":
        re, im, part = complex_parts(ctx, x, aval)
        finite = [ctx.op("stablehlo.is_finite", [p], [part], [out_aval(ctx)])[0] for p in (re, im)]
        return [_both(ctx, "stablehlo.and", *finite, aval)]
    if aval.dtype.kind != "f":
        return [ctx.constant(np.ones((), bool), out_aval(ctx))]
    return [ctx.op("stablehlo.is_finite", [x], [aval], [out_aval(ctx)])[0]]


def isnan_lowering(ctx, x, **_):
    aval = in_aval(ctx)
    if aval.dtype.kind not in "fc":
        return [ctx.constant(np.zeros((), bool), out_aval(ctx))]
    return [_isnan(ctx, x, aval)]


def isinf_lowering(ctx, x, **_):
    aval = in_aval(ctx)
    if aval.dtype.kind == "c":
        return [_isinf_complex(ctx, x, aval)]
    if aval.dtype.kind != "f":
        return [ctx.constant(np.zeros((), bool), out_aval(ctx))]
    return [isinf_real(ctx, x, aval)]


def signbit_lowering(ctx, x, **_):
    aval = in_aval(ctx)
    one = ctx.constant(np.ones((), aval.dtype), aval)
    signed_one = copysign(ctx, one, x, aval)
    return [ctx.compare("LT", signed_one, zeros(ctx, aval), aval)]


def select_lowering(ctx, pred, on_true, on_false, **_):
    return ctx.op("stablehlo.select", [pred, on_true, on_false], ctx.avals_in, ctx.avals_out)


def convert_lowering(ctx, x, *, new_dtype, weak_type=False):
    aval_in, aval_out = in_aval(ctx), out_aval(ctx)
    if aval_in.dtype == aval_out.dtype:
        return [x]
    if aval_out.dtype == np.bool_:
        return [ctx.compare("NE", x, zeros(ctx, aval_in), aval_in)]
    if aval_in.dtype == np.bool_ and is_float(aval_out):
        # A select, not a convert: XLA rewrites convert(bool) * x into select(bool, x, 0),
        # which loses NumPy's False * -0.5 == -0.0 and False * inf == nan.
        one = ctx.constant(np.ones((), aval_out.dtype), aval_out)
        return [ctx.select(x, one, zeros(ctx, aval_out), aval_out)]
    if aval_in.dtype.kind == "c" and aval_out.dtype.kind != "c":
        part = aval_in.update(dtype=np.real(np.zeros((), aval_in.dtype)).dtype)
        x = ctx.unary("stablehlo.real", x, aval_in, part)
        aval_in = part
        if part.dtype == aval_out.dtype:
            return [x]
    if aval_in.dtype.kind == "f" and aval_out.dtype.kind in "iu":
        return [float_to_int(ctx, x, aval_in, aval_out)]
    return [ctx.unary("stablehlo.convert", x, aval_in, aval_out)]


def round_lowering(ctx, x, **_):
    aval = in_aval(ctx)
    if aval.dtype.kind == "c":
        return [map_parts(ctx, partial(ctx.unary, "stablehlo.round_nearest_even"), x, aval)]
    if aval.dtype.kind != "f":
        return [x]
    return [ctx.unary("stablehlo.round_nearest_even", x, aval)]


def floor_ceil_lowering(op_name: str, ctx, x, **_):
    aval = in_aval(ctx)
    if aval.dtype.kind != "f":
        return [x]
    return [ctx.unary(op_name, x, aval)]


# -- rules shared by elementwise primitives ---------------------------------------------------

def real_dtype_rule(aval, **_):
    return np.real(np.zeros((), aval.dtype)).dtype


def ufunc_impl(ufunc, *args, **_):
    with np.errstate(all="ignore"):
        return np.asarray(ufunc(*args))


def elementwise(name: str, ufuncs, lowering, *, impl=None, dtype_rule=same_dtype_rule,
                weak_rule=None, doc: str = "", **derivatives) -> Primitive:
    """Register an elementwise primitive: operands of one shape; `ufuncs` (one or a tuple) are
    the NumPy ufuncs it is (the NumPy layer dispatches them to it), the first its reference
    implementation unless `impl` is given. `derivatives`: its rules of differentiation
    (`jvp=`, `transpose=`, `linear=`, `differentiable=`; see `record`). They share one
    batching rule."""
    ufuncs = ufuncs if isinstance(ufuncs, tuple) else (ufuncs,) if ufuncs is not None else ()
    impl = impl or partial(ufunc_impl, ufuncs[0])
    return register(Primitive(name, same_shape_rule, dtype_rule, impl, lowering,
                              weak_type_rule=weak_rule, doc=doc, ufuncs=ufuncs,
                              batch=leading_batch, **derivatives))


def single_op(op_name: str):
    """The lowering of a primitive that is one StableHLO op."""
    return partial(single_op_lowering, op_name)


def predicate(name: str, ufunc, lowering) -> Primitive:
    """A test of each element (isnan, signbit): a bool result, never weak, no derivative."""
    return elementwise(name, ufunc, lowering, dtype_rule=bool_dtype_rule, weak_rule=never_weak,
                       differentiable=False)


def comparison(name: str, ufunc, direction: str) -> Primitive:
    return predicate(name, ufunc, partial(compare_lowering, direction))


def logical(name: str, ufunc, lowering) -> Primitive:
    return elementwise(name, ufunc, lowering, dtype_rule=bool_dtype_rule, differentiable=False)


def bitwise(name: str, ufunc, lowering) -> Primitive:
    """An operation on the bits of integers (and bools): no derivative."""
    return elementwise(name, ufunc, lowering, differentiable=False)


def _shift_right_lowering(ctx, x, y, **_):
    op = "stablehlo.shift_right_arithmetic" if in_aval(ctx).dtype.kind == "i" else \
        "stablehlo.shift_right_logical"
    return [ctx.binary(op, x, y, in_aval(ctx))]


def _make_complex_impl(re, im, **_):
    """complex(re, im) exactly (re + 1j*im would make 0 + 1j*inf a NaN)."""
    out = np.empty(np.shape(re), np.result_type(re, np.complex64))
    out.real, out.imag = re, im
    return out


def _make_complex_dtype(re, im, **_):
    return np.result_type(same_dtype_rule(re, im), np.complex64)


def convert_dtype_rule(aval, *, new_dtype, weak_type=False):
    return np.dtype(new_dtype)


def convert_weak_rule(aval, *, new_dtype, weak_type=False):
    return weak_type


def _convert_impl(x, *, new_dtype, weak_type=False):
    with np.errstate(all="ignore"):
        return np.asarray(x).astype(new_dtype)


def select_shape_rule(pred, on_true, on_false, **_):
    return same_shape_rule(pred, on_true, on_false)


def select_dtype_rule(pred, on_true, on_false, **_):
    if pred.dtype != np.bool_:
        raise TypeError(f"select needs a bool predicate, got {pred.dtype}")
    return same_dtype_rule(on_true, on_false)


def select_weak_rule(pred, on_true, on_false, **_):
    return on_true.weak_type and on_false.weak_type




# -- the primitives ---------------------------------------------------------------------------

add_p = elementwise("add", np.add, add_lowering, **LINEAR,
                    transpose=add_transpose)
subtract_p = elementwise("subtract", np.subtract, subtract_lowering, **LINEAR,
                         transpose=subtract_transpose)
multiply_p = elementwise("multiply", np.multiply, single_op("stablehlo.multiply"),
                         jvp=partials(lambda ctx, t, out, x, y: ctx.mul(t, y),
                                      lambda ctx, t, out, x, y: ctx.mul(x, t)),
                         linear=True, transpose=multiply_transpose)
negative_p = elementwise("negative", np.negative, single_op("stablehlo.negate"), **LINEAR,
                         transpose=negative_transpose)
abs_p = elementwise("abs", (np.absolute, np.fabs), abs_lowering, dtype_rule=real_dtype_rule,
                    jvp=partials(abs_partial))
sign_p = elementwise("sign", np.sign, sign_lowering, jvp=zero_jvp)
copysign_p = elementwise("copysign", np.copysign, copysign_lowering,
                         jvp=partials(copysign_partial, None))
maximum_p = elementwise("maximum", np.maximum, partial(extremum_lowering, "max", False),
                        jvp=extremum_jvp())
minimum_p = elementwise("minimum", np.minimum, partial(extremum_lowering, "min", False),
                        jvp=extremum_jvp())
fmax_p = elementwise("fmax", np.fmax, partial(extremum_lowering, "max", True), jvp=extremum_jvp())
fmin_p = elementwise("fmin", np.fmin, partial(extremum_lowering, "min", True), jvp=extremum_jvp())
rint_p = elementwise("rint", np.rint, round_lowering, jvp=zero_jvp)
floor_p = elementwise("floor", np.floor, partial(floor_ceil_lowering, "stablehlo.floor"),
                      jvp=zero_jvp)
ceil_p = elementwise("ceil", np.ceil, partial(floor_ceil_lowering, "stablehlo.ceil"),
                     jvp=zero_jvp)

bitwise_and_p = bitwise("bitwise_and", np.bitwise_and, single_op("stablehlo.and"))
bitwise_or_p = bitwise("bitwise_or", np.bitwise_or, single_op("stablehlo.or"))
bitwise_xor_p = bitwise("bitwise_xor", np.bitwise_xor, single_op("stablehlo.xor"))
invert_p = bitwise("invert", np.invert, single_op("stablehlo.not"))
left_shift_p = bitwise("left_shift", np.left_shift, single_op("stablehlo.shift_left"))
right_shift_p = bitwise("right_shift", np.right_shift, _shift_right_lowering)

equal_p = comparison("equal", np.equal, "EQ")
not_equal_p = comparison("not_equal", np.not_equal, "NE")
less_p = comparison("less", np.less, "LT")
less_equal_p = comparison("less_equal", np.less_equal, "LE")
greater_p = comparison("greater", np.greater, "GT")
greater_equal_p = comparison("greater_equal", np.greater_equal, "GE")

logical_and_p = logical("logical_and", np.logical_and, partial(logical_lowering, "stablehlo.and"))
logical_or_p = logical("logical_or", np.logical_or, partial(logical_lowering, "stablehlo.or"))
logical_xor_p = logical("logical_xor", np.logical_xor, partial(logical_lowering, "stablehlo.xor"))
logical_not_p = logical("logical_not", np.logical_not, logical_not_lowering)

isfinite_p = predicate("isfinite", np.isfinite, isfinite_lowering)
isnan_p = predicate("isnan", np.isnan, isnan_lowering)
isinf_p = predicate("isinf", np.isinf, isinf_lowering)
signbit_p = predicate("signbit", np.signbit, signbit_lowering)

real_p = elementwise("real", None, partial(complex_part_lowering, "stablehlo.real"),
                     impl=partial(ufunc_impl, np.real), dtype_rule=real_dtype_rule, **LINEAR,
                     transpose=real_transpose)
imag_p = elementwise("imag", None, partial(complex_part_lowering, "stablehlo.imag"),
                     impl=partial(ufunc_impl, np.imag), dtype_rule=real_dtype_rule, **LINEAR,
                     transpose=imag_transpose)
conjugate_p = elementwise("conjugate", np.conjugate, conjugate_lowering, **LINEAR,
                          transpose=conjugate_transpose)
complex_p = elementwise("complex", None, single_op("stablehlo.complex"),
                        impl=_make_complex_impl, dtype_rule=_make_complex_dtype,
                        doc="re + i im, exactly", **LINEAR, transpose=complex_transpose)

select_p = register(Primitive(
    "select", select_shape_rule, select_dtype_rule, lambda pred, a, b, **_: np.where(pred, a, b),
    select_lowering, weak_type_rule=select_weak_rule, doc="np.where on one shape and dtype",
    jvp=linear_in(1, 2), linear=True, transpose=select_transpose, batch=leading_batch))
convert_element_type_p = register(Primitive(
    "convert_element_type", same_shape_rule, convert_dtype_rule, _convert_impl, convert_lowering,
    weak_type_rule=convert_weak_rule, doc="astype", jvp=convert_jvp, linear=True,
    transpose=convert_transpose, batch=leading_batch))
