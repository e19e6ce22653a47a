"""Collectives over a named mapped axis (`vmap(f, axis_name="i")`, `axis_size` members):
`psum`, the sum of a value over every member, the same for all of them; `all_gather`, every
member's value stacked along a new leading axis, the same for all of them.

Their meaning is their batching rule: batched over their own axis, `psum` becomes the sum
over the batch axis and `all_gather` the batched value itself, both no longer batched (the
same for every member). Batched over another (inner) vmap's axis they stay, one per inner
member. A value that is the same for every member (unbatched) is summed or stacked as
`axis_size` copies of itself: what their references compute and what they lower to, so that
an equation of unbatched operands keeps its meaning when the batching copies it as it is.
`psc_jit.psum` refuses a name that no enclosing vmap binds (as JAX's NameError).

`all_gather` has no rule of differentiation yet: its transpose needs the member's index.
"""
from __future__ import annotations

import numpy as np

from ..lowering import i64_array
from .autodiff import linear_in
from .record import Primitive, register, same_dtype_rule, same_shape_rule
from .reductions import reduce_as_numpy, reduce_sum_p


def _psum_impl(x, *, axis_name, axis_size):
    x = np.asarray(x)
    return reduce_sum_p.impl(np.broadcast_to(x, (axis_size,) + x.shape), axes=(0,))


def _psum_lowering(ctx, x, *, axis_name, axis_size):
    """`axis_size` copies of x, summed as the batched sum over the members is."""
    aval, out = ctx.avals_in[0], ctx.avals_out[0]
    stacked = aval.update(shape=(axis_size,) + tuple(aval.shape))
    (copies,) = _stack(ctx, x, aval, stacked)
    return [reduce_as_numpy(ctx, "sum", copies, (0,), stacked, out)]


def _stack(ctx, x, aval, stacked):
    dims = i64_array(range(1, len(stacked.shape)))
    return ctx.op("stablehlo.broadcast_in_dim", [x], [aval], [stacked],
                  {"broadcast_dimensions": dims})


def _psum_transpose(ctx, ct, x, *, axis_name, axis_size):
    return [ctx.bind(psum_p, ct, axis_name=axis_name, axis_size=axis_size)]


def _psum_batch(ctx, operands, batched, *, axis_name, axis_size):
    (x,) = operands      # (batched: the rule is asked only then)
    if ctx.axis_name != axis_name:          # another (outer) axis: one per member of this one
        return ctx.apply([x], axis_name=axis_name, axis_size=axis_size), [True]
    return [ctx.reduce_sum(x, (0,))], [False]


psum_p = register(Primitive(
    "psum", same_shape_rule, same_dtype_rule, _psum_impl, _psum_lowering,
    doc="the sum over the members of a named vmap axis (psc_jit.psum)",
    jvp=linear_in(), linear=True, transpose=_psum_transpose, batch=_psum_batch))


def _gather_shape(aval, *, axis_name, axis_size):
    return (axis_size,) + tuple(aval.shape)


def _gather_impl(x, *, axis_name, axis_size):
    x = np.asarray(x)
    return np.array(np.broadcast_to(x, (axis_size,) + x.shape))


def _gather_lowering(ctx, x, *, axis_name, axis_size):
    return _stack(ctx, x, ctx.avals_in[0], ctx.avals_out[0])


def _gather_batch(ctx, operands, batched, *, axis_name, axis_size):
    (x,) = operands      # (batched: the rule is asked only then)
    if ctx.axis_name != axis_name:          # the inner members' gathers, inner axis first
        (out,) = ctx.apply([x], axis_name=axis_name, axis_size=axis_size)
        rank = len(out.aval.shape)
        return [ctx.transpose(out, (1, 0) + tuple(range(2, rank)))], [True]
    return [x], [False]                     # the stack of the members' values, for all


all_gather_p = register(Primitive(
    "all_gather", _gather_shape, same_dtype_rule, _gather_impl, _gather_lowering,
    doc="every member's value of a named vmap axis, stacked (psc_jit.all_gather)",
    batch=_gather_batch))
