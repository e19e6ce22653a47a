"""A graph interpreter: run a Graph on NumPy arrays with each primitive's reference `impl`.

It is the oracle the compiled programs are tested against, and the `impl` of the control-flow
primitives (a loop body is a sub-graph, run here once per iteration).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .ir import Graph, Literal


def eval_graph(graph: Graph, *arrays: Any) -> list[np.ndarray]:
    """The values of the graph's outputs given values for its inputs."""
    env: dict[int, np.ndarray] = {}

    def read(atom) -> np.ndarray:
        return atom.value if isinstance(atom, Literal) else env[id(atom)]

    def write(var, value) -> None:
        env[id(var)] = np.asarray(value, dtype=var.aval.dtype).reshape(var.aval.shape)

    for var, value in zip(graph.in_vars, arrays, strict=True):
        write(var, value)
    for eqn in graph.eqns:
        outs = eqn.prim.impl(*(read(a) for a in eqn.inputs), **eqn.params)
        if not eqn.prim.multiple_results:
            outs = [outs]
        for var, value in zip(eqn.outs, outs, strict=True):
            write(var, value)
    return [read(a) for a in graph.out_atoms]
