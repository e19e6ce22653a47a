"""A Python function of pytrees as a graph of its traced leaves, and back.

`trace_flat(fun, args, kwargs, wrt)` traces `fun` (its Python loops rolled, as `jit` does)
into a graph whose inputs are the call's traced leaves (arrays, NumPy scalars, Python floats,
tracers of an enclosing trace, and the leaves `wrt` even if they are Python ints) and whose
outputs are the result's numeric leaves, then the new values of arguments `fun` updated in
place, then its run-time checks. The transformations rewrite that graph and `FlatTrace.finish`
puts the result back into the enclosing trace: arguments updated in place are updated there,
checks are handed to it, and the result is rebuilt as the tree `fun` returned.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Hashable, Sequence

import numpy as np

from ..compile.signature import SubclassArgument
from ..frontend.convert import converted
from ..control.subtrace import SubTrace
from ..ir import Graph, Literal, ShapedArray, aval_of
from ..numpy.base import as_kind, ensure_tracer
from ..numpy.subclasses import plain_base
from ..tracing import Buffer, Tracer, c_strides, current_trace, to_atom
from ..tree_util import flatten, unflatten
from ..control.ops import Ops

def rolled(fun: Callable) -> Callable:
    """fun converted for tracing (its loops and branches rolled, its reads visible: see
    frontend.convert), once per function, when it is a user function."""
    return converted(fun)


def is_traced_leaf(value) -> bool:
    if isinstance(value, (Tracer, np.ndarray, np.generic)):
        return True
    return isinstance(value, (float, complex)) and not isinstance(value, bool)


def leaf_aval(value) -> tuple[ShapedArray, str]:
    """(aval, kind) of a leaf traced as an input."""
    if isinstance(value, Tracer):
        return value.aval, value.kind
    if isinstance(value, np.ndarray):
        return ShapedArray(value.shape, value.dtype), "array"
    if isinstance(value, np.generic):
        return ShapedArray((), value.dtype), "scalar"
    return aval_of(value), "python"


def is_number(value) -> bool:
    return isinstance(value, (np.ndarray, np.generic, bool, int, float, complex))


@dataclass(frozen=True)
class Static:
    """An output leaf that is not an array (None, a string, a module): passed through."""
    value: Any


@dataclass
class FlatTrace:
    graph: Graph
    leaves: list                       # the call's leaves (args, kwargs)
    inputs: list[int]                  # positions of the leaves that are graph inputs
    out_tree: Hashable
    outs: list                         # per result leaf: its graph output index, or Static
    kinds: list[str]                   # per result leaf: "array", "scalar" or "python"
    n_outs: int                        # graph outputs that are result leaves
    mutated: list[tuple[int, int]] = field(default_factory=list)   # (leaf, graph output)
    checks: list[tuple[int, int, str, type]] = field(default_factory=list)

    @property
    def operands(self) -> list:
        """The graph's inputs as atoms of the enclosing trace (or literals)."""
        return [to_atom(self.leaves[i]) for i in self.inputs]

    def input_aval(self, k: int) -> ShapedArray:
        return self.graph.in_vars[k].aval

    def input_kind(self, k: int) -> str:
        return leaf_aval(self.leaves[self.inputs[k]])[1]

    def finish(self, atoms: Sequence[Any]):
        """Given the graph's outputs as atoms of the current trace: update the arguments
        `fun` updated, hand over the checks, and return `fun`'s result."""
        trace = current_trace()
        for leaf, index in self.mutated:
            if isinstance(self.leaves[leaf], Tracer):
                self.leaves[leaf].assign(to_tracer(atoms[index]))
        for ok, value, message, error in self.checks:
            trace.require(to_tracer(atoms[ok], "scalar"), to_tracer(atoms[value], "scalar"),
                          message, error)
        return self.result([atoms[i] for i in range(self.n_outs)])

    def result(self, atoms: Sequence[Any], kinds: Sequence[str] | None = None):
        """The result tree with these atoms as its numeric leaves."""
        kinds = self.kinds if kinds is None else kinds
        leaves = [out.value if isinstance(out, Static) else to_tracer(atoms[out], kind)
                  for out, kind in zip(self.outs, kinds, strict=True)]
        return unflatten(self.out_tree, leaves)


def to_tracer(atom, kind: str = "array") -> Tracer:
    """An atom of the current trace as a tracer NumPy code can use."""
    if isinstance(atom, Literal):
        return as_kind(ensure_tracer(atom.value), kind)
    return Tracer(Buffer(atom, current_trace(), c_strides(atom.aval)), kind=kind)


def inline(graph: Graph, operands: Sequence[Any]) -> list:
    """The graph's equations appended to the current trace; its outputs (atoms)."""
    return Ops(current_trace().eqns).inline(graph, operands)


def trace_flat(fun: Callable, args: Sequence, kwargs: dict, wrt: Sequence[int] = (),
               avals: dict[int, tuple[ShapedArray, str]] | None = None) -> FlatTrace:
    """`avals`: {leaf position: (aval, kind)} to trace a leaf as, instead of its own (vmap
    traces one member of a batched argument)."""
    avals = avals or {}
    leaves, in_tree = flatten((tuple(args), dict(kwargs)))
    sub = SubTrace()
    inputs = [i for i, x in enumerate(leaves) if is_traced_leaf(x) or i in wrt]
    for i in inputs:
        if plain_base(leaves[i]) is not None:
            raise SubclassArgument(f"argument leaf {i}", leaves[i])
    inner = list(leaves)
    for i in inputs:
        inner[i] = sub.input(*(avals.get(i) or leaf_aval(leaves[i])))
    inner_args, inner_kwargs = unflatten(in_tree, inner)
    with sub.active():
        result = rolled(fun)(*inner_args, **inner_kwargs)
    out_leaves, out_tree = flatten(result)
    outs, kinds, atoms = [], [], []
    with sub.active():
        for leaf in out_leaves:
            if isinstance(leaf, Tracer) or is_number(leaf):
                outs.append(len(atoms))
                kinds.append(leaf.kind if isinstance(leaf, Tracer) else leaf_aval(leaf)[1])
                atoms.append(to_atom(leaf))
            else:
                outs.append(Static(leaf))
                kinds.append("static")
    n_outs = len(atoms)
    mutated = []
    for i in inputs:
        buf = inner[i]._buffer
        if buf.mutated:
            mutated.append((i, len(atoms)))
            atoms.append(buf.var)
    checks = []
    for check in sub.checks:
        checks.append((len(atoms), len(atoms) + 1, check.message, check.error))
        atoms += [check.ok, check.value]
    graph = sub.graph(atoms, [inner[i]._buffer.initial for i in inputs])
    return FlatTrace(graph, leaves, inputs, out_tree, outs, kinds, n_outs, mutated, checks)


def leaf_positions(args: Sequence, argnums: Sequence[int]) -> list[list[int]]:
    """For each argnum, the positions of its leaves among the leaves of (args, kwargs)."""
    starts, position = [], 0
    for arg in args:
        starts.append(position)
        position += len(flatten(arg)[0])
    return [list(range(starts[n], starts[n] + len(flatten(args[n])[0]))) for n in argnums]

