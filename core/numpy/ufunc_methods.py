"""`ufunc(...)` and its methods (`reduce`, `accumulate`, `outer`) on tracers: what NumPy's
`__array_ufunc__` protocol hands a Tracer.
"""
from __future__ import annotations

import numpy as np

from .base import ensure_tracer, reshape, unsupported
from .linalg_api import GUFUNCS
from .products import matmul
from .reductions import UFUNC_ACCUMULATORS, UFUNC_REDUCERS
from .ufuncs import call_ufunc, no_python_scalar


def ufunc_method(ufunc: np.ufunc, method: str, *inputs, **kwargs):
    """`np.ufunc(...)` and its methods. Unlike an operator on Python scalars, a ufunc never
    returns a Python scalar: a NumPy scalar."""
    result = _ufunc_method(ufunc, method, *inputs, **kwargs)
    if isinstance(result, tuple):
        return tuple(no_python_scalar(r) for r in result)
    return no_python_scalar(result)


def _ufunc_method(ufunc: np.ufunc, method: str, *inputs, **kwargs):
    if method == "__call__":
        if ufunc is np.matmul:
            return matmul(*inputs, **kwargs)
        if ufunc in GUFUNCS:
            return GUFUNCS[ufunc](*inputs, **kwargs)
        return call_ufunc(ufunc, *inputs, **kwargs)
    if method == "reduce" and ufunc in UFUNC_REDUCERS:
        return UFUNC_REDUCERS[ufunc](*inputs, **kwargs)
    if method == "accumulate" and ufunc in UFUNC_ACCUMULATORS:
        kwargs.setdefault("axis", 0)
        return UFUNC_ACCUMULATORS[ufunc](*inputs, **kwargs)
    if method == "outer" and ufunc.nin == 2:
        a, b = inputs
        a_t, b_t = ensure_tracer(a), ensure_tracer(b)
        return call_ufunc(ufunc, reshape(a_t, a_t.shape + (1,) * b_t.ndim), b_t, **kwargs)
    raise unsupported(f"np.{ufunc.__name__}.{method}")
