"""NumPy's dtype conversions, copies and complex helpers on tracers: astype, view, copy,
asarray, array, round, angle, conj.
"""
from __future__ import annotations

import numpy as np

from ..layout import ViewOp
from ..primitives import bitcast_convert_p, complex_p
from ..primitives.casts import bitcastable
from ..tracing import Tracer, ViewStep, bind
from .base import (as_kind, assign_into, convert, copy_of, dtype_of, elementwise, ensure_tracer,
                   imag_part, implements, real_part, reshape, unsupported)
from .shape import copy_for_view, np_stack, view_answer
from .ufuncs import call_ufunc, no_python_scalar


# The Python number a NumPy scalar of each kind converts to (.item(), float(), int())
PYTHON_DTYPES = {"b": np.dtype(np.bool_), "i": np.dtype(np.int64), "u": np.dtype(np.int64),
                 "f": np.dtype(np.float64), "c": np.dtype(np.complex128)}


def python_number(x: Tracer) -> Tracer:
    """A traced 0-d value as the Python number .item() gives (a bool, int, float or complex):
    kind "python", weak in NumPy's promotion as Python numbers are. (A uint64 past int64,
    which a Python int holds, is the caller's to check.)"""
    dtype = PYTHON_DTYPES[x.dtype.kind]
    return as_kind(convert(x, dtype, weak=dtype != np.bool_), "python")


@implements(np.conj, np.conjugate)
def np_conj(x, **kwargs):
    return call_ufunc(np.conjugate, x, **kwargs)


@implements(np.angle)
def np_angle(z, deg=False):
    z = ensure_tracer(z)
    if z.dtype.kind != "c":
        result = call_ufunc(np.arctan2, 0, z)      # NumPy: arctan2(0, z), so int8 -> float16
    else:
        result = call_ufunc(np.arctan2, imag_part(z), real_part(z))
    if deg:
        result = call_ufunc(np.multiply, result, 180 / np.pi)
    return no_python_scalar(result)


@implements(np.round, np.around)
def np_round(a, decimals=0, out=None):
    a = ensure_tracer(a)
    if a.dtype == np.bool_ and decimals != 0:
        raise TypeError("Cannot cast ufunc 'multiply' output from dtype('float64') to "
                        "dtype('bool') with casting rule 'same_kind'")
    if a.dtype.kind == "c":     # NumPy rounds the real and imaginary parts apart
        parts = [np_round(part(a), decimals) for part in (real_part, imag_part)]
        result = elementwise(complex_p, *parts)
    elif a.dtype == np.bool_:
        result = call_ufunc(np.rint, a)
    elif decimals == 0 or a.dtype.kind in "biu" and decimals >= 0:
        result = call_ufunc(np.rint, a) if a.dtype.kind not in "biu" else copy_of(a)
    else:
        factor = 10.0 ** decimals
        result = call_ufunc(np.divide, call_ufunc(np.rint, call_ufunc(np.multiply, a, factor)),
                            factor)
    if out is not None:
        return assign_into(out, result, "np.round(..., out=...)")
    return as_kind(result, "scalar" if result.ndim == 0 else "array")


def view(x: Tracer, dtype=None, *array_type, **keywords) -> Tracer:
    """x.view(), x.view(dtype), x.view(dtype, type): a view of x's memory (a write through it
    changes x, as in NumPy) whose elements are x's bytes read as `dtype`, a type of the same
    size."""
    cls = array_type[0] if array_type else keywords.pop("type", None)
    if cls is None and isinstance(dtype, type) and issubclass(dtype, np.ndarray):
        dtype, cls = None, dtype
    if cls is not None and cls is not np.ndarray:
        raise unsupported(f"x.view({cls.__name__}) (a subclass of ndarray)",
                          "make the view outside the traced code")
    new = x.dtype if dtype is None else np.dtype(dtype)
    if new == x.dtype:
        step = ViewStep(lambda b: b, lambda b, v: v, ViewOp("identity"), "identity")
    elif not bitcastable(x.dtype, new):
        raise unsupported(f"x.view({new}) of a {x.dtype} array (" + (
            "another item size, which changes the last axis"
            if new.itemsize != x.dtype.itemsize else "bool or complex bytes") + ")",
            "make the view outside the traced code, or use x.astype(dtype) for the values")
    else:
        step = ViewStep(read=lambda b: bind(bitcast_convert_p, b, new_dtype=new),
                        write=lambda b, v: bind(bitcast_convert_p, v, new_dtype=b.dtype),
                        op=ViewOp("dtype", new), describe=f".view({new})")
    return x.view_step(step, kind="scalar" if x.kind == "scalar" else "array")


