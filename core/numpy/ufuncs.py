"""NumPy's ufuncs on tracers: NumPy's own loop (dtypes) picked, then the elementwise primitive
that is the ufunc (from the primitives' records), or a few ops for the ufuncs that are not one
primitive. Also `where`, `clip`, `out=` and the arithmetic operators of Tracer.
"""
from __future__ import annotations

import operator

import numpy as np

from ..primitives import select_p, ufunc_primitives
from ..tracing import DataDependentShapeError, Tracer, bind, current_trace
from .affine import interval, track
from .subclasses import refuse_subclasses
from .base import (WEAK_PYTHON_TYPE, as_kind, assign_into, broadcast_to, convert, convert_result,
                   copy_of,
                   dtype_of, elementwise, ensure_tracer, implements, is_weak,
                   refuse_raising_error_state, resolve_type, result_type, shape_of,
                   unsupported)

# The elementwise primitive each ufunc is, from the primitives' own records.
UFUNC_PRIMITIVES = ufunc_primitives()


def call_ufunc(ufunc: np.ufunc, *inputs, **kwargs):
    refuse_raising_error_state()
    refuse_subclasses(inputs)       # (a masked array's own operators would run in NumPy)
    out = kwargs.pop("out", None)
    dtype = kwargs.pop("dtype", None)
    where = kwargs.pop("where", True)
    casting = kwargs.pop("casting", "same_kind")
    kwargs.pop("order", None)
    if kwargs:
        raise unsupported(f"np.{ufunc.__name__}(..., {', '.join(kwargs)}=...)")
    if where is not True:
        raise unsupported(f"np.{ufunc.__name__}(..., where=...)", "use np.where(mask, f(x), x)")
    if ufunc.nout != 1:
        results = _multi_output_ufunc(ufunc, inputs)
        return results if out is None else _write_outs(ufunc, out, results, casting)
    target = out[0] if isinstance(out, tuple) else out
    if isinstance(target, Tracer):
        _check_out(ufunc, inputs, target, casting, dtype)
    result = _ufunc_value(ufunc, inputs, dtype)
    if out is not None:
        return assign_into(target, result, f"np.{ufunc.__name__}(..., out=...)")
    track(ufunc, inputs, result)
    return result


def _write_outs(ufunc, out, results, casting: str) -> tuple:
    """A multi-output ufunc's results written into out=(a, b); None leaves one out."""
    outs = out if isinstance(out, tuple) else (out,)
    if len(outs) != len(results):
        raise ValueError(f"The 'out' tuple must have exactly {len(results)} entries: one per "
                         "ufunc output")
    return tuple(result if target is None else assign_into(
        target, broadcast_to(result, target.shape), f"np.{ufunc.__name__}(..., out=...)",
        casting) for target, result in zip(outs, results, strict=True))


def _check_out(ufunc, inputs, target: Tracer, casting: str, dtype=None) -> None:
    """NumPy's own errors for out=target: a result shape that does not fit, or a result
    dtype that cannot be cast under `casting` (UFuncTypeError, as for `x *= 2.5` on ints)."""
    def text(s):
        return "(" + ",".join(map(str, s)) + ("," if len(s) == 1 else "") + ")"
    shapes = [shape_of(x) for x in inputs] + [target.shape]
    try:
        shape = np.broadcast_shapes(*shapes)
    except ValueError:
        raise ValueError("operands could not be broadcast together with shapes "
                         + " ".join(text(s) for s in shapes) + " ") from None
    if shape != target.shape:
        raise ValueError(f"non-broadcastable output operand with shape {text(target.shape)} "
                         f"doesn't match the broadcast shape {text(shape)}")
    samples = [WEAK_PYTHON_TYPE[dtype_of(x).kind](1) if is_weak(x) else np.ones((), dtype_of(x))
               for x in inputs]
    with np.errstate(all="ignore"):
        ufunc(*samples, out=np.ones((), target.dtype), casting=casting, dtype=dtype)


