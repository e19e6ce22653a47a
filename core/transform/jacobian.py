"""Jacobians, as JAX's `jacfwd` and `jacrev`: one JVP per input element, or one VJP per output
element, each run in one rolled loop (a `while_loop` of known trip count, so the program does
not grow with the size, and the result can be differentiated again: `jacfwd(jacrev(f))`).

The Jacobian of an output leaf of shape O with respect to an input leaf of shape S has shape
O + S; the result is a tree like the output whose leaves are trees like args[argnums].
"""
from __future__ import annotations

import functools
from typing import Callable, Sequence

import numpy as np

from ..ir import Graph, Literal, ShapedArray, Var
from ..primitives import while_loop_p
from ..tracing import caller_source, current_trace
from ..tree_util import flatten, unflatten
from .api import Transformed, as_tuple, check_grad_inputs, _name
from .flat import FlatTrace, inline, leaf_positions, to_tracer, trace_flat
from .jvp import jvp_graph
from ..control.ops import Ops, is_inexact
from .vjp import vjp_graph

COUNTER = ShapedArray((), np.dtype(np.int64))


def counted_loop(ops: Ops, n: int, consts: Sequence, inits: Sequence, body: Callable) -> list:
    """`for i in range(n): carried = body(b, i, consts, carried)` as one while_loop; `body`
    emits into `b` (an Ops) and gets the loop's own variables."""
    b = ops.new()
    const_vars = [Var(c.aval) for c in consts]
    counter = Var(COUNTER)
    carried = [Var(c.aval) for c in inits]
    new = body(b, counter, const_vars, carried)
    step = b.add(counter, Literal.of(np.int64(1)))
    body_graph = b.graph(const_vars + [counter] + carried, [step] + list(new))
    c = ops.new()
    cond_counter = Var(COUNTER)
    cond_graph = c.graph([cond_counter] + [Var(v.aval) for v in carried],
                         [c.lt(cond_counter, Literal.of(np.int64(n)))])
    outs = ops.bind(while_loop_p, *consts, Literal.of(np.int64(0)), *inits,
                    cond_graph=cond_graph, body_graph=body_graph, cond_nconsts=0,
                    body_nconsts=len(consts), trip_count=n)
    return outs[1:]


def _one_hot(b: Ops, i, aval: ShapedArray):
    """The i-th element of the standard basis, shaped and typed like aval."""
    positions = b.iota((aval.size,), np.int64, 0)
    hot = b.eq(positions, b.broadcast_in_dim(i, (aval.size,), ()))
    return b.reshape(b.convert(hot, aval.dtype), aval.shape)


def _stacked(b: Ops, n: int, aval: ShapedArray):
    return b.zeros(ShapedArray((n,) + aval.shape, aval.dtype))


def _wanted(args, argnums):
    positions = leaf_positions(args, as_tuple(argnums))
    return positions, {i for ps in positions for i in ps}


def _check_outputs(ft: FlatTrace, what: str) -> list[int]:
    outs = []
    for out in ft.outs:
        if not isinstance(out, int) or not is_inexact(ft.graph.out_atoms[out].aval):
            raise TypeError(f"{what} requires real- or complex-valued outputs (arrays of an "
                            "inexact dtype)")
        outs.append(out)
    return outs


def _jacobian_tree(ft: FlatTrace, args, argnums, positions, blocks):
    """blocks[(out index, input leaf)] -> the tree like the output of trees like args."""
    trees = []
    for k in range(len(ft.outs)):
        per_arg = tuple(unflatten(flatten(args[n])[1], [to_tracer(blocks[(k, i)]) for i in ps])
                        for n, ps in zip(as_tuple(argnums), positions, strict=True))
        trees.append(per_arg[0] if isinstance(argnums, int) else per_arg)
    return unflatten(ft.out_tree, trees)


def jacfwd_traced(fun, argnums, args, kwargs):
    positions, wanted = _wanted(args, argnums)
    ft = trace_flat(fun, args, kwargs, sorted(wanted))
    outs = _check_outputs(ft, "jacfwd")
    ops = Ops(current_trace().eqns, caller_source())
    operands = ft.operands
    blocks = {}
    for k_in, i in enumerate(ft.inputs):
        if i not in wanted:
            continue
        aval_in = ft.input_aval(k_in)
        nonzeros = [k == k_in for k in range(len(ft.inputs))]
        graph, out_nz = jvp_graph(ft.graph, nonzeros, True)
        columns = _columns(ops, graph, operands, aval_in, outs, out_nz)
        for k_out, column in zip(range(len(outs)), columns, strict=True):
            blocks[(k_out, i)] = column
    ft.finish(inline(ft.graph, operands))
    return _jacobian_tree(ft, args, argnums, positions, blocks)


