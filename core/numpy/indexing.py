"""Indexing tracers the way NumPy does: `x[...]` reads and `x[...] = v` writes.

- Basic indices (ints, slices with any step, None, Ellipsis), all static: slice/rev/reshape;
  the result is a view, so writing into it writes into x.
- Traced integer scalars (a loop index) among basic indices: a dynamic_slice view for the
  traced integers, then a basic view of that: also a view. NumPy raises IndexError for an
  index out of bounds; the run checks it (a `RuntimeCheck`) and raises before writing back.
- Anything else (integer arrays, static boolean masks, mixes): the flat position of every
  selected element is computed (statically by NumPy itself indexing a grid of positions where
  the index is static, with traced arithmetic where it is not), then one gather (a copy, as
  in NumPy) or scatter on the flattened array. So result shapes, the placement of broadcast
  advanced dimensions, and IndexErrors are NumPy's. A scatter with repeated positions writes
  the value NumPy writes last, whatever order XLA applies updates in.
- A traced boolean mask selects a data-dependent number of elements: `x[mask]` is a
  `masked.MaskedSelection` (reductions and elementwise arithmetic on it compile; anything that
  needs its length is refused), and `x[mask] = v` is a select.

Writes cast the value as NumPy's setitem does (unsafe casting; a complex scalar into a real
array is NumPy's TypeError), and broadcast it as NumPy does (leading length-1 axes dropped).
"""
from __future__ import annotations

import operator

import numpy as np

from ..primitives import (concatenate_p, cummin_p, dynamic_slice_p, dynamic_update_slice_p,
                          gather_p, rev_p, scatter_p, slice_p, sort_p)
from ..layout import Layout, ViewOp
from ..tracing import Tracer, ViewStep, bind
from .affine import interval
from .base import (as_kind, broadcast_to, convert, ensure_tracer, full, reshape,
                   unsupported)
from .checks import require_in_bounds
from .masked import MaskedSelection, in_data_coordinates, select_masked
from .masked_writes import basic_positions, dynamic_positions, same_positions
from .setitem_values import fit_value
from .ufuncs import call_ufunc, np_where


def _as_tuple(idx) -> tuple:
    return idx if isinstance(idx, tuple) else (idx,)


def _is_int(entry) -> bool:
    return isinstance(entry, (int, np.integer)) and not isinstance(entry, (bool, np.bool_))


def _is_basic_static(entry) -> bool:
    return entry is None or entry is Ellipsis or isinstance(entry, slice) or _is_int(entry)


def _is_traced_int_scalar(entry) -> bool:
    return isinstance(entry, Tracer) and entry.ndim == 0 and entry.dtype.kind in "iu"


def _is_basic(idx: tuple) -> bool:
    """Basic indexing (a view in NumPy), possibly with traced integer scalars."""
    return all(_is_basic_static(e) or _is_traced_int_scalar(e) for e in idx)


def _static_or_entry(entry):
    """The index entry as NumPy takes it: lists become arrays, the rest stays as it is."""
    array = _static_array(entry)
    return entry if array is None else array


def _static_array(entry):
    """A list/tuple/ndarray/bool index, as NumPy would take it; None if entry is not one."""
    if isinstance(entry, (list, tuple, np.ndarray, bool, np.bool_)):
        return np.asarray(entry)
    return None


def _check_index(idx):
    for entry in idx:
        if isinstance(entry, Tracer):
            if entry.dtype.kind not in "iu":
                raise IndexError("only integers, slices (`:`), ellipsis (`...`), numpy.newaxis "
                                 "(`None`) and integer or boolean arrays are valid indices")
        elif isinstance(entry, slice):
            for part in (entry.start, entry.stop, entry.step):
                if isinstance(part, Tracer):
                    raise unsupported("a slice bound that is a traced value (the slice's length "
                                      "would depend on it)",
                                      "use a static bound, or np.where over the whole array")


def _consumed_dims(entry) -> int:
    if entry is None or entry is Ellipsis:
        return 0
    if isinstance(entry, (np.ndarray, bool, np.bool_)) and np.asarray(entry).dtype == np.bool_:
        return np.ndim(entry)
    return 1


def _has_ellipsis(idx: tuple) -> bool:
    return any(e is Ellipsis for e in idx)     # not `in`: that would compare arrays with ==


