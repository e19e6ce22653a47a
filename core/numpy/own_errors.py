"""NumPy's own errors for a call the NumPy layer refuses.

Traced code can catch what a NumPy call raises (`try: c = a @ k` / `except ValueError as e:
msg = str(e)`), so an error raised while tracing must be the one NumPy raises for the same
call: its type and its text. Such an error depends only on what a trace knows (shapes,
dtypes, the static arguments): NumPy, asked the same call on stand-ins of the traced values
(zero-strided arrays of their shapes and dtypes, which take no memory), raises it.

Every operator, method and protocol entry of Tracer goes through `numpys_errors`: when the
layer raises a ValueError, TypeError or IndexError, the call is made again on stand-ins and
NumPy's error is raised instead. When NumPy takes the call, the layer refused something NumPy
does: that is psc_jit's limit, not the user's error, and it is raised as one (UnsupportedError,
so the cell runs as plain Python). The outermost call the user made wins: an error of a call
the layer makes inside another is replaced again by the outer call's.
"""
from __future__ import annotations

import contextlib
import functools
import operator
import sys
import warnings
from typing import Callable

import numpy as np

from ..tracing import Tracer, UnsupportedError, caller_source
from .base import WEAK_PYTHON_TYPE
from .shape import read_only

CATCHABLE = (ValueError, TypeError, IndexError)
_NO_STAND_IN = object()


def numpys_errors(fn: Callable, replay: Callable, operator_name: str | None = None) -> Callable:
    """fn (called with tracers among its arguments) raising NumPy's own error where it raises
    one of CATCHABLE: `replay(*args, **kwargs)`, called with stand-ins, makes the same call on
    NumPy's arrays. For an operator (`operator_name`, '__add__'), where fn declines the
    operand (NotImplemented), NumPy's array method is asked too: it may raise (`a + 's'`)."""
    @functools.wraps(fn)
    def checked(*args, **kwargs):
        try:
            result = fn(*args, **kwargs)
        except CATCHABLE as err:
            if _from_the_layer(sys._getframe(1)):
                raise
            raise numpys_own(err, replay, args, kwargs) from None
        if result is NotImplemented and operator_name is not None:
            _numpy_declines_too(operator_name, args)
        return result
    return checked


def _numpy_declines_too(name: str, args) -> None:
    """Raise what NumPy's array operator raises for these operands (`a + 's'`); return where
    it declines them too, or where they have no stand-ins (Python then asks the other
    operand). Operands it takes the layer refused: psc_jit's limit."""
    stand_ins = stand_in_of(args)
    if stand_ins is _NO_STAND_IN:
        return
    self, *rest = stand_ins
    try:
        with _quiet():
            result = getattr(self, name)(*rest)
    except Exception as numpys:   # noqa: BLE001 (whatever NumPy raises is the answer)
        raise numpys.with_traceback(None) from None
    if result is not NotImplemented:
        raise UnsupportedError(f"psc_jit's NumPy layer refused operands of {name} that NumPy "
                               "takes", caller_source(), "run it outside the traced code")


def _from_the_layer(frame) -> bool:
    """Whether the call was made by the NumPy layer itself (an inner call: the user's call
    around it answers with NumPy's error for what the user wrote)."""
    return frame.f_globals.get("__name__", "").startswith(_LAYER)


_LAYER = __name__.rpartition(".")[0] + "."


def numpys_first(fn: Callable, replay: Callable) -> Callable:
    """fn converting a tracer to a Python value (bool, int, float, index): where NumPy refuses
    that for every value of the tracer's shape and dtype (`float` of a 2-d array), NumPy's
    error; else fn (which knows the value, or says that it is needed)."""
    @functools.wraps(fn)
    def checked(self, *args):
        stand_in = stand_in_of(self)
        try:
            with _quiet():
                replay(stand_in, *args)
        except CATCHABLE as err:
            raise err.with_traceback(None) from None
        return fn(self, *args)
    return checked


