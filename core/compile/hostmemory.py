"""Host memory the CPU client reads in place: 64-byte-aligned arrays, NumPy's allocations
made 64-byte aligned (`align_new_arrays`), and the staging buffers a large misaligned input
is copied into (one memcpy into memory already mapped, instead of jaxlib's fresh allocation
on every call). No jaxlib here: compile/xla.py uses it."""
from __future__ import annotations

import logging

import numpy as np

from ..ir import ShapedArray

ALIGNMENT = 64          # the CPU client reads an input in place only at this alignment
STAGE_FROM_BYTES = 1 << 16   # below this, jaxlib's own copy of a misaligned input is as cheap


def aligned_empty(shape: tuple[int, ...], dtype) -> np.ndarray:
    """An uninitialised C-contiguous array whose data starts on an ALIGNMENT-byte boundary."""
    dtype = np.dtype(dtype)
    nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    raw = np.empty(nbytes + ALIGNMENT, np.uint8)
    start = -raw.ctypes.data % ALIGNMENT
    return raw[start:start + nbytes].view(dtype).reshape(shape)


def aligned_copy(x) -> np.ndarray:
    """x as a C-contiguous, ALIGNMENT-aligned array of its own (the input XLA reads in place).
    Public as `psc_jit.aligned(x)`: an array made once this way is never copied again on its
    way into a compiled call (NumPy's own allocations are usually only 16-byte aligned)."""
    x = np.asarray(x)
    out = aligned_empty(x.shape, x.dtype)
    np.copyto(out, x)
    return out


def is_aligned(x: np.ndarray) -> bool:
    return x.flags.c_contiguous and x.ctypes.data % ALIGNMENT == 0


class InputSlot:
    """One input of an executable: large inputs that the CPU client cannot read in place
    (misaligned, not C-contiguous) are copied into an aligned staging buffer, one memcpy into
    memory that is already mapped, instead of jaxlib's fresh allocation on every call. A
    buffer is taken from the slot's pool for the length of one call (so concurrent calls
    never share one) and given back after the call's results are ready."""

    def __init__(self, aval: ShapedArray):
        self.aval = aval
        self.large = aval.nbytes >= STAGE_FROM_BYTES
        self._pool: list[np.ndarray] = []

    def stage(self, x: np.ndarray) -> np.ndarray:
        if not self.large or not isinstance(x, np.ndarray) or is_aligned(x):
            return x
        buffer = self._pool.pop() if self._pool else aligned_empty(self.aval.shape,
                                                                   self.aval.dtype)
        np.copyto(buffer, x)
        return buffer

    def release(self, buffer: np.ndarray) -> None:
        self._pool.append(buffer)


_REPLACED: list = []     # the NumPy memory handler align_new_arrays replaced, while it is on


def align_new_arrays(on: bool = True) -> bool:
    """Make the data of every NumPy array allocated from now on (in this thread's context)
    start on an ALIGNMENT-byte boundary, so that it goes into compiled calls without a copy
    (NumPy's own allocator gives 16 bytes; jaxlib copies such an input on every call); `on`
    False puts NumPy's allocator back. Arrays keep the allocator that made them, so arrays of
    both kinds live and die side by side. Returns whether new arrays are aligned: False also
    when the compiled helper (core/compile/_aligned_numpy.c) was not built."""
    try:
        from . import _aligned_numpy
    except ImportError as err:
        logging.getLogger("psc_jit").info("NumPy arrays stay 16-byte aligned: %s", err)
        return False
    if on and not _REPLACED:
        _REPLACED.append(_aligned_numpy.install())
    elif not on and _REPLACED:
        _aligned_numpy.restore(_REPLACED.pop())
    return bool(_REPLACED)