def _expand_ellipsis(idx: tuple, ndim: int) -> tuple:
    if sum(e is Ellipsis for e in idx) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    consumed = sum(_consumed_dims(e) for e in idx)
    if consumed > ndim:
        raise IndexError(f"too many indices for array: array is {ndim}-dimensional, but "
                         f"{consumed} were indexed")
    if not _has_ellipsis(idx):
        return idx + (slice(None),) * (ndim - consumed)
    at = next(i for i, e in enumerate(idx) if e is Ellipsis)
    return idx[:at] + (slice(None),) * (ndim - consumed) + idx[at + 1:]


def _zeros_view(shape) -> np.ndarray:
    """A read-only array of this shape, every element the one element of a real 0-d array
    (NumPy's broadcast_to: all strides 0, so any index NumPy accepts stays inside it): NumPy
    checks advanced indices and works out their shapes on it."""
    return np.broadcast_to(np.zeros((), np.uint8), tuple(shape))


# -- reading ----------------------------------------------------------------------------------

def index_tuple(idx) -> tuple:
    """idx as a tuple of entries, lists read as NumPy reads them (arrays; [] of intp), traced
    entries whose value is known (a mask or index array made from constants) as that value."""
    return tuple(_list_index(e) if isinstance(e, list) else _known_entry(e)
                 for e in _as_tuple(idx))


def _known_entry(entry):
    if not isinstance(entry, Tracer):
        return entry
    value = entry.known_value()
    if value is None:
        return entry
    return value[()] if value.ndim == 0 else value


def _list_index(entry: list) -> np.ndarray:
    arr = np.asarray(entry)
    return arr.astype(np.intp) if arr.size == 0 else arr


# Slices with traced bounds are `traced_slices`' (a module above this one): it registers here.
_TRACED_SLICES: tuple | None = None


def register_traced_slices(detect, read, write) -> None:
    global _TRACED_SLICES
    _TRACED_SLICES = (detect, read, write)


def _traced_slices(idx: tuple, value=None) -> bool:
    return _TRACED_SLICES is not None and (
        _TRACED_SLICES[0](idx) or getattr(value, "__psc_window__", False))


def expand_ellipsis(idx: tuple, ndim: int) -> tuple:
    return _expand_ellipsis(idx, ndim)


def getitem(x: Tracer, idx):
    idx = index_tuple(idx)
    if _traced_mask_at(idx) is not None:
        view, mask, lead = _masked_view(x, idx)
        return select_masked(view, mask, lead)
    if _traced_slices(idx):
        return _TRACED_SLICES[1](x, idx)
    _check_index(idx)
    if _is_basic(idx):
        result = indexed_view(x, idx)
    else:
        result = _gather(x, idx)
    if result.ndim == 0 and not _has_ellipsis(idx):
        return result.detached("scalar")       # NumPy hands back a scalar: a copy
    return result


def indexed_view(x: Tracer, idx: tuple) -> Tracer:
    """x[idx] for basic indices (traced integer scalars allowed): a view of x."""
    if not any(isinstance(e, Tracer) for e in idx):
        return _basic_view(x, idx)
    full = _expand_ellipsis(idx, x.ndim)
    dynamic = tuple(e if isinstance(e, Tracer) else slice(None) for e in full if e is not None)
    rest = tuple(e for e in full if not isinstance(e, Tracer))
    return _basic_view(_dynamic_view(x, dynamic), rest)


def _basic_view(x: Tracer, idx: tuple) -> Tracer:
    x.layout()[idx]   # the index checked as NumPy checks it (its IndexError)
    if all(isinstance(e, slice) and e == slice(None) for e in _expand_ellipsis(idx, x.ndim)):
        return x.view_step(ViewStep(lambda b: b, lambda b, new: new, ViewOp("index", idx), "[...]",
                               positions=same_positions))
    step = ViewStep(read=lambda base: basic_read(base, idx),
                    write=lambda base, new: basic_write(base, idx, new), op=ViewOp("index", idx),
                    describe=f"[{idx}]",
                    positions=lambda coords: basic_positions(_normalized(idx, x.shape), coords))
    return x.with_kind("array").view_step(step)


def _normalized(idx: tuple, shape) -> list[tuple]:
    """Per entry: ('new',), ('int', i) or ('slice', start, stop, step), ints wrapped."""
    out = []
    dims = iter(shape)
    for entry in _expand_ellipsis(idx, len(shape)):
        if entry is None:
            out.append(("new",))
            continue
        n = next(dims)
        if isinstance(entry, slice):
            out.append(("slice",) + entry.indices(n))
        else:
            i = operator.index(entry)
            if not -n <= i < n:
                raise IndexError(f"index {i} is out of bounds for axis with size {n}")
            out.append(("int", i % n))
    return out


