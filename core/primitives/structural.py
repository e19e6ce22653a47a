"""Structural primitives: they move, select or make elements without arithmetic.

broadcast_in_dim, reshape, transpose, slice, rev, concatenate, pad, iota, dynamic_slice,
dynamic_update_slice, gather and scatter. Their params are static (tuples of ints).
"""
from __future__ import annotations

import numpy as np

from ..ir import Literal, ShapedArray
from ..lowering import i64_array
from .autodiff import is_linear, linear_in
from .batching import (broadcast_in_dim_batch, pad_batch, reshape_batch, shifted, slice_batch,
                       transpose_batch)
from .index_batching import (dynamic_slice_batch, dynamic_update_slice_batch, gather_batch,
                             scatter_batch)
from .record import Primitive, register, same_dtype_rule

LINEAR = {"jvp": linear_in(), "linear": True}


def _dtype_of_first(aval, *_, **__):
    return aval.dtype


def _weak_of_first(aval, *_, **__):
    return aval.weak_type


def structural(name, shape_rule, impl, lowering, dtype_rule=_dtype_of_first,
              weak_rule=_weak_of_first, doc="", **derivatives):
    return register(Primitive(name, shape_rule, dtype_rule, impl, lowering,
                              weak_type_rule=weak_rule, doc=doc, **derivatives))


def _zero_scalar(ctx, aval):
    return ctx.full(ShapedArray((), aval.dtype), 0)


# -- broadcast_in_dim -------------------------------------------------------------------------

def broadcast_in_dim_shape_rule(aval, *, shape, broadcast_dimensions):
    if len(broadcast_dimensions) != aval.ndim:
        raise TypeError(f"broadcast_dimensions {broadcast_dimensions} do not fit {aval.shape}")
    for d, target in zip(aval.shape, broadcast_dimensions, strict=True):
        if d != 1 and d != shape[target]:
            raise TypeError(f"cannot broadcast {aval.shape} to {shape}")
    return shape


def broadcast_in_dim_impl(x, *, shape, broadcast_dimensions):
    expanded_shape = [1] * len(shape)
    for d, target in zip(np.shape(x), broadcast_dimensions, strict=True):
        expanded_shape[target] = d
    return np.broadcast_to(np.reshape(x, expanded_shape), shape).copy()


def broadcast_in_dim_lowering(ctx, x, *, shape, broadcast_dimensions):
    return ctx.op("stablehlo.broadcast_in_dim", [x], ctx.avals_in, ctx.avals_out,
                  {"broadcast_dimensions": i64_array(broadcast_dimensions)})


def broadcast_in_dim_transpose(ctx, ct, x, *, shape, broadcast_dimensions):
    """Summed over the new axes and the axes of length 1 that were stretched."""
    stretched = {t for d, t in zip(x.aval.shape, broadcast_dimensions, strict=True)
                 if d == 1 and shape[t] != 1}
    summed = [d for d in range(len(shape)) if d not in broadcast_dimensions or d in stretched]
    left = sorted(t for t in broadcast_dimensions if t not in stretched)
    order = [left.index(t) for t in broadcast_dimensions if t not in stretched]
    return [ctx.reshape(ctx.transpose(ctx.reduce_sum(ct, summed), order), x.aval.shape)]


broadcast_in_dim_p = structural("broadcast_in_dim", broadcast_in_dim_shape_rule,
                                broadcast_in_dim_impl, broadcast_in_dim_lowering, **LINEAR,
                                transpose=broadcast_in_dim_transpose, batch=broadcast_in_dim_batch)


# -- reshape ----------------------------------------------------------------------------------

def reshape_shape_rule(aval, *, new_shape):
    if int(np.prod(new_shape, dtype=np.int64)) != aval.size:
        raise TypeError(f"cannot reshape {aval.shape} to {new_shape}")
    return new_shape


def reshape_lowering(ctx, x, *, new_shape):
    return ctx.op("stablehlo.reshape", [x], ctx.avals_in, ctx.avals_out)


