"""Forward mode: a graph's JVP, built by one pass over its equations, each differentiated by
its primitive's `jvp` rule (a tangent of None is a zero; integers and bools have none).

    jvp_graph(graph, nonzeros) -> (graph of (primals..., tangents...) -> (outs..., tangents...),
                                   which outputs have a tangent)

Every equation of the result carries the source line of the equation it came from.
"""
from __future__ import annotations

from typing import Any, Sequence

from ..ir import Eqn, Graph, Literal, Var
from ..tracing import UnsupportedError
from ..control.ops import Ops, copy_eqn, is_inexact


class RuleContext(Ops):
    """What a rule is given: the equation it differentiates (`prim`, `params`, `avals_in`,
    `avals_out`), `primal_outs()` (that equation itself, emitted once), the operations of
    `Ops` (emitted with the equation's source) and the graph transformations that the rules
    of control flow apply to their sub-graphs."""

    def __init__(self, eqns: list[Eqn], eqn: Eqn, primals: Sequence[Any]):
        super().__init__(eqns, eqn.source)
        self.eqn = eqn
        self.prim = eqn.prim
        self.params = eqn.params
        self.primals = list(primals)
        self._outs: list | None = None

    @property
    def avals_in(self):
        return [a.aval for a in self.primals]

    @property
    def avals_out(self):
        return [v.aval for v in self.eqn.outs]

    def primal_outs(self) -> list:
        if self._outs is None:
            outs = self.bind(self.prim, *self.primals, **self.params)
            self._outs = outs if self.prim.multiple_results else [outs]
        return self._outs

    def jvp_graph(self, graph: Graph, nonzeros, instantiate=False):
        return jvp_graph(graph, nonzeros, instantiate)

    def error(self, message: str, hint: str = "") -> UnsupportedError:
        """An error at the user's line of the equation being differentiated."""
        return UnsupportedError(message, self.eqn.source, hint)


def missing_rule(eqn: Eqn, which: str) -> UnsupportedError:
    return UnsupportedError(
        f"psc_jit cannot differentiate `{eqn.prim.name}`: it has no {which} rule", eqn.source,
        "compute this value outside the differentiated function, or ask for the rule")


def tangent_var(atom, nonzero: bool) -> Var | None:
    return Var(atom.aval.update(weak_type=False)) if nonzero and is_inexact(atom.aval) else None


class Env:
    """Values of a graph's variables in the graph being built; a variable the graph does not
    define (a value of an enclosing trace) is itself, with no tangent."""

    def __init__(self):
        self.values: dict[int, Any] = {}
        self.tangents: dict[int, Any] = {}

    def read(self, atom):
        return atom if isinstance(atom, Literal) else self.values.get(id(atom), atom)

    def tangent(self, atom):
        return None if isinstance(atom, Literal) else self.tangents.get(id(atom))

    def write(self, var: Var, value, tangent=None) -> None:
        self.values[id(var)] = value
        if tangent is not None and is_inexact(var.aval):
            self.tangents[id(var)] = tangent


def jvp_eval(ops: Ops, graph: Graph, primals: Sequence[Any], tangents: Sequence[Any]):
    """Emit the graph and its tangents into ops: (outs, tangents of outs)."""
    env = Env()
    for var, p, t in zip(graph.in_vars, primals, tangents, strict=True):
        env.write(var, p, t)
    for eqn in graph.eqns:
        ins = [env.read(a) for a in eqn.inputs]
        tans = [env.tangent(a) for a in eqn.inputs]
        if eqn.prim.differentiable and any(t is not None for t in tans):
            if eqn.prim.jvp is None:
                raise missing_rule(eqn, "JVP")
            outs, touts = eqn.prim.jvp(RuleContext(ops.eqns, eqn, ins), ins, tans, **eqn.params)
        else:
            outs, touts = copy_eqn(ops, eqn, ins), [None] * len(eqn.outs)
        for var, out, t in zip(eqn.outs, outs, touts, strict=True):
            env.write(var, out, t)
    return ([env.read(a) for a in graph.out_atoms], [env.tangent(a) for a in graph.out_atoms])


def jvp_graph(graph: Graph, nonzeros: Sequence[bool], instantiate: bool | Sequence[bool] = False):
    """The JVP of `graph`: inputs (primals..., a tangent for each nonzero inexact input...),
    outputs (outs..., a tangent for each output that has one...). `instantiate` (per output,
    or for all) gives an inexact output a zero tangent where it would have none. Returns the
    graph and, per output, whether it has a tangent."""
    ops = Ops()
    primals = [Var(v.aval) for v in graph.in_vars]
    tangents = [tangent_var(v, nz) for v, nz in zip(graph.in_vars, nonzeros, strict=True)]
    outs, touts = jvp_eval(ops, graph, primals, tangents)
    if isinstance(instantiate, bool):
        instantiate = [instantiate] * len(outs)
    touts = [ops.zeros(o.aval.update(weak_type=False))
             if t is None and inst and is_inexact(o.aval) else t
             for o, t, inst in zip(outs, touts, instantiate, strict=True)]
    in_vars = primals + [t for t in tangents if t is not None]
    result = ops.graph(in_vars, outs + [t for t in touts if t is not None])
    return result, [t is not None for t in touts]
