"""Host memory the CPU client reads in place: 64-byte-aligned arrays, NumPy's allocations
made 64-byte aligned (`align_new_arrays`), and the staging buffers a large misaligned input
is copied into (one memcpy into memory already mapped, instead of jaxlib's fresh allocation
on every call); and the memory XLA wrote, as writable arrays (`ResultView`). No jaxlib here:
compile/xla/ uses it."""
from __future__ import annotations

import ctypes
import functools
import logging

import numpy as np

from ..ir import ShapedArray
from .errors import run_failed

ALIGNMENT = 64          # the CPU client reads an input in place only at this alignment
# jaxlib copies a misaligned input smaller than this before the call returns; a larger one on a
# worker thread, so even an inline run may end after the call (its results are then waited for:
# without the wait, 128 kB misaligned inputs gave garbage results on some calls).
COPIED_AT_ONCE_BYTES = 1 << 16
# Misaligned inputs from this size are staged (copied on the calling thread into a reused
# aligned buffer), smaller ones left to jaxlib's copy. Measured, x * 2 + 1 on the inline
# client, interleaved (one run, best of 40 batches): jaxlib's copy on its worker thread against
# the staged call at 60,000 float64 89 and 48-50 us, at 100,000 94-103 and 65-77 (jax.jit
# 66-115); at 10,000 (under COPIED_AT_ONCE_BYTES) 12 against 12.
STAGE_FROM_BYTES = COPIED_AT_ONCE_BYTES
# A staging buffer up to this size is kept for the slot's next call; a larger one is freed
# after its call: kept, a gigabyte input's copy would stay for as long as its program does
# (the copy costs about what a fresh buffer's page faults do at that size).
KEEP_STAGED_UP_TO_BYTES = 64 << 20


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
    never share one) and given back after the call's results are ready (up to
    KEEP_STAGED_UP_TO_BYTES: a larger one is freed)."""

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
        if buffer.nbytes <= KEEP_STAGED_UP_TO_BYTES:
            self._pool.append(buffer)


def release_staged(slots: list[InputSlot], arrays, staged) -> None:
    """Give the staging buffers of one call (`staged`, for `arrays`) back to their slots."""
    for slot, x, put_in in zip(slots, arrays, staged, strict=True):
        if put_in is not x:
            slot.release(put_in)


_REPLACED: list = []     # the NumPy memory handler align_new_arrays replaced, while it is on


def align_new_arrays(on: bool = True) -> bool:
    """Make the data of every NumPy array allocated from now on (in this thread's context)
    start on an ALIGNMENT-byte boundary, so that it goes into compiled calls without a copy
    (NumPy's own allocator gives 16 bytes; jaxlib copies such an input on every call); `on`
    False puts NumPy's allocator back. Arrays keep the allocator that made them, so arrays of
    both kinds live and die side by side. Returns whether new arrays are aligned: False also
    when the compiled helper (core/compile/_host_memory.c) was not built."""
    try:
        from . import _host_memory
    except ImportError as err:
        logging.getLogger("psc_jit").info("NumPy arrays stay 16-byte aligned: %s", err)
        return False
    if on and not _REPLACED:
        _REPLACED.append(_host_memory.install())
    elif not on and _REPLACED:
        _host_memory.restore(_REPLACED.pop())
    return bool(_REPLACED)


try:        # core/compile/_host_memory.c, when it was built
    from ._host_memory import large_ones_aligned, router, writable_array
except ImportError:
    large_ones_aligned = router = writable_array = None


class ResultView:
    """Makes one XLA result buffer the memory of a writable ndarray, without a copy.

    jaxlib exposes a result only read-only (its buffer protocol refuses writers), so the
    ndarray is made at the buffer's address with the jaxlib array as its base (by the C
    module; without it, over a ctypes array that holds the jaxlib array), so XLA's buffer lives
    exactly as long as the ndarray (or any view of it) does. The buffer is the result's alone:
    XLA allocates every output of every execution afresh (nothing is donated or aliased to
    inputs, and distinct outputs get distinct buffers), and the CPU client aligns it to 64
    bytes, so it can be passed on to the next compiled call without a copy."""

    def __init__(self, aval: ShapedArray, ended_on_return: bool = False):
        self.shape = tuple(int(n) for n in aval.shape)
        self.dtype = np.dtype(aval.dtype)
        self.nbytes = aval.nbytes
        self.wait = not ended_on_return     # (asking costs a small call, about a microsecond)

    @functools.cached_property
    def holder(self) -> type:
        """The ctypes array type the result's memory is seen through, without the C module
        (a class per output: made only where it is used)."""
        return type("XlaResultMemory", (ctypes.c_char * self.nbytes,), {"__slots__": ("owner",)})

    @staticmethod
    def of(aval: ShapedArray, ended_on_return: bool) -> ResultView:
        return ResultView(aval, ended_on_return) if aval.nbytes else EmptyResultView(aval)

    def __call__(self, result) -> np.ndarray:
        try:                           # the execution may be asynchronous: wait for the values
            if self.wait and not result.is_ready():
                result.block_until_ready()
            address = result.unsafe_buffer_pointer()    # (a failed run's result has none)
        except Exception as err:       # jaxlib raises its own JaxRuntimeError; keep its text
            raise run_failed(err) from err
        if writable_array is not None:
            return writable_array(result, address, self.dtype, self.shape)
        memory = self.holder.from_address(address)
        memory.owner = result
        return np.ndarray(self.shape, self.dtype, memory)


class EmptyResultView(ResultView):
    """A result with no elements: a fresh empty array (its buffer has no address)."""

    def __call__(self, result) -> np.ndarray:
        try:
            result.block_until_ready()
        except Exception as err:       # jaxlib raises its own JaxRuntimeError; keep its text
            raise run_failed(err) from err
        return np.empty(self.shape, self.dtype)