def _ufunc_value(ufunc, inputs, dtype=None):
    special = SPECIAL_UFUNCS.get(ufunc)
    if special is None:
        return primitive_ufunc(ufunc, inputs, dtype)
    in_dtypes, out_dtypes = numpy_loop(ufunc, inputs, dtype)   # NumPy's loop, or its error
    operands = [x if is_weak(x) else convert_result(x, d)
                for x, d in zip(inputs, in_dtypes, strict=True)]
    result = special(*operands)
    if result.dtype != out_dtypes[0]:
        result = as_kind(convert(result, out_dtypes[0]), result.kind)
    return ufunc_kind(result, inputs)


def ufunc_kind(result, inputs):
    """A ufunc's result: an array, a NumPy scalar when 0-d, a Python scalar from Python ones."""
    if result.ndim:
        return as_kind(result, "array")
    return as_kind(result, "python" if all(is_weak(x) for x in inputs) else "scalar")


def numpy_loop(ufunc, inputs, dtype=None):
    """(input dtypes, output dtypes) of the loop NumPy picks for these operands."""
    types = tuple(resolve_type(x) for x in inputs)
    if all(isinstance(t, type) for t in types):     # only Python scalars (NumPy says object
        types = tuple(np.dtype(t) for t in types)   # for int < int): their default dtypes
    outs = (None,) * ufunc.nout if dtype is None else (np.dtype(dtype),) * ufunc.nout
    try:
        loop = ufunc.resolve_dtypes(types + outs, casting="same_kind" if dtype is None
                                    else "unsafe")
    except (TypeError, np.exceptions.DTypePromotionError) as err:
        raise TypeError(f"np.{ufunc.__name__} does not support {types}: {err}") from None
    return loop[:ufunc.nin], loop[ufunc.nin:]


def primitive_ufunc(ufunc, inputs, dtype=None):
    """A ufunc that is one elementwise primitive, on the operands of NumPy's loop."""
    prim = UFUNC_PRIMITIVES.get(ufunc)
    if prim is None:
        raise unsupported(f"np.{ufunc.__name__}")
    in_dtypes, (out_dtype,) = numpy_loop(ufunc, inputs, dtype)
    operands = [convert(x, d) for x, d in zip(inputs, in_dtypes, strict=True)]
    result = elementwise(prim, *operands, weak=all(is_weak(x) for x in inputs))
    if result.dtype != out_dtype:
        result = as_kind(convert(result, out_dtype), result.kind)
    return result


def _multi_output_ufunc(ufunc, inputs):
    if ufunc is np.divmod:
        return _ufunc_value(np.floor_divide, inputs), _ufunc_value(np.remainder, inputs)
    if ufunc is np.modf:
        (in_dtype,), _ = numpy_loop(ufunc, inputs)
        x = convert_result(ensure_tracer(inputs[0]), in_dtype)
        whole = call_ufunc(np.trunc, x)
        fraction = np_where(call_ufunc(np.isinf, x), 0, call_ufunc(np.subtract, x, whole))
        fraction = call_ufunc(np.copysign, fraction, x)   # modf(-inf) = (-0, -inf), as C's
        return ufunc_kind(fraction, inputs), ufunc_kind(whole, inputs)
    raise unsupported(f"np.{ufunc.__name__}")


def _positive(x):
    """A copy (NumPy's loop copies: np.positive(-0.0) is -0.0, where -0.0 + 0 is +0.0)."""
    return copy_of(ensure_tracer(x)) if dtype_of(x) != np.bool_ else x


def _trunc(x):
    if dtype_of(x).kind in "biu":
        return x
    return call_ufunc(np.copysign, call_ufunc(np.floor, call_ufunc(np.abs, x)), x)


def _scaled(factor):
    def apply(x):
        return call_ufunc(np.multiply, x, factor)
    return apply


def _power(x, y):
    if not isinstance(y, Tracer) and np.ndim(y) == 0 and not isinstance(y, np.ndarray) \
            and y == 2 and dtype_of(x).kind in "fc" and result_type(x, y) == dtype_of(x):
        return _ufunc_value(np.multiply, (x, x))
    dtype = result_type(x, y)
    is_array = isinstance(x, np.ndarray) or isinstance(x, Tracer) and x.kind == "array"
    if not is_array or dtype not in _FAST_POWERS_DTYPES or int(np.prod(shape_of(y))) != 1:
        return primitive_ufunc(np.power, (x, y))
    return _fast_power(convert(x, dtype), y, np.broadcast_shapes(shape_of(x), shape_of(y)))


