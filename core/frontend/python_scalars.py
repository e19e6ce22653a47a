"""Python's own numeric functions on traced scalars: `float(x)`, `int(x)`, `max(a, b)`,
`min(a, b)` and the `math` module's functions, where x is a traced 0-d value (a sum, a norm,
an element).

Python calls `x.__float__()` for these, which must return a real float: a traced value cannot
go through. So the rolling pass routes every call of these names through `python_scalar`
(see `creation_calls`), which decides at trace time: when the callee is the builtin or math
function itself and an operand is a traced 0-d real number, the call becomes traced NumPy
with Python's semantics; anything else is called as written.

- The result is a traced *Python* number (kind "python"): a float, an int or a bool, as the
  plain cell would have, and weak in NumPy's promotion as a Python number is.
- Python's errors are raised by the run, before anything is written back: math.sqrt(-1.0) and
  int(nan) raise ValueError, math.exp(1000.0) OverflowError, with the running Python's own
  messages. An int too large for int64 (Python's are unbounded) makes the cell run as plain
  Python (`DataDependentShapeError`).
- `max(a, b, ...)` (or of one list, tuple or generator of them) returns one of its
  arguments, whose type may depend on the values
  (`max(x.max(), 0.5)` is a NumPy float64 or a Python float): the program assumes the type of
  the first traced argument, and the run falls back to plain Python when another one wins.
"""
from __future__ import annotations

import builtins
import math
import types

import numpy as np

from ..numpy.base import as_kind, convert, ensure_tracer
from ..numpy.checks import python_error, python_int, require
from ..numpy.conversion import python_number
from ..numpy.ufuncs import call_ufunc, np_where
from ..tracing import DataDependentShapeError, Tracer, current_trace
from ..control.carry import to_pred

F64, I64 = np.dtype(np.float64), np.dtype(np.int64)


def python_scalar(fn, *args, **kwargs):
    """A call of float, int, max, min or a math function in rewritten code (see module doc)."""
    if fn is builtins.bool and len(args) == 1 and not kwargs and isinstance(args[0], Tracer) \
            and current_trace() is not None:
        return python_number(to_pred(args[0]))          # (size-1 arrays too, as NumPy's)
    if (fn is builtins.max or fn is builtins.min) and len(args) == 1 and not kwargs and \
            isinstance(args[0], (list, tuple, types.GeneratorType)) and \
            current_trace() is not None:               # max([a, b]), min(v for v in ...)
        items = tuple(args[0])
        if len(items) >= 2 and any(map(_traced_real, items)) and all(map(_real, items)):
            return _extreme(fn, items)
        return fn(items)
    if current_trace() is not None and not kwargs and any(_traced_real(a) for a in args):
        if fn is builtins.float and len(args) == 1:
            return python_number(convert(args[0], F64))
        if fn is builtins.int and len(args) == 1:
            return _to_int(args[0])
        if (fn is builtins.max or fn is builtins.min) and len(args) >= 2 and \
                all(map(_real, args)):
            return _extreme(fn, args)
        rule = MATH.get(fn) if isinstance(fn, types.BuiltinFunctionType) else None
        if rule is not None and len(args) == rule.arity and all(map(_real, args)):
            return rule(*args)
    return fn(*args, **kwargs)


def _traced_real(x) -> bool:
    return isinstance(x, Tracer) and x.ndim == 0 and x.dtype.kind in "biuf"


def _real(x) -> bool:
    return _traced_real(x) or isinstance(x, (int, float, np.integer, np.floating)) and \
        not isinstance(x, (bool, np.bool_))


def _to_int(x) -> Tracer:
    """int(x): toward zero, Python's errors for NaN and infinity (checks.python_int)."""
    return python_number(python_int(ensure_tracer(x)))


def _type_of(x) -> tuple[bool, np.dtype]:
    """(is it a Python number, its dtype): values of one type compare and return alike."""
    if isinstance(x, Tracer):
        return x.kind == "python", x.dtype
    if isinstance(x, np.generic):
        return False, x.dtype
    return True, np.dtype(np.int64 if isinstance(x, int) else np.float64)


