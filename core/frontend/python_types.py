"""`isinstance(x, cls)`, `type(x)` and `np.isscalar(x)` in converted code (`convert`): a traced
value answers as the value it stands for would (an ndarray, a NumPy scalar or a Python number),
not as psc_jit's tracer. Without this, `v * 2 if isinstance(v, np.ndarray) else v` took the
other branch when compiled."""
from __future__ import annotations

import numpy as np

from ..numpy.base import WEAK_PYTHON_TYPE
from ..numpy.masked import MaskedSelection
from ..tracing import Tracer

_ARRAY = np.empty(0)


def stand_in(value):
    """A value of the type `value` stands for (value itself when it is not traced)."""
    if isinstance(value, Tracer):
        if value.kind == "array":
            return _ARRAY
        if value.kind == "scalar":
            return value.dtype.type(0)
        return False if value.dtype == np.bool_ else WEAK_PYTHON_TYPE[value.dtype.kind](0)
    if getattr(value, "__psc_window__", False) or isinstance(value, MaskedSelection):
        return _ARRAY
    return value


def isinstance_of(obj, classinfo) -> bool:
    """`isinstance(obj, classinfo)` of the value obj stands for."""
    return isinstance(stand_in(obj), classinfo)


def type_of(obj) -> type:
    """`type(obj)` of the value obj stands for."""
    return type(stand_in(obj))


def isscalar_of(element) -> bool:
    """`np.isscalar(element)` of the value element stands for."""
    return np.isscalar(stand_in(element))
