"""The value of `x[...] = v`, cast and broadcast as NumPy's setitem casts and broadcasts it
(unsafe casting; a complex scalar into a real array is NumPy's TypeError; leading length-1
axes dropped), with NumPy's own errors (worded otherwise for advanced indices)."""
from __future__ import annotations

import warnings

import numpy as np

from ..tracing import Tracer
from .base import broadcast_to, convert, ensure_tracer, real_part, reshape
from .checks import require_int_convertible


def fit_value(value, shape, dtype, advanced: bool = False, masked: bool = False) -> Tracer:
    """value cast (as NumPy's setitem casts) and broadcast to shape, or NumPy's error (which
    words it differently for advanced indices; a boolean mask casts as they do)."""
    shape = tuple(shape)
    value_shape = value.shape if isinstance(value, Tracer) else tuple(np.shape(value))
    fitted = value_shape
    while len(fitted) > len(shape) and fitted[0] == 1:
        fitted = fitted[1:]
    if not _broadcasts_to(fitted, shape):
        if advanced:
            raise ValueError(f"shape mismatch: value array of shape {_shape_text(value_shape)} "
                             "could not be broadcast to indexing result of shape "
                             f"{_shape_text(shape)}")
        raise ValueError(f"could not broadcast input array from shape {_shape_text(value_shape)} "
                         f"into shape {_shape_text(shape)}")
    value = _cast_for_setitem(value, np.dtype(dtype), advanced or masked)
    return broadcast_to(reshape(value, fitted), shape)


def _broadcasts_to(value_shape, shape) -> bool:
    if len(value_shape) > len(shape):
        return False
    return all(v in (1, n) for v, n in zip(reversed(value_shape), reversed(shape), strict=False))


def _shape_text(shape) -> str:
    return "(" + ",".join(map(str, shape)) + ("," if len(shape) == 1 else "") + ")"


def _cast_for_setitem(value, dtype: np.dtype, advanced: bool = False) -> Tracer:
    """value cast to dtype as NumPy's setitem casts it. A float scalar into an integer array
    goes through int() (NaN, infinity and values out of range raise) when it is a Python
    float, or a NumPy float written through a basic index into signed integers; other
    values are cast as astype casts them."""
    if not isinstance(value, Tracer):
        if np.ndim(value) == 0 and not isinstance(value, np.ndarray) and \
                not (advanced and isinstance(value, np.generic)):
            np.empty((), dtype)[()] = value     # NumPy's own error (complex into real, nan into int)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", np.exceptions.ComplexWarning)
            return ensure_tracer(np.asarray(value).astype(dtype))
    if value.dtype.kind == "c" and dtype.kind != "c" and value.kind == "python":
        np.empty((), dtype)[()] = 1j     # NumPy's TypeError for a Python complex into reals
    if value.dtype.kind == "f" and dtype.kind in "iu" and (
            value.kind == "python" or value.kind == "scalar" and dtype.kind == "i"
            and not advanced):
        require_int_convertible(value, dtype)
    if value.dtype.kind == "c" and dtype.kind != "c":
        warnings.warn("Casting complex values to real discards the imaginary part",
                      np.exceptions.ComplexWarning, stacklevel=4)
        value = real_part(value)
    return ensure_tracer(convert(value, dtype))
