"""The shapes of batching rules that categories of primitives share, and the rules of the
structural primitives that move elements and of dot_general (`record` says what a rule is
given and returns; `index_batching` has the rules of the primitives that take indices).

A batched operand carries the batch axis first; every rule keeps it first in its results.
A rule writes equations through its `ctx` (`ctx.apply` binds the rule's own primitive with new
params), never by importing the layer that interprets it.

    leading_batch       primitives mapped over their operands' leading axes (elementwise ones,
                        linear algebra and FFTs on stacks): every operand gets the batch axis
    shifted(names...)   params naming axes (`axes`, `dimension`) move one up
"""
from __future__ import annotations

from functools import partial

import numpy as np

from ..ir import Literal, ShapedArray


def all_batched(outs: list) -> tuple[list, list[bool]]:
    return outs, [True] * len(outs)


def member_shape(x) -> tuple[int, ...]:
    """The shape of one member of a batched value (without the batch axis)."""
    return x.aval.shape[1:]


def leading_batch(ctx, operands, batched, **params):
    """A primitive mapped over its operands' leading axes (the elementwise primitives, whose
    operands have one shape; linear algebra and FFTs on stacks of matrices): every operand
    gets the batch axis as one more leading axis (the unbatched ones are broadcast along it)."""
    args = [ctx.with_batch(x, b) for x, b in zip(operands, batched, strict=True)]
    return all_batched(ctx.apply(args, **params))


def _moved_up(value):
    if isinstance(value, (int, np.integer)):
        return int(value) + 1
    return tuple(int(v) + 1 for v in value)


def shifted_batch(names, ctx, operands, batched, **params):
    """Every operand gets the batch axis; the params in `names` (an axis, or a tuple of them)
    move one up."""
    args = [ctx.with_batch(x, b) for x, b in zip(operands, batched, strict=True)]
    moved = {k: _moved_up(v) if k in names else v for k, v in params.items()}
    return all_batched(ctx.apply(args, **moved))


def shifted(*names):
    """The batching rule of a primitive whose params `names` are axes of its operands
    (reductions, cumulative reductions, sort, rev, concatenate)."""
    return partial(shifted_batch, names)


# -- structural primitives --------------------------------------------------------------------

def broadcast_in_dim_batch(ctx, operands, batched, *, shape, broadcast_dimensions):
    dims = (0,) + _moved_up(broadcast_dimensions)
    return all_batched(ctx.apply(operands, shape=(ctx.axis_size,) + tuple(shape),
                                 broadcast_dimensions=dims))


def reshape_batch(ctx, operands, batched, *, new_shape):
    return all_batched(ctx.apply(operands, new_shape=(ctx.axis_size,) + tuple(new_shape)))


def transpose_batch(ctx, operands, batched, *, permutation):
    return all_batched(ctx.apply(operands, permutation=(0,) + _moved_up(permutation)))


def slice_batch(ctx, operands, batched, *, start_indices, limit_indices, strides):
    return all_batched(ctx.apply(operands, start_indices=(0,) + tuple(start_indices),
                                 limit_indices=(ctx.axis_size,) + tuple(limit_indices),
                                 strides=(1,) + tuple(strides)))


def pad_batch(ctx, operands, batched, *, low, high, interior):
    """A batched padding value: the operand padded with zeros, then the padding positions
    (a mask padded the same way) take each member's value."""
    x, value = ctx.with_batch(operands[0], batched[0]), operands[1]
    widths = {"low": (0,) + tuple(low), "high": (0,) + tuple(high),
              "interior": (0,) + tuple(interior)}
    if not batched[1]:
        return all_batched(ctx.apply([x, value], **widths))
    aval = x.aval
    padded = ctx.apply([x, ctx.full(ShapedArray((), aval.dtype), 0)], **widths)[0]
    inside = ctx.full(ShapedArray(member_shape(x), np.dtype(bool)), True)
    inside = ctx.pad(inside, Literal.of(False), low, high, interior)
    shape = padded.aval.shape
    mask = ctx.broadcast_in_dim(inside, shape, range(1, len(shape)))
    fill = ctx.broadcast_in_dim(value, shape, (0,))
    out = ctx.select(mask, padded, fill)
    return [ctx.convert(out, aval.dtype, aval.weak_type)], [True]


# -- dot_general ------------------------------------------------------------------------------

def _free_count(ndim, contracting, batch) -> int:
    return ndim - len(contracting) - len(batch)


def dot_general_batch(ctx, operands, batched, *, contracting, batch):
    """Both batched: the batch axis is one more batch dimension (the first of the result).
    One batched: it is a free dimension of that side, moved to the front of the result."""
    lhs, rhs = operands
    (lc, rc), (lb, rb) = contracting, batch
    lb_, rb_ = batched

    def moved(dims, yes):
        return _moved_up(dims) if yes else tuple(dims)
    contracting = (moved(lc, lb_), moved(rc, rb_))
    if lb_ and rb_:
        out = ctx.apply([lhs, rhs], contracting=contracting,
                        batch=((0,) + moved(lb, True), (0,) + moved(rb, True)))
        return all_batched(out)
    out = ctx.apply([lhs, rhs], contracting=contracting, batch=(moved(lb, lb_), moved(rb, rb_)))
    lhs_ndim = lhs.aval.ndim - lb_
    where = len(lb) if lb_ else len(lb) + _free_count(lhs_ndim, lc, lb)
    return [ctx.moveaxis(out[0], where, 0)], [True]