def _slice_len(start, stop, step) -> int:
    return len(range(start, stop, step))


def _forward(start, stop, step) -> tuple[int, int, int]:
    """The same elements as range(start, stop, step), as (first, length, positive step)."""
    length = _slice_len(start, stop, step)
    if not length:
        return 0, 0, 1                   # (start may be -1: x[::-1] of an empty axis)
    if step > 0:
        return start, length, abs(step)
    return start + (length - 1) * step, length, -step


def basic_read(x: Tracer, idx: tuple) -> Tracer:
    starts, limits, strides, reverse, out_shape = [], [], [], [], []
    for part in _normalized(idx, x.shape):
        if part[0] == "new":
            out_shape.append(1)
            continue
        if part[0] == "int":
            starts.append(part[1]), limits.append(part[1] + 1), strides.append(1)
            continue
        first, length, step = _forward(*part[1:])
        if part[3] < 0 and length > 1:
            reverse.append(len(out_shape))
        starts.append(first)
        limits.append(first + (length - 1) * step + 1 if length else first)
        strides.append(step)
        out_shape.append(length)
    value = x
    if (tuple(starts), tuple(limits), tuple(strides)) != ((0,) * x.ndim, x.shape, (1,) * x.ndim):
        value = bind(slice_p, value, start_indices=tuple(starts),
                     limit_indices=tuple(limits), strides=tuple(strides))
    value = reshape(value, tuple(out_shape))
    if reverse:
        value = bind(rev_p, value, dimensions=tuple(reverse))
    return value


def basic_write(x: Tracer, idx: tuple, new) -> Tracer:
    """x with the elements that x[idx] selects replaced by new (broadcast and cast)."""
    selected = Layout.c_order(x.shape)[idx].shape
    new = fit_value(new, selected, x.dtype)
    parts = [p for p in _normalized(idx, x.shape) if p[0] != "new"]
    new = reshape(new, tuple(1 if p[0] == "int" else _slice_len(*p[1:]) for p in parts))
    flips = tuple(d for d, p in enumerate(parts) if p[0] == "slice" and p[3] < 0)
    if flips:
        new = bind(rev_p, new, dimensions=flips)
    forward = [(p[1], 1, 1) if p[0] == "int" else _forward(*p[1:]) for p in parts]
    if any(length == 0 for _, length, _ in forward):
        return x
    if all(step == 1 for _, _, step in forward):
        starts = [np.int64(first) for first, _, _ in forward]
        return bind(dynamic_update_slice_p, x, new, *starts)
    grid = tuple(slice(first, first + (length - 1) * step + 1, step)
                 for first, length, step in forward)
    return _scatter(x, static_positions(x.shape, grid), new)


# -- traced integer scalars: dynamic_slice views ----------------------------------------------

def _dynamic_starts(shape, idx: tuple) -> list:
    """Start indices for dynamic_slice: each traced index wrapped once into [0, n) (unless the
    loop's range proves it is already there)."""
    starts = []
    for entry, n in zip(idx, shape, strict=True):
        if isinstance(entry, Tracer):
            index = convert(entry, np.int64)
            if not _inside(entry, n):
                wrapped = call_ufunc(np.add, index, np.int64(n))
                index = np_where(call_ufunc(np.less, index, np.int64(0)), wrapped, index)
            starts.append(index)
        else:
            starts.append(np.int64(0))
    return starts


def _inside(index: Tracer, n: int) -> bool:
    """Whether every value a traced index takes is in [0, n) (a loop index over a range)."""
    span = interval(index)
    return span is not None and 0 <= span[0] and span[1] < n


