"""Structural primitives: they move, select or make elements without arithmetic.

broadcast_in_dim, reshape, transpose, slice, rev, concatenate, pad, iota, dynamic_slice,
dynamic_update_slice, gather and scatter. Their params are static (tuples of ints).
"""
from __future__ import annotations

import numpy as np

from ..ir import ShapedArray
from ..lowering import i64_array
from .record import Primitive, register, same_dtype_rule


def _dtype_of_first(aval, *_, **__):
    return aval.dtype


def _weak_of_first(aval, *_, **__):
    return aval.weak_type


def structural(name, shape_rule, impl, lowering, dtype_rule=_dtype_of_first,
              weak_rule=_weak_of_first, doc=""):
    return register(Primitive(name, shape_rule, dtype_rule, impl, lowering,
                              weak_type_rule=weak_rule, doc=doc))


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


broadcast_in_dim_p = structural("broadcast_in_dim", broadcast_in_dim_shape_rule,
                                broadcast_in_dim_impl, broadcast_in_dim_lowering)


# -- reshape ----------------------------------------------------------------------------------

def reshape_shape_rule(aval, *, new_shape):
    if int(np.prod(new_shape, dtype=np.int64)) != aval.size:
        raise TypeError(f"cannot reshape {aval.shape} to {new_shape}")
    return new_shape


def reshape_lowering(ctx, x, *, new_shape):
    return ctx.op("stablehlo.reshape", [x], ctx.avals_in, ctx.avals_out)


reshape_p = structural("reshape", reshape_shape_rule,
                       lambda x, *, new_shape: np.reshape(x, new_shape), reshape_lowering)


# -- transpose --------------------------------------------------------------------------------

def transpose_shape_rule(aval, *, permutation):
    if sorted(permutation) != list(range(aval.ndim)):
        raise TypeError(f"{permutation} is not a permutation of {aval.ndim} axes")
    return tuple(aval.shape[p] for p in permutation)


def transpose_lowering(ctx, x, *, permutation):
    return ctx.op("stablehlo.transpose", [x], ctx.avals_in, ctx.avals_out,
                  {"permutation": i64_array(permutation)})


transpose_p = structural("transpose", transpose_shape_rule,
                         lambda x, *, permutation: np.transpose(x, permutation).copy(),
                         transpose_lowering)


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


slice_p = structural("slice", slice_shape_rule, slice_impl, slice_lowering)


# -- rev --------------------------------------------------------------------------------------

def rev_lowering(ctx, x, *, dimensions):
    return ctx.op("stablehlo.reverse", [x], ctx.avals_in, ctx.avals_out,
                  {"dimensions": i64_array(dimensions)})


rev_p = structural("rev", lambda aval, *, dimensions: aval.shape,
                   lambda x, *, dimensions: np.flip(x, dimensions).copy(), rev_lowering)


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


concatenate_p = register(Primitive("concatenate", concatenate_shape_rule,
                                   lambda *avals, dimension: same_dtype_rule(*avals),
                                   lambda *xs, dimension: np.concatenate(xs, axis=dimension),
                                   concatenate_lowering))


# -- pad --------------------------------------------------------------------------------------

def pad_shape_rule(aval, pad_value, *, low, high, interior):
    return tuple(lo + hi + d + max(0, d - 1) * it
                 for d, lo, hi, it in zip(aval.shape, low, high, interior, strict=True))


def pad_impl(x, pad_value, *, low, high, interior):
    out_shape = pad_shape_rule(ShapedArray(np.shape(x), np.asarray(x).dtype), None,
                               low=low, high=high, interior=interior)
    out = np.full(out_shape, pad_value, dtype=np.asarray(x).dtype)
    index = tuple(slice(lo, lo + (d - 1) * (it + 1) + 1 if d else lo, it + 1)
                  for d, lo, it in zip(np.shape(x), low, interior, strict=True))
    out[index] = x
    return out


def pad_lowering(ctx, x, pad_value, *, low, high, interior):
    return ctx.op("stablehlo.pad", [x, pad_value], ctx.avals_in, ctx.avals_out, {
        "edge_padding_low": i64_array(low), "edge_padding_high": i64_array(high),
        "interior_padding": i64_array(interior)})


pad_p = structural("pad", pad_shape_rule, pad_impl, pad_lowering,
                   dtype_rule=lambda aval, pad_value, **_: same_dtype_rule(aval, pad_value))


# -- iota -------------------------------------------------------------------------------------

def iota_impl(*, shape, dtype, dimension):
    index = [None] * len(shape)
    index[dimension] = slice(None)
    return np.broadcast_to(np.arange(shape[dimension], dtype=dtype)[tuple(index)], shape).copy()


def iota_lowering(ctx, *, shape, dtype, dimension):
    return ctx.op("stablehlo.iota", [], [], ctx.avals_out, {"iota_dimension": f"{dimension} : i64"})


iota_p = register(Primitive("iota", lambda *, shape, dtype, dimension: shape,
                            lambda *, shape, dtype, dimension: np.dtype(dtype), iota_impl,
                            iota_lowering, weak_type_rule=lambda **_: False))


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


dynamic_slice_p = structural("dynamic_slice", dynamic_slice_shape_rule, dynamic_slice_impl,
                             dynamic_slice_lowering)


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


dynamic_update_slice_p = structural(
    "dynamic_update_slice", dynamic_update_slice_shape_rule, dynamic_update_slice_impl,
    dynamic_update_slice_lowering, dtype_rule=lambda aval, update, *_: same_dtype_rule(aval, update))


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


gather_p = structural("gather", gather_shape_rule, gather_impl, gather_lowering,
                      dtype_rule=_int_indices_rule)


def scatter_shape_rule(aval, indices, updates, *, num_indexed, mode):
    expected = indices.shape[:-1] + aval.shape[num_indexed:]
    if updates.shape != expected:
        raise TypeError(f"updates of shape {updates.shape} do not fit {expected}")
    return aval.shape


def scatter_impl(x, indices, updates, *, num_indexed, mode):
    out = np.array(x, copy=True)
    index = _index_tuple(out.shape, np.asarray(indices), num_indexed)
    if mode == "add":
        np.add.at(out, index, updates)
    else:
        out[index] = updates
    return out


def _clipped(ctx, indices, idx_aval, shape, num_indexed):
    """Indices clipped into the operand's first axes, as the impl clips them (XLA's gather
    clamps them itself; its scatter would drop an update whose index is out of range)."""
    highest = np.array([d - 1 for d in shape[:num_indexed]], idx_aval.dtype)
    low = ctx.constant(np.zeros((), idx_aval.dtype), idx_aval)
    high = ctx.constant(np.broadcast_to(highest, idx_aval.shape), idx_aval)
    return ctx.op("stablehlo.clamp", [low, indices, high], [idx_aval] * 3, [idx_aval])[0]


def scatter_lowering(ctx, x, indices, updates, *, num_indexed, mode):
    aval, idx_aval, _ = ctx.avals_in
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


scatter_p = structural("scatter", scatter_shape_rule, scatter_impl, scatter_lowering,
                       dtype_rule=lambda aval, indices, updates, **p: same_dtype_rule(aval, updates))
