"""NumPy's functions that cut, repeat and rearrange arrays, on tracers: split, array_split,
hsplit/vsplit/dsplit, tile, repeat, roll, pad, diff, append, meshgrid, ix_, broadcast_arrays,
atleast_3d.

Every size here is static. Where NumPy copies elements by a rule (pad's edge, reflect,
symmetric and wrap modes, repeat with per-element counts), NumPy itself computes the source
index of every output position on an `arange`, and the tracer is gathered with it: the rule
is NumPy's, not a re-implementation of it.
"""
from __future__ import annotations

import itertools
import operator

import numpy as np
from numpy.lib._arraypad_impl import _as_pairs

from ..layout import ViewOp
from ..primitives import pad_p
from ..tracing import Tracer, ViewStep, bind
from .base import (as_array, as_kind, broadcast_to, convert, copy_of, ensure_tracer, implements,
                   normalize_axes, reshape, static_slice, unsupported)
from .indexing import getitem
from .shape import (np_concatenate, np_flip, np_reshape, np_stack, np_swapaxes,
                    np_transpose, read_only)
from .sorting import take_in_bounds
from .ufuncs import call_ufunc


def _along(axis: int, index) -> tuple:
    return (slice(None),) * axis + (index,)


# -- split ------------------------------------------------------------------------------------

@implements(np.array_split)
def np_array_split(ary, indices_or_sections, axis=0):
    ary = as_array(ary)
    total = ary.shape[axis]
    try:
        len(indices_or_sections)
        points = [0] + list(indices_or_sections) + [total]
    except TypeError:
        sections = operator.index(indices_or_sections)
        if sections <= 0:
            raise ValueError("number sections must be larger than 0.") from None
        each, extras = divmod(total, sections)
        sizes = [0] + extras * [each + 1] + (sections - extras) * [each]
        points = np.array(sizes, dtype=np.intp).cumsum().tolist()
    moved = np_swapaxes(ary, axis, 0)
    return [np_swapaxes(getitem(moved, slice(start, stop)), axis, 0)
            for start, stop in zip(points[:-1], points[1:], strict=True)]


@implements(np.split)
def np_split(ary, indices_or_sections, axis=0):
    ary = as_array(ary)
    try:
        len(indices_or_sections)
    except TypeError:
        sections = indices_or_sections
        if ary.shape[axis] % sections:
            raise ValueError("array split does not result in an equal division") from None
    return np_array_split(ary, indices_or_sections, axis)


@implements(np.hsplit)
def np_hsplit(ary, indices_or_sections):
    ary = as_array(ary)
    if ary.ndim == 0:
        raise ValueError("hsplit only works on arrays of 1 or more dimensions")
    return np_split(ary, indices_or_sections, 1 if ary.ndim > 1 else 0)


@implements(np.vsplit)
def np_vsplit(ary, indices_or_sections):
    if as_array(ary).ndim < 2:
        raise ValueError("vsplit only works on arrays of 2 or more dimensions")
    return np_split(ary, indices_or_sections, 0)


@implements(np.dsplit)
def np_dsplit(ary, indices_or_sections):
    if as_array(ary).ndim < 3:
        raise ValueError("dsplit only works on arrays of 3 or more dimensions")
    return np_split(ary, indices_or_sections, 2)


# -- tile, repeat -----------------------------------------------------------------------------

def _repeat_each(x: Tracer, count: int, axis: int) -> Tracer:
    """Every element along axis repeated `count` times, in place: broadcast, then merge."""
    opened = reshape(x, x.shape[:axis + 1] + (1,) + x.shape[axis + 1:])
    wide = broadcast_to(opened, x.shape[:axis + 1] + (count,) + x.shape[axis + 1:])
    return reshape(wide, x.shape[:axis] + (x.shape[axis] * count,) + x.shape[axis + 1:])


@implements(np.tile)
def np_tile(A, reps):
    try:
        reps = tuple(operator.index(r) for r in reps)
    except TypeError:
        reps = (operator.index(reps),)
    a = as_array(A)
    c = reshape(a, (1,) * (len(reps) - a.ndim) + a.shape)
    reps = (1,) * (c.ndim - len(reps)) + reps
    if any(r < 0 for r in reps):
        raise ValueError("negative dimensions are not allowed")
    interleaved = tuple(d for r, s in zip(reps, c.shape, strict=True) for d in (r, s))
    opened = reshape(c, tuple(d for s in c.shape for d in (1, s)))
    wide = broadcast_to(opened, interleaved)
    return as_kind(reshape(wide, tuple(r * s for r, s in zip(reps, c.shape, strict=True))), "array")


