"""Source locations: the user's line behind an operation being traced (the innermost frame
that is neither psc_jit's core nor NumPy's), with its columns, read from the code object's
positions."""
from __future__ import annotations

import dis
import os
import sys
from typing import Any

import numpy as np

from .ir import SourceInfo

# psc_jit's core (this folder) and NumPy: never the user's line.
_SKIP_DIRS = (os.path.dirname(os.path.abspath(__file__)), os.path.dirname(np.__file__))

# The source positions of the code objects a trace runs (read once per code object, not per
# operation), for the last POSITIONS_KEPT of them: a session makes a new code object for every
# cell it compiles, and kept for ever they held 15 KiB per compile.
_positions_cache: dict[Any, list] = {}
POSITIONS_KEPT = 64


def caller_source() -> SourceInfo | None:
    """The innermost frame outside psc_jit's core and NumPy: the user's line."""
    frame = user_frame(sys._getframe(1))
    return _frame_source(frame) if frame is not None else None


def user_frame(frame):
    """The first frame from `frame` outwards that is the user's (not psc_jit's, not NumPy's)."""
    while frame is not None:
        if is_user_file(frame.f_code.co_filename):
            return frame
        frame = frame.f_back
    return None


# The code of psc_jit's functions that make the user's calls in traced code (the frontend's
# `call_watched`): what they ask of a value, the user asks.
CALLS_FOR_THE_USER: set = set()
TEXT_HINT = "print or format it after the cell, or return the value"


def called_by_user(frame) -> bool:
    """Whether the caller at `frame` is the user's code, or calls for it."""
    return is_user_file(frame.f_code.co_filename) or frame.f_code in CALLS_FOR_THE_USER


def is_user_file(filename: str) -> bool:
    return not filename.startswith(_SKIP_DIRS) and "<__array_function__" not in filename


def traceback_source(tb) -> SourceInfo | None:
    """The user's innermost line in a traceback (where their code raised, or called what did)."""
    found = None
    while tb is not None:
        if is_user_file(tb.tb_frame.f_code.co_filename):
            found = _frame_source(tb.tb_frame, tb.tb_lasti)
        tb = tb.tb_next
    return found


def storing_item(frame) -> bool:
    """Whether the frame is storing into a subscript (`a[i] = v`, `a[i] += v`) right now."""
    code = frame.f_code.co_code
    return frame.f_lasti < len(code) and dis.opname[code[frame.f_lasti]] == "STORE_SUBSCR"


def _frame_source(frame, lasti: int | None = None) -> SourceInfo:
    code = frame.f_code
    positions = _positions_cache.get(code)
    if positions is None:
        if len(_positions_cache) >= POSITIONS_KEPT:
            del _positions_cache[next(iter(_positions_cache))]
        positions = _positions_cache[code] = list(code.co_positions())
    index = (frame.f_lasti if lasti is None else lasti) // 2
    line, end_line, col, end_col = positions[index] if index < len(positions) else (
        frame.f_lineno, None, 0, None)
    return SourceInfo(code.co_filename, line or frame.f_lineno, (col or 0) + 1,
                      end_line, (end_col + 1) if end_col is not None else None, code.co_name)
