"""Indexing with slices whose bounds are traced integers (`x[:i]`, `L[j + 1:, j]`, `x[i:i + 3]`).

Each such slice is normalised as Python's `slice.indices` would (a negative bound counts from
the end, then bounds are clipped to the axis), with traced arithmetic where the loop's range
does not already prove the bound inside the axis. Then:

- if the slice has one length over every value the loop index takes (`x[i:i + 3]` for
  `i in range(n - 2)`), it is an exact view: a dynamic_slice of that length;
- otherwise it is a `windows.Window`: the whole axis with the traced span NumPy's slice holds.

Writes go through the same views: a fixed-length slice is a dynamic_update_slice, a window a
select (see `windows.write`).
"""
from __future__ import annotations

import linecache
import math

import numpy as np

from ..layout import ViewOp
from ..primitives import dynamic_slice_p, dynamic_update_slice_p
from ..tracing import Tracer, ViewStep, bind, caller_source
from .affine import Affine, affine_of, interval, root_range
from .base import convert, ensure_tracer, unsupported
from .indexing import expand_ellipsis, indexed_view, register_traced_slices
from .masked_writes import offset_positions
from .ufuncs import call_ufunc, np_where
from .segments import GatheredWindow, data_bound
from .spans import INT, Span
from .windows import Window, write


def has_traced_slice(idx: tuple) -> bool:
    return any(isinstance(e, slice) and any(isinstance(p, Tracer) for p in (e.start, e.stop, e.step))
               or isinstance(e, Window) for e in idx)


# -- bounds -----------------------------------------------------------------------------------

def _check_bound(value) -> None:
    if isinstance(value, Tracer) and (value.ndim or value.dtype.kind not in "iu"):
        raise TypeError("slice indices must be integers or None or have an __index__ method")


def _step(entry: slice) -> int:
    if isinstance(entry.step, Tracer):
        raise unsupported("a slice step that is a traced value", "make the step a Python int")
    step = 1 if entry.step is None else int(entry.step)
    if step == 0:
        raise ValueError("slice step cannot be zero")
    if step < 0:
        raise unsupported("a negative slice step with a traced bound",
                          "slice forwards and reverse the result (np.flip)")
    return step


def normalized_bound(value, n: int, default: int):
    """value as Python's slice.indices leaves it for a positive step (an int or a traced
    int64 scalar in [0, n]); the value itself when the loop's range proves it already is."""
    if value is None:
        return default
    if not isinstance(value, Tracer):
        start, _, _ = slice(value, None).indices(n)
        return start
    _check_bound(value)
    span = interval(value)
    if span is not None and 0 <= span[0] and span[1] <= n:
        return value
    bound = convert(value, INT)
    if span is None or span[0] < 0:
        bound = np_where(call_ufunc(np.less, bound, 0), call_ufunc(np.add, bound, n), bound)
    return call_ufunc(np.minimum, call_ufunc(np.maximum, bound, 0), np.int64(n))


def length_range(start, stop, step: int, n: int) -> tuple[int, int] | None:
    """(shortest, longest) length of x[start:stop:step] over the values the loop index takes;
    None when that is not known."""
    first = affine_of(start) if start is not None else Affine(None, 0, 0)
    last = affine_of(stop) if stop is not None else Affine(None, 0, n)
    if first is None or last is None:
        return None
    roots = {f.root for f in (first, last) if not f.constant}
    if len(roots) > 1:
        return None
    if not roots:
        length = len(range(*slice(first.offset, last.offset, step).indices(n)))
        return length, length
    span = root_range(first if not first.constant else last)
    if span is None:
        return None
    values = _candidates(span, (first, last), n)
    lengths = [len(range(*slice(first.at(v), last.at(v), step).indices(n))) for v in values]
    return min(lengths), max(lengths)


def _candidates(span, facts, n: int) -> set[int]:
    """The ends of the range and where a bound crosses -n, 0 or n: the length is linear in
    between, so its extremes are among these."""
    low, high = span
    values = {low, high}
    for fact in facts:
        if fact.constant:
            continue
        for target in (-n, 0, n):
            exact = (target - fact.offset) / fact.coef
            for v in (math.floor(exact) - 1, math.floor(exact), math.ceil(exact),
                      math.ceil(exact) + 1):
                if low <= v <= high:
                    values.add(v)
    return values


# -- reading ----------------------------------------------------------------------------------

def traced_getitem(x: Tracer, idx: tuple):
    """x[idx] where some slice bound is traced: an exact view, or a Window over it."""
    if any(isinstance(e, Window) for e in idx):
        return _gather_through_window(x, idx)
    full = expand_ellipsis(idx, x.ndim)
    starts, sizes, rest, spans = {}, {}, [], {}
    axis = 0
    for entry in full:
        if entry is None:
            rest.append(None)
            continue
        if isinstance(entry, slice) and has_traced_slice((entry,)):
            rest.append(_plan_slice(entry, x.shape[axis], axis, starts, sizes, spans, len(rest)))
        elif isinstance(entry, (np.ndarray, list, tuple)) or (
                isinstance(entry, Tracer) and entry.ndim):
            raise unsupported("an index array together with a slice whose bound is traced",
                              "index in two steps: first the slice, then the array")
        else:
            rest.append(entry)
        axis += 1
    base = _sized_view(x, starts, sizes) if starts else x
    view = indexed_view(base, tuple(rest))
    if not spans:
        return view
    window = Window(view, _result_spans(rest, spans, view.ndim), _describe())
    window.source = (x, idx)
    return window


