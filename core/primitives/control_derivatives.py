"""The derivatives of `while_loop` and `cond` (see `control`): rules that transform their
sub-graphs with the graph transformations their context offers (`ctx.jvp_graph`,
`ctx.vjp_graph`), binding the equation's own primitive (`ctx.prim`) anew.

Forward mode carries the tangents along: a loop carries (values, tangents) and stops on the
values, so it works whatever decides its number of iterations. Reverse mode needs, going
backwards, every iteration's residuals: a loop whose trip count is known when tracing (a
`for` over a range of Python ints) stores them in stacked buffers, one row per iteration, as
JAX's scan does, and a second loop runs the backward body from the last iteration to the
first. A loop whose trip count is only known at run time is refused, as JAX refuses it.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

from ..ir import Graph, Literal, ShapedArray, Var
from ..passes import dead_code_elimination

COUNTER = ShapedArray((), np.dtype(np.int64))


def split_while(args: Sequence, cond_nconsts: int, body_nconsts: int):
    """(cond consts, body consts, carried) of a while_loop's operands."""
    cond_consts = list(args[:cond_nconsts])
    body_consts = list(args[cond_nconsts:cond_nconsts + body_nconsts])
    return cond_consts, body_consts, list(args[cond_nconsts + body_nconsts:])


def _inexact(aval) -> bool:
    return aval.dtype.kind in "fc"


def _with_inputs(graph: Graph, at: int, avals) -> Graph:
    """graph with unused inputs of these types inserted at position `at`."""
    extra = tuple(Var(a) for a in avals)
    return Graph(graph.in_vars[:at] + extra + graph.in_vars[at:], graph.eqns, graph.out_atoms)


def active_outputs(graph: Graph, active: Sequence[bool]) -> list[bool]:
    """Which outputs may depend on the active inputs through differentiable equations."""
    live = {id(v) for v, a in zip(graph.in_vars, active, strict=True) if a}
    for eqn in graph.eqns:
        if eqn.prim.differentiable and any(id(a) in live for a in eqn.inputs):
            live.update(id(v) for v in eqn.outs if _inexact(v.aval))
    return [id(a) in live for a in graph.out_atoms]


def _varying(graph: Graph, inputs) -> set[int]:
    """The variables of graph that depend on `inputs` (the carried values of a loop body)."""
    found = {id(v) for v in inputs}
    for eqn in graph.eqns:
        if any(id(a) in found for a in eqn.inputs):
            found.update(id(v) for v in eqn.outs)
    return found


def _settle(grow, start: list[bool]) -> list[bool]:
    """The least fixpoint above `start` of mask -> mask | grow(mask) (carried values that
    become active, or get tangents, in some iteration)."""
    mask = list(start)
    while True:
        grown = [a or b for a, b in zip(mask, grow(mask), strict=True)]
        if grown == mask:
            return mask
        mask = grown


# -- while_loop, forward mode -----------------------------------------------------------------

def while_loop_jvp(ctx, primals, tangents, *, cond_graph, body_graph, cond_nconsts, body_nconsts,
                   trip_count=None):
    cond_consts, body_consts, carried = split_while(primals, cond_nconsts, body_nconsts)
    _, const_tangents, carried_tangents = split_while(tangents, cond_nconsts, body_nconsts)
    const_nz = [t is not None for t in const_tangents]
    carried_nz = _settle(lambda nz: ctx.jvp_graph(body_graph, const_nz + nz)[1],
                         [t is not None for t in carried_tangents])
    body, _ = ctx.jvp_graph(body_graph, const_nz + carried_nz, instantiate=carried_nz)
    nb, nc, nt = len(body_consts), len(carried), sum(const_nz)
    ins = body.in_vars
    body = Graph(ins[:nb] + ins[nb + nc:nb + nc + nt] + ins[nb:nb + nc] + ins[nb + nc + nt:],
                 body.eqns, body.out_atoms)
    t_carried = [v for v, nz in zip(carried, carried_nz, strict=True) if nz]
    cond = _with_inputs(cond_graph, len(cond_graph.in_vars), [v.aval for v in t_carried])
    t_init = [t if t is not None else ctx.zeros_like(c)
              for c, t, nz in zip(carried, carried_tangents, carried_nz, strict=True) if nz]
    params = {} if trip_count is None else {"trip_count": trip_count}
    outs = ctx.bind(ctx.prim, *cond_consts, *body_consts,
                    *(t for t in const_tangents if t is not None), *carried, *t_init,
                    cond_graph=cond, body_graph=body, cond_nconsts=cond_nconsts,
                    body_nconsts=nb + nt, **params)
    rest = iter(outs[nc:])
    return outs[:nc], [next(rest) if nz else None for nz in carried_nz]


