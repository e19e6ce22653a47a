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
    return [ctx.binary("stablehlo.divide", x, y, _aval(ctx))]


def fmax_lowering(op_name: str, ctx, x, y, **_):
    aval = _aval(ctx)
    both = ctx.binary(op_name, x, y, aval)
    if not _is_float(aval):
        return [both]
    take_y = _isnan(ctx, x, aval)
    take_x = _isnan(ctx, y, aval)
    return [_select(ctx, take_y, y, _select(ctx, take_x, x, both, aval), aval)]


def compare_lowering(direction: str, ctx, x, y, **_):
    return [_compare(ctx, direction, x, y, _aval(ctx))]


def logical_lowering(op_name: str, ctx, x, y, **_):
    return [ctx.binary(op_name, x, y, _aval(ctx))]


def logical_not_lowering(ctx, x, **_):
    return [ctx.unary("stablehlo.not", x, _aval(ctx))]


def abs_lowering(ctx, x, **_):
    aval = _aval(ctx)
    if aval.dtype == np.bool_ or aval.dtype.kind == "u":
        return [x]
    return [ctx.unary("stablehlo.abs", x, aval, _out(ctx))]


def sign_lowering(ctx, x, **_):
    aval = _aval(ctx)
    if aval.dtype.kind == "u":
        zero = _zeros(ctx, aval)
        one = ctx.constant(np.ones((), aval.dtype), aval)
        return [_select(ctx, _compare(ctx, "EQ", x, zero, aval), zero, one, aval)]
    return [ctx.unary("stablehlo.sign", x, aval)]


def square_lowering(ctx, x, **_):
    return [ctx.binary("stablehlo.multiply", x, x, _aval(ctx))]


def reciprocal_lowering(ctx, x, **_):
    aval = _aval(ctx)
    one = ctx.constant(np.ones((), aval.dtype), aval)
    return [ctx.binary("stablehlo.divide", one, x, aval)]


def power_lowering(ctx, x, y, **_):
    return [ctx.binary("stablehlo.power", x, y, _aval(ctx))]


def hypot_lowering(ctx, x, y, **_):
    aval = _aval(ctx)
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
    return [_select(ctx, either_inf, inf, result, aval)]


def log_based_lowering(kind: str, ctx, x, **_):
    """Functions StableHLO lacks, written with its ops: arcsin, arccos, arcsinh, ..."""
    aval = _aval(ctx)
    one = ctx.constant(np.ones((), aval.dtype), aval)
    mul = partial(ctx.binary, "stablehlo.multiply", aval=aval)
    add = partial(ctx.binary, "stablehlo.add", aval=aval)
    sub = partial(ctx.binary, "stablehlo.subtract", aval=aval)
    sqrt = partial(ctx.unary, "stablehlo.sqrt", aval_in=aval)
    log = partial(ctx.unary, "stablehlo.log", aval_in=aval)
    exp = partial(ctx.unary, "stablehlo.exponential", aval_in=aval)
    half = ctx.constant(np.array(0.5, aval.dtype), aval)
    if kind == "arcsin":
        return [ctx.binary("stablehlo.atan2", x, sqrt(sub(one, mul(x, x))), aval)]
    if kind == "arccos":
        return [ctx.binary("stablehlo.atan2", sqrt(sub(one, mul(x, x))), x, aval)]
    if kind == "arctan":
        return [ctx.binary("stablehlo.atan2", x, one, aval)]
    if kind == "sinh":
        return [mul(half, sub(exp(x), exp(ctx.unary("stablehlo.negate", x, aval))))]
    if kind == "cosh":
        return [mul(half, add(exp(x), exp(ctx.unary("stablehlo.negate", x, aval))))]
    if kind == "arcsinh":
        return [log(add(x, sqrt(add(mul(x, x), one))))]
    if kind == "arccosh":
        return [log(add(x, sqrt(sub(mul(x, x), one))))]
    if kind == "arctanh":
        return [mul(half, log(ctx.binary("stablehlo.divide", add(one, x), sub(one, x), aval)))]
    if kind == "log2":
        return [ctx.binary("stablehlo.divide", log(x), ctx.constant(np.log(np.array(2.0, aval.dtype)), aval), aval)]
    if kind == "log10":
        return [ctx.binary("stablehlo.divide", log(x), ctx.constant(np.log(np.array(10.0, aval.dtype)), aval), aval)]
    if kind == "exp2":
        return [ctx.binary("stablehlo.power", ctx.constant(np.array(2.0, aval.dtype), aval), x, aval)]
    raise NotImplementedError(kind)


def complex_part_lowering(op_name: str, ctx, x, **_):
    aval = _aval(ctx)
    if aval.dtype.kind != "c":
        return [x] if op_name == "stablehlo.real" else [_zeros(ctx, _out(ctx))]
    return [ctx.unary(op_name, x, aval, _out(ctx))]


def conjugate_lowering(ctx, x, **_):
    aval = _aval(ctx)
    if aval.dtype.kind != "c":
        return [x]
    part = aval.update(dtype=np.real(np.zeros((), aval.dtype)).dtype)
    re = ctx.unary("stablehlo.real", x, aval, part)
    im = ctx.unary("stablehlo.negate", ctx.unary("stablehlo.imag", x, aval, part), part)
    return [ctx.op("stablehlo.complex", [re, im], [part, part], [aval])[0]]


def isfinite_lowering(ctx, x, **_):
    aval = _aval(ctx)
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
    if aval.dtype.kind != "f":
        return [ctx.constant(np.zeros((), bool), _out(ctx))]
    absval = ctx.unary("stablehlo.abs", x, aval)
    return [_compare(ctx, "EQ", absval, ctx.constant(np.array(np.inf, aval.dtype), aval), aval)]


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
    "exp": ("stablehlo.exponential", np.exp),
    "expm1": ("stablehlo.exponential_minus_one", np.expm1),
    "log": ("stablehlo.log", np.log),
    "log1p": ("stablehlo.log_plus_one", np.log1p),
    "sqrt": ("stablehlo.sqrt", np.sqrt),
    "cbrt": ("stablehlo.cbrt", np.cbrt),
    "sin": ("stablehlo.sine", np.sin),
    "cos": ("stablehlo.cosine", np.cos),
    "tan": ("stablehlo.tan", np.tan),
    "tanh": ("stablehlo.tanh", np.tanh),
    "invert": ("stablehlo.not", np.invert),
}

BINARY_SINGLE_OP = {
    "add": ("stablehlo.add", np.add),
    "subtract": ("stablehlo.subtract", np.subtract),
    "multiply": ("stablehlo.multiply", np.multiply),
    "maximum": ("stablehlo.maximum", np.maximum),
    "minimum": ("stablehlo.minimum", np.minimum),
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
_define("fmax", partial(_ufunc_impl, np.fmax), partial(fmax_lowering, "stablehlo.maximum"))
_define("fmin", partial(_ufunc_impl, np.fmin), partial(fmax_lowering, "stablehlo.minimum"))
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

for _name in ("arcsin", "arccos", "arctan", "sinh", "cosh", "arcsinh", "arccosh", "arctanh",
              "log2", "log10", "exp2"):
    _define(_name, partial(_ufunc_impl, getattr(np, _name)), partial(log_based_lowering, _name))


def _make_complex_impl(re, im, **_):
    return re + 1j * im if re.dtype == np.float64 else (re + np.complex64(1j) * im)


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