def _dynamic_view(x: Tracer, idx: tuple) -> Tracer:
    """x[idx] where idx holds one traced integer or `:` per axis of x (the first step of
    indexed_view): dynamic_slice, a view. Each traced index is checked at run time."""
    for axis, entry in enumerate(idx):
        if isinstance(entry, Tracer):
            if x.shape[axis] == 0:
                raise IndexError(f"index is out of bounds for axis {axis} with size 0")
            if not _inside(entry, x.shape[axis]):
                require_in_bounds(entry, x.shape[axis], axis)
    sizes = tuple(1 if isinstance(e, Tracer) else n for e, n in zip(idx, x.shape, strict=True))
    out_shape = tuple(n for e, n in zip(idx, x.shape, strict=True) if not isinstance(e, Tracer))

    starts = _dynamic_starts(x.shape, idx)

    def read(base):
        sliced = bind(dynamic_slice_p, base, *starts, slice_sizes=sizes)
        return reshape(sliced, out_shape)

    def write(base, new):
        return bind(dynamic_update_slice_p, base, reshape(new, sizes), *starts)

    def rebuild(arr, *values):
        found = iter(values)
        return arr[tuple(next(found) if isinstance(e, Tracer) else e for e in idx)]

    static_idx = tuple(0 if isinstance(e, Tracer) else e for e in idx)
    step = ViewStep(read=read, write=write, op=ViewOp("index", static_idx),
                    describe=f"[{idx}] (traced index)",
                    operands=tuple(s for s, e in zip(starts, idx, strict=True)
                                   if isinstance(e, Tracer)), rebuild=rebuild,
                    positions=lambda coords: dynamic_positions(idx, starts, coords))
    return x.with_kind("array").view_step(step)


# -- gather/scatter through flat positions ----------------------------------------------------

def static_positions(shape, idx) -> np.ndarray:
    """The flat position in an array of `shape` of every element that `[idx]` selects, by
    NumPy indexing a (broadcast, never materialized) grid of positions: NumPy's shapes and
    NumPy's IndexErrors."""
    total = np.asarray(_zeros_view(shape)[idx], dtype=np.int64) * 0
    stride = 1
    for axis in range(len(shape) - 1, -1, -1):
        along = np.arange(shape[axis], dtype=np.int64) * stride
        grid = np.broadcast_to(along.reshape((-1,) + (1,) * (len(shape) - axis - 1)), shape)
        total = total + grid[idx]
        stride *= shape[axis]
    return np.asarray(total)


def flat_positions(x: Tracer, idx: tuple):
    """The flat position in x of every element x[idx] selects, shaped like x[idx].

    The static part comes from NumPy (traced arrays replaced by zeros); each traced index
    array adds its (wrapped, clamped, run-time checked) value times its axis' stride.
    Returns positions: an ndarray, or a tracer when the index holds traced values."""
    static_idx = tuple(np.zeros(e.shape, np.intp) if isinstance(e, Tracer) else
                       _static_or_entry(e) for e in idx)
    positions = static_positions(x.shape, static_idx)
    traced = [(i, e) for i, e in enumerate(idx) if isinstance(e, Tracer)]
    if not traced:
        return positions
    dims = _entry_dims(idx, x.ndim)
    strides = [int(np.prod(x.shape[d + 1:], dtype=np.int64)) for d in range(x.ndim)]
    block_shape, block_at = _advanced_block(idx, static_idx, x.ndim)
    result = ensure_tracer(positions)
    for i, entry in traced:
        n = x.shape[dims[i]]
        require_in_bounds(entry, n, dims[i])
        index = convert(entry, np.int64)
        index = np_where(call_ufunc(np.less, index, np.int64(0)),
                         call_ufunc(np.add, index, np.int64(n)), index)
        index = call_ufunc(np.minimum, call_ufunc(np.maximum, index, np.int64(0)),
                           np.int64(max(n - 1, 0)))
        contribution = broadcast_to(call_ufunc(np.multiply, index, np.int64(strides[dims[i]])),
                                    block_shape)
        shape = (1,) * block_at + block_shape + (1,) * (
            positions.ndim - block_at - len(block_shape))
        result = call_ufunc(np.add, result, reshape(contribution, shape))
    return result


def _entry_dims(idx, ndim):
    """For each index entry, the first axis of x it indexes."""
    dims, d = {}, 0
    n_consumed = sum(_consumed_dims(e) for e in idx)
    for i, e in enumerate(idx):
        if e is Ellipsis:
            d += ndim - n_consumed
        elif e is not None:
            dims[i] = d
            d += _consumed_dims(e)
    return dims


def _advanced_block(idx, static_idx, ndim):
    """Shape of the broadcast advanced indices and where NumPy puts them in the result:
    in place when the advanced indices are next to each other, else first."""
    has_arrays = any(isinstance(e, np.ndarray) for e in static_idx)
    advanced = [i for i, e in enumerate(static_idx)
                if isinstance(e, np.ndarray) or (has_arrays and _is_int(e))]
    arrays = [np.asarray(static_idx[i]) for i in advanced]
    arrays = [np.nonzero(a)[0] if a.dtype == np.bool_ else a for a in arrays]
    block = np.broadcast_shapes(*(a.shape for a in arrays))
    if advanced != list(range(advanced[0], advanced[-1] + 1)):
        return block, 0
    n_consumed = sum(_consumed_dims(e) for e in idx)
    before = sum(ndim - n_consumed if e is Ellipsis else 1 for e in idx[:advanced[0]])
    return block, before


