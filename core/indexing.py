"""Indexing tracers the way NumPy does: `x[...]` reads and `x[...] = v` writes.

- Basic indices (ints, slices, None, Ellipsis), all static: slice/rev/reshape; the result is a
  view, so writing into it writes into x.
- Traced integer scalars (a loop index) with static slices: dynamic_slice, also a view.
- Anything else (integer arrays, static boolean masks, mixes): the flat position of every
  selected element is computed (statically by NumPy itself where the index is static, with
  traced arithmetic where it is not), then one gather or scatter on the flattened array.
  NumPy's own indexing of an `arange` gives the static part, so result shapes, broadcasting
  of index arrays and IndexErrors are NumPy's.
- A traced boolean mask selects a data-dependent number of elements: not compiled.
"""
from __future__ import annotations

import operator

import numpy as np

from .numpy_api import (as_kind, broadcast_to, call_ufunc, convert, ensure_tracer, reshape,
                        unsupported)
from .registry import primitive
from .tracing import Tracer, ViewStep, bind


def _as_tuple(idx) -> tuple:
    return idx if isinstance(idx, tuple) else (idx,)


def _is_int(entry) -> bool:
    return isinstance(entry, (int, np.integer)) and not isinstance(entry, (bool, np.bool_))


def _is_basic_static(entry) -> bool:
    return entry is None or entry is Ellipsis or isinstance(entry, slice) or _is_int(entry)


def _is_traced_int_scalar(entry) -> bool:
    return isinstance(entry, Tracer) and entry.ndim == 0 and entry.dtype.kind in "iu"


def _static_array(entry):
    """A list/ndarray index, as NumPy would take it; None if entry is not one."""
    if isinstance(entry, (list, np.ndarray)) or (isinstance(entry, tuple)):
        return np.asarray(entry)
    if isinstance(entry, (bool, np.bool_)):
        return np.asarray(entry)
    return None


def _check_index(idx):
    for entry in idx:
        if isinstance(entry, Tracer):
            if entry.dtype == np.bool_:
                raise unsupported(
                    "indexing with a traced boolean mask (its result has a data-dependent shape)",
                    "use np.where(mask, x, 0) or multiply by the mask instead")
            if entry.dtype.kind not in "iu":
                raise IndexError("only integers, slices (`:`), ellipsis (`...`), numpy.newaxis "
                                 "(`None`) and integer or boolean arrays are valid indices")
        elif isinstance(entry, slice):
            for part in (entry.start, entry.stop, entry.step):
                if isinstance(part, Tracer):
                    raise unsupported("a slice bound that is a traced value",
                                      "use a static bound, or np.where over the whole array")


def _expand_ellipsis(idx: tuple, ndim: int) -> tuple:
    consumed = sum(_consumed_dims(e) for e in idx)
    if not _has_ellipsis(idx):
        return idx + (slice(None),) * (ndim - consumed)
    at = next(i for i, e in enumerate(idx) if e is Ellipsis)
    return idx[:at] + (slice(None),) * (ndim - consumed) + idx[at + 1:]


def _has_ellipsis(idx: tuple) -> bool:
    return any(e is Ellipsis for e in idx)     # not `in`: that would compare arrays with ==


def _consumed_dims(entry) -> int:
    if entry is None or entry is Ellipsis:
        return 0
    if isinstance(entry, np.ndarray) and entry.dtype == np.bool_:
        return entry.ndim
    return 1


# -- reading ----------------------------------------------------------------------------------

def getitem(x: Tracer, idx):
    idx = _as_tuple(idx)
    _check_index(idx)
    scalar = not _has_ellipsis(idx)
    if all(_is_basic_static(e) for e in idx):
        result = _basic_view(x, idx)
    elif all(_is_basic_static(e) or _is_traced_int_scalar(e) for e in idx) and all(
            not isinstance(e, slice) or e.step in (None, 1) for e in idx):
        result = _dynamic_view(x, idx)
    else:
        result = _gather(x, idx)
    if result.ndim == 0 and scalar:
        return as_kind(_detached(result), "scalar")
    return result


def _detached(t: Tracer) -> Tracer:
    from .numpy_api import copy_of
    return copy_of(t)