# NumPy's float power loops, when the exponent is one number (its inner-loop stride
# is 0), computes these exponents with other operations than C's pow (POWER_FAST_PATH in
# loops_umath_fp.dispatch.c.src): (-0.0) ** 0.5 is -0.0, not pow's +0.0, and sqrt is
# correctly rounded where pow is not. A NumPy scalar's own `**` is C's pow.
_FAST_POWERS_DTYPES = (np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64))
_FAST_POWERS = ((2.0, lambda b: call_ufunc(np.multiply, b, b)),
                (0.5, lambda b: call_ufunc(np.sqrt, b)),
                (1.0, lambda b: call_ufunc(np.positive, b)),
                (-1.0, lambda b: call_ufunc(np.divide, 1.0, b)),
                (0.0, lambda b: np_where(True, 1.0, b)))


def _fast_power(base, y, shape):
    if not isinstance(y, Tracer):
        value = float(np.asarray(y).reshape(()))
        fast = next((op for v, op in _FAST_POWERS if v == value), None)
        result = primitive_ufunc(np.power, (base, y)) if fast is None else fast(base)
        return broadcast_to(ensure_tracer(result), shape)
    result = primitive_ufunc(np.power, (base, y))
    for value, op in _FAST_POWERS:
        result = np_where(call_ufunc(np.equal, y, value), op(base), result)
    return result


def _float_power(x, y):
    dtype = np.result_type(result_type(x, y), np.float64)
    return call_ufunc(np.power, convert_result(ensure_tracer(x), dtype), convert_result(
        ensure_tracer(y), dtype))


def _logaddexp(x, y):
    big = call_ufunc(np.maximum, x, y)
    diff = call_ufunc(np.negative, call_ufunc(np.abs, call_ufunc(np.subtract, x, y)))
    return call_ufunc(np.add, big, call_ufunc(np.log1p, call_ufunc(np.exp, diff)))


def _heaviside(x1, x2):
    """NumPy's npy_heaviside on the loop's dtype: 0 below zero, 1 above, x2 at zero (either
    sign), NaN for NaN."""
    dtype = result_type(x1, x2)
    x, h0 = ensure_tracer(convert(x1, dtype)), convert(x2, dtype)
    step = np_where(call_ufunc(np.less, x, 0), 0, np_where(call_ufunc(np.greater, x, 0), 1, x))
    return np_where(call_ufunc(np.equal, x, 0), h0, step)


SPECIAL_UFUNCS = {
    np.positive: _positive,
    np.trunc: _trunc,
    np.fix: _trunc,
    np.deg2rad: _scaled(np.pi / 180), np.radians: _scaled(np.pi / 180),
    np.rad2deg: _scaled(180 / np.pi), np.degrees: _scaled(180 / np.pi),
    np.power: _power,
    np.float_power: _float_power,
    np.logaddexp: _logaddexp,
    np.heaviside: _heaviside,
}


def no_python_scalar(x):
    return as_kind(x, "scalar") if isinstance(x, Tracer) and x.kind == "python" else x


@implements(np.where)
def np_where(condition, x=None, y=None):
    if x is None and y is None:
        raise unsupported("np.where(condition) with one argument (its result has a data-"
                          "dependent shape)", "use np.where(condition, x, y)")
    dtype = result_type(x, y)
    shape = np.broadcast_shapes(shape_of(condition), shape_of(x), shape_of(y))
    pred = broadcast_to(ensure_tracer(convert(condition, bool)), shape)
    on_true = broadcast_to(ensure_tracer(convert(x, dtype)), shape)
    on_false = broadcast_to(ensure_tracer(convert(y, dtype)), shape)
    result = bind(select_p, pred, on_true, on_false)
    return as_kind(result, "array")


