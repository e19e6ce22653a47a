"""The shapes of differentiation rules that categories of primitives share (`record` says
what each rule is given and returns). A rule writes equations through its `ctx`
(`ctx.mul(t, ctx.cos(x))`), never by importing the layer that interprets it.

    partials(f0, f1, ...)   JVP from one partial derivative per operand:
                            f_i(ctx, t, out, *operands, **params) is t times d out / d operand_i
    linear_in(i, j, ...)    JVP of a primitive linear in those operands (all: no argument)
    zero_jvp                results whose derivative is zero wherever it exists (floor, sign)
"""
from __future__ import annotations

from functools import partial

from .record import Linear


def partials_jvp(fns, ctx, primals, tangents, **params):
    outs = ctx.primal_outs()
    total = None
    for fn, t in zip(fns, tangents, strict=True):
        if t is not None and fn is not None:
            total = ctx.add_any(total, fn(ctx, t, outs[0], *primals, **params))
    return outs, [total]


def partials(*fns):
    """A JVP rule from partial derivatives (None for an operand whose derivative is zero)."""
    return partial(partials_jvp, fns)


def linear_jvp(positions, ctx, primals, tangents, **params):
    outs = ctx.primal_outs()
    linear = range(len(primals)) if positions is None else positions
    if all(tangents[i] is None for i in linear):
        return outs, [None] * len(outs)
    args = [(tangents[i] if tangents[i] is not None else ctx.zeros_like(p)) if i in linear
            else p for i, p in enumerate(primals)]
    return outs, [ctx.bind(ctx.prim, *args, **params)]


def linear_in(*positions):
    """The JVP rule of a primitive linear in the operands at `positions` (all, if none are
    given): the primitive applied to their tangents and to the other operands as they are."""
    return partial(linear_jvp, positions or None)


def zero_jvp(ctx, primals, tangents, **params):
    outs = ctx.primal_outs()
    return outs, [None] * len(outs)


def is_linear(operand) -> bool:
    """Whether a transpose rule's operand is one it transposes with respect to."""
    return isinstance(operand, Linear)