def _take(flat: Tracer, positions) -> Tracer:
    """flat[positions] for a 1-D tracer and int positions (ndarray or tracer): a gather."""
    indices = reshape(positions, tuple(np.shape(positions)) + (1,))
    return bind(gather_p, flat, indices, num_indexed=1)


def _gather(x: Tracer, idx: tuple) -> Tracer:
    positions = flat_positions(x, idx)
    if np.size(positions) == 0 or x.size == 0:
        return as_kind(full(np.shape(positions), 0, x.dtype), "array")   # nothing to take
    return as_kind(_take(reshape(x, (x.size,)), positions), "array")


def _scatter(x: Tracer, positions, new: Tracer) -> Tracer:
    """x with x.flat[positions] = new, the last of repeated positions winning (as in NumPy)."""
    if np.size(positions) == 0:
        return x
    flat_positions_ = reshape(positions, (int(np.prod(np.shape(positions))),))
    updates = reshape(new, np.shape(flat_positions_))
    if isinstance(flat_positions_, Tracer):
        flat_positions_, updates = _last_writer(flat_positions_, updates)
    else:
        keep = _last_occurrences(flat_positions_)
        if keep is not None:
            flat_positions_, updates = flat_positions_[keep], _take(updates, keep)
    flat = reshape(x, (x.size,))
    indices = reshape(flat_positions_, tuple(np.shape(flat_positions_)) + (1,))
    out = bind(scatter_p, flat, indices, updates, num_indexed=1, mode="set")
    return reshape(out, x.shape)


def _last_occurrences(positions: np.ndarray) -> np.ndarray | None:
    """Indices of the last occurrence of each distinct position (None when all distinct)."""
    _, first_from_end = np.unique(positions[::-1], return_index=True)
    if len(first_from_end) == len(positions):
        return None
    return np.sort(len(positions) - 1 - first_from_end)


def _last_writer(positions: Tracer, updates: Tracer) -> tuple[Tracer, Tracer]:
    """Traced positions may repeat: sort them (stably), and give every copy of a position the
    update NumPy writes last (the last in the original order), so the scatter's order of
    applying updates does not matter."""
    m = positions.size
    if m <= 1:
        return positions, updates
    iota = np.arange(m, dtype=np.int64)
    sorted_positions, order = bind(sort_p, positions, ensure_tracer(iota),
                                   dimension=0, num_keys=1)
    differs = call_ufunc(np.not_equal, basic_read(sorted_positions, (slice(1, None),)),
                         basic_read(sorted_positions, (slice(None, -1),)))
    last_of_run = bind(concatenate_p, differs, ensure_tracer(np.ones(1, bool)),
                       dimension=0)
    run_end = np_where(last_of_run, iota, np.int64(m))
    run_end = bind(cummin_p, run_end, axis=0, reverse=True)
    return sorted_positions, _take(updates, _take(order, run_end))


# -- traced boolean masks ---------------------------------------------------------------------

MASKED_VALUE_HINT = ("assign a scalar, an array that broadcasts along the other axes, or "
                     "y[mask] for the same mask; or write x = np.where(mask, values, x)")


def _traced_mask_at(idx: tuple) -> int | None:
    """The position of the one traced boolean entry of idx (None if there is none)."""
    found = [i for i, e in enumerate(idx) if isinstance(e, Tracer) and e.dtype == np.bool_]
    if len(found) > 1:
        raise unsupported("indexing with two traced boolean masks",
                          "combine them first: x[m1 & m2] (when they index the same axes)")
    return found[0] if found else None


def _masked_view(x: Tracer, idx: tuple) -> tuple[Tracer, Tracer, int]:
    """x[idx] with idx holding one traced boolean mask, split into (the view of x that the
    other entries make, the mask (at least 1-d), how many axes of that view precede the
    mask's). A 0-d mask selects along a new axis of length 1, as in NumPy."""
    at = _traced_mask_at(idx)
    mask = idx[at]
    others = idx[:at] + idx[at + 1:]
    _check_index(others)
    if not _is_basic(others):
        raise unsupported("a traced boolean mask together with integer-array indices",
                          "index in two steps: x[rows][:, mask]")
    stand_in = (None,) if mask.ndim == 0 else (slice(None),) * mask.ndim
    basic = idx[:at] + stand_in + idx[at + 1:]
    full_idx = _expand_ellipsis(basic, x.ndim)
    at_full = at
    if _has_ellipsis(idx[:at]):          # the ellipsis before the mask became this many `:`
        at_full += len(full_idx) - len(basic)
    lead = sum(1 for e in full_idx[:at_full] if e is None or isinstance(e, slice))
    view = indexed_view(x, full_idx)
    mask = reshape(mask, (1,)) if mask.ndim == 0 else mask
    for j, (n, m) in enumerate(zip(view.shape[lead:], mask.shape, strict=False)):
        if n != m:
            raise IndexError(f"boolean index did not match indexed array along axis {lead + j}; "
                             f"size of axis is {n} but size of corresponding boolean axis is {m}")
    return view, mask, lead


