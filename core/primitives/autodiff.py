"""The shapes of differentiation rules that categories of primitives share (`record` says
what each rule is given and returns). A rule writes equations through its `ctx`
(`ctx.mul(t, ctx.cos(x))`), never by importing the layer that interprets it.

    partials(f0, f1, ...)   JVP from one partial derivative per operand:
                            f_i(ctx, t, out, *operands, **params) is t times d out / d operand_i
    linear_in(i, j, ...)    JVP of a primitive linear in those operands (all: no argument)
    zero_jvp                results whose derivative is zero wherever it exists (floor, sign)

and the rules of the elementwise primitives of `elementwise.py`, by name.
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


# -- the rules of the elementwise primitives (elementwise.py) ---------------------------------

def add_transpose(ctx, ct, x, y):
    return [ct if is_linear(x) else None, ct if is_linear(y) else None]


def subtract_transpose(ctx, ct, x, y):
    return [ct if is_linear(x) else None, ctx.neg(ct) if is_linear(y) else None]


def multiply_transpose(ctx, ct, x, y):
    if is_linear(x) and is_linear(y):
        raise TypeError("a product of two tangents is not linear")
    return [ctx.mul(ct, y) if is_linear(x) else None, ctx.mul(x, ct) if is_linear(y) else None]


def negative_transpose(ctx, ct, x):
    return [ctx.neg(ct)]


def abs_partial(ctx, t, out, x):
    """sign(x) t; for complex x, re(conj(x) t) / |x| (0 at 0)."""
    if x.aval.dtype.kind != "c":
        return ctx.mul(t, ctx.sign(x))
    at_zero = ctx.eq(out, ctx.zeros_like(out))
    safe = ctx.select(at_zero, ctx.full_like(out, 1), out)
    slope = ctx.div(ctx.real(ctx.mul(ctx.conj(x), t)), safe)
    return ctx.select(at_zero, ctx.zeros_like(out), slope)


def copysign_partial(ctx, t, out, x, y):
    """|x| with y's sign: sign(x) times the sign it is given."""
    return ctx.mul(t, ctx.mul(ctx.sign(x), ctx.sign(out)))


def extremum_partial(which: int, ctx, t, out, x, y):
    """max/min pass the tangent of the operand they pick; half of each on a tie."""
    mine, other = (x, y) if which == 0 else (y, x)
    share = ctx.select(ctx.eq(other, out), ctx.full_like(t, 0.5), ctx.full_like(t, 1))
    return ctx.mul(t, ctx.select(ctx.eq(mine, out), share, ctx.zeros_like(t)))


def extremum_jvp():
    return partials(partial(extremum_partial, 0), partial(extremum_partial, 1))


def select_transpose(ctx, ct, pred, on_true, on_false):
    zeros = ctx.zeros_like(ct)
    return [None, ctx.select(pred, ct, zeros) if is_linear(on_true) else None,
            ctx.select(pred, zeros, ct) if is_linear(on_false) else None]


def convert_jvp(ctx, primals, tangents, *, new_dtype, weak_type=False):
    outs = ctx.primal_outs()
    if tangents[0] is None or outs[0].aval.dtype.kind not in "fc":
        return outs, [None]
    return outs, [ctx.convert(tangents[0], new_dtype, weak_type)]


def convert_transpose(ctx, ct, x, *, new_dtype, weak_type=False):
    return [ctx.convert(ct, x.aval.dtype, x.aval.weak_type)]


def real_transpose(ctx, ct, x):
    return [ctx.convert(ct, x.aval.dtype)]


def imag_transpose(ctx, ct, x):
    if x.aval.dtype.kind != "c":
        return [None]           # the imaginary part of a real number is a constant zero
    return [ctx.complex(ctx.zeros_like(ct), ctx.neg(ct))]


def conjugate_transpose(ctx, ct, x):
    return [ctx.conj(ct)]


def complex_transpose(ctx, ct, re, im):
    return [ctx.real(ct) if is_linear(re) else None,
            ctx.neg(ctx.imag(ct)) if is_linear(im) else None]


LINEAR = {"jvp": linear_in(), "linear": True}