def numpys_own(err: Exception, replay: Callable, args, kwargs) -> Exception:
    """What to raise for the layer's err: NumPy's error for the call on stand-ins; err itself
    when the call cannot be made on stand-ins; UnsupportedError when NumPy takes it."""
    stand_ins = stand_in_of((args, kwargs))
    if stand_ins is _NO_STAND_IN:
        return err
    args, kwargs = stand_ins
    try:
        with _quiet():
            replay(*args, **kwargs)
    except Exception as numpys:   # noqa: BLE001 (whatever NumPy raises is the answer)
        return numpys.with_traceback(None)
    return UnsupportedError(f"psc_jit's NumPy layer refused a call NumPy takes ({err})",
                            caller_source(), "run it outside the traced code")


def stand_in_of(value):
    """value with each tracer replaced by a NumPy value of its kind, shape and dtype (an array
    is zero-strided and writable: no memory however large); _NO_STAND_IN when value holds a
    tracer elsewhere than in tuples, lists and dicts."""
    if isinstance(value, Tracer):
        return _stand_in(value)
    if type(value) in (tuple, list):
        items = [stand_in_of(v) for v in value]
        return _NO_STAND_IN if any(v is _NO_STAND_IN for v in items) else type(value)(items)
    if type(value) is dict:
        items = {k: stand_in_of(v) for k, v in value.items()}
        return _NO_STAND_IN if any(v is _NO_STAND_IN for v in items.values()) else items
    if getattr(value, "__dict__", None) and any(isinstance(v, Tracer)
                                                for v in vars(value).values()):
        return _NO_STAND_IN
    return value


def _stand_in(tracer: Tracer):
    """The tracer's value where the trace knows it (made of constants: an index array written
    in the code), else zeros; read-only where it is a read-only view (np.broadcast_to)."""
    dtype, shape = tracer.aval.dtype, tracer.aval.shape
    known = tracer.known_value()
    if tracer.kind == "python":
        kind = bool if dtype == np.bool_ else WEAK_PYTHON_TYPE[dtype.kind]
        return kind(0 if known is None else known[()])
    if tracer.kind == "scalar":
        return dtype.type(0 if known is None else known[()])
    if known is not None:
        stand_in = np.array(np.broadcast_to(known, shape), dtype)
    else:
        stand_in = np.lib.stride_tricks.as_strided(np.zeros(1, dtype), shape,
                                                   (0,) * len(shape), writeable=True)
    if any(step.write is read_only for step in tracer._path):
        stand_in.flags.writeable = False
    return stand_in


_BUILTIN_DUNDERS = {"__len__": len, "__iter__": iter, "__bool__": bool, "__int__": int,
                    "__float__": float, "__complex__": complex, "__divmod__": divmod,
                    "__index__": operator.index, "__round__": round}


@functools.cache
def method_replay(name: str) -> Callable:
    """The replay of a method or operator of Tracer, as Python makes it on NumPy's values:
    an operator through the `operator` module (`a + b`, `b + a` for `__radd__`, `a += b`),
    a conversion through its builtin (`len(a)`), a method as the method."""
    if name.startswith("__r") and hasattr(operator, "__" + name[3:]):
        forward = getattr(operator, "__" + name[3:])
        return lambda self, other: forward(other, self)
    if name.startswith("__") and hasattr(operator, name):
        return getattr(operator, name)
    if name in _BUILTIN_DUNDERS:
        return _BUILTIN_DUNDERS[name]
    return lambda self, *args, **kwargs: getattr(self, name)(*args, **kwargs)


def function_replay(self, func, types, args, kwargs):
    """The replay of `__array_function__`: NumPy's function itself."""
    return func(*args, **kwargs)


def ufunc_replay(self, ufunc, method, *inputs, **kwargs):
    """The replay of `__array_ufunc__`: the ufunc's method itself."""
    return (ufunc if method == "__call__" else getattr(ufunc, method))(*inputs, **kwargs)


@contextlib.contextmanager
def _quiet():
    """NumPy on stand-ins warns of nothing and raises no floating-point error of its own."""
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        yield
