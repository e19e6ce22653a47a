"""fft: XLA's discrete Fourier transform (stablehlo.fft) over the trailing axes.

    fft[fft_type, fft_lengths]
        FFT    complex -> complex, unnormalized
        IFFT   complex -> complex, scaled by 1 / prod(fft_lengths)
        RFFT   real -> complex, the last axis n -> n // 2 + 1
        IRFFT  complex -> real, the last axis n // 2 + 1 -> n, scaled by 1 / prod(fft_lengths)

fft_lengths are the lengths of the 1 to 3 trailing axes transformed (of the real signal for
RFFT and IRFFT). NumPy's norm= modes, axes and padding live in the NumPy layer.

Each transform is linear. Its transpose (for the pairing Re sum(a * b), no conjugation, as
JAX's): the DFT matrix is symmetric, so FFT and IFFT transpose to themselves; RFFT to the real
part of the FFT of the cotangent padded with zeros to the full spectrum; IRFFT to the
conjugated RFFT of the cotangent, weighted as IRFFT counts each half-spectrum entry (once
for the zero and the Nyquist frequency, twice for the others) and divided by prod(lengths).
"""
from __future__ import annotations

import numpy as np

from ..ir import Literal
from ..lowering import i64_array
from .autodiff import linear_in
from .record import Primitive, register

FFT_TYPES = ("FFT", "IFFT", "RFFT", "IRFFT")
_COMPLEX_OF = {np.dtype(np.float32): np.dtype(np.complex64),
               np.dtype(np.float64): np.dtype(np.complex128)}
_REAL_OF = {c: r for r, c in _COMPLEX_OF.items()}


def fft_shape_rule(x, *, fft_type, fft_lengths):
    if fft_type not in FFT_TYPES:
        raise TypeError(f"fft_type must be one of {FFT_TYPES}, got {fft_type!r}")
    k = len(fft_lengths)
    if not 1 <= k <= 3 or k > x.ndim:
        raise TypeError(f"fft transforms 1 to 3 trailing axes of {x.shape}, not {fft_lengths}")
    lengths = tuple(fft_lengths)
    if fft_type == "RFFT":
        if x.shape[-k:] != lengths:
            raise TypeError(f"RFFT of lengths {lengths} takes {x.shape}")
        return x.shape[:-1] + (lengths[-1] // 2 + 1,)
    if fft_type == "IRFFT":
        if x.shape[-k:] != lengths[:-1] + (lengths[-1] // 2 + 1,):
            raise TypeError(f"IRFFT of lengths {lengths} takes {x.shape}")
        return x.shape[:-1] + (lengths[-1],)
    if x.shape[-k:] != lengths:
        raise TypeError(f"{fft_type} of lengths {lengths} takes {x.shape}")
    return x.shape


def fft_dtype_rule(x, *, fft_type, fft_lengths):
    table = _COMPLEX_OF if fft_type == "RFFT" else _REAL_OF if fft_type == "IRFFT" else {
        d: d for d in _REAL_OF}
    if x.dtype not in table:
        raise TypeError(f"{fft_type} does not take {x.dtype}")
    return table[x.dtype]


def fft_impl(x, *, fft_type, fft_lengths):
    axes = tuple(range(-len(fft_lengths), 0))
    transform = {"FFT": np.fft.fftn, "IFFT": np.fft.ifftn, "RFFT": np.fft.rfftn,
                 "IRFFT": np.fft.irfftn}[fft_type]
    result = transform(x, s=fft_lengths, axes=axes)
    return result.astype(fft_dtype_rule(np.asarray(x), fft_type=fft_type,
                                        fft_lengths=fft_lengths))


def fft_lowering(ctx, x, *, fft_type, fft_lengths):
    attrs = {"fft_type": f"#stablehlo<fft_type {fft_type}>",
             "fft_length": i64_array(fft_lengths)}
    return ctx.op("stablehlo.fft", [x], ctx.avals_in, ctx.avals_out, attrs)


def _rfft_transpose(ctx, ct, fft_lengths):
    """Re(FFT(ct padded to the full last axis))."""
    n = fft_lengths[-1]
    aval = ct.aval
    padded = ctx.pad(ct, Literal.of(np.zeros((), aval.dtype)), (0,) * aval.ndim,
                     (0,) * (aval.ndim - 1) + (n - aval.shape[-1],))
    return ctx.real(ctx.bind(fft_p, padded, fft_type="FFT", fft_lengths=fft_lengths))


def _irfft_transpose(ctx, ct, fft_lengths):
    """conj(RFFT(ct)) * weight / N, weight 1 at the zero and Nyquist frequencies, else 2."""
    n = fft_lengths[-1]
    spectrum = ctx.conj(ctx.bind(fft_p, ct, fft_type="RFFT", fft_lengths=fft_lengths))
    aval = spectrum.aval
    weights = np.full(n // 2 + 1, 2.0)
    weights[0] = 1.0
    if n % 2 == 0:
        weights[-1] = 1.0
    weights = weights / float(np.prod(fft_lengths))
    real = np.real(np.zeros((), aval.dtype)).dtype
    column = ctx.broadcast_in_dim(Literal.of(weights.astype(real)), aval.shape, (aval.ndim - 1,))
    return ctx.mul(spectrum, ctx.convert(column, aval.dtype))


def fft_transpose(ctx, ct, x, *, fft_type, fft_lengths):
    if fft_type in ("FFT", "IFFT"):
        return [ctx.bind(fft_p, ct, fft_type=fft_type, fft_lengths=fft_lengths)]
    if fft_type == "RFFT":
        return [_rfft_transpose(ctx, ct, fft_lengths)]
    return [_irfft_transpose(ctx, ct, fft_lengths)]


fft_p = register(Primitive(
    "fft", fft_shape_rule, fft_dtype_rule, fft_impl, fft_lowering,
    weak_type_rule=lambda x, **_: False,
    doc="discrete Fourier transform over the trailing axes (stablehlo.fft)",
    jvp=linear_in(), linear=True, transpose=fft_transpose))
