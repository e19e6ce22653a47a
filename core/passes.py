"""Passes over graphs. Each is a pure function of a Graph with the same shape: a loop over
equations with an environment."""
from __future__ import annotations

import dataclasses

import numpy as np

from .ir import Eqn, Graph, Literal, Var, is_splat, subgraphs

HOIST_ABOVE_ELEMENTS = 64


def dead_code_elimination(graph: Graph) -> Graph:
    """Drop equations whose results nothing uses (views read and then never used, say)."""
    live = {id(a) for a in graph.out_atoms if isinstance(a, Var)}
    kept: list[Eqn] = []
    for eqn in reversed(graph.eqns):
        if any(id(v) in live for v in eqn.outs) or _has_effect(eqn):
            kept.append(eqn)
            live.update(id(a) for a in eqn.inputs if isinstance(a, Var))
            for sub in subgraphs(eqn):
                live.update(id(v) for v in _free_vars(sub))
    return dataclasses.replace(graph, eqns=tuple(reversed(kept)))


def _has_effect(eqn: Eqn) -> bool:
    return False


def _free_vars(graph: Graph):
    bound = {id(v) for v in graph.in_vars}
    for eqn in graph.all_eqns():
        bound.update(id(v) for v in eqn.outs)
        for a in eqn.inputs:
            if isinstance(a, Var) and id(a) not in bound:
                yield a


def rewrite_equations(graph: Graph) -> Graph:
    """Each equation whose primitive has a peephole rule (`Primitive.rewrite`) is replaced by
    the equivalent equation the rule gives, if any: the rule sees the equations producing its
    operands (`dot_general` of a `transpose` reads the transpose's operand instead). Equations
    left unused are for dead_code_elimination. Sub-graphs are simplified likewise."""
    producers: dict[int, Eqn] = {}

    def producer(atom) -> Eqn | None:
        return producers.get(id(atom))
    eqns = []
    for eqn in graph.eqns:
        eqn = _simplify_subgraphs(eqn)
        rule = getattr(eqn.prim, "rewrite", None)
        if rule is not None:
            eqn = rule(eqn, producer) or eqn
        eqns.append(eqn)
        producers.update((id(v), eqn) for v in eqn.outs)
    return dataclasses.replace(graph, eqns=tuple(eqns))


def _simplify_subgraphs(eqn: Eqn) -> Eqn:
    if not subgraphs(eqn):
        return eqn
    params = {}
    for key, value in eqn.params.items():
        if isinstance(value, Graph):
            value = simplify(value)
        elif isinstance(value, tuple) and any(isinstance(v, Graph) for v in value):
            value = tuple(simplify(v) if isinstance(v, Graph) else v for v in value)
        params[key] = value
    return dataclasses.replace(eqn, params=params)


def simplify(graph: Graph) -> Graph:
    return dead_code_elimination(rewrite_equations(graph))


def hoist_constants(graph: Graph) -> tuple[Graph, tuple[np.ndarray, ...]]:
    """Large non-splat literals become extra inputs (passed at each call) instead of text
    in the StableHLO module: compiling a module with megabytes of hex is slow."""
    consts: list[np.ndarray] = []
    new_vars: list[Var] = []
    mapping: dict[int, Var] = {}

    def hoisted(atom):
        if not isinstance(atom, Literal) or atom.value.size <= HOIST_ABOVE_ELEMENTS or is_splat(
                atom.value):
            return atom
        if id(atom) not in mapping:
            var = Var(atom.aval)
            mapping[id(atom)] = var
            new_vars.append(var)
            consts.append(np.ascontiguousarray(atom.value))
        return mapping[id(atom)]

    eqns = tuple(dataclasses.replace(e, inputs=tuple(hoisted(a) for a in e.inputs))
                 for e in graph.eqns)
    if not consts:
        return graph, ()
    outs = tuple(hoisted(a) for a in graph.out_atoms)
    return Graph(graph.in_vars + tuple(new_vars), eqns, outs), tuple(consts)