# -- while_loop, reverse mode -----------------------------------------------------------------

def while_loop_vjp(ctx, primals, active, *, cond_graph, body_graph, cond_nconsts, body_nconsts,
                   trip_count=None):
    cond_consts, body_consts, carried = split_while(primals, cond_nconsts, body_nconsts)
    _, const_active, carried_active = split_while(active, cond_nconsts, body_nconsts)
    carried_active = _settle(lambda act: active_outputs(body_graph, const_active + act),
                             [a and _inexact(c.aval) for a, c in zip(carried_active, carried,
                                                                     strict=True)])
    if trip_count is None:
        raise ctx.error(
            "reverse-mode differentiation (grad, vjp, jacrev) of a loop whose number of "
            "iterations is only known at run time: the backward pass would have to keep every "
            "iteration's values, and their number is not known when the program is compiled "
            "(JAX refuses it too)", "loop over range(n) with a Python int n, or use forward mode "
            "(jvp, jacfwd)")
    if trip_count == 0:
        return ctx.primal_outs(), carried_active, _pass_through(cond_nconsts + body_nconsts)
    loop = _ReverseLoop(ctx, cond_graph, body_graph, cond_nconsts, body_consts, carried,
                        const_active + carried_active, trip_count)
    outs = loop.forward(cond_consts)
    return outs, carried_active, loop.backward


def _pass_through(n_consts: int):
    """The backward function of a loop that never runs: cotangents go to the initial values."""
    return lambda ctx, cts: [None] * n_consts + list(cts)


