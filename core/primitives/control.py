"""Control-flow primitives, whose operands include sub-graphs: `while_loop` and `cond`.

Sub-graphs are closed: they have no free variables. A value from outside that a loop body
or branch reads becomes an explicit operand (a "const"), as in JAX:

    while_loop[cond_nconsts, body_nconsts, trip_count] cond_consts... body_consts... carried...
        cond_graph: (cond_consts..., carried...) -> bool[]
        body_graph: (body_consts..., carried...) -> carried...
        trip_count: the number of iterations when it is known when tracing (a `for` loop
                    over a range of Python ints), else absent
    cond[branches] index operands...        index: i32[], clamped like XLA's case
        each branch: (operands...) -> outs...

`core.control.subtrace` traces Python functions into such graphs. Their derivatives (in
`control_derivatives`) transform the sub-graphs.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

from ..interpreter import eval_graph
from ..ir import Graph, ShapedArray
from ..lowering import i64_array
from .contraction import transposed_consts
from .control_batching import cond_batch, while_loop_batch
from .control_derivatives import cond_jvp, cond_vjp, split_while, while_loop_jvp, while_loop_vjp
from .record import Primitive, register


# -- rules shared by both primitives ----------------------------------------------------------

def _check_operands(graph: Graph, avals: Sequence[ShapedArray], what: str) -> None:
    _check_avals(graph.in_avals, avals, what)


def _check_avals(expected_avals, avals, what: str) -> None:
    if len(expected_avals) != len(avals):
        raise TypeError(f"{what} takes {len(expected_avals)} operands, got {len(avals)}")
    for expected, got in zip(expected_avals, avals, strict=True):
        if (expected.shape, expected.dtype) != (got.shape, got.dtype):
            raise TypeError(f"{what} expects {expected}, got {got}")


def _out_shapes(graph: Graph) -> list[tuple[int, ...]]:
    return [a.shape for a in graph.out_avals]


def _out_dtypes(graph: Graph) -> list[np.dtype]:
    return [a.dtype for a in graph.out_avals]


# -- while_loop -------------------------------------------------------------------------------

def while_loop_shape_rule(*avals, cond_graph, body_graph, cond_nconsts, body_nconsts,
                          trip_count=None):
    cond_consts, body_consts, carried = split_while(avals, cond_nconsts, body_nconsts)
    _check_operands(cond_graph, cond_consts + carried, "the loop condition")
    _check_operands(body_graph, body_consts + carried, "the loop body")
    _check_avals(body_graph.out_avals, carried, "the loop body's results")
    if [(a.shape, a.dtype) for a in cond_graph.out_avals] != [((), np.dtype(bool))]:
        raise TypeError(f"a loop condition must give one bool[], got {cond_graph.out_avals}")
    return _out_shapes(body_graph)


def while_loop_dtype_rule(*avals, body_graph, **_):
    return _out_dtypes(body_graph)


def while_loop_weak_rule(*avals, body_graph, **_):
    return [a.weak_type for a in body_graph.out_avals]


def while_loop_impl(*args, cond_graph, body_graph, cond_nconsts, body_nconsts,
                    trip_count=None):
    cond_consts, body_consts, carried = split_while(args, cond_nconsts, body_nconsts)
    while bool(eval_graph(cond_graph, *cond_consts, *carried)[0]):
        carried = eval_graph(body_graph, *body_consts, *carried)
    return carried


def while_loop_lowering(ctx, *args, cond_graph, body_graph, cond_nconsts, body_nconsts,
                        trip_count=None):
    """`stablehlo.while` carrying the consts too (unchanged), so its regions are closed, and
    after them a transposed copy of each tall matrix the body multiplies with vectors
    (`contraction.transposed_consts`), made once before the loop."""
    avals = list(ctx.avals_in)
    n_consts = cond_nconsts + body_nconsts
    target = ctx.module.host_loops.get(ctx.eqn.id)
    if target is not None:     # its C (core/compile/hostloops), arrays updated in place
        outs = list(ctx.avals_out)
        return ctx.ffi_call(target, list(args), avals, outs,
                            {k: n_consts + k for k, a in enumerate(outs) if a.size != 1})
    pred_aval = ShapedArray((), np.dtype(bool))
    copied = transposed_consts(body_graph, body_nconsts, trip_count, ctx.module.targets)
    copies = [ctx.op("stablehlo.transpose", [args[cond_nconsts + k]],
                     [avals[cond_nconsts + k]], [flipped],
                     {"permutation": i64_array((1, 0))})[0] for k, flipped in copied.items()]
    every_aval = avals + list(copied.values())

    def cond_region(sub, names):
        cond_consts, _, carried = split_while(names[:len(avals)], cond_nconsts, body_nconsts)
        return [(sub.lower_graph(cond_graph, cond_consts + carried)[0], pred_aval)]

    def body_region(sub, names):
        _, body_consts, carried = split_while(names[:len(avals)], cond_nconsts, body_nconsts)
        copy_names = names[len(avals):]
        with ctx.module.transposed_copies({body_graph.in_vars[k].id: name for k, name
                                           in zip(copied, copy_names, strict=True)}):
            outs = sub.lower_graph(body_graph, body_consts + carried)
        return list(zip(names[:n_consts] + outs + copy_names, every_aval, strict=True))

    regions = [ctx.region(every_aval, cond_region), ctx.region(every_aval, body_region)]
    results = ctx.op("stablehlo.while", list(args) + copies, every_aval, every_aval,
                     regions=regions)
    return results[n_consts:len(avals)]


while_loop_p = register(Primitive(
    "while_loop", while_loop_shape_rule, while_loop_dtype_rule, while_loop_impl,
    while_loop_lowering, multiple_results=True, weak_type_rule=while_loop_weak_rule,
    doc="a Python loop rolled into one XLA while loop", jvp=while_loop_jvp, vjp=while_loop_vjp,
    batch=while_loop_batch))


# -- cond -------------------------------------------------------------------------------------

def cond_shape_rule(index, *avals, branches):
    if index.shape != () or index.dtype != np.int32:
        raise TypeError(f"cond's index must be i32[], got {index}")
    for n, graph in enumerate(branches):
        _check_operands(graph, avals, f"branch {n}")
        first = [(a.shape, a.dtype) for a in branches[0].out_avals]
        if [(a.shape, a.dtype) for a in graph.out_avals] != first:
            raise TypeError(f"branch {n} gives {graph.out_avals}, branch 0 "
                            f"{branches[0].out_avals}")
    return _out_shapes(branches[0])


def cond_dtype_rule(index, *avals, branches):
    return _out_dtypes(branches[0])


def cond_weak_rule(index, *avals, branches):
    return [all(g.out_avals[i].weak_type for g in branches)
            for i in range(len(branches[0].out_avals))]


def branch_index(index, n_branches: int) -> int:
    """XLA's case: an index out of range takes the last branch."""
    index = int(index)
    return index if 0 <= index < n_branches else n_branches - 1


def cond_impl(index, *args, branches):
    return eval_graph(branches[branch_index(index, len(branches))], *args)


def cond_lowering(ctx, index, *args, branches):
    """`stablehlo.case`: its branches read the operands from the enclosing region."""
    out_avals = ctx.avals_out

    def branch_region(graph):
        def body(sub, _names):
            return list(zip(sub.lower_graph(graph, list(args)), out_avals, strict=True))
        return ctx.region([], body)

    regions = [branch_region(g) for g in branches]
    return ctx.op("stablehlo.case", [index], ctx.avals_in[:1], out_avals, regions=regions)


cond_p = register(Primitive(
    "cond", cond_shape_rule, cond_dtype_rule, cond_impl, cond_lowering,
    multiple_results=True, weak_type_rule=cond_weak_rule,
    doc="an if/else (or a switch) on a traced value: one XLA case", jvp=cond_jvp, vjp=cond_vjp,
    batch=cond_batch))