@implements(np.repeat)
def np_repeat(a, repeats, axis=None):
    if isinstance(repeats, Tracer):
        raise unsupported("np.repeat with traced repeats (its result has a data-dependent "
                          "shape)", "pass repeats as a static value")
    a = as_array(a)
    if axis is None:
        a, axis = reshape(a, (a.size,)), 0
    (ax,) = normalize_axes(axis, a.ndim)
    counts = np.asarray(repeats)
    if counts.ndim == 0 or counts.size == 1:
        count = operator.index(counts.reshape(()).item() if counts.ndim else counts.item())
        if count < 0:
            raise ValueError("repeats may not contain negative values.")
        return as_kind(_repeat_each(a, count, ax), "array")
    source = np.repeat(np.arange(a.shape[ax]), counts)
    return as_kind(getitem(a, _along(ax, source)), "array")


# -- roll -------------------------------------------------------------------------------------

def _roll_static(a: Tracer, offset: int, ax: int) -> Tracer:
    n = a.shape[ax]
    offset %= n or 1
    if not offset:
        return a
    return np_concatenate([getitem(a, _along(ax, slice(-offset, None))),
                           getitem(a, _along(ax, slice(None, -offset)))], axis=ax)


def _roll_traced(a: Tracer, shift: Tracer, ax: int) -> Tracer:
    n = a.shape[ax]
    if n == 0:
        return a
    positions = call_ufunc(np.subtract, np.arange(n, dtype=np.int64), convert(shift, np.int64))
    return take_in_bounds(a, call_ufunc(np.remainder, positions, np.int64(n)), ax)


@implements(np.roll)
def np_roll(a, shift, axis=None):
    a = as_array(a)
    if axis is None:
        return as_kind(np_reshape(np_roll(reshape(a, (a.size,)), shift, 0), a.shape), "array")
    axes = axis if isinstance(axis, (tuple, list)) else (axis,)
    axes = [normalize_axes(ax, a.ndim)[0] for ax in axes]
    if isinstance(shift, Tracer):
        if shift.ndim != 0 or shift.dtype.kind not in "iu" or len(axes) != 1:
            raise unsupported("np.roll with a traced shift that is not one integer",
                              "pass the shift as a static value")
        return as_kind(_roll_traced(a, shift, axes[0]), "array")
    pairs = np.broadcast(shift, axes)
    if pairs.ndim > 1:
        raise ValueError("'shift' and 'axis' should be scalars or 1D sequences")
    shifts = dict.fromkeys(range(a.ndim), 0)
    for sh, ax in pairs:
        shifts[ax] += int(sh)
    result = a
    for ax, offset in shifts.items():
        result = _roll_static(result, offset, ax)
    return as_kind(result if result is not a else copy_tracer(a), "array")


def copy_tracer(a: Tracer) -> Tracer:
    return copy_of(a)


# -- pad --------------------------------------------------------------------------------------

_COPY_MODES = ("edge", "reflect", "symmetric", "wrap")


def _pad_pairs(pad_width, ndim):
    if isinstance(pad_width, dict):
        seq = [(0, 0)] * ndim
        for ax, width in pad_width.items():
            seq[ax] = (width, width) if isinstance(width, int) else tuple(width)
        pad_width = seq
    pad_width = np.asarray(pad_width)
    if pad_width.dtype.kind != "i":
        raise TypeError("`pad_width` must be of integral type.")
    return [tuple(int(w) for w in pair) for pair in _as_pairs(pad_width, ndim, as_index=True)]


def _constant_pad(a: Tracer, pairs, values) -> Tracer:
    if isinstance(values, Tracer):
        if values.ndim != 0:
            raise unsupported("np.pad with a traced constant_values that is not one scalar")
        value_pairs = [(values, values)] * a.ndim
    else:
            value_pairs = _as_pairs(np.asarray(values), a.ndim)
    for ax, ((before, after), (v_before, v_after)) in enumerate(zip(pairs, value_pairs, strict=True)):
        for width, value, at_end in ((before, v_before, False), (after, v_after, True)):
            if width:
                a = _pad_axis(a, ax, width, value, at_end)
    return a


def _pad_axis(a, ax, width, value, at_end):
    low = [0] * a.ndim
    high = [0] * a.ndim
    (high if at_end else low)[ax] = width
    value = ensure_tracer(convert(value, a.dtype)) if isinstance(value, Tracer) else \
        np.asarray(value).astype(a.dtype)
    return bind(pad_p, a, value, low=tuple(low), high=tuple(high),
                interior=(0,) * a.ndim)


def _copy_pad(a: Tracer, pairs, mode, kwargs) -> Tracer:
    if kwargs.get("reflect_type", "even") != "even":
        raise unsupported(f"np.pad(..., mode={mode!r}, reflect_type='odd')")
    for ax, pair in enumerate(pairs):
        if pair != (0, 0):
            source = np.pad(np.arange(a.shape[ax]), pair, mode=mode)
            a = getitem(a, _along(ax, source))
    return a


