"""np.fft on tracers: fft, ifft, rfft, irfft, hfft, ihfft, their 2-d and n-d forms, fftshift,
ifftshift. (np.fft.fftfreq and rfftfreq need nothing here: NumPy's own code is arithmetic on
its arguments, which works on a traced spacing d.)

As NumPy does, an n-d transform is 1-d transforms one axis after another (the last axis
first), each on the `fft` primitive (XLA's stablehlo.fft) over a trailing axis: the axis is
moved last, padded with zeros or cut to n, transformed and moved back. NumPy's dtypes: a
complex result of `result_type(a, 1j)` (float32 stays complex64), a real one (irfft, hfft) of
`result_type(a.real, 1.0)`; its norm= modes ("backward", "ortho", "forward") scale by the
factor NumPy computes, in the same dtype.
"""
from __future__ import annotations

import operator

import numpy as np

from ..primitives import fft_p, pad_p
from ..tracing import Tracer, bind
from .base import (as_array, as_kind, convert, implements, normalize_axes, static_slice, transpose,
                   unsupported)
from .rearrange import np_roll
from .ufuncs import call_ufunc

_NORMS = (None, "backward", "ortho", "forward")


def _swap_direction(norm):
    return {None: "forward", "backward": "forward", "ortho": "ortho", "forward": "backward"}[norm]


def _scale(norm, n: int, real_dtype: np.dtype, is_forward: bool):
    """What XLA's transform must be multiplied by to give NumPy's: NumPy's factor, computed in
    NumPy's dtype (so rounded as NumPy rounds it); n times it for an inverse transform (XLA's
    divide by n). An inverse transform takes the factor of the other direction."""
    if norm not in _NORMS:
        raise ValueError(f'Invalid norm value {norm}; should be "backward","ortho" or "forward".')
    if not is_forward:
        norm = _swap_direction(norm)
    if norm in (None, "backward"):
        factor = 1.0
    elif norm == "ortho":
        factor = float(np.reciprocal(np.sqrt(n, dtype=real_dtype)))
    else:
        factor = float(np.reciprocal(n, dtype=real_dtype))
    return factor if is_forward else n * factor


def _fit_length(x: Tracer, length: int) -> Tracer:
    """x's last axis cut to, or padded with zeros to, length."""
    n = x.shape[-1]
    if n > length:
        return static_slice(x, (0,) * x.ndim, x.shape[:-1] + (length,))
    if n < length:
        zero = np.zeros((), x.dtype)
        return bind(pad_p, x, zero, low=(0,) * x.ndim, high=(0,) * (x.ndim - 1) + (length - n,),
                    interior=(0,) * x.ndim)
    return x


def _along(x: Tracer, axis: int, transform) -> Tracer:
    """transform(x with `axis` moved last), moved back."""
    order = [d for d in range(x.ndim) if d != axis] + [axis]
    inverse = tuple(int(i) for i in np.argsort(order))
    return transpose(transform(transpose(x, order)), inverse)


def _raw_fft(a, n, axis, is_real: bool, is_forward: bool, norm):
    """NumPy's _raw_fft: one 1-d transform of a along axis."""
    a = as_array(a)
    (ax,) = normalize_axes(axis, a.ndim)
    n = a.shape[ax] if n is None else operator.index(n)
    if n < 1:
        raise ValueError(f"Invalid number of FFT data points ({n}) specified.")
    real_dtype = np.result_type(np.real(np.zeros((), a.dtype)).dtype, 1.0)
    scale = _scale(norm, n, real_dtype, is_forward)
    if is_real and not is_forward:
        out_dtype = real_dtype
    else:
        out_dtype = np.result_type(a.dtype, 1j)
    work = np.dtype(np.complex64) if out_dtype in (np.float16, np.float32, np.complex64) else \
        np.dtype(np.complex128)
    if is_real and is_forward:
        if a.dtype.kind == "c":
            raise TypeError("ufunc 'rfft_n_even' not supported for the input types, and the "
                            "inputs could not be safely coerced to any supported types "
                            "according to the casting rule ''safe''")
        work_in, kind, length = np.real(np.zeros((), work)).dtype, "RFFT", n
    elif is_real:
        work_in, kind, length = work, "IRFFT", n // 2 + 1
    else:
        work_in, kind, length = work, "FFT" if is_forward else "IFFT", n

    def transform(x):
        x = _fit_length(convert(x, work_in), length)
        return bind(fft_p, x, fft_type=kind, fft_lengths=(n,))
    result = _along(a, ax, transform)
    scale = np.asarray(scale, np.real(np.zeros((), result.dtype)).dtype)
    if scale != 1:
        result = call_ufunc(np.multiply, result, scale)
    return as_kind(convert(result, out_dtype), "array")


def _no_out(name, out):
    if out is not None:
        raise unsupported(f"np.fft.{name}(..., out=...)")


@implements(np.fft.fft)
def fft(a, n=None, axis=-1, norm=None, out=None):
    _no_out("fft", out)
    return _raw_fft(a, n, axis, False, True, norm)


@implements(np.fft.ifft)
def ifft(a, n=None, axis=-1, norm=None, out=None):
    _no_out("ifft", out)
    return _raw_fft(a, n, axis, False, False, norm)


