"""A masked write through a view (`L[j + 1:, j] = v` in a rolled loop: a window, see `windows`)
as one scatter into the array the view is of.

The plain way, a select between the new and the old elements written back through the view,
reads the view's old elements. Inside an XLA loop that read can keep the array's previous
value alive past an earlier in-place write of the same iteration, and XLA then copies the
whole array, twice per iteration (a Cholesky factorisation written as loops, 100 x 100:
2 copies of the matrix per iteration; 644 µs a run against 362 µs as a scatter). A scatter
writes each element inside the mask at its coordinates in the base array (not through a
reshape to flat positions: XLA then duplicated the earlier write into both shapes) and sends
the others out of range, where XLA drops them (the scatter primitive's mode "drop").

Each indexing step of a view (`ViewStep.positions`, one of the functions below given the
step's index) maps the coordinates of the view's elements to their coordinates in its base,
only when such a write asks; a view with any other step (a transpose, a reshape) is written
the plain way.
"""
from __future__ import annotations

import numpy as np

from ..primitives import concatenate_p, scatter_p
from ..tracing import Tracer, bind
from .base import broadcast_to, convert, ensure_tracer, reshape
from .ufuncs import call_ufunc, np_where

INT = np.dtype(np.int64)
# A view of at most 1/SCATTER_FRACTION of its array is written by a scatter: XLA's scatter
# took about 4 ns an update (a select a fraction of that), so a window as large as its array
# (LU's trailing block, `y[:i] += x[:i]`) ran 4-11x slower as a scatter, while a row or a
# column of a matrix (Cholesky's column, `A[i, :i + 1] *= a`) ran 1.9-16x faster.
SCATTER_FRACTION = 16


def _plus(a, b):
    """a + b for int coordinates: ints and int arrays, or traced."""
    if isinstance(a, Tracer) or isinstance(b, Tracer):
        return call_ufunc(np.add, a, b)
    return a + b


def _times(a, k: int):
    return call_ufunc(np.multiply, a, np.int64(k)) if isinstance(a, Tracer) else a * k


# -- the positions of a view's elements in its base, per kind of indexing step ----------------

def same_positions(coords: list) -> list:
    return coords


def basic_positions(parts: list, coords: list) -> list:
    """For a static basic index, normalised per entry as ('new',), ('int', i) or
    ('slice', start, stop, step) (`indexing._normalized`)."""
    view_axes = iter(coords)
    out = []
    for part in parts:
        if part[0] == "new":
            next(view_axes)
        elif part[0] == "int":
            out.append(np.int64(part[1]))
        else:
            out.append(_plus(np.int64(part[1]), _times(next(view_axes), part[3])))
    return out


def dynamic_positions(idx: tuple, starts: list, coords: list) -> list:
    """For one traced integer (its start in `starts`) or `:` per axis of the base."""
    view_axes = iter(coords)
    return [start if isinstance(entry, Tracer) else next(view_axes)
            for entry, start in zip(idx, starts, strict=True)]


def offset_positions(begin: list, coords: list) -> list:
    """For a view of traced starts `begin` (one per axis) and fixed sizes."""
    return [_plus(b, c) for b, c in zip(begin, coords, strict=True)]


# -- the write --------------------------------------------------------------------------------

def scatter_where(view: Tracer, mask, new: Tracer) -> bool:
    """view's elements where mask holds replaced by new's, as one scatter into the array the
    view is of; False (nothing written) when a step of the view cannot say where its
    elements are."""
    steps = view._path
    base = Tracer(view._buffer)
    if not steps or any(step.positions is None for step in steps) or view.size == 0 or \
            view.size * SCATTER_FRACTION > base.size:
        return False
    coords = [np.arange(n, dtype=INT).reshape((n,) + (1,) * (view.ndim - axis - 1))
              for axis, n in enumerate(view.shape)]
    for step in reversed(steps):
        coords = step.positions(coords)
    coords = [broadcast_to(convert(c, INT) if isinstance(c, Tracer) else np.asarray(c, INT),
                           view.shape) for c in coords]
    # outside the mask, the first coordinate is out of range: XLA drops those updates
    coords[0] = np_where(mask, coords[0], np.int64(base.shape[0]))
    indices = bind(concatenate_p, *(reshape(ensure_tracer(c), view.shape + (1,))
                                    for c in coords), dimension=view.ndim)
    updated = bind(scatter_p, base, indices, new, num_indexed=base.ndim, mode="drop")
    view._buffer.assign(updated.ir_var)
    return True
