"""Reverse mode: JVP, partial evaluation and transposition, on graphs (as in JAX).

`vjp_graph(graph, active)` makes two graphs:

    forward:  inputs -> (outputs..., residuals...)
    backward: (residuals..., a cotangent per output asked for...) -> a cotangent per active input

One pass over the equations emits the forward graph. Each equation with an active input is
differentiated by its primitive's `jvp` rule applied to placeholder tangents: the equations
the rule emits that depend on the tangents are its *linear part*, kept on a tape; the others
(`cos(x)` for `sin`) stay in the forward graph. Control flow, whose JVP cannot be split per
equation, has a `vjp` rule instead, which emits its forward part and hands back a backward
function. The backward graph goes through the tape in reverse, transposing each linear part
with its primitives' `transpose` rules. The forward values the backward graph reads are the
residuals. Every equation keeps the source line of the equation it came from.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Sequence

from ..control.subtrace import close
from ..ir import Eqn, Graph, Var
from ..passes import dead_code_elimination
from ..primitives.record import Linear
from ..control.ops import copy_eqn
from .jvp import Env, RuleContext, missing_rule
from ..control.ops import Ops, is_inexact


class VjpContext(RuleContext):
    """A rule's context during reverse mode: also the reverse-mode transformation of graphs."""

    def vjp_graph(self, graph: Graph, active: Sequence[bool], ct_mask=None) -> VjpGraphs:
        return vjp_graph(graph, active, ct_mask)


@dataclass(frozen=True)
class VjpGraphs:
    forward: Graph         # inputs -> (outputs..., residuals...)
    backward: Graph        # (residuals..., cotangents of the outputs asked for) -> cotangents
    n_residuals: int
    active: tuple[bool, ...]   # the inputs the backward graph gives cotangents of, in order


@dataclass
class LinearStep:
    """One equation's linear part: equations from its tangent placeholders to its tangents."""
    inputs: list               # forward atoms whose tangents the placeholders stand for
    placeholders: list         # Var or None (inactive operand)
    outs: list                 # forward vars whose tangents are `tangent_outs`
    tangent_outs: list         # Var or None
    eqns: list[Eqn]

    def transpose(self, ops: Ops, cts: Sequence[Any]) -> list:
        linear = {id(p) for p in self.placeholders if p is not None}
        linear.update(id(v) for e in self.eqns for v in e.outs)
        local: dict[int, Any] = {}
        for t, ct in zip(self.tangent_outs, cts, strict=True):
            if t is not None and ct is not None:
                local[id(t)] = ops.add_any(local.get(id(t)), ct)
        for eqn in reversed(self.eqns):
            ct = local.pop(id(eqn.outs[0]), None) if len(eqn.outs) == 1 else None
            if ct is None:
                continue
            if eqn.prim.transpose is None:
                raise missing_rule(eqn, "transpose")
            args = [Linear(a.aval) if id(a) in linear else a for a in eqn.inputs]
            ops.source = eqn.source
            for atom, c in zip(eqn.inputs, eqn.prim.transpose(ops, ct, *args, **eqn.params),
                               strict=True):
                if c is not None and id(atom) in linear:
                    local[id(atom)] = ops.add_any(local.get(id(atom)), c)
        return [None if p is None else local.get(id(p)) for p in self.placeholders]


@dataclass
class CustomStep:
    """A control-flow equation's backward part: `backward(ctx, cts) -> cotangents`."""
    inputs: list
    outs: list
    backward: Callable
    eqn: Eqn

    def transpose(self, ops: Ops, cts: Sequence[Any]) -> list:
        ops.source = self.eqn.source
        ctx = VjpContext(ops.eqns, self.eqn, self.inputs)
        return self.backward(ctx, list(cts))