def _columns(ops: Ops, graph: Graph, operands, aval_in, outs, out_nz) -> list:
    """Per output, its derivatives along each element of one input: (O + S)."""
    tangent_index = {k: len(out_nz) + sum(out_nz[:k]) for k in range(len(out_nz))}
    out_avals = [graph.out_atoms[o].aval for o in outs]
    n = aval_in.size
    if n == 0:
        return [ops.zeros(ShapedArray(a.shape + aval_in.shape, a.dtype)) for a in out_avals]

    def body(b, i, consts, stacks):
        basis = _one_hot(b, i, aval_in.update(weak_type=False))
        results = b.inline(graph, consts + [basis])
        return [b.update_at(s, i, results[tangent_index[o]]) for s, o in zip(stacks, outs,
                                                                             strict=True)]
    stacks = counted_loop(ops, n, operands, [_stacked(ops, n, a) for a in out_avals], body)
    columns = []
    for stack, aval in zip(stacks, out_avals, strict=True):
        moved = ops.transpose(stack, list(range(1, aval.ndim + 1)) + [0])
        columns.append(ops.reshape(moved, aval.shape + aval_in.shape))
    return columns


def jacrev_traced(fun, argnums, args, kwargs):
    positions, wanted = _wanted(args, argnums)
    ft = trace_flat(fun, args, kwargs, sorted(wanted))
    outs = _check_outputs(ft, "jacrev")
    n = len(ft.graph.out_atoms)
    active = [i in wanted for i in ft.inputs]
    graphs = vjp_graph(ft.graph, active, [k in outs for k in range(n)])
    ops = Ops(current_trace().eqns, caller_source())
    atoms = ops.inline(graphs.forward, ft.operands)
    residuals = atoms[n:]
    in_avals = [ft.input_aval(k) for k, a in enumerate(active) if a]
    out_avals = [graphs.forward.out_atoms[o].aval.update(weak_type=False) for o in outs]
    blocks = {}
    for k_out in range(len(out_avals)):
        rows = _rows(ops, graphs.backward, residuals, k_out, out_avals, in_avals)
        for i, row in zip([i for i, a in zip(ft.inputs, active, strict=True) if a], rows,
                          strict=True):
            blocks[(k_out, i)] = row
    ft.finish(atoms[:n])
    return _jacobian_tree(ft, args, argnums, positions, blocks)


def _rows(ops: Ops, backward: Graph, residuals, k_out, out_avals, in_avals) -> list:
    """Per active input, the derivatives of each element of one output: (O + S)."""
    aval = out_avals[k_out]
    if aval.size == 0:
        return [ops.zeros(ShapedArray(aval.shape + a.shape, a.dtype)) for a in in_avals]

    def body(b, i, consts, stacks):
        cts = [_one_hot(b, i, a) if k == k_out else b.zeros(a) for k, a in enumerate(out_avals)]
        results = b.inline(backward, consts + cts)
        return [b.update_at(s, i, r) for s, r in zip(stacks, results, strict=True)]
    stacks = counted_loop(ops, aval.size, residuals,
                          [_stacked(ops, aval.size, a.update(weak_type=False)) for a in in_avals],
                          body)
    return [ops.reshape(s, aval.shape + a.shape) for s, a in zip(stacks, in_avals, strict=True)]


def jacfwd(fun: Callable, argnums: int | Sequence[int] = 0):
    """The Jacobian of fun with respect to args[argnums], by forward mode (JAX's jacfwd)."""
    return Transformed(fun, functools.partial(_call, jacfwd_traced, fun, argnums),
                       f"jacfwd({_name(fun)})", ("jacfwd", fun, as_tuple(argnums)),
                       functools.partial(check_grad_inputs, argnums=argnums, what="jacfwd"))


def jacrev(fun: Callable, argnums: int | Sequence[int] = 0):
    """The Jacobian of fun with respect to args[argnums], by reverse mode (JAX's jacrev)."""
    return Transformed(fun, functools.partial(_call, jacrev_traced, fun, argnums),
                       f"jacrev({_name(fun)})", ("jacrev", fun, as_tuple(argnums)),
                       functools.partial(check_grad_inputs, argnums=argnums, what="jacrev"))


def _call(traced, fun, argnums, *args, **kwargs):
    return traced(fun, argnums, args, kwargs)
