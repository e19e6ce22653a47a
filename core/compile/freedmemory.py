"""Freed memory kept for reuse, within a budget: glibc's malloc maps every block over 32 MiB
afresh and unmaps it when freed, so each run of a program with such a result (XLA allocates
its outputs with malloc) touches fresh pages, one fault per 4 KiB: a 48 MB `x * 2 + 1` took
11,719 page faults and 15-18 ms per run against NumPy's 9.7 ms (NumPy asks for huge pages for
its own large blocks; XLA does not). With blocks served from malloc's heap instead, a run
reuses the memory the last result left: the same run took 3.2 ms (NumPy's own 5.8 ms, as its
blocks are reused too). Not every run: now and then the heap grows, when small blocks have
split the hole a freed result left (0-3 of 15 re-runs in tests/core/compile). Measured on
2000 x 3000 float64, interleaved as bench/overhead.py times (`--keep-freed-memory` there
compares the two).

The price is memory that stays with the process after it is freed: malloc gives back the top
of its heap beyond the budget at once, and `trim_freed_memory` gives back the rest (a freed
block below a live one) once more than the budget has been freed since it last did (the magic
asks after its cells, at most every TRIM_INTERVAL seconds). Only on glibc (elsewhere
`keep_freed_memory` says False and changes nothing). No jaxlib here."""
from __future__ import annotations

import ctypes
import functools
import logging
import time

_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD, _M_MMAP_MAX = -1, -3, -4   # mallopt's (malloc.h)
# glibc's behaviour back: its own limit on mappings, and the thresholds where its dynamic ones
# settle once a large block was freed (a block up to 32 MiB from the heap, trimmed past twice
# that). Any mallopt ends the dynamic thresholds, and glibc's starting ones (128 KiB) would
# then map, and fault in, every block over 128 KiB: NumPy's cells ran 2-3x slower so.
_GLIBC_DEFAULTS = ((_M_MMAP_MAX, 65536), (_M_MMAP_THRESHOLD, 32 << 20),
                   (_M_TRIM_THRESHOLD, 64 << 20))
_KEPT: dict[str, float] = {}      # while kept: "budget", "free" after a trim, "looked" (clock)
TRIM_INTERVAL = 2.0               # seconds between the magic's looks at the freed memory


class _MallInfo2(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in (
        "arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks",
        "fordblks", "keepcost")]


@functools.cache
def _glibc():
    """glibc's malloc functions, or None on another C library."""
    try:
        libc = ctypes.CDLL(None)
        functions = libc.mallopt, libc.malloc_trim, libc.mallinfo2
    except (OSError, AttributeError) as err:
        logging.getLogger("psc_jit").info("freed memory is not kept (no glibc malloc): %s",
                                          err)
        return None
    functions[2].restype = _MallInfo2
    return libc


def keep_freed_memory(budget_bytes: int | None) -> bool:
    """Serve large blocks from malloc's heap, so that memory a freed result leaves is reused
    without page faults, keeping at most about `budget_bytes` of it (0 or None: glibc's
    behaviour back). Returns whether memory is kept now."""
    libc = _glibc()
    if libc is None:
        return False
    if budget_bytes:
        libc.mallopt(_M_MMAP_MAX, 0)
        libc.mallopt(_M_TRIM_THRESHOLD, min(int(budget_bytes), 2**31 - 1))
        _KEPT.update(budget=int(budget_bytes), free=libc.mallinfo2().fordblks,
                     looked=time.monotonic())
    elif _KEPT:
        for parameter, value in _GLIBC_DEFAULTS:
            libc.mallopt(parameter, value)
        _KEPT.clear()
        libc.malloc_trim(0)
    return bool(_KEPT)


def trim_freed_memory(interval: float = 0.0) -> bool:
    """While memory is kept: give freed memory back to the system once more than the budget
    has been freed since the last time (malloc counts given-back blocks as free still, so
    the comparison is with the count then). With an `interval`, only when that many seconds
    have passed since the last look: malloc's count walks all its free lists, which took
    300 us with a heap of large blocks (the magic looks after a cell, every TRIM_INTERVAL
    seconds at most). Returns whether it gave memory back."""
    if not _KEPT:
        return False
    now = time.monotonic()
    if now < _KEPT["looked"] + interval:
        return False
    _KEPT["looked"] = now
    libc = _glibc()
    free = libc.mallinfo2().fordblks
    if free - _KEPT["free"] <= _KEPT["budget"]:
        _KEPT["free"] = min(free, _KEPT["free"])
        return False
    libc.malloc_trim(0)
    _KEPT["free"] = libc.mallinfo2().fordblks
    return True