def _gather_through_window(x: Tracer, idx: tuple) -> Window:
    """x[w] for an integer array of traced length w (a CSR row's columns,
    `x[A_col[A_row[i]:A_row[i + 1]]]`): x gathered at every position of w's whole axis, a
    Window of w's span. Outside the span the index is 0, so that only the span's indices are
    checked against x's length (NumPy's IndexError) and nothing outside is ever observed.
    Where w's bounds were read from an array, the gather waits for its use (`segments`)."""
    window = next(e for e in idx if isinstance(e, Window))
    if window.dtype.kind in "fc":
        raise IndexError("arrays used as indices must be of integer (or boolean) type")
    if len(idx) != 1 or window.ndim != 1 or window.dtype.kind not in "iu" or x.ndim == 0 \
            or x.shape[0] == 0:
        window.refuse("indexing an array (other than along its first axis, by one integer "
                      "window)")
    gathered = GatheredWindow(x, window)
    return gathered if data_bound(window.spans[0]) else gathered.whole()


def _plan_slice(entry: slice, n: int, axis: int, starts, sizes, spans, position: int):
    """The entry that replaces a traced slice in the index of the view: `::step` of a
    fixed-length dynamic slice, or `:` with the slice's span noted."""
    step = _step(entry)
    for part in (entry.start, entry.stop):
        _check_bound(part)
    low = normalized_bound(entry.start, n, 0)
    lengths = length_range(entry.start, entry.stop, step, n)
    if lengths is not None and lengths[0] == lengths[1]:
        starts[axis] = low
        sizes[axis] = (lengths[0] - 1) * step + 1 if lengths[0] else 0
        return slice(None, None, step)
    if step != 1:
        raise unsupported("a slice with a step and a traced bound whose length changes with "
                          "the loop index", "use a step of 1, or a slice of fixed length")
    spans[position] = Span(low, normalized_bound(entry.stop, n, n))
    return slice(None)


def _result_spans(rest, spans, ndim: int) -> tuple:
    result = [None] * ndim
    axis = 0
    for position, entry in enumerate(rest):
        if entry is not None and not isinstance(entry, slice):
            continue                       # an integer (static or traced) takes its axis away
        if position in spans:
            result[axis] = spans[position]
        axis += 1
    return tuple(result)


def _describe() -> str:
    """The slice as the user wrote it (`L[j + 1:, :j]`), from the line being traced."""
    source = caller_source()
    if source is not None and source.end_line == source.line and source.end_column:
        text = linecache.getline(source.file, source.line)[source.column - 1:
                                                            source.end_column - 1].strip()
        if text:
            return f"`{text}`"
    return "a slice"


def _sized_view(x: Tracer, starts: dict, sizes: dict) -> Tracer:
    """A view of x: per axis, `sizes[axis]` elements from the traced `starts[axis]` (proven
    inside the axis), the whole axis elsewhere."""
    begin = [_as_int64(starts.get(a, 0)) for a in range(x.ndim)]
    extent = tuple(sizes.get(a, n) for a, n in enumerate(x.shape))
    traced = [(a, b) for a, b in enumerate(begin) if isinstance(b, Tracer)]

    def read(base):
        return bind(dynamic_slice_p, base, *begin, slice_sizes=extent)

    def write_back(base, new):
        return bind(dynamic_update_slice_p, base, new, *begin)

    def rebuild(arr, *values):
        found = dict(zip((a for a, _ in traced), values, strict=True))
        return arr[tuple(slice(int(found.get(a, begin[a])), int(found.get(a, begin[a])) + s)
                         for a, s in enumerate(extent))]

    step = ViewStep(read=read, write=write_back,
                    op=ViewOp("index", tuple(slice(0, s) for s in extent)),
                    describe=f"[traced start, size {extent}]",
                    operands=tuple(b for _, b in traced), rebuild=rebuild,
                    positions=lambda coords: offset_positions(begin, coords))
    return x.with_kind("array").view_step(step)


def _as_int64(value):
    return convert(ensure_tracer(value), INT) if isinstance(value, Tracer) else np.int64(value)


# -- writing ----------------------------------------------------------------------------------

def traced_setitem(x: Tracer, idx: tuple, value) -> None:
    """x[idx] = value where idx has a traced slice bound or value has a traced length."""
    if _written_in_place(x, idx, value):
        return      # `x[idx] += v`: x[idx] was updated in place, and nothing written since
    target = traced_getitem(x, idx) if has_traced_slice(idx) else indexed_view(x, idx)
    if not isinstance(target, Window):
        target = Window(target, _full_spans(target, value), "the target")
    write(target, value)


def _written_in_place(x: Tracer, idx: tuple, value) -> bool:
    """Whether value is x[idx] as read through this very index (the same entries: Python
    evaluates the index of `x[idx] += v` once), updated in place since, and nothing else
    written to x's buffer after that."""
    if not isinstance(value, Window) or value.source is None or value.source[0] is not x or \
            len(value.source[1]) != len(idx) or value.written != x._buffer.version:
        return False
    return all(a is b for a, b in zip(value.source[1], idx, strict=True))


def _full_spans(target: Tracer, value) -> tuple:
    """Spans covering the whole of each axis of a plain target where value has a span (so
    that value's length is checked against the axis and value is moved to its start)."""
    spans = getattr(value, "spans", ())
    offset = target.ndim - len(spans)
    return tuple(Span(0, n) if a >= offset and spans[a - offset] is not None else None
                 for a, n in enumerate(target.shape))


register_traced_slices(has_traced_slice, traced_getitem, traced_setitem)