@implements(np.clip)
def np_clip(a, a_min=None, a_max=None, out=None, **kwargs):
    a_min = kwargs.pop("min", a_min)
    a_max = kwargs.pop("max", a_max)
    if kwargs:
        raise unsupported(f"np.clip(..., {', '.join(kwargs)}=...)")
    result = a
    if a_min is not None:
        result = call_ufunc(np.maximum, result, a_min)
    if a_max is not None:
        result = call_ufunc(np.minimum, result, a_max)
    if out is not None:
        return assign_into(out, result, "np.clip(..., out=...)")
    return result


def inplace_binary(ufunc):
    """`x op= y`: into x when x is an array; a NumPy or Python scalar is rebound, as in NumPy."""
    def method(self, other):
        if isinstance(other, (list, tuple)):
            other = np.asarray(other)
        if not _operand_ok(other):
            return NotImplemented
        if self.kind != "array":
            return call_ufunc(ufunc, self, other)
        return call_ufunc(ufunc, self, other, out=self)
    return method


def binary_operator(ufunc, reflected=False):
    def method(self, other):
        if isinstance(other, (list, tuple)):
            other = np.asarray(other)
        if not _operand_ok(other):
            return NotImplemented
        operands = (other, self) if reflected else (self, other)
        if all(_is_python(x) for x in operands):
            return _python_arithmetic(ufunc, *operands)
        if ufunc is np.power and not reflected and _squares(self, other):
            return call_ufunc(np.square, self)
        return call_ufunc(ufunc, *operands)
    return method


# Python's operators on bools keep bools for these; any other arithmetic counts them as ints.
_BOOL_KEEPING = frozenset({np.bitwise_and, np.bitwise_or, np.bitwise_xor, np.less,
                           np.less_equal, np.greater, np.greater_equal, np.equal, np.not_equal})


def _squares(base, exponent) -> bool:
    """NumPy computes `array ** 2` as np.square(array), whose loop for bool is int8 (where
    np.power(array, 2) gives int64): only the dtype of a bool array's square differs."""
    return base.kind == "array" and base.dtype == np.bool_ and type(exponent) is int \
        and exponent == 2


def _is_python(x) -> bool:
    """A Python scalar, a bool included (traced or not)."""
    if isinstance(x, Tracer):
        return x.kind == "python"
    return isinstance(x, (bool, int, float, complex)) and not isinstance(x, np.generic)


def _python_arithmetic(ufunc, a, b):
    """`a op b` on Python scalars (one traced) as Python computes it: a Python scalar, with
    bools counted as ints in arithmetic (`True + True == 2`)."""
    if ufunc not in _BOOL_KEEPING:
        a, b = (_bool_as_int(x) for x in (a, b))
    if ufunc in _PYTHON_DIVISIONS:
        _require_nonzero(ufunc, a, b)
    if ufunc is np.power:
        _require_a_real_power(a, b)
    result = as_kind(call_ufunc(ufunc, a, b), "python")
    if ufunc in _UNBOUNDED and result.dtype.kind in "iu":
        _require_int64(ufunc, a, b, result)
    return result


# Python int arithmetic that may pass int64, where Python's ints grow: `3 ** (k * 10)`.
_UNBOUNDED = {np.add, np.subtract, np.multiply, np.power, np.left_shift, np.right_shift}
PAST_INT64 = ("a Python int past int64 (Python's ints have no bound, the compiled program's "
              "do): psc_jit runs the cell as plain Python")