@implements(np.pad)
def np_pad(array, pad_width, mode="constant", **kwargs):
    a = as_array(array)
    pairs = _pad_pairs(pad_width, a.ndim)
    allowed = {"constant": {"constant_values"}, "empty": set(), "reflect": {"reflect_type"},
               "symmetric": {"reflect_type"}, "edge": set(), "wrap": set()}
    if callable(mode) or mode not in allowed:
        if mode in ("linear_ramp", "maximum", "mean", "median", "minimum") or callable(mode):
            raise unsupported(f"np.pad(..., mode={mode!r})",
                              "use mode 'constant', 'edge', 'reflect', 'symmetric' or 'wrap'")
        raise ValueError(f"mode '{mode}' is not supported")
    extra = set(kwargs) - allowed[mode]
    if extra:
        raise ValueError(f"unsupported keyword arguments for mode '{mode}': {extra}")
    if mode in _COPY_MODES:
        return as_kind(_copy_pad(a, pairs, mode, kwargs), "array")
    return as_kind(_constant_pad(a, pairs, kwargs.get("constant_values", 0)), "array")


# -- diff, append -----------------------------------------------------------------------------

def _edge_block(value, a: Tracer, ax: int):
    value = as_array(value)
    if value.ndim == 0:
        shape = list(a.shape)
        shape[ax] = 1
        value = broadcast_to(value, tuple(shape))
    return value


@implements(np.diff)
def np_diff(a, n=1, axis=-1, prepend=np._NoValue, append=np._NoValue):
    if n == 0:
        return a
    if n < 0:
        raise ValueError(f"order must be non-negative but got {n!r}")
    a = as_array(a)
    if a.ndim == 0:
        raise ValueError("diff requires input that is at least one dimensional")
    (ax,) = normalize_axes(axis, a.ndim)
    parts = [a]
    if prepend is not np._NoValue:
        parts.insert(0, _edge_block(prepend, a, ax))
    if append is not np._NoValue:
        parts.append(_edge_block(append, a, ax))
    if len(parts) > 1:
        a = np_concatenate(parts, ax)
    op = np.not_equal if a.dtype == np.bool_ else np.subtract
    for _ in range(n):
        a = call_ufunc(op, getitem(a, _along(ax, slice(1, None))),
                       getitem(a, _along(ax, slice(None, -1))))
    return as_kind(a, "array")


@implements(np.append)
def np_append(arr, values, axis=None):
    arr, values = as_array(arr), as_array(values)
    if axis is None:
        arr = reshape(arr, (arr.size,)) if arr.ndim != 1 else arr
        values = reshape(values, (values.size,))
        axis = arr.ndim - 1
    return np_concatenate([arr, values], axis=axis)


# -- grids ------------------------------------------------------------------------------------

@implements(np.broadcast_arrays)
def np_broadcast_arrays(*args, subok=False):
    arrays = [as_array(a) for a in args]
    shape = np.broadcast_shapes(*(a.shape for a in arrays))
    return tuple(as_kind(broadcast_to(a, shape), "array") for a in arrays)


@implements(np.meshgrid)
def np_meshgrid(*xi, copy=True, sparse=False, indexing="xy"):
    if indexing not in ("xy", "ij"):
        raise ValueError("Valid values for `indexing` are 'xy' and 'ij'.")
    ndim = len(xi)
    ones = (1,) * ndim
    output = []
    for i, x in enumerate(xi):
        x = as_array(x)
        shape = list(ones)
        shape[i] = x.size
        if indexing == "xy" and ndim > 1 and i < 2:
            shape[0], shape[1] = (1, x.size) if i == 0 else (x.size, 1)
        output.append(as_kind(reshape(x, tuple(shape)), "array"))
    if not sparse:
        output = list(np_broadcast_arrays(*output))
    return tuple(output)


@implements(np.ix_)
def np_ix_(*args):
    out = []
    nd = len(args)
    if any(isinstance(new, Tracer) and new.ndim != 1 for new in args):
        raise ValueError("Cross index must be 1 dimensional")
    for k, new in enumerate(args):
        if isinstance(new, Tracer):
            if new.dtype == np.bool_:
                raise unsupported("np.ix_ with a traced boolean mask (its result has a data-"
                                  "dependent shape)")
        else:
            new = np.asarray(new)
            if new.size == 0:
                new = new.astype(np.intp)
            if new.dtype == np.bool_ and new.ndim == 1:
                (new,) = new.nonzero()
        if new.ndim != 1:
            raise ValueError("Cross index must be 1 dimensional")
        shape = (1,) * k + (new.size,) + (1,) * (nd - k - 1)
        out.append(as_kind(reshape(new, shape), "array") if isinstance(new, Tracer)
                   else new.reshape(shape))
    return tuple(out)


