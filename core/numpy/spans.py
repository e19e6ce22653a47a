"""Spans: the positions an array of traced length holds along the whole of an axis (see
`windows`), and how operands with spans are brought together: masks, shifts, and alignment
with NumPy's broadcasting (a length 1 broadcasts, other lengths must be equal) where the
lengths are only known when the program runs.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..primitives import dynamic_slice_p, iota_p, pad_p, select_p
from ..tracing import Tracer, bind, current_trace
from .affine import difference, interval, same_value
from .base import as_kind, broadcast_to, convert, ensure_tracer
from .ufuncs import call_ufunc, np_where

INT = np.dtype(np.int64)


def subtract(a, b):
    """a - b: an int when it is one whatever the index (x[i + 1:] against x[i:])."""
    constant = difference(a, b)
    if constant is not None:
        return constant
    return call_ufunc(np.subtract, a, b)


def as_int64(x):
    return convert(ensure_tracer(x), INT) if isinstance(x, Tracer) else np.int64(x)


@dataclass(frozen=True)
class Span:
    """The positions `lo <= k < hi` of one axis that an array of traced length holds; lo and
    hi are ints or traced int64 scalars."""
    lo: Any
    hi: Any

    def raw_length(self):
        """hi - lo, which is negative for an empty slice like x[3:1]."""
        return subtract(self.hi, self.lo)

    def length(self):
        """The slice's length: hi - lo, or 0 when that is negative."""
        raw = self.raw_length()
        if not isinstance(raw, Tracer):
            return max(raw, 0)
        span = interval(raw)
        if span is not None and span[0] >= 0:
            return raw
        return call_ufunc(np.maximum, as_int64(raw), np.int64(0))

    def same(self, other: Span) -> bool:
        return same_value(self.lo, other.lo) and same_value(self.hi, other.hi)

    def same_length(self, other: Span) -> bool:
        """Provably of one length (x[i + 1:i + 3] and y[i:i + 2])."""
        return same_value(self.raw_length(), other.raw_length())


# -- masks and shifts -------------------------------------------------------------------------

def span_mask(span: Span, shape, axis: int) -> Tracer:
    """bool[shape]: lo <= k < hi along `axis`."""
    iota = bind(iota_p, shape=tuple(shape), dtype=INT, dimension=axis)
    return call_ufunc(np.logical_and, call_ufunc(np.greater_equal, iota, as_int64(span.lo)),
                      call_ufunc(np.less, iota, as_int64(span.hi)))


def mask_of(data: Tracer, spans, axes=None) -> Tracer | None:
    """Where data holds the array's elements (only the spans of `axes`, if given)."""
    mask = None
    for axis, span in enumerate(spans):
        if span is None or (axes is not None and axis not in axes):
            continue
        here = span_mask(span, data.shape, axis)
        mask = here if mask is None else call_ufunc(np.logical_and, mask, here)
    return mask


def masked(data: Tracer, spans, fill, axes=None) -> Tracer:
    """data with `fill` outside the spans (a select: a NaN outside stays outside)."""
    mask = mask_of(data, spans, axes)
    if mask is None:
        return data
    fill = np.asarray(fill, data.dtype)
    return as_kind(bind(select_p, mask, data, broadcast_to(ensure_tracer(fill), data.shape)),
                   "array")


def shifted(data: Tracer, axis: int, offset, size: int) -> Tracer:
    """out[k] = data[k + offset] along axis for k < size (zeros where data has none)."""
    if isinstance(offset, (int, np.integer)) and offset == 0 and data.shape[axis] == size:
        return data
    pad = max(data.shape[axis], size)
    low = [0] * data.ndim
    high = [0] * data.ndim
    low[axis] = high[axis] = pad
    zero = ensure_tracer(np.zeros((), data.dtype))
    padded = bind(pad_p, data, zero, low=tuple(low), high=tuple(high),
                  interior=(0,) * data.ndim)
    starts = [np.int64(0)] * data.ndim
    starts[axis] = call_ufunc(np.add, as_int64(offset), np.int64(pad))
    sizes = list(data.shape)
    sizes[axis] = size
    return as_kind(bind(dynamic_slice_p, padded, *starts, slice_sizes=tuple(sizes)), "array")


def require(ok, value, message: str) -> None:
    """The program checks `ok` when it runs (NumPy's ValueError, with `value`, otherwise)."""
    if isinstance(ok, (bool, np.bool_)):
        if not ok:
            raise ValueError(message.format(value))
        return
    current_trace().require(ok, as_int64(value), message, ValueError)


def require_equal(a, b, message: str) -> None:
    """The program checks a == b when it runs (NumPy's ValueError otherwise)."""
    if not same_value(a, b):
        require(_equal(a, b), a, message)


def _equal(a, b):
    if isinstance(a, Tracer) or isinstance(b, Tracer):
        return call_ufunc(np.equal, as_int64(a), as_int64(b))
    return a == b


def _either(a, b):
    if isinstance(a, (bool, np.bool_)) and isinstance(b, (bool, np.bool_)):
        return a or b
    return call_ufunc(np.logical_or, a, b)