def _basic_view(x: Tracer, idx: tuple) -> Tracer:
    _ = x.layout()[idx]   # NumPy checks the index (IndexError as it would raise it)
    step = ViewStep(read=lambda base: basic_read(base, idx),
                    write=lambda base, new: basic_write(base, idx, new),
                    probe=lambda arr: arr[idx], describe=f"[{idx}]")
    return x.view(step)


def _normalized(idx: tuple, shape) -> list[tuple]:
    """Per dimension of x: ('int', i) or ('slice', start, stop, step); Nones apart."""
    out = []
    dims = iter(shape)
    for entry in _expand_ellipsis(idx, len(shape)):
        if entry is None:
            out.append(("new",))
            continue
        n = next(dims)
        if isinstance(entry, slice):
            out.append(("slice",) + entry.indices(n))
        elif isinstance(entry, Tracer):
            out.append(("traced", entry, n))
        else:
            i = operator.index(entry)
            if not -n <= i < n:
                raise IndexError(f"index {i} is out of bounds for axis with size {n}")
            out.append(("int", i % n))
    return out


def _slice_len(start, stop, step) -> int:
    return len(range(start, stop, step))


def basic_read(x: Tracer, idx: tuple) -> Tracer:
    parts = _normalized(idx, x.shape)
    starts, limits, strides, reverse, out_shape = [], [], [], [], []
    for part in parts:
        if part[0] == "new":
            out_shape.append(1)
            continue
        dim = len(starts)
        n = x.shape[dim]
        if part[0] == "int":
            starts.append(part[1]), limits.append(part[1] + 1), strides.append(1)
            continue
        start, stop, step = part[1:]
        length = _slice_len(start, stop, step)
        if step < 0:
            reverse.append(dim)
            start, step = n - 1 - start, -step
        starts.append(start)
        limits.append(start + (length - 1) * step + 1 if length else start)
        strides.append(step)
        out_shape.append(length)
    value = x
    if reverse:
        value = bind(primitive("rev"), value, dimensions=tuple(reverse))
    if (tuple(starts), tuple(limits), tuple(strides)) != ((0,) * x.ndim, x.shape, (1,) * x.ndim):
        value = bind(primitive("slice"), value, start_indices=tuple(starts),
                     limit_indices=tuple(limits), strides=tuple(strides))
    return reshape(value, tuple(out_shape))


def basic_write(x: Tracer, idx: tuple, new) -> Tracer:
    """x with the elements that x[idx] selects replaced by new (broadcast and cast)."""
    parts = _normalized(idx, x.shape)
    selected = np.empty(x.shape, dtype=np.uint8)[idx].shape
    new = broadcast_to(ensure_tracer(convert(new, x.dtype)), selected)
    kept = [p for p in parts if p[0] != "new"]
    if all(p[0] == "int" or p[3] == 1 for p in kept):
        block = tuple(1 if p[0] == "int" else _slice_len(*p[1:]) for p in kept)
        starts = [np.int64(p[1]) for p in kept]
        if 0 in block:
            return x
        return bind(primitive("dynamic_update_slice"), x, reshape(new, block), *starts)
    return _flat_scatter(x, np.arange(x.size).reshape(x.shape)[idx], new)


def _dynamic_parts(x: Tracer, idx: tuple):
    parts = _normalized(idx, x.shape)
    starts, sizes, out_shape = [], [], []
    for part in parts:
        if part[0] == "new":
            out_shape.append(1)
        elif part[0] == "int":
            starts.append(np.int64(part[1])), sizes.append(1)
        elif part[0] == "traced":
            index = convert(part[1], np.int64)
            wrapped = call_ufunc(np.add, index, np.int64(part[2]))
            starts.append(_where(call_ufunc(np.less, index, 0), wrapped, index)), sizes.append(1)
        else:
            start, stop, _ = part[1:]
            length = _slice_len(*part[1:])
            starts.append(np.int64(start)), sizes.append(length), out_shape.append(length)
    return starts, sizes, tuple(out_shape)


def _where(pred, a, b):
    from .numpy_api import np_where
    return np_where(pred, a, b)


