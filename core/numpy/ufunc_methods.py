"""`ufunc(...)` and its methods (`reduce`, `accumulate`, `outer`, `at`) on tracers: what
NumPy's `__array_ufunc__` protocol hands a Tracer.
"""
from __future__ import annotations

import numpy as np

from ..primitives import scatter_p
from ..tracing import Tracer, bind
from .base import ensure_tracer, reshape, result_type, unsupported
from .indexing import fit_value, flat_positions, index_tuple
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
    if method == "at":
        return _at(ufunc, *inputs, **kwargs)
    if method == "outer" and ufunc.nin == 2:
        a, b = inputs
        a_t, b_t = ensure_tracer(a), ensure_tracer(b)
        return call_ufunc(ufunc, reshape(a_t, a_t.shape + (1,) * b_t.ndim), b_t, **kwargs)
    raise unsupported(f"np.{ufunc.__name__}.{method}")


def _at(ufunc: np.ufunc, a, indices, b=None):
    """`np.add.at(a, indices, b)`: a[indices] += b unbuffered, a position named twice gets
    every update, in order (a scatter-add). np.subtract.at adds -b. Only where NumPy's loop
    runs in a's own dtype: otherwise NumPy rounds to a's dtype after every update."""
    name = f"np.{ufunc.__name__}.at"
    if ufunc not in (np.add, np.subtract) or b is None:
        raise unsupported(name, "np.add.at and np.subtract.at compile; write the update with "
                          "indexing (a[i] = np.maximum(a[i], b) where i has no repeats)")
    if not isinstance(a, Tracer):
        raise unsupported(f"{name} into an array that is not traced",
                          "make the array in the traced code (np.zeros(...)) or pass it in")
    loop = result_type(a, b)
    if loop != a.dtype or a.dtype == np.bool_:
        raise unsupported(f"{name} of {a.dtype} with {loop} arithmetic (NumPy rounds to "
                          f"{a.dtype} after every update)",
                          f"make the values {a.dtype} first: b.astype(a.dtype)")
    positions = flat_positions(a, index_tuple(indices))
    count = int(np.size(positions))
    if count == 0 or a.size == 0:
        return None
    updates = reshape(fit_value(b, np.shape(positions), a.dtype, True), (count,))
    if ufunc is np.subtract:
        updates = call_ufunc(np.negative, updates)
    flat = reshape(a, (a.size,))
    out = bind(scatter_p, flat, reshape(positions, (count, 1)), updates, num_indexed=1,
               mode="add")
    a.assign(reshape(out, a.shape))
    return None
