"""The batching rules of the primitives that take indices: dynamic_slice, dynamic_update_slice,
gather and scatter (see `batching` for the conventions: the batch axis first).

Unbatched indices keep the primitive: the batch axis is one more sliced (or gathered) axis.
Batched indices add the batch axis to the index map: a gather (scatter) of a batched operand
indexes the batch axis too, each member by its own number (an iota), and a dynamic slice whose
starts differ per member becomes a gather of the slice's elements (a scatter, for an update).
"""
from __future__ import annotations

import numpy as np

from ..ir import Literal
from .batching import all_batched, member_shape

INDEX = np.dtype(np.int64)


def _zero_start(starts):
    """A start of 0 for the batch axis, of the type of the other starts."""
    dtype = starts[0].aval.dtype if starts else INDEX
    return Literal.of(np.zeros((), dtype))


def _clamped(ctx, start, highest: int):
    """A start clamped into [0, highest] as XLA clamps it, as int64."""
    start = ctx.convert(start, INDEX)
    low, high = ctx.full_like(start, 0), ctx.full_like(start, highest)
    return ctx.minimum(ctx.maximum(start, low), high)


def _index_grid(ctx, starts, batched, sizes, number_members: bool):
    """int64[B, *sizes, k]: for each element of a block of `sizes` that starts at `starts`
    (one per axis, each of one member or of all), its position; first each member's number
    if `number_members`."""
    grid = (ctx.axis_size,) + tuple(sizes)
    columns = [ctx.iota(grid, INDEX, 0)] if number_members else []
    for axis, (start, b) in enumerate(zip(starts, batched, strict=True)):
        spread = ctx.broadcast_in_dim(start, grid, (0,) if b else ())
        columns.append(ctx.add(spread, ctx.iota(grid, INDEX, axis + 1)))
    columns = [ctx.reshape(c, grid + (1,)) for c in columns]
    return columns[0] if len(columns) == 1 else ctx.concatenate(columns, len(grid))


def _indexed_axes(shape, sizes, starts_batched) -> tuple[list[int], list[int]]:
    """(axes indexed element by element: a start that differs per member or a block smaller
    than the axis; the other axes, taken whole)."""
    indexed = [a for a in range(len(shape)) if starts_batched[a] or sizes[a] < shape[a]]
    return indexed, [a for a in range(len(shape)) if a not in indexed]


def _inverse(order) -> tuple[int, ...]:
    return tuple(int(i) for i in np.argsort(order))


def dynamic_slice_batch(ctx, operands, batched, *, slice_sizes):
    x, starts = operands[0], list(operands[1:])
    if not any(batched[1:]):
        return all_batched(ctx.apply([x, _zero_start(starts), *starts],
                                     slice_sizes=(ctx.axis_size,) + tuple(slice_sizes)))
    x_batched = batched[0]
    shape = member_shape(x) if x_batched else x.aval.shape
    indexed, whole = _indexed_axes(shape, slice_sizes, batched[1:])
    clamped = [_clamped(ctx, starts[a], shape[a] - slice_sizes[a]) for a in indexed]
    indices = _index_grid(ctx, clamped, [batched[1 + a] for a in indexed],
                          [slice_sizes[a] for a in indexed], x_batched)
    order = indexed + whole
    lead = [0] if x_batched else []
    moved = ctx.transpose(x, lead + [a + x_batched for a in order])
    out = ctx.gather(moved, indices, len(indexed) + x_batched)
    return [ctx.transpose(out, (0,) + tuple(1 + a for a in _inverse(order)))], [True]


def dynamic_update_slice_batch(ctx, operands, batched):
    x, update, starts = operands[0], operands[1], list(operands[2:])
    x, update = ctx.with_batch(x, batched[0]), ctx.with_batch(update, batched[1])
    if not any(batched[2:]):
        return all_batched(ctx.apply([x, update, _zero_start(starts), *starts]))
    shape, sizes = member_shape(x), member_shape(update)
    indexed, whole = _indexed_axes(shape, sizes, batched[2:])
    clamped = [_clamped(ctx, starts[a], shape[a] - sizes[a]) for a in indexed]
    indices = _index_grid(ctx, clamped, [batched[2 + a] for a in indexed],
                          [sizes[a] for a in indexed], True)
    order = [0] + [a + 1 for a in indexed + whole]
    out = ctx.scatter(ctx.transpose(x, order), indices, ctx.transpose(update, order),
                      len(indexed) + 1, "set")
    return [ctx.transpose(out, _inverse(order))], [True]


def _numbered(ctx, indices):
    """Batched indices with each member's number first in every index row."""
    shape = indices.aval.shape
    numbers = ctx.iota(shape[:-1] + (1,), indices.aval.dtype, 0)
    return ctx.concatenate([numbers, indices], len(shape) - 1)


def gather_batch(ctx, operands, batched, *, num_indexed):
    x, indices = operands
    if not batched[1]:
        # the batch axis goes after the indexed axes, as one more axis gathered whole
        out = ctx.gather(ctx.moveaxis(x, 0, num_indexed), indices, num_indexed)
        return [ctx.moveaxis(out, indices.aval.ndim - 1, 0)], [True]
    if not batched[0]:
        return all_batched(ctx.apply([x, indices], num_indexed=num_indexed))
    return all_batched(ctx.apply([x, _numbered(ctx, indices)], num_indexed=num_indexed + 1))


def scatter_batch(ctx, operands, batched, *, num_indexed, mode):
    x, indices, updates = operands
    x = ctx.with_batch(x, batched[0])
    if not batched[1]:
        lead = indices.aval.ndim - 1
        if batched[2]:
            updates = ctx.moveaxis(updates, 0, lead)
        else:
            shape = updates.aval.shape
            dims = [d if d < lead else d + 1 for d in range(len(shape))]
            updates = ctx.broadcast_in_dim(updates, shape[:lead] + (ctx.axis_size,)
                                           + shape[lead:], dims)
        out = ctx.scatter(ctx.moveaxis(x, 0, num_indexed), indices, updates, num_indexed, mode)
        return [ctx.moveaxis(out, num_indexed, 0)], [True]
    updates = ctx.with_batch(updates, batched[2])
    return all_batched(ctx.apply([x, _numbered(ctx, indices), updates],
                                 num_indexed=num_indexed + 1, mode=mode))