@implements(np.atleast_3d)
def np_atleast_3d(*arys):
    out = []
    for a in arys:
        a = as_array(a)
        if a.ndim == 0:
            a = np_reshape(a, (1, 1, 1))
        elif a.ndim == 1:
            a = np_reshape(a, (1, a.shape[0], 1))
        elif a.ndim == 2:
            a = np_reshape(a, a.shape + (1,))
        out.append(a)
    return out[0] if len(out) == 1 else tuple(out)


@implements(np.dstack)
def np_dstack(tup):
    if isinstance(tup, Tracer):
        raise TypeError("arrays to stack must be passed as a sequence (a list or tuple)")
    return np_concatenate([np_atleast_3d(a) for a in tup], axis=2)


@implements(np.rot90)
def np_rot90(m, k=1, axes=(0, 1)):
    """A view, as in NumPy: a flip and a transpose of m."""
    axes = tuple(axes)
    if len(axes) != 2:
        raise ValueError("len(axes) must be 2.")
    m = ensure_tracer(m)
    if axes[0] == axes[1] or abs(axes[0] - axes[1]) == m.ndim:
        raise ValueError("Axes must be different.")
    if not all(-m.ndim <= a < m.ndim for a in axes):
        raise ValueError(f"Axes={axes} out of range for array of ndim={m.ndim}.")
    k = operator.index(k) % 4
    if k == 0:
        return getitem(m, slice(None))
    if k == 2:
        return np_flip(np_flip(m, axes[0]), axes[1])
    order = list(range(m.ndim))
    order[axes[0]], order[axes[1]] = order[axes[1]], order[axes[0]]
    if k == 1:
        return np_transpose(np_flip(m, axes[1]), order)
    return np_flip(np_transpose(m, order), axes[1])


# sliding_window_view reads each window position as one shifted slice of the array (a fusion
# that reads the array once per window element): up to this many elements per window.
WINDOW_ELEMENTS = 64


@implements(np.lib.stride_tricks.sliding_window_view)
def np_sliding_window_view(x, window_shape, axis=None, *, subok=False, writeable=False):
    """A read-only view, as in NumPy, of every window of x: window k along an axis is the
    slice starting at k."""
    if writeable:
        raise unsupported("sliding_window_view(..., writeable=True) (windows overlap: a write "
                          "lands in several of them)", "write into x itself")
    x = ensure_tracer(x).with_kind("array")
    window = tuple(window_shape) if np.iterable(window_shape) else (window_shape,)
    window = tuple(operator.index(w) for w in window)
    if any(w < 0 for w in window):
        raise ValueError("`window_shape` cannot contain negative values")
    if axis is None:
        if len(window) != x.ndim:
            raise ValueError(f"Since axis is `None`, must provide window_shape for all "
                             f"dimensions of `x`; got {len(window)} window_shape elements and "
                             f"`x.ndim` is {x.ndim}.")
        axes = tuple(range(x.ndim))
    else:
        axes = tuple(normalize_axes(a, x.ndim)[0] for a in (
            (axis,) if isinstance(axis, (int, np.integer)) else axis))
        if len(window) != len(axes):
            raise ValueError(f"Must provide matching length window_shape and axis; got "
                             f"{len(window)} window_shape elements and {len(axes)} axes "
                             f"elements.")
    trimmed = list(x.shape)
    for w, ax in zip(window, axes, strict=True):
        if trimmed[ax] < w:
            raise ValueError("window shape cannot be larger than input array shape")
        trimmed[ax] -= w - 1
    if int(np.prod(window)) > WINDOW_ELEMENTS:
        raise unsupported(f"sliding_window_view over windows of more than {WINDOW_ELEMENTS} "
                          f"elements", "use np.convolve, or a cumulative sum's differences "
                          "(c = np.cumsum(x); c[w:] - c[:-w]), for long windows")

    def read(base):
        if 0 in trimmed or 0 in window:
            return broadcast_to(convert(np.zeros((), base.dtype), base.dtype),
                                tuple(trimmed) + window)
        windows = []
        for offsets in itertools.product(*(range(w) for w in window)):
            starts = [0] * base.ndim
            for k, ax in zip(offsets, axes, strict=True):
                starts[ax] += k
            windows.append(static_slice(base, starts, [s + n for s, n in zip(
                starts, trimmed, strict=True)]))
        stacked = np_stack(windows, axis=-1)
        return np_reshape(stacked, tuple(trimmed) + window)
    step = ViewStep(read=read, write=read_only, op=ViewOp("sliding_window", (window, axes)),
                    describe=f"sliding_window{window}")
    return x.view_step(step)