def _require_int64(ufunc, a, b, result) -> None:
    """The run checks that a Python int result is the exact one: a shift's count is not
    negative (Python's ValueError), and the result fits in int64, else the cell runs as plain
    Python. Sums, products and powers are screened in float64 (2**62 and more counts as
    past: never a wrong int, at worst a plain run near the bound); a left shift exactly.
    Nothing is checked where the values are known to fit (`i + 3` of a loop's index)."""
    known, count = interval(result), interval(b)
    if known is not None and -2 ** 62 < known[0] and known[1] < 2 ** 62 and (
            ufunc not in (np.left_shift, np.right_shift) or count is not None and count[0] >= 0):
        return
    trace = current_trace()
    if ufunc in (np.left_shift, np.right_shift):
        counted = call_ufunc(np.greater_equal, b, 0)
        trace.require(counted, convert(counted, np.int64), "negative shift count", ValueError)
        if ufunc is np.right_shift:
            return
        fits = call_ufunc(np.logical_and, call_ufunc(np.less, b, 63), call_ufunc(
            np.equal, call_ufunc(np.right_shift, result, call_ufunc(np.minimum, b, 63)), a))
    else:
        estimate = call_ufunc(ufunc, convert(ensure_tracer(a), np.float64),
                              convert(ensure_tracer(b), np.float64))
        fits = call_ufunc(np.less, call_ufunc(np.absolute, estimate), 2.0 ** 62)
    trace.require(fits, convert(fits, np.int64), PAST_INT64, DataDependentShapeError)


_PYTHON_DIVISIONS = {np.divide: operator.truediv, np.floor_divide: operator.floordiv,
                     np.remainder: operator.mod}


def _require_nonzero(ufunc, a, b) -> None:
    """Python raises ZeroDivisionError where NumPy gives inf or nan: checked at run time,
    with the message Python gives for these operand types."""
    if not isinstance(b, Tracer) and b != 0:
        return
    try:
        _PYTHON_DIVISIONS[ufunc](_python_sample(a), _python_sample(b) * 0)
    except ZeroDivisionError as err:
        message = str(err)
    else:
        return
    nonzero = call_ufunc(np.not_equal, b, 0)
    current_trace().require(nonzero, convert(nonzero, np.int64),
                            message.replace("{", "{{").replace("}", "}}"), ZeroDivisionError)


def _require_a_real_power(base, exponent) -> None:
    """Python's `base ** exponent` of Python scalars is complex for a negative base and a
    fractional exponent, and raises for zero to a negative power (NumPy: nan, inf). The
    first runs the cell as plain Python (its type is the data's), the second raises."""
    if not any(isinstance(x, Tracer) and x.dtype.kind == "f" or isinstance(x, float)
               for x in (base, exponent)):
        return
    negative = call_ufunc(np.less, base, 0)
    whole = call_ufunc(np.equal, exponent, call_ufunc(np.floor, exponent))
    real = call_ufunc(np.logical_or, call_ufunc(np.logical_not, negative), whole)
    current_trace().require(real, convert(real, np.int64),
                            "a negative Python float to a fractional power is a complex "
                            "number; the compiled program has a float", DataDependentShapeError)
    zero_to_negative = call_ufunc(np.logical_and, call_ufunc(np.equal, base, 0),
                                  call_ufunc(np.less, exponent, 0))
    current_trace().require(call_ufunc(np.logical_not, zero_to_negative),
                            convert(zero_to_negative, np.int64),
                            "0.0 cannot be raised to a negative power", ZeroDivisionError)


def _python_sample(x):
    """A Python scalar of x's Python type, equal to one."""
    if isinstance(x, Tracer):
        return WEAK_PYTHON_TYPE[x.dtype.kind](1)
    return type(x)(1)



def _bool_as_int(x):
    if isinstance(x, Tracer):
        return convert(x, np.int64, weak=True).with_kind("python") if x.dtype == np.bool_ else x
    return int(x) if isinstance(x, bool) else x


def _operand_ok(x) -> bool:
    return isinstance(x, (Tracer, np.ndarray, np.generic, bool, int, float, complex))


# The ufunc behind each Python operator (`__add__` -> np.add), for Tracer and MaskedSelection.
OPERATOR_UFUNCS = {
    "add": np.add, "sub": np.subtract, "mul": np.multiply, "truediv": np.divide,
    "floordiv": np.floor_divide, "mod": np.remainder, "pow": np.power, "and": np.bitwise_and,
    "or": np.bitwise_or, "xor": np.bitwise_xor, "lshift": np.left_shift,
    "rshift": np.right_shift,
}
COMPARISON_UFUNCS = {"lt": np.less, "le": np.less_equal, "gt": np.greater, "ge": np.greater_equal,
                     "eq": np.equal, "ne": np.not_equal}