def astype(x, dtype, order="K", casting="unsafe", subok=True, copy=True):
    dtype = np.dtype(dtype)
    if not np.can_cast(x.dtype, dtype, casting=casting):
        raise TypeError(f"Cannot cast array data from {x.dtype} to {dtype} according to the rule "
                        f"'{casting}'")
    result = convert(x, dtype)
    if result is x:
        if not copy and x.kind == "array":
            return x
        result = copy_of(x)
    return as_kind(result, "array" if x.kind != "scalar" or x.ndim else "scalar")


@implements(np.astype)
def np_astype(x, dtype, /, *, copy=True, device=None):
    if device is not None and device != "cpu":
        raise ValueError(f'Device not understood. Only "cpu" is allowed, but received: {device}')
    return astype(ensure_tracer(x), dtype, copy=copy)


@implements(np.copy)
def np_copy(a, order="K", subok=False):
    return copy_of(ensure_tracer(a)).with_kind("array")


@implements(np.asarray, np.asanyarray)
def np_asarray(a, dtype=None, order=None, *, copy=None, **kwargs):
    """(Reached through NEP 35's `like=`: np.asarray itself takes no protocol.) An array comes
    back as it is unless copy=True or the dtype changes; anything else becomes a new array."""
    if isinstance(a, (list, tuple)):
        result = np_stack_like_array(a, dtype)
    else:
        a = ensure_tracer(a)
        result = a if dtype is None or np.dtype(dtype) == a.dtype else convert(a, dtype)
    if copy is False and result is not a:
        raise ValueError("Unable to avoid copy while creating an array as requested.")
    # a NumPy or Python scalar becomes a new 0-d array
    return copy_of(result).with_kind("array") if copy or result.kind != "array" else result


@implements(np.ascontiguousarray)
def np_ascontiguousarray(a, dtype=None, **kwargs):
    """a itself when it is a C-contiguous array of that dtype already, else a C-ordered copy
    (NumPy's answer by a's memory layout)."""
    result = np_asarray(a, dtype)
    if result.ndim == 0:
        return reshape(result, (1,)).with_kind("array")
    if result is not a:
        return result
    is_view = view_answer(result, lambda layout: layout.c_contiguous)
    return result if is_view else copy_for_view(result, result, is_view,
                                                "np.ascontiguousarray")


@implements(np.array)
def np_array(a, dtype=None, copy=True, **kwargs):
    if isinstance(a, (list, tuple)):
        return np_stack_like_array(a, dtype)
    a = ensure_tracer(a)
    result = a if dtype is None or np.dtype(dtype) == a.dtype else convert(a, dtype)
    return copy_of(result).with_kind("array") if copy else result.with_kind("array")


def np_stack_like_array(items, dtype):
    """np.array of nested lists: a Python scalar among them counts as its default dtype (not
    weakly, as in arithmetic): np.array([np.int32(1), 2]) is int64."""
    items = [np_stack_like_array(i, None) if isinstance(i, (list, tuple)) else i for i in items]
    dtype = dtype or np.result_type(*(dtype_of(i) for i in items))
    return np_stack([convert(ensure_tracer(i), dtype) for i in items])