@implements(np.fft.rfft)
def rfft(a, n=None, axis=-1, norm=None, out=None):
    _no_out("rfft", out)
    return _raw_fft(a, n, axis, True, True, norm)


@implements(np.fft.irfft)
def irfft(a, n=None, axis=-1, norm=None, out=None):
    _no_out("irfft", out)
    a = as_array(a)
    if n is None:
        (ax,) = normalize_axes(axis, a.ndim)
        n = (a.shape[ax] - 1) * 2
    return _raw_fft(a, n, axis, True, False, norm)


@implements(np.fft.hfft)
def hfft(a, n=None, axis=-1, norm=None, out=None):
    _no_out("hfft", out)
    a = as_array(a)
    if n is None:
        (ax,) = normalize_axes(axis, a.ndim)
        n = (a.shape[ax] - 1) * 2
    conj = call_ufunc(np.conjugate, a) if a.dtype.kind == "c" else a
    return irfft(conj, n, axis, norm=_swap_direction(norm) if norm in _NORMS else norm)


@implements(np.fft.ihfft)
def ihfft(a, n=None, axis=-1, norm=None, out=None):
    _no_out("ihfft", out)
    new_norm = _swap_direction(norm) if norm in _NORMS else norm
    return call_ufunc(np.conjugate, rfft(a, n, axis, norm=new_norm))


# -- n-d transforms ---------------------------------------------------------------------------

def _cook_nd_args(a: Tracer, s, axes, invreal: bool = False):
    """NumPy's _cook_nd_args: the length and axis of each 1-d transform."""
    shapeless = s is None
    if s is None:
        s = list(a.shape) if axes is None else [a.shape[ax] for ax in axes]
    s = list(s)
    if axes is None:
        axes = list(range(-len(s), 0))
    if len(s) != len(axes):
        raise ValueError("Shape and axes have different lengths.")
    if invreal and shapeless:
        s[-1] = (a.shape[axes[-1]] - 1) * 2
    if any(length is None for length in s):
        raise unsupported("np.fft with None in s=", "give every length (or -1 for the whole axis)")
    return [a.shape[ax] if length == -1 else length for length, ax in zip(s, axes, strict=True)], \
        list(axes)


def _raw_fftnd(a, s, axes, function, norm):
    a = as_array(a)
    s, axes = _cook_nd_args(a, s, axes)
    for length, ax in reversed(list(zip(s, axes, strict=True))):
        a = function(a, n=length, axis=ax, norm=norm)
    return a


@implements(np.fft.fftn)
def fftn(a, s=None, axes=None, norm=None, out=None):
    _no_out("fftn", out)
    return _raw_fftnd(a, s, axes, fft, norm)


@implements(np.fft.ifftn)
def ifftn(a, s=None, axes=None, norm=None, out=None):
    _no_out("ifftn", out)
    return _raw_fftnd(a, s, axes, ifft, norm)


@implements(np.fft.fft2)
def fft2(a, s=None, axes=(-2, -1), norm=None, out=None):
    _no_out("fft2", out)
    return _raw_fftnd(a, s, axes, fft, norm)


@implements(np.fft.ifft2)
def ifft2(a, s=None, axes=(-2, -1), norm=None, out=None):
    _no_out("ifft2", out)
    return _raw_fftnd(a, s, axes, ifft, norm)


@implements(np.fft.rfftn)
def rfftn(a, s=None, axes=None, norm=None, out=None):
    _no_out("rfftn", out)
    a = as_array(a)
    s, axes = _cook_nd_args(a, s, axes)
    a = rfft(a, s[-1], axes[-1], norm)
    for length, ax in reversed(list(zip(s[:-1], axes[:-1], strict=True))):
        a = fft(a, length, ax, norm)
    return a


@implements(np.fft.rfft2)
def rfft2(a, s=None, axes=(-2, -1), norm=None, out=None):
    return rfftn(a, s, axes, norm, out)


@implements(np.fft.irfftn)
def irfftn(a, s=None, axes=None, norm=None, out=None):
    _no_out("irfftn", out)
    a = as_array(a)
    s, axes = _cook_nd_args(a, s, axes, invreal=True)
    for length, ax in zip(s[:-1], axes[:-1], strict=True):
        a = ifft(a, length, ax, norm)
    return irfft(a, s[-1], axes[-1], norm)


@implements(np.fft.irfft2)
def irfft2(a, s=None, axes=(-2, -1), norm=None, out=None):
    return irfftn(a, s, axes, norm, out)


# -- frequencies and shifts -------------------------------------------------------------------

def _shift(x, axes, sign: int):
    x = as_array(x)
    if axes is None:
        axes = tuple(range(x.ndim))
        shift = [sign * (dim // 2) for dim in x.shape]
    elif isinstance(axes, (int, np.integer)):
        shift = sign * (x.shape[axes] // 2)
    else:
        shift = [sign * (x.shape[ax] // 2) for ax in axes]
    return np_roll(x, shift, axes)


@implements(np.fft.fftshift)
def fftshift(x, axes=None):
    return _shift(x, axes, 1)


@implements(np.fft.ifftshift)
def ifftshift(x, axes=None):
    return _shift(x, axes, -1)

