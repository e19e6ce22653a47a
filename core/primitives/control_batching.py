"""The batching rules of `while_loop` and `cond` (see `control`): they batch their sub-graphs
with the context's `ctx.batch_graph` and bind the equation's own primitive anew.

A loop carries a batched value wherever its initial value, or the body in some iteration,
makes it one. While its condition is the same for every member, the loop stays one loop over
batched values. A condition that differs per member (a `while` whose trip count depends on
the member's data) makes every carried value batched: the loop runs while any member's
condition holds, and a member whose condition no longer holds keeps its values (each
iteration selects, per member, the body's results or the values it had), as JAX does.

A `cond` whose index is the same for every member stays a `cond` of batched branches. An
index that differs per member runs every branch and selects each member's results by its
index (XLA's case: an index out of range takes the last branch).
"""
from __future__ import annotations

from ..ir import Var
from .control_derivatives import settle, split_while


def while_loop_batch(ctx, operands, batched, *, cond_graph, body_graph, cond_nconsts,
                     body_nconsts, trip_count=None):
    cond_consts, body_consts, carried = split_while(operands, cond_nconsts, body_nconsts)
    cond_b, body_b, init_b = split_while(batched, cond_nconsts, body_nconsts)
    carried_b = settle(lambda now: ctx.batch_graph(body_graph, body_b + now)[1], init_b)
    if ctx.batch_graph(cond_graph, cond_b + carried_b)[1][0]:
        return _until_every_member_is_done(ctx, cond_graph, body_graph, cond_consts,
                                           body_consts, carried, batched)
    body, _ = ctx.batch_graph(body_graph, body_b + carried_b, instantiate=carried_b)
    cond, _ = ctx.batch_graph(cond_graph, cond_b + carried_b)
    inits = [ctx.with_batch(c, b) if now else c
             for c, b, now in zip(carried, init_b, carried_b, strict=True)]
    params = {} if trip_count is None else {"trip_count": trip_count}
    outs = ctx.apply([*cond_consts, *body_consts, *inits], cond_graph=cond, body_graph=body,
                     cond_nconsts=cond_nconsts, body_nconsts=body_nconsts, **params)
    return outs, carried_b


def _until_every_member_is_done(ctx, cond_graph, body_graph, cond_consts, body_consts,
                                carried, batched):
    """The loop of a condition that differs per member: every carried value batched."""
    nc, nb = len(cond_consts), len(body_consts)
    every = [True] * len(carried)
    cond_b = ctx.batch_graph(cond_graph, list(batched[:nc]) + every)[0]
    body_b = ctx.batch_graph(body_graph, list(batched[nc:nc + nb]) + every, instantiate=True)[0]
    inits = [ctx.with_batch(c, b) for c, b in zip(carried, batched[nc + nb:], strict=True)]

    b = ctx.new()
    cc, bc, values = ([Var(a.aval) for a in group] for group in (cond_consts, body_consts, inits))
    active = b.inline(cond_b, cc + values)[0]
    stepped = b.inline(body_b, bc + values)
    kept = [b.select(b.broadcast_in_dim(active, v.aval.shape, (0,)), new, v)
            for new, v in zip(stepped, values, strict=True)]
    body = b.graph(cc + bc + values, kept)

    c = ctx.new()
    cc2, values2 = [Var(a.aval) for a in cond_consts], [Var(a.aval) for a in inits]
    any_active = c.reduce_or(c.inline(cond_b, cc2 + values2)[0], (0,))
    cond = c.graph(cc2 + values2, [any_active])

    outs = ctx.apply([*cond_consts, *cond_consts, *body_consts, *inits], cond_graph=cond,
                     body_graph=body, cond_nconsts=nc, body_nconsts=nc + nb)
    return outs, every


def cond_batch(ctx, operands, batched, *, branches):
    index, args, args_b = operands[0], operands[1:], list(batched[1:])
    if batched[0]:
        return _selected_branches(ctx, index, args, args_b, branches)
    out_b = [False] * len(branches[0].out_atoms)
    for graph in branches:
        out_b = [a or b for a, b in zip(out_b, ctx.batch_graph(graph, args_b)[1], strict=True)]
    new = tuple(ctx.batch_graph(g, args_b, instantiate=out_b)[0] for g in branches)
    return ctx.apply([index, *args], branches=new), out_b


def _selected_branches(ctx, index, args, args_b, branches):
    results = [ctx.inline(ctx.batch_graph(g, args_b, instantiate=True)[0], args)
               for g in branches]
    outs = results[-1]
    for k in reversed(range(len(branches) - 1)):
        taken = ctx.eq(index, ctx.full_like(index, k))
        outs = [ctx.select(ctx.broadcast_in_dim(taken, r.aval.shape, (0,)), r, o)
                for r, o in zip(results[k], outs, strict=True)]
    return outs, [True] * len(outs)