def _extreme(fn, args) -> Tracer:
    """max/min: the first argument, replaced by each later one that compares greater (less):
    Python's order, NaN and signed zeros included."""
    compare = np.greater if fn is builtins.max else np.less
    types = [_type_of(a) for a in args]
    assumed = next(t for a, t in zip(args, types, strict=True) if isinstance(a, Tracer))
    result, winner = args[0], ensure_tracer(np.int64(0))
    for k, x in enumerate(args[1:], start=1):
        replaces = call_ufunc(compare, x, result)
        result = np_where(replaces, x, result)
        winner = np_where(replaces, np.int64(k), winner)
    others = [k for k, t in enumerate(types) if t != assumed]
    if others:
        ok = call_ufunc(np.not_equal, winner, np.int64(others[0]))
        for k in others[1:]:
            ok = call_ufunc(np.logical_and, ok, call_ufunc(np.not_equal, winner, np.int64(k)))
        require(ok, f"{fn.__name__}() returned an argument of another type than the compiled "
                 f"program's: psc_jit runs the cell as plain Python", DataDependentShapeError)
    result = convert(result, assumed[1])
    return python_number(result) if assumed[0] else as_kind(result, "scalar")


class _MathRule:
    """A math function as a NumPy ufunc on floats, with the inputs Python refuses."""

    def __init__(self, fn, ufunc, arity=1, refused=None, overflows=False, result="float"):
        self.fn, self.ufunc, self.arity, self.refused = fn, ufunc, arity, refused
        self.overflows, self.result = overflows, result

    def __call__(self, *args) -> Tracer:
        xs = [convert(ensure_tracer(a), F64) for a in args]
        if self.refused is not None:
            bad_input, sample = self.refused
            require(call_ufunc(np.logical_not, bad_input(*xs)),
                     *python_error(self.fn, *sample))
        out = call_ufunc(self.ufunc, *xs)
        if self.overflows:
            overflow = call_ufunc(np.isinf, out)
            for x in xs:
                overflow = call_ufunc(np.logical_and, overflow, call_ufunc(np.isfinite, x))
            require(call_ufunc(np.logical_not, overflow),
                     *python_error(self.fn, 1e308))
        if self.result == "int":
            return _to_int(out)
        return python_number(out if self.result == "float" else convert(out, np.bool_))


def _rule(fn, ufunc, **options) -> tuple:
    return fn, _MathRule(fn, ufunc, **options)


def _less(bound):
    return lambda x: call_ufunc(np.less, x, bound)


def _at_most(bound):
    return lambda x: call_ufunc(np.less_equal, x, bound)


def _outside(bound, closed):
    op = np.greater_equal if closed else np.greater
    return lambda x: call_ufunc(op, call_ufunc(np.abs, x), bound)


MATH = dict([
    _rule(math.sqrt, np.sqrt, refused=(_less(0.0), (-1.0,))),
    _rule(math.exp, np.exp, overflows=True),
    _rule(math.expm1, np.expm1, overflows=True),
    _rule(math.log, np.log, refused=(_at_most(0.0), (0.0,))),
    _rule(math.log10, np.log10, refused=(_at_most(0.0), (0.0,))),
    _rule(math.log2, np.log2, refused=(_at_most(0.0), (0.0,))),
    _rule(math.log1p, np.log1p, refused=(_at_most(-1.0), (-1.0,))),
    _rule(math.sin, np.sin, refused=(lambda x: call_ufunc(np.isinf, x), (math.inf,))),
    _rule(math.cos, np.cos, refused=(lambda x: call_ufunc(np.isinf, x), (math.inf,))),
    _rule(math.tan, np.tan, refused=(lambda x: call_ufunc(np.isinf, x), (math.inf,))),
    _rule(math.asin, np.arcsin, refused=(_outside(1.0, False), (2.0,))),
    _rule(math.acos, np.arccos, refused=(_outside(1.0, False), (2.0,))),
    _rule(math.atan, np.arctan),
    _rule(math.atan2, np.arctan2, arity=2),
    _rule(math.sinh, np.sinh, overflows=True),
    _rule(math.cosh, np.cosh, overflows=True),
    _rule(math.tanh, np.tanh),
    _rule(math.asinh, np.arcsinh),
    _rule(math.acosh, np.arccosh, refused=(_less(1.0), (0.0,))),
    _rule(math.atanh, np.arctanh, refused=(_outside(1.0, True), (1.0,))),
    _rule(math.hypot, np.hypot, arity=2),     # (inf past the largest float: no error)
    _rule(math.copysign, np.copysign, arity=2),
    _rule(math.fabs, np.fabs),
    _rule(math.degrees, np.degrees),
    _rule(math.radians, np.radians),
    _rule(math.floor, np.floor, result="int"),
    _rule(math.ceil, np.ceil, result="int"),
    _rule(math.trunc, np.trunc, result="int"),
    _rule(math.isnan, np.isnan, result="bool"),
    _rule(math.isinf, np.isinf, result="bool"),
    _rule(math.isfinite, np.isfinite, result="bool"),
])
# (math.floor of NaN or infinity raises int()'s errors, which `_to_int` checks)
