"""Tracing Python functions into closed sub-graphs: the bodies of loops and branches.

`SubTrace` traces a function into a graph (a nested Trace, made current through the one
tracing context); `close` turns the free variables it used into leading inputs ("consts"), as
the control-flow primitives (`core.primitives.control`) need; `inline` appends a graph's
equations to an enclosing trace.
"""
from __future__ import annotations

import dataclasses
from typing import Any, Sequence

from ..ir import Eqn, Graph, Literal, ShapedArray, Var, subgraphs
from ..numpy.affine import share_range
from ..passes import HOIST_ABOVE_ELEMENTS, dead_code_elimination
from ..tracing import Buffer, Trace, Tracer, current_trace, to_atom, tracing


class SubTrace:
    """A nested trace: a loop body or a branch, traced as a function of its inputs."""

    def __init__(self):
        self.trace = Trace(parent=current_trace())
        self.in_vars: list[Var] = []

    def input(self, aval: ShapedArray, kind: str = "array") -> Tracer:
        tracer = self.trace.new_input(aval, kind)
        self.in_vars.append(tracer._buffer.initial)
        return tracer

    def input_buffer(self, like: Buffer) -> Buffer:
        """An input standing for the whole of an outer array, with its layout (views of it
        are made on this buffer) and, for an integer, the values it is known to take (an
        enclosing loop's index read in a branch: `x[i + 1]` needs no run-time check there
        either)."""
        buf = Buffer(Var(like.var.aval), self.trace, strides=like.strides)
        self.trace.buffers.append(buf)
        self.in_vars.append(buf.initial)
        share_range(like.var, buf.initial)
        return buf

    @property
    def checks(self):
        """The run-time checks the traced code asked for (see `tracing.RuntimeCheck`)."""
        return self.trace.checks

    def active(self):
        return tracing(self.trace)

    def graph(self, outs: Sequence[Any], in_vars: Sequence[Var] | None = None) -> Graph:
        """The graph from the inputs to `outs` (tracers or constants), unused eqns dropped."""
        with self.active():
            atoms = [to_atom(v) for v in outs]
        in_vars = self.in_vars if in_vars is None else in_vars
        return dead_code_elimination(self.trace.to_graph(in_vars, atoms))


@dataclasses.dataclass(frozen=True)
class ClosedGraph:
    """A graph whose first `len(consts)` inputs take the outside values `consts`."""
    graph: Graph
    consts: tuple[Any, ...]    # atoms of the enclosing trace: Vars or large Literals


def close(graph: Graph) -> ClosedGraph:
    """Free variables (and large literals) of `graph` become leading inputs."""
    bound = {id(v) for v in graph.in_vars}
    for eqn in graph.eqns:
        bound.update(id(v) for v in eqn.outs)
    fresh: dict[int, Var] = {}
    consts: list[Any] = []

    def sub(atom):
        free_var = isinstance(atom, Var) and id(atom) not in bound
        big_literal = isinstance(atom, Literal) and atom.value.size > HOIST_ABOVE_ELEMENTS
        if not (free_var or big_literal):
            return atom
        if id(atom) not in fresh:
            fresh[id(atom)] = Var(atom.aval)
            consts.append(atom)
        return fresh[id(atom)]

    eqns = tuple(dataclasses.replace(e, inputs=tuple(sub(a) for a in e.inputs))
                 for e in graph.eqns)
    outs = tuple(sub(a) for a in graph.out_atoms)
    in_vars = tuple(fresh[id(c)] for c in consts) + graph.in_vars
    return ClosedGraph(Graph(in_vars, eqns, outs), tuple(consts))


def align_consts(closed: Sequence[ClosedGraph]) -> tuple[list[Graph], list[Any]]:
    """Give every graph the same leading inputs: the union of their consts."""
    union: list[Any] = []
    for c in closed:
        union.extend(a for a in c.consts if all(a is not u for u in union))
    graphs = []
    for c in closed:
        own = {id(a): v for a, v in zip(c.consts, c.graph.in_vars, strict=False)}
        lead = tuple(own.get(id(a)) or Var(a.aval) for a in union)
        graphs.append(dataclasses.replace(c.graph, in_vars=lead + c.graph.in_vars[len(c.consts):]))
    return graphs, union


def inline(trace: Trace, graph: Graph, operands: Sequence[Any]) -> list[Any]:
    """Append the graph's equations to `trace` (or anything with a list `eqns`), keeping their
    source lines; its outputs. A variable the graph does not define is a value of the
    enclosing trace (a graph traced from a closure): it stays itself."""
    env: dict[int, Any] = {id(v): to_atom(x) for v, x in zip(graph.in_vars, operands, strict=True)}

    def read(atom):
        return env.get(id(atom), atom)

    for eqn in graph.eqns:
        outs = tuple(Var(v.aval) for v in eqn.outs)
        trace.eqns.append(Eqn(eqn.prim, tuple(read(a) for a in eqn.inputs), eqn.params, outs,
                              eqn.source))
        env.update({id(v): new for v, new in zip(eqn.outs, outs, strict=True)})
    return [read(a) for a in graph.out_atoms]


def has_control_flow(graph: Graph) -> bool:
    return any(subgraphs(e) for e in graph.eqns)