def _masked_assign(x: Tracer, idx: tuple, value) -> None:
    """x[idx] = value with a traced boolean mask in idx: a select over the view's elements."""
    view, mask, lead = _masked_view(x, idx)
    target = MaskedSelection(view, mask, lead, None)
    data = in_data_coordinates(value, target, MASKED_VALUE_HINT)
    if isinstance(data, Tracer) and data.ndim > view.ndim:
        raise target.refuse("assigning an array with more axes to x[mask]", MASKED_VALUE_HINT)
    new = fit_value(data, view.shape, x.dtype, masked=True)
    if view.size:
        view.assign(np_where(target.mask_in_data(), new, view))


SELECTION_INDEX_HINT = ("index with the whole index arrays and keep the mask in the value: "
                        "x[Xi, Yi] = np.where(mask, v, x[Xi, Yi]) when no position repeats")


def _assign_through_selections(x: Tracer, idx: tuple, value) -> None:
    """x[Xi[m], Yi[m]] = v: integer index arrays selected by one traced mask, one per axis of
    x, and v a scalar or a selection by the same mask. A scatter of every element of the
    index arrays, the unselected ones sent out of range (after the bounds check, so only the
    selected ones can raise NumPy's IndexError) and dropped; repeated positions take the
    value NumPy writes last."""
    first = next(e for e in idx if isinstance(e, MaskedSelection))
    if not _selections_index_every_axis(x, idx, first):
        raise first.refuse("indexing with x[mask] beside other indices", SELECTION_INDEX_HINT)
    if isinstance(value, MaskedSelection):
        if not (value.same_mask(first) and value.ndim == 1):
            raise first.refuse("assigning another selection through x[mask] indices",
                               SELECTION_INDEX_HINT)
        value = value.data
    elif np.ndim(value) != 0:
        raise first.refuse("assigning an array through x[mask] indices", SELECTION_INDEX_HINT)
    in_bounds = tuple(np_where(first.mask, e.data, np.int64(0)) for e in idx)
    positions = np_where(first.mask, flat_positions(x, in_bounds), np.int64(x.size))
    count = first.mask.size
    updates = reshape(fit_value(value, first.mask.shape, x.dtype, advanced=True), (count,))
    positions = reshape(positions, (count,))
    if np.ndim(value) != 0:
        positions, updates = _last_writer(positions, updates)
    out = bind(scatter_p, reshape(x, (x.size,)), reshape(positions, (count, 1)), updates,
               num_indexed=1, mode="drop")
    x.assign(reshape(out, x.shape))


def _selections_index_every_axis(x: Tracer, idx: tuple, first: MaskedSelection) -> bool:
    """Every entry an integer selection by first's mask over its whole index array, one per
    axis of a non-empty x."""
    return len(idx) == x.ndim and x.size > 0 and all(
        isinstance(e, MaskedSelection) and e.same_mask(first) and e.ndim == 1
        and e.dtype.kind in "iu" for e in idx)


# -- writing ----------------------------------------------------------------------------------

def setitem(x: Tracer, idx, value) -> None:
    idx = index_tuple(idx)
    if any(isinstance(e, MaskedSelection) for e in idx):
        _assign_through_selections(x, idx, value)
        return
    if _traced_mask_at(idx) is not None:
        _masked_assign(x, idx, value)
        return
    if _traced_slices(idx, value):
        return _TRACED_SLICES[2](x, idx, value)
    _check_index(idx)
    if _is_basic(idx):
        view = indexed_view(x, idx)
        new = fit_value(value, view.shape, x.dtype)
        if view.size:
            view.assign(new)
        return
    positions = flat_positions(x, idx)
    new = fit_value(value, np.shape(positions), x.dtype, True)
    if np.size(positions):
        x.assign(_scatter(x, positions, new))
