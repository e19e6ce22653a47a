"""Automatic batching: a graph run on values that carry one more leading axis, the batch axis,
built by one pass over its equations, each batched by its primitive's `batch` rule.

    batch_graph(graph, batched, axis_size) -> (graph of the batched inputs (each batched one
                                               with a leading axis of axis_size), which
                                               outputs are batched)

A value either is batched (one member per index of its leading axis) or is the same for every
member (unbatched: its own shape). An equation none of whose operands is batched is copied as
it is; the others go through their primitive's rule (see `core.primitives.record`). Every
equation of the result carries the source line of the equation it came from.
"""
from __future__ import annotations

from typing import Any, Sequence

from ..ir import Eqn, Graph, Literal, ShapedArray, Var
from ..tracing import UnsupportedError
from .ops import Ops, copy_eqn


def batched_aval(aval: ShapedArray, axis_size: int) -> ShapedArray:
    return aval.update(shape=(axis_size,) + aval.shape)


def with_batch(ops: Ops, x, axis_size: int):
    """x, unbatched, as a batched value: the same for every member."""
    shape = x.aval.shape
    return ops.broadcast_in_dim(x, (axis_size,) + shape, range(1, len(shape) + 1))


class BatchContext(Ops):
    """What a batching rule is given: the equation it batches (`prim`, `params`), the size of
    the batch axis, the operations of `Ops` (emitted with the equation's source), and the
    batching of sub-graphs that the rules of control flow need."""

    def __init__(self, eqns: list[Eqn], eqn: Eqn, axis_size: int, axis_name=None):
        super().__init__(eqns, eqn.source)
        self.eqn, self.prim, self.params = eqn, eqn.prim, eqn.params
        self.axis_size = axis_size
        self.axis_name = axis_name      # the batch axis's name (vmap's axis_name), or None

    def apply(self, operands: Sequence[Any], **params) -> list:
        """The equation's own primitive on these operands with these params; its outputs."""
        outs = self.bind(self.prim, *operands, **params)
        return outs if self.prim.multiple_results else [outs]

    def with_batch(self, x, batched: bool = False):
        """x as a batched value (broadcast along the batch axis unless it is batched)."""
        return x if batched else with_batch(self, x, self.axis_size)

    def batch_graph(self, graph: Graph, batched: Sequence[bool], instantiate=False):
        return batch_graph(graph, batched, self.axis_size, instantiate, self.axis_name)

    def error(self, message: str, hint: str = "") -> UnsupportedError:
        """An error at the user's line of the equation being batched."""
        return UnsupportedError(message, self.eqn.source, hint)


def missing_rule(eqn: Eqn) -> UnsupportedError:
    return UnsupportedError(
        f"psc_jit cannot batch `{eqn.prim.name}` (vmap): it has no batching rule", eqn.source,
        "compute this value outside the vmapped function, or loop over the batch in Python")


def batch_eval(ops: Ops, graph: Graph, values: Sequence[Any], batched: Sequence[bool],
               axis_size: int, axis_name=None) -> tuple[list, list[bool]]:
    """Emit the batched graph into ops: (outs, which outs are batched). A variable the graph
    does not define (a value of an enclosing trace) is itself, unbatched."""
    env: dict[int, tuple[Any, bool]] = {}

    def read(atom) -> tuple[Any, bool]:
        if isinstance(atom, Literal):
            return atom, False
        return env.get(id(atom), (atom, False))

    for var, x, b in zip(graph.in_vars, values, batched, strict=True):
        env[id(var)] = (x, b)
    for eqn in graph.eqns:
        found = [read(a) for a in eqn.inputs]
        ins, flags = [x for x, _ in found], [b for _, b in found]
        if not any(flags):
            outs, out_b = copy_eqn(ops, eqn, ins), [False] * len(eqn.outs)
        elif eqn.prim.batch is None:
            raise missing_rule(eqn)
        else:
            ctx = BatchContext(ops.eqns, eqn, axis_size, axis_name)
            outs, out_b = eqn.prim.batch(ctx, ins, flags, **eqn.params)
        for var, out, b in zip(eqn.outs, outs, out_b, strict=True):
            env[id(var)] = (out, b)
    found = [read(a) for a in graph.out_atoms]
    return [x for x, _ in found], [b for _, b in found]


def batch_graph(graph: Graph, batched: Sequence[bool], axis_size: int,
                instantiate: bool | Sequence[bool] = False, axis_name=None
                ) -> tuple[Graph, list[bool]]:
    """The batched graph (see the module doc). `instantiate` (per output, or for all) makes
    an unbatched output batched (the same for every member)."""
    ops = Ops()
    in_vars = [Var(batched_aval(v.aval, axis_size) if b else v.aval)
               for v, b in zip(graph.in_vars, batched, strict=True)]
    outs, out_b = batch_eval(ops, graph, in_vars, batched, axis_size, axis_name)
    if isinstance(instantiate, bool):
        instantiate = [instantiate] * len(outs)
    outs = [with_batch(ops, o, axis_size) if inst and not b else o
            for o, b, inst in zip(outs, out_b, instantiate, strict=True)]
    out_b = [b or inst for b, inst in zip(out_b, instantiate, strict=True)]
    return ops.graph(in_vars, outs), out_b