class _ReverseLoop:
    """A loop of known trip count, differentiated in reverse: the forward loop stores each
    iteration's residuals in stacked buffers; the backward loop runs from the last iteration
    to the first, reading them back."""

    def __init__(self, ctx, cond_graph, body_graph, cond_nconsts, body_consts, carried, active,
                 trip_count):
        self.cond_graph, self.cond_nconsts = cond_graph, cond_nconsts
        self.body_consts, self.carried, self.n = body_consts, carried, trip_count
        self.ct_mask = [_inexact(c.aval) for c in carried]
        self.graphs = ctx.vjp_graph(body_graph, active, self.ct_mask)
        nb, nc = len(body_consts), len(carried)
        forward = self.graphs.forward
        residuals = forward.out_atoms[nc:]
        varying = _varying(forward, forward.in_vars[nb:])
        # a residual computed from the consts alone is the same in every iteration: it is
        # computed once, before the loop, instead of stacked
        invariant = [k for k, r in enumerate(residuals) if id(r) not in varying]
        hoisted = Graph(forward.in_vars[:nb], forward.eqns, tuple(residuals[k] for k in invariant))
        values = ctx.inline(dead_code_elimination(hoisted), body_consts)
        self.fixed = dict(zip(invariant, values, strict=True))
        self.stacked = [k for k in range(len(residuals)) if k not in self.fixed]
        self.residual_avals = [r.aval for r in residuals]
        self.ctx = ctx

    def stack_aval(self, k: int) -> ShapedArray:
        aval = self.residual_avals[k]
        return ShapedArray((self.n,) + aval.shape, aval.dtype)

    def forward(self, cond_consts) -> list:
        ctx, nb, nc = self.ctx, len(self.body_consts), len(self.carried)
        b = ctx.new()
        consts = [Var(c.aval) for c in self.body_consts]
        counter = Var(COUNTER)
        carried = [Var(c.aval) for c in self.carried]
        stacks = [Var(self.stack_aval(k)) for k in self.stacked]
        outs = b.inline(self.graphs.forward, consts + carried)
        rows = [outs[nc + k] for k in self.stacked]
        new_stacks = [b.update_at(s, counter, r) for s, r in zip(stacks, rows, strict=True)]
        body = b.graph(consts + [counter] + carried + stacks,
                       [b.add(counter, Literal.of(np.int64(1)))] + outs[:nc] + new_stacks)
        cond = _with_inputs(self.cond_graph, self.cond_nconsts, [COUNTER])
        cond = _with_inputs(cond, len(cond.in_vars), [v.aval for v in stacks])
        inits = [ctx.zeros(self.stack_aval(k)) for k in self.stacked]
        results = ctx.bind(ctx.prim, *cond_consts, *self.body_consts,
                           Literal.of(np.int64(0)), *self.carried, *inits,
                           cond_graph=cond, body_graph=body, cond_nconsts=self.cond_nconsts,
                           body_nconsts=nb, trip_count=self.n)
        self.stacks = results[1 + nc:]
        return results[1:1 + nc]

    def backward(self, ctx, cts) -> list:
        active = self.graphs.active
        nb = len(self.body_consts)
        slots = [k for k, asked in enumerate(self.ct_mask) if asked]
        ct_init = [cts[k] if cts[k] is not None else ctx.zeros_like(self.carried[k])
                   for k in slots]
        acc_init = [ctx.zeros_like(c) for c, a in zip(self.body_consts, active[:nb], strict=True)
                    if a]
        body = self.backward_body(ctx, slots)
        fixed = [self.fixed[k] for k in sorted(self.fixed)]
        n_consts = len(self.stacks) + len(fixed)
        cond = self.counter_cond(ctx, [v.aval for v in body.in_vars[n_consts + 1:]])
        results = ctx.bind(ctx.prim, *self.stacks, *fixed, Literal.of(np.int64(self.n - 1)),
                           *ct_init, *acc_init, cond_graph=cond, body_graph=body,
                           cond_nconsts=0, body_nconsts=n_consts, trip_count=self.n)
        ct_carried = dict(zip(slots, results[1:1 + len(slots)], strict=True))
        acc = iter(results[1 + len(slots):])
        ct_consts = [next(acc) if a else None for a in active[:nb]]
        ct_carried = [ct_carried[k] if a else None
                      for k, a in enumerate(active[nb:])]
        return [None] * self.cond_nconsts + ct_consts + ct_carried

    def backward_body(self, ctx, slots) -> Graph:
        b = ctx.new()
        active = self.graphs.active
        nb = len(self.body_consts)
        stacks = [Var(self.stack_aval(k)) for k in self.stacked]
        fixed = [Var(self.residual_avals[k]) for k in sorted(self.fixed)]
        counter = Var(COUNTER)
        cts = [Var(self.carried[k].aval.update(weak_type=False)) for k in slots]
        accs = [Var(c.aval.update(weak_type=False))
                for c, a in zip(self.body_consts, active[:nb], strict=True) if a]
        residuals = dict(zip(sorted(self.fixed), fixed, strict=True))
        for k, stack in zip(self.stacked, stacks, strict=True):
            residuals[k] = b.cast(b.index_at(stack, counter), self.residual_avals[k])
        ordered = [residuals[k] for k in range(len(self.residual_avals))]
        cts_in = b.inline(self.graphs.backward, ordered + cts)
        n_acc = len(accs)
        new_accs = [b.add(a, c) for a, c in zip(accs, cts_in[:n_acc], strict=True)]
        carried_cts = dict(zip([k for k, a in enumerate(active[nb:]) if a], cts_in[n_acc:],
                               strict=True))
        new_cts = [carried_cts[k] if k in carried_cts else b.zeros_like(v)
                   for k, v in zip(slots, cts, strict=True)]
        step = b.sub(counter, Literal.of(np.int64(1)))
        return b.graph(stacks + fixed + [counter] + cts + accs, [step] + new_cts + new_accs)

    @staticmethod
    def counter_cond(ctx, carried_avals) -> Graph:
        """counter >= 0, the counter first among the carried values."""
        b = ctx.new()
        counter = Var(COUNTER)
        graph = b.graph([counter], [b.ge(counter, Literal.of(np.int64(0)))])
        return _with_inputs(graph, 1, carried_avals)