class Linearizer:
    """The forward pass: the graph's equations and the tape of their linear parts."""

    def __init__(self):
        self.ops = Ops()
        self.env = Env()
        self.active: set[int] = set()
        self.tape: list = []

    def run(self, graph: Graph, inputs, active) -> list:
        for var, x, act in zip(graph.in_vars, inputs, active, strict=True):
            self.env.write(var, x)
            if act and is_inexact(var.aval):
                self.active.add(id(x))
        for eqn in graph.eqns:
            ins = [self.env.read(a) for a in eqn.inputs]
            acts = [isinstance(a, Var) and id(a) in self.active for a in ins]
            if not eqn.prim.differentiable or not any(acts):
                outs = copy_eqn(self.ops, eqn, ins)
            elif eqn.prim.vjp is not None:
                outs = self.custom(eqn, ins, acts)
            else:
                outs = self.linearize(eqn, ins, acts)
            for var, out in zip(eqn.outs, outs, strict=True):
                self.env.write(var, out)
        return [self.env.read(a) for a in graph.out_atoms]

    def custom(self, eqn: Eqn, ins, acts) -> list:
        ctx = VjpContext(self.ops.eqns, eqn, ins)
        outs, out_active, backward = eqn.prim.vjp(ctx, ins, acts, **eqn.params)
        self.active.update(id(o) for o, a in zip(outs, out_active, strict=True) if a)
        self.tape.append(CustomStep(ins, outs, backward, eqn))
        return outs

    def linearize(self, eqn: Eqn, ins, acts) -> list:
        if eqn.prim.jvp is None:
            raise missing_rule(eqn, "JVP")
        placeholders = [Var(a.aval.update(weak_type=False)) if act else None
                        for a, act in zip(ins, acts, strict=True)]
        start = len(self.ops.eqns)
        outs, touts = eqn.prim.jvp(VjpContext(self.ops.eqns, eqn, ins), ins, placeholders,
                                   **eqn.params)
        emitted = self.ops.eqns[start:]
        del self.ops.eqns[start:]
        linear = {id(p) for p in placeholders if p is not None}
        linear_eqns = []
        for e in emitted:
            if any(id(a) in linear for a in e.inputs):
                linear_eqns.append(e)
                linear.update(id(v) for v in e.outs)
            else:
                self.ops.eqns.append(e)
        touts = [t if t is not None and id(t) in linear else None for t in touts]
        self.active.update(id(o) for o, t in zip(outs, touts, strict=True) if t is not None)
        self.tape.append(LinearStep(ins, placeholders, outs, touts, linear_eqns))
        return outs


def transpose_tape(ops: Ops, tape, outs: Sequence[Any], cts: Sequence[Any]) -> dict[int, Any]:
    """Cotangents of the forward values, given those of `outs`: the tape in reverse."""
    acc: dict[int, Any] = {}
    for out, ct in zip(outs, cts, strict=True):
        if isinstance(out, Var) and ct is not None:
            acc[id(out)] = ops.add_any(acc.get(id(out)), ct)
    for step in reversed(tape):
        out_cts = [acc.pop(id(o), None) for o in step.outs]
        if all(c is None for c in out_cts):
            continue
        for atom, ct in zip(step.inputs, step.transpose(ops, out_cts), strict=True):
            if ct is not None and isinstance(atom, Var):
                acc[id(atom)] = ops.add_any(acc.get(id(atom)), ct)
    return acc


def vjp_graph(graph: Graph, active: Sequence[bool], ct_mask: Sequence[bool] | None = None
              ) -> VjpGraphs:
    """The forward and backward graphs of `graph` with respect to its `active` inputs (see
    the module doc). `ct_mask`: the outputs whose cotangents the backward graph takes (by
    default every inexact output)."""
    if ct_mask is None:
        ct_mask = [is_inexact(a.aval) for a in graph.out_atoms]
    active = [a and is_inexact(v.aval) for v, a in zip(graph.in_vars, active, strict=True)]
    lin = Linearizer()
    in_vars = [Var(v.aval) for v in graph.in_vars]
    outs = lin.run(graph, in_vars, active)
    back = Ops()
    ct_vars = [Var(o.aval.update(weak_type=False)) if asked else None
               for o, asked in zip(outs, ct_mask, strict=True)]
    acc = transpose_tape(back, lin.tape, outs, ct_vars)
    back.source = None
    cts_in = [acc.get(id(v)) if acc.get(id(v)) is not None else back.zeros(v.aval.update(
        weak_type=False)) for v, act in zip(in_vars, active, strict=True) if act]
    backward = close(Graph(tuple(v for v in ct_vars if v is not None), tuple(back.eqns),
                           tuple(cts_in)))
    forward = dead_code_elimination(Graph(tuple(in_vars), tuple(lin.ops.eqns),
                                          tuple(outs) + tuple(backward.consts)))
    return VjpGraphs(forward, dead_code_elimination(backward.graph), len(backward.consts),
                     tuple(active))