def _dynamic_view(x: Tracer, idx: tuple) -> Tracer:
    def read(base):
        starts, sizes, out_shape = _dynamic_parts(base, idx)
        sliced = bind(primitive("dynamic_slice"), base, *starts, slice_sizes=tuple(sizes))
        return reshape(sliced, out_shape)

    def write(base, new):
        starts, sizes, _ = _dynamic_parts(base, idx)
        new = broadcast_to(ensure_tracer(convert(new, base.dtype)), _shape_of_read(base, idx))
        return bind(primitive("dynamic_update_slice"), base, reshape(new, tuple(sizes)), *starts)

    static_idx = tuple(0 if isinstance(e, Tracer) else e for e in idx)
    step = ViewStep(read=read, write=write, probe=lambda arr: arr[static_idx],
                    describe=f"[{idx}] (traced index)")
    return x.view(step)


def _shape_of_read(x: Tracer, idx: tuple) -> tuple:
    return _dynamic_parts(x, idx)[2]


# -- gather/scatter through flat positions ----------------------------------------------------

def flat_positions(x: Tracer, idx: tuple):
    """The flat position in x of every element x[idx] selects, shaped like x[idx].

    The static part comes from NumPy indexing an arange (traced arrays replaced by zeros);
    each traced index array adds its (wrapped, clamped) value times its dimension's stride.
    Returns (positions: ndarray or tracer, result shape)."""
    traced = [(i, e) for i, e in enumerate(idx) if isinstance(e, Tracer)]
    static_idx = tuple(np.zeros(e.shape, np.intp) if isinstance(e, Tracer) else
                       (_static_array(e) if _static_array(e) is not None else e) for e in idx)
    base = np.arange(x.size, dtype=np.int64).reshape(x.shape)
    static_positions = base[static_idx]
    if not traced:
        return static_positions, static_positions.shape
    dims = _entry_dims(idx, x.ndim)
    strides = [int(np.prod(x.shape[d + 1:], dtype=np.int64)) for d in range(x.ndim)]
    block_shape, block_at = _advanced_block(idx, static_idx, x.ndim)
    positions = ensure_tracer(static_positions)
    for i, entry in traced:
        n = x.shape[dims[i]]
        index = convert(entry, np.int64)
        index = _where(call_ufunc(np.less, index, 0), call_ufunc(np.add, index, np.int64(n)), index)
        index = call_ufunc(np.minimum, call_ufunc(np.maximum, index, np.int64(0)),
                           np.int64(n - 1))
        contribution = call_ufunc(np.multiply, index, np.int64(strides[dims[i]]))
        contribution = broadcast_to(contribution, block_shape)
        shape = (1,) * block_at + block_shape + (1,) * (
            static_positions.ndim - block_at - len(block_shape))
        positions = call_ufunc(np.add, positions, reshape(contribution, shape))
    return positions, static_positions.shape


def _entry_dims(idx, ndim):
    """For each index entry, the first dimension of x it indexes."""
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


def _gather(x: Tracer, idx: tuple) -> Tracer:
    positions, shape = flat_positions(x, idx)
    flat = reshape(x, (x.size,))
    indices = reshape(ensure_tracer(positions) if isinstance(positions, Tracer)
                      else positions, tuple(shape) + (1,))
    result = bind(primitive("gather"), flat, indices, num_indexed=1)
    return as_kind(result, "array")


def _flat_scatter(x: Tracer, positions, new) -> Tracer:
    shape = positions.shape
    flat = reshape(x, (x.size,))
    indices = reshape(positions if isinstance(positions, Tracer) else np.asarray(positions),
                      tuple(shape) + (1,))
    updates = broadcast_to(ensure_tracer(convert(new, x.dtype)), tuple(shape))
    out = bind(primitive("scatter"), flat, indices, updates, num_indexed=1, mode="set")
    return reshape(out, x.shape)


# -- writing ----------------------------------------------------------------------------------

def setitem(x: Tracer, idx, value) -> None:
    idx = _as_tuple(idx)
    _check_index(idx)
    if all(_is_basic_static(e) for e in idx):
        x.assign(basic_write(x, idx, value))
        return
    if all(_is_basic_static(e) or _is_traced_int_scalar(e) for e in idx) and all(
            not isinstance(e, slice) or e.step in (None, 1) for e in idx):
        view = _dynamic_view(x, idx)
        view.assign(broadcast_to(ensure_tracer(convert(value, x.dtype)), view.shape))
        return
    positions, shape = flat_positions(x, idx)
    x.assign(_flat_scatter(x, positions, broadcast_to(
        ensure_tracer(convert(value, x.dtype)), shape)))