# -- cond -------------------------------------------------------------------------------------

def cond_jvp(ctx, primals, tangents, *, branches):
    index, operands, op_tangents = primals[0], primals[1:], tangents[1:]
    nonzeros = [t is not None for t in op_tangents]
    out_nz = [False] * len(branches[0].out_atoms)
    for graph in branches:
        out_nz = [a or b for a, b in zip(out_nz, ctx.jvp_graph(graph, nonzeros)[1], strict=True)]
    new = tuple(ctx.jvp_graph(g, nonzeros, instantiate=out_nz)[0] for g in branches)
    outs = ctx.bind(ctx.prim, index, *operands, *(t for t in op_tangents if t is not None),
                    branches=new)
    n = len(out_nz)
    rest = iter(outs[n:])
    return outs[:n], [next(rest) if nz else None for nz in out_nz]


def cond_vjp(ctx, primals, active, *, branches):
    """Each branch split into forward and backward graphs; the forward cond also gives every
    branch's residuals (zeros for the branches not taken), the backward cond takes them."""
    index, operands = primals[0], primals[1:]
    graphs = [ctx.vjp_graph(g, active[1:]) for g in branches]
    n_out = len(branches[0].out_atoms)
    slots = [[r.aval for r in g.forward.out_atoms[n_out:]] for g in graphs]
    forward = tuple(_forward_branch(ctx, g.forward, n_out, slots, k)
                    for k, g in enumerate(graphs))
    outs = ctx.bind(ctx.prim, index, *operands, branches=forward)
    residuals = outs[n_out:]
    out_active = [_inexact(a.aval) for a in outs[:n_out]]

    def backward(bctx, cts):
        cts = [ct if ct is not None else bctx.zeros_like(o)
               for ct, o in zip(cts[:n_out], outs[:n_out], strict=True) if _inexact(o.aval)]
        back = tuple(_backward_branch(bctx, g.backward, slots, k, cts)
                     for k, g in enumerate(graphs))
        cts_in = iter(bctx.bind(ctx.prim, index, *residuals, *cts, branches=back))
        return [None] + [next(cts_in) if a else None for a in graphs[0].active]
    return outs[:n_out], out_active, backward


def _forward_branch(ctx, forward: Graph, n_out: int, slots, k: int) -> Graph:
    b = ctx.new()
    ins = [Var(v.aval) for v in forward.in_vars]
    outs = b.inline(forward, ins)
    residuals = []
    for j, avals in enumerate(slots):
        residuals += outs[n_out:] if j == k else [b.zeros(a.update(weak_type=False))
                                                   for a in avals]
    return b.graph(ins, outs[:n_out] + residuals)


def _backward_branch(ctx, backward: Graph, slots, k: int, cts) -> Graph:
    b = ctx.new()
    residuals = [[Var(a.update(weak_type=False)) for a in avals] for avals in slots]
    ct_vars = [Var(c.aval) for c in cts]
    own = [b.cast(v, a) for v, a in zip(residuals[k], slots[k], strict=True)]
    cts_in = b.inline(backward, own + ct_vars)
    return b.graph([v for vs in residuals for v in vs] + ct_vars, cts_in)
