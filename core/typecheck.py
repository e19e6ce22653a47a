"""The graph checker: every equation's types re-derived through its primitive's rules.

`check_graph(graph)` walks the equations in order (sub-graphs of loops and branches too, which
must be closed) and raises `GraphTypeError` naming the equation when an operand is used before
it is defined, a variable is defined twice, a literal's type does not match its value, or an
equation's output types differ from what its primitive's shape, dtype and weak-type rules give.
Tests run it after tracing and after every pass.
"""
from __future__ import annotations

import numpy as np

from .ir import Eqn, Graph, Literal, ShapedArray, Var, subgraphs


class GraphTypeError(TypeError):
    """A graph whose types do not follow from its primitives' rules."""


def check_graph(graph: Graph) -> Graph:
    """Raise GraphTypeError if `graph` is ill-typed; return it unchanged otherwise."""
    defined: set[int] = set()
    for var in graph.in_vars:
        _define(var, defined, "an input")
    for eqn in graph.eqns:
        _check_eqn(eqn, defined)
    for atom in graph.out_atoms:
        _check_operand(atom, defined, "the graph's outputs")
    return graph


def _define(var: Var, defined: set[int], where: str) -> None:
    if id(var) in defined:
        raise GraphTypeError(f"{var} is defined twice ({where})")
    defined.add(id(var))


def _check_operand(atom, defined: set[int], where: str) -> None:
    if isinstance(atom, Literal):
        value = np.asarray(atom.value)
        if (value.shape, value.dtype) != (atom.aval.shape, atom.aval.dtype):
            raise GraphTypeError(f"{where}: literal {value.dtype}{list(value.shape)} typed "
                                 f"{atom.aval}")
    elif id(atom) not in defined:
        raise GraphTypeError(f"{where}: {atom} is used before it is defined")


def _check_eqn(eqn: Eqn, defined: set[int]) -> None:
    where = _describe(eqn)
    for atom in eqn.inputs:
        _check_operand(atom, defined, where)
    for sub in subgraphs(eqn):
        check_graph(sub)
    try:
        expected = eqn.prim.abstract_eval(*(a.aval for a in eqn.inputs), **eqn.params)
    except (TypeError, ValueError) as err:
        raise GraphTypeError(f"{where}: its primitive's rules reject its operands: {err}") from err
    got = [v.aval for v in eqn.outs]
    if not _same(expected, got):
        raise GraphTypeError(f"{where}: outputs typed {_avals(got)}, the rules give "
                             f"{_avals(expected)}")
    for var in eqn.outs:
        _define(var, defined, where)


def _same(expected: list[ShapedArray], got: list[ShapedArray]) -> bool:
    return len(expected) == len(got) and all(
        (e.shape, e.dtype, e.weak_type) == (g.shape, g.dtype, g.weak_type)
        for e, g in zip(expected, got, strict=True))


def _avals(avals) -> str:
    return "(" + ", ".join(str(a) for a in avals) + ")"


def _describe(eqn: Eqn) -> str:
    line = f" (line {eqn.source.line})" if eqn.source else ""
    return f"equation {eqn.id} `{eqn.prim.name}`{line}"