def _pick(pred, a, b):
    """where(pred, a, b) for lengths (ints stay ints when pred is a bool)."""
    if isinstance(pred, (bool, np.bool_)):
        return a if pred else b
    return np_where(pred, as_int64(a), as_int64(b))


# -- aligning operands ------------------------------------------------------------------------

BROADCAST = "operands could not be broadcast together: an array of length {} on an axis where " \
    "another has a different length"


@dataclass
class _Operand:
    data: Any                       # a tracer, or a constant
    spans: tuple                    # right-aligned to the result's axes

    def local(self, axis: int) -> int:
        """Axis `axis` of the result as an axis of data (< 0: data is broadcast along it)."""
        return axis - (len(self.spans) - len(_shape(self.data)))

    def size(self, axis: int) -> int:
        return _shape(self.data)[self.local(axis)]

    def length(self, axis: int):
        span = self.spans[axis]
        local = self.local(axis)
        if span is not None:
            return span.length()
        return 1 if local < 0 else _shape(self.data)[local]

    def same_length(self, axis: int, span: Span) -> bool:
        own = self.spans[axis]
        return own.same_length(span) if own is not None else same_value(
            self.length(axis), span.raw_length())


def _shape(x) -> tuple:
    return x.shape if isinstance(x, Tracer) else np.shape(x)


def _ndim(x) -> int:
    return x.ndim if isinstance(x, Tracer) or getattr(x, "__psc_window__", False) else np.ndim(x)


def align(values, into: bool = False) -> tuple[list, tuple]:
    """Operands brought onto common spans, each one's data shifted where its span starts
    elsewhere; and the result's spans. With `into`, the first value is a write target: the
    others are brought onto its spans (NumPy's setitem broadcasting), never the reverse."""
    ndim = max(_ndim(v) for v in values)
    operands = [_Operand(v.data, (None,) * (ndim - v.ndim) + v.spans)
                if getattr(v, "__psc_window__", False) else _Operand(v, (None,) * ndim)
                for v in values]
    spans = []
    for axis in range(ndim):
        reference = next((op for op in operands if op.spans[axis] is not None), None)
        if reference is None:
            spans.append(None)
        elif into:
            spans.append(_align_into(operands, axis))
        else:
            spans.append(_align_axis(operands, axis, reference))
    return [op.data for op in operands], tuple(spans)


def _members(operands, axis: int):
    """The operands that have this axis with a length that is not a static 1."""
    return [op for op in operands if op.length(axis) is not None and not (
        isinstance(op.length(axis), (int, np.integer)) and op.length(axis) == 1
        and op.spans[axis] is None)]


def _align_axis(operands, axis: int, reference: _Operand) -> Span:
    span = reference.spans[axis]
    members = _members(operands, axis)
    size = max(op.size(axis) for op in members)
    if all(op.same_length(axis, span) for op in members):
        for op in members:
            _place(op, axis, subtract(_lo(op, axis), span.lo), size)
        return span
    return _broadcast_axis(members, axis, size)


def _broadcast_axis(members, axis: int, size: int) -> Span:
    """Lengths known only at run time: NumPy's rule (1 broadcasts, the others must be one
    length), everything moved to start at position 0."""
    lengths = [op.length(axis) for op in members]
    common = 1
    for length in lengths:
        common = _pick(_not_one(length), length, common)
    for op, length in zip(members, lengths, strict=True):
        require(_either(_equal(length, 1), _equal(length, common)), length, BROADCAST)
        _place(op, axis, _lo(op, axis), size, length)
    return Span(0, common)


def _align_into(operands, axis: int) -> Span:
    target, values = operands[0], operands[1:]
    span = target.spans[axis]
    size = target.size(axis)
    for op in _members(values, axis):
        length, same = op.length(axis), op.same_length(axis, span)
        if not same:
            require(_either(_equal(length, 1), _equal(length, span.length())), length,
                    "could not broadcast input array of length {} into a slice of another length")
        _place(op, axis, subtract(_lo(op, axis), span.lo), size, None if same else length)
    return span


def _lo(op: _Operand, axis: int):
    return op.spans[axis].lo if op.spans[axis] is not None else 0


def _not_one(length):
    if isinstance(length, Tracer):
        return call_ufunc(np.not_equal, as_int64(length), np.int64(1))
    return length != 1


def _place(op: _Operand, axis: int, offset, size: int, length=None) -> None:
    """op's data shifted by offset to `size` positions along the axis; where its length may be
    1 at run time (`length` given), its one element (at its own start) spread along the axis
    in that case."""
    local = op.local(axis)
    data = ensure_tracer(op.data)
    moved = shifted(data, local, offset, size)
    if length is not None and not (isinstance(length, (int, np.integer)) and length != 1):
        first = shifted(data, local, _lo(op, axis), 1)
        spread = broadcast_to(first, moved.shape)
        moved = as_kind(np_where(_equal(length, 1), spread, moved), "array")
    op.data = moved