reshape_p = structural("reshape", reshape_shape_rule,
                       lambda x, *, new_shape: np.reshape(x, new_shape), reshape_lowering,
                       **LINEAR, transpose=lambda ctx, ct, x, **_: [ctx.reshape(ct, x.aval.shape)],
                       batch=reshape_batch)


# -- transpose --------------------------------------------------------------------------------

def transpose_shape_rule(aval, *, permutation):
    if sorted(permutation) != list(range(aval.ndim)):
        raise TypeError(f"{permutation} is not a permutation of {aval.ndim} axes")
    return tuple(aval.shape[p] for p in permutation)


def transpose_lowering(ctx, x, *, permutation):
    return ctx.op("stablehlo.transpose", [x], ctx.avals_in, ctx.avals_out,
                  {"permutation": i64_array(permutation)})


def transpose_transpose(ctx, ct, x, *, permutation):
    return [ctx.transpose(ct, np.argsort(permutation))]


transpose_p = structural("transpose", transpose_shape_rule,
                         lambda x, *, permutation: np.transpose(x, permutation).copy(),
                         transpose_lowering, **LINEAR, transpose=transpose_transpose,
                         batch=transpose_batch)


# -- slice (static, positive strides) ---------------------------------------------------------

def slice_shape_rule(aval, *, start_indices, limit_indices, strides):
    shape = []
    for d, lo, hi, st in zip(aval.shape, start_indices, limit_indices, strides, strict=True):
        if not (0 <= lo <= hi <= d) or st < 1:
            raise TypeError(f"slice {lo}:{hi}:{st} is out of range for a dimension of {d}")
        shape.append(max(0, -(-(hi - lo) // st)))
    return tuple(shape)


def slice_impl(x, *, start_indices, limit_indices, strides):
    bounds = zip(start_indices, limit_indices, strides, strict=True)
    index = tuple(slice(lo, hi, st) for lo, hi, st in bounds)
    return np.asarray(x)[index].copy()


def slice_lowering(ctx, x, *, start_indices, limit_indices, strides):
    return ctx.op("stablehlo.slice", [x], ctx.avals_in, ctx.avals_out, {
        "start_indices": i64_array(start_indices), "limit_indices": i64_array(limit_indices),
        "strides": i64_array(strides)})


def slice_transpose(ctx, ct, x, *, start_indices, limit_indices, strides):
    """Zeros around and between the sliced elements: a pad."""
    last = [lo + (n - 1) * st + 1 if n else lo
            for lo, n, st in zip(start_indices, ct.aval.shape, strides, strict=True)]
    high = [d - end for d, end in zip(x.aval.shape, last, strict=True)]
    return [ctx.pad(ct, _zero_scalar(ctx, ct.aval), start_indices, high,
                    [st - 1 for st in strides])]


slice_p = structural("slice", slice_shape_rule, slice_impl, slice_lowering, **LINEAR,
                     transpose=slice_transpose, batch=slice_batch)


# -- rev --------------------------------------------------------------------------------------

def rev_lowering(ctx, x, *, dimensions):
    return ctx.op("stablehlo.reverse", [x], ctx.avals_in, ctx.avals_out,
                  {"dimensions": i64_array(dimensions)})


rev_p = structural("rev", lambda aval, *, dimensions: aval.shape,
                   lambda x, *, dimensions: np.flip(x, dimensions).copy(), rev_lowering,
                   **LINEAR, transpose=lambda ctx, ct, x, *, dimensions: [ctx.rev(ct, dimensions)],
                   batch=shifted("dimensions"))


# -- concatenate ------------------------------------------------------------------------------

def concatenate_shape_rule(*avals, dimension):
    first = avals[0]
    for a in avals:
        if a.ndim != first.ndim or any(
                d1 != d2 for i, (d1, d2) in enumerate(zip(a.shape, first.shape, strict=True))
                if i != dimension):
            raise TypeError(f"cannot concatenate shapes {[x.shape for x in avals]} on {dimension}")
    shape = list(first.shape)
    shape[dimension] = sum(a.shape[dimension] for a in avals)
    return tuple(shape)


def concatenate_lowering(ctx, *xs, dimension):
    return ctx.op("stablehlo.concatenate", list(xs), ctx.avals_in, ctx.avals_out,
                  {"dimension": f"{dimension} : i64"})


def concatenate_transpose(ctx, ct, *xs, dimension):
    cts, offset = [], 0
    for x in xs:
        n = x.aval.shape[dimension]
        starts, limits = [0] * ct.aval.ndim, list(ct.aval.shape)
        starts[dimension], limits[dimension] = offset, offset + n
        cts.append(ctx.slice(ct, starts, limits) if is_linear(x) else None)
        offset += n
    return cts


concatenate_p = register(Primitive("concatenate", concatenate_shape_rule,
                                   lambda *avals, dimension: same_dtype_rule(*avals),
                                   lambda *xs, dimension: np.concatenate(xs, axis=dimension),
                                   concatenate_lowering, **LINEAR,
                                   transpose=concatenate_transpose, batch=shifted("dimension")))


# -- pad --------------------------------------------------------------------------------------

def pad_shape_rule(aval, pad_value, *, low, high, interior):
    return tuple(lo + hi + d + max(0, d - 1) * it
                 for d, lo, hi, it in zip(aval.shape, low, high, interior, strict=True))


def pad_impl(x, pad_value, *, low, high, interior):
    """Padded by the positive widths, then cropped by the negative ones (as XLA's pad)."""
    grow_low, grow_high = [max(lo, 0) for lo in low], [max(hi, 0) for hi in high]
    out_shape = pad_shape_rule(ShapedArray(np.shape(x), np.asarray(x).dtype), None,
                               low=grow_low, high=grow_high, interior=interior)
    out = np.full(out_shape, pad_value, dtype=np.asarray(x).dtype)
    index = tuple(slice(lo, lo + (d - 1) * (it + 1) + 1 if d else lo, it + 1)
                  for d, lo, it in zip(np.shape(x), grow_low, interior, strict=True))
    out[index] = x
    crop = tuple(slice(max(-lo, 0), n - max(-hi, 0))
                 for n, lo, hi in zip(out_shape, low, high, strict=True))
    return out[crop]


def pad_lowering(ctx, x, pad_value, *, low, high, interior):
    return ctx.op("stablehlo.pad", [x, pad_value], ctx.avals_in, ctx.avals_out, {
        "edge_padding_low": i64_array(low), "edge_padding_high": i64_array(high),
        "interior_padding": i64_array(interior)})


def pad_transpose(ctx, ct, x, pad_value, *, low, high, interior):
    """The operand's elements are every (interior+1)-th from `low` (cropped ones, where a
    padding is negative, get zeros); the padding value's cotangent is the rest's sum."""
    zero = _zero_scalar(ctx, ct.aval)
    uncropped = ctx.pad(ct, zero, [max(-lo, 0) for lo in low], [max(-hi, 0) for hi in high])
    starts = [max(lo, 0) for lo in low]
    limits = [lo + (n - 1) * (it + 1) + 1 if n else lo
              for lo, n, it in zip(starts, x.aval.shape, interior, strict=True)]
    inner = ctx.slice(uncropped, starts, limits, [it + 1 for it in interior])
    everything = range(ct.aval.ndim)
    rest = ctx.sub(ctx.reduce_sum(ct, everything), ctx.reduce_sum(inner, everything))
    return [inner if is_linear(x) else None, rest if is_linear(pad_value) else None]


pad_p = structural("pad", pad_shape_rule, pad_impl, pad_lowering,
                   dtype_rule=lambda aval, pad_value, **_: same_dtype_rule(aval, pad_value),
                   **LINEAR, transpose=pad_transpose, batch=pad_batch)


# -- iota -------------------------------------------------------------------------------------

def iota_impl(*, shape, dtype, dimension):
    index = [None] * len(shape)
    index[dimension] = slice(None)
    return np.broadcast_to(np.arange(shape[dimension], dtype=dtype)[tuple(index)], shape).copy()


def iota_lowering(ctx, *, shape, dtype, dimension):
    return ctx.op("stablehlo.iota", [], [], ctx.avals_out, {"iota_dimension": f"{dimension} : i64"})


iota_p = register(Primitive("iota", lambda *, shape, dtype, dimension: shape,
                            lambda *, shape, dtype, dimension: np.dtype(dtype), iota_impl,
                            iota_lowering, weak_type_rule=lambda **_: False,
                            differentiable=False))


# -- dynamic_slice / dynamic_update_slice (start indices are traced scalars) -------------------

def dynamic_slice_shape_rule(aval, *starts, slice_sizes):
    if len(starts) != aval.ndim or len(slice_sizes) != aval.ndim:
        raise TypeError("dynamic_slice needs one start index and one size per dimension")
    return tuple(slice_sizes)


def _clamped_starts(shape, starts, sizes):
    """XLA's rule: each start is clamped so that the slice stays inside the array."""
    return [int(min(max(int(s), 0), d - n)) for s, d, n in zip(starts, shape, sizes, strict=True)]


def dynamic_slice_impl(x, *starts, slice_sizes):
    begin = _clamped_starts(np.shape(x), starts, slice_sizes)
    index = tuple(slice(b, b + n) for b, n in zip(begin, slice_sizes, strict=True))
    return np.asarray(x)[index].copy()


def dynamic_slice_lowering(ctx, x, *starts, slice_sizes):
    return ctx.op("stablehlo.dynamic_slice", [x, *starts], ctx.avals_in, ctx.avals_out,
                  {"slice_sizes": i64_array(slice_sizes)})


def dynamic_slice_transpose(ctx, ct, x, *starts, slice_sizes):
    zeros = ctx.zeros(x.aval.update(weak_type=False))
    return [ctx.dynamic_update_slice(zeros, ct, starts)] + [None] * len(starts)


dynamic_slice_p = structural("dynamic_slice", dynamic_slice_shape_rule, dynamic_slice_impl,
                             dynamic_slice_lowering, jvp=linear_in(0), linear=True,
                             transpose=dynamic_slice_transpose, batch=dynamic_slice_batch)


def dynamic_update_slice_shape_rule(aval, update, *starts):
    if update.ndim != aval.ndim or any(
            u > d for u, d in zip(update.shape, aval.shape, strict=True)):
        raise TypeError(f"update {update.shape} does not fit into {aval.shape}")
    return aval.shape


def dynamic_update_slice_impl(x, update, *starts):
    out = np.array(x, copy=True)
    begin = _clamped_starts(out.shape, starts, np.shape(update))
    out[tuple(slice(b, b + n) for b, n in zip(begin, np.shape(update), strict=True))] = update
    return out


def dynamic_update_slice_lowering(ctx, x, update, *starts):
    return ctx.op("stablehlo.dynamic_update_slice", [x, update, *starts], ctx.avals_in,
                  ctx.avals_out)


def dynamic_update_slice_transpose(ctx, ct, x, update, *starts):
    shape = update.aval.shape
    ct_x = ctx.dynamic_update_slice(ct, ctx.zeros(ct.aval.update(shape=shape)), starts) \
        if is_linear(x) else None
    ct_update = ctx.dynamic_slice(ct, starts, shape) if is_linear(update) else None
    return [ct_x, ct_update] + [None] * len(starts)


dynamic_update_slice_p = structural(
    "dynamic_update_slice", dynamic_update_slice_shape_rule, dynamic_update_slice_impl,
    dynamic_update_slice_lowering, dtype_rule=lambda aval, update, *_: same_dtype_rule(aval, update),
    jvp=linear_in(0, 1), linear=True, transpose=dynamic_update_slice_transpose,
    batch=dynamic_update_slice_batch)


# -- gather / scatter on leading axes ---------------------------------------------------------
# `indices` has shape B + (k,): each row picks a point in the first k axes of the operand.
# gather's result is B + operand.shape[k:]; scatter's updates have that shape.

def gather_shape_rule(aval, indices, *, num_indexed):
    if indices.shape[-1:] != (num_indexed,):
        raise TypeError(f"indices of shape {indices.shape} do not index {num_indexed} axes")
    return indices.shape[:-1] + aval.shape[num_indexed:]


def _index_tuple(x_shape, indices, num_indexed):
    clipped = [np.clip(indices[..., i], 0, x_shape[i] - 1) for i in range(num_indexed)]
    return tuple(clipped)


def gather_impl(x, indices, *, num_indexed):
    x = np.asarray(x)
    return x[_index_tuple(x.shape, np.asarray(indices), num_indexed)].copy()


def _gather_dnums(aval, indices, num_indexed):
    batch = indices.ndim - 1
    offset_dims = list(range(batch, batch + aval.ndim - num_indexed))
    return (f"#stablehlo.gather<offset_dims = [{', '.join(map(str, offset_dims))}], "
            f"collapsed_slice_dims = [{', '.join(map(str, range(num_indexed)))}], "
            f"start_index_map = [{', '.join(map(str, range(num_indexed)))}], "
            f"index_vector_dim = {batch}>")


def gather_lowering(ctx, x, indices, *, num_indexed):
    aval, idx_aval = ctx.avals_in
    if 0 in aval.shape[:num_indexed]:
        # Nothing to pick from, so no index can be given: the result is empty. (XLA rejects
        # the slice of 1 from an empty axis.)
        return [ctx.constant(np.zeros((), aval.dtype), ctx.avals_out[0])]
    sizes = [1] * num_indexed + list(aval.shape[num_indexed:])
    return ctx.op("stablehlo.gather", [x, indices], ctx.avals_in, ctx.avals_out, {
        "dimension_numbers": _gather_dnums(aval, idx_aval, num_indexed),
        "slice_sizes": i64_array(sizes), "indices_are_sorted": "false"})


def _int_indices_rule(aval, indices, *rest, num_indexed, **_):
    if indices.dtype.kind not in "iu":
        raise TypeError(f"indices must be integers, got {indices.dtype}")
    return aval.dtype


def gather_transpose(ctx, ct, x, indices, *, num_indexed):
    zeros = ctx.zeros(x.aval.update(weak_type=False))
    return [ctx.scatter(zeros, indices, ct, num_indexed, "add"), None]


gather_p = structural("gather", gather_shape_rule, gather_impl, gather_lowering,
                      dtype_rule=_int_indices_rule, jvp=linear_in(0), linear=True,
                      transpose=gather_transpose, batch=gather_batch)


def scatter_shape_rule(aval, indices, updates, *, num_indexed, mode):
    expected = indices.shape[:-1] + aval.shape[num_indexed:]
    if updates.shape != expected:
        raise TypeError(f"updates of shape {updates.shape} do not fit {expected}")
    return aval.shape


def scatter_impl(x, indices, updates, *, num_indexed, mode):
    """mode "add" adds each update, "set" sets it (indices clipped into range, as gather
    clips them), "drop" sets it where its index is in range and drops it elsewhere."""
    out = np.array(x, copy=True)
    indices, updates = np.asarray(indices), np.asarray(updates)
    if mode == "drop":
        kept = _in_range(out.shape, indices, num_indexed)
        indices, updates = indices[kept], updates[kept]
    index = _index_tuple(out.shape, indices, num_indexed)
    if mode == "add":
        np.add.at(out, index, updates)
    else:
        out[index] = updates
    return out


def _in_range(shape, indices, num_indexed) -> np.ndarray:
    """Per update (indices' leading axes), whether its index is inside the first axes."""
    bounds = np.array(shape[:num_indexed], np.int64)
    return ((indices >= 0) & (indices < bounds)).all(axis=-1)


def _clipped(ctx, indices, idx_aval, shape, num_indexed):
    """Indices clipped into the operand's first axes, as the impl clips them (XLA's gather
    clamps them itself; its scatter would drop an update whose index is out of range)."""
    highest = np.array([d - 1 for d in shape[:num_indexed]], idx_aval.dtype)
    low = ctx.constant(np.zeros((), idx_aval.dtype), idx_aval)
    high = ctx.constant(np.broadcast_to(highest, idx_aval.shape), idx_aval)
    return ctx.op("stablehlo.clamp", [low, indices, high], [idx_aval] * 3, [idx_aval])[0]


def scatter_lowering(ctx, x, indices, updates, *, num_indexed, mode):
    aval, idx_aval, _ = ctx.avals_in
    if mode != "drop":           # XLA drops an update whose index is out of range
        indices = _clipped(ctx, indices, idx_aval, aval.shape, num_indexed)
    batch = idx_aval.ndim - 1
    window = list(range(batch, batch + aval.ndim - num_indexed))
    dnums = (f"#stablehlo.scatter<update_window_dims = [{', '.join(map(str, window))}], "
             f"inserted_window_dims = [{', '.join(map(str, range(num_indexed)))}], "
             f"scatter_dims_to_operand_dims = [{', '.join(map(str, range(num_indexed)))}], "
             f"index_vector_dim = {batch}>")
    scalar = ShapedArray((), aval.dtype)

    def combine(sub, args):
        if mode == "add":
            return [(sub.op("stablehlo.add", args, [scalar, scalar], [scalar])[0], scalar)]
        return [(args[1], scalar)]
    region = ctx.region([scalar, scalar], combine)
    return ctx.op("stablehlo.scatter", [x, indices, updates], ctx.avals_in, ctx.avals_out, {
        "scatter_dimension_numbers": dnums, "indices_are_sorted": "false",
        "unique_indices": "false"}, regions=[region])


def scatter_transpose(ctx, ct, x, indices, updates, *, num_indexed, mode):
    """add: ct itself, and ct at each update's position. set: ct where nothing was written,
    and ct at each update's position for the update that was written there."""
    if mode == "add":
        ct_x = ct if is_linear(x) else None
        ct_updates = ctx.gather(ct, indices, num_indexed) if is_linear(updates) else None
        return [ct_x, None, ct_updates]
    ct_x = ctx.scatter(ct, indices, ctx.zeros(updates.aval.update(weak_type=False)),
                       num_indexed, mode) if is_linear(x) else None
    ct_updates = None
    if is_linear(updates):
        ct_updates = ctx.gather(ct, indices, num_indexed)
        kept = _kept_updates(ctx, x.aval, indices, num_indexed, mode)
        if kept is not None:
            batch = range(indices.aval.ndim - 1)
            mask = ctx.broadcast_in_dim(kept, updates.aval.shape, batch)
            ct_updates = ctx.select(mask, ct_updates, ctx.zeros_like(ct_updates))
    return [ct_x, None, ct_updates]


def _kept_updates(ctx, aval, indices, num_indexed, mode):
    """Which updates a set-scatter keeps (bool, one per update): where positions repeat, the
    one that wins a scatter of the updates' numbers; none that a "drop" scatter dropped (its
    number is nowhere). None when every update is kept (a literal index without repeats)."""
    if isinstance(indices, Literal) and (mode == "set" or _in_range(
            aval.shape, np.asarray(indices.value), num_indexed).all()):
        rows = _index_tuple(aval.shape, np.asarray(indices.value), num_indexed)
        flat = np.ravel_multi_index(rows, aval.shape[:num_indexed]) if rows else np.zeros(0)
        if np.unique(flat).size == np.size(flat):
            return None
    batch_shape = indices.aval.shape[:-1]
    count = int(np.prod(batch_shape, dtype=np.int64))
    numbers = ctx.reshape(ctx.iota((count,), np.int64, 0), batch_shape)
    owners = ctx.full(ShapedArray(aval.shape[:num_indexed], np.dtype(np.int64)), -1)
    owners = ctx.scatter(owners, indices, numbers, num_indexed, mode)
    return ctx.eq(ctx.gather(owners, indices, num_indexed), numbers)


scatter_p = structural("scatter", scatter_shape_rule, scatter_impl, scatter_lowering,
                       dtype_rule=lambda aval, indices, updates, **p: same_dtype_rule(aval, updates),
                       jvp=linear_in(0, 2), linear=True, transpose=scatter_transpose,
                       batch=scatter_batch)
