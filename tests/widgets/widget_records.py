"""Records the widget tests draw: a small compiled cell, a hand-built loop graph and fusion
model (no jaxlib needed), a fallback report, a timed report, a graph with an input read by
many equations, and helpers that read DOT text the way Graphviz would."""
from __future__ import annotations

import linecache
import re
import shutil
from types import SimpleNamespace

import numpy as np
import pytest
from psc_jit.core import RunReport, Timings
from psc_jit.core.compile.kernels import FusionModel, Kernel, SourceLine
from psc_jit.core.ir import Eqn, Graph, Literal, ShapedArray, SourceInfo, Var
from psc_jit.widgets.graph_dot import FAN_OUT_LIMIT

needs_dot = pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz `dot` not installed")

CELL = "<psc_jit cell widgets-test>"
SOURCE = """\
def f(x, w):
    h = np.tanh(x @ w + 1.0)   # x < w & 1
    return h, (h ** 2).mean()
"""


def cell_function():
    """`f` compiled under a cell's file name, so its equations point at the cell's lines."""
    linecache.cache[CELL] = (len(SOURCE), None, SOURCE.splitlines(True), CELL)
    namespace = {"np": np}
    exec(compile(SOURCE, CELL, "exec"), namespace)
    return namespace["f"]


def args():
    return np.ones((8, 8)), np.ones(8)


def fallback_report(reason="line 2: 'print(m)': print() is a side effect; remove it"):
    return RunReport(name="cell fallback", source="m = x.sum()\nprint(m)\n", filename=CELL,
                     line_offset=1, compiled=False, fallback_reason=reason)


# ---------------------------------------------------------------------------------------------
# A loop, by hand: lines 2 (the loop), 3 (its body), 4 (after it)
# ---------------------------------------------------------------------------------------------

LOOP_SOURCE = "for _ in range(10):\n    c = np.sin(c) * 0.5\nr = -c\n"


def loop_graph() -> Graph:
    """x -> while_loop(body: c -> sin(c) * 0.5) -> neg -> result, built by hand."""
    f64 = ShapedArray((4,), np.float64)
    prim = SimpleNamespace
    carried, body_out, mid = Var(f64), Var(f64), Var(f64)
    body = Graph((carried,), (
        Eqn(prim(name="sin"), (carried,), {}, (mid,), SourceInfo(CELL, 3, 8)),
        Eqn(prim(name="multiply"), (mid, Literal.of(0.5)), {}, (body_out,), SourceInfo(CELL, 3, 8)),
    ), (body_out,))
    x, looped, result = Var(f64), Var(f64), Var(f64)
    return Graph((x,), (
        Eqn(prim(name="while_loop"), (x,), {"body_graph": body, "n": 10}, (looped,),
            SourceInfo(CELL, 2, 0)),
        Eqn(prim(name="neg"), (looped,), {}, (result,), SourceInfo(CELL, 4, 4)),
    ), (result,))


def kernel(name, kind, labels, bytes_estimate, body=(), lines=(2,), flops=8, inputs=(),
           trip_count=None):
    return Kernel(name=name, kind=kind, shape="f64[4]", fused_ops=("sine", "multiply"),
                  eqn_labels=labels, source_lines=tuple(SourceLine(CELL, n, 4) for n in lines),
                  operand_shapes=("f64[4]",), bytes_estimate=bytes_estimate, flops=flops,
                  body=body, inputs=inputs, trip_count=trip_count)


def loop_model() -> FusionModel:
    """The loop's kernels, linked as an optimized module would link them: the input into the
    loop, the loop into neg, neg to the output."""
    inner = kernel("body_fusion", "loop", ("e1:sin", "e2:multiply"), 64, lines=(3,), flops=8)
    loop = kernel("while.1", "while", ("e1:sin", "e2:multiply", "e0:while_loop"), 32,
                  body=(inner,), flops=80, inputs=("parameter 0",), trip_count=10)
    neg = kernel("neg.2", "negate", ("e3:neg",), 96, lines=(4,), flops=4, inputs=("while.1",))
    return FusionModel((loop, neg), outputs=(("neg.2",),))


def loop_report() -> RunReport:
    """A compiled-looking report of the loop: its graph, its kernels, its source."""
    return RunReport(name="loop", source=LOOP_SOURCE, filename=CELL, line_offset=1,
                     compiled=True, graph=loop_graph(), kernels=loop_model(),
                     signature="c: f64[4]", inputs=("c",), outputs=("r",))


def fanned_out_graph() -> Graph:
    """x + w + w + ...: w is read by one more equation than FAN_OUT_LIMIT."""
    f64 = ShapedArray((3,), np.float64)
    x, w = Var(f64), Var(f64)
    eqns, value = [], x
    for _ in range(FAN_OUT_LIMIT + 1):
        out = Var(f64)
        eqns.append(Eqn(SimpleNamespace(name="add"), (value, w), {}, (out,)))
        value = out
    return Graph((x, w), tuple(eqns), (value,))


def timed_report(**timing_fields):
    timings = Timings((1e-3, 1.4e-3, 0.8e-3), (1e-4, 1.2e-4, 0.9e-4), 3e-4, 0.2, 2e-16,
                      **timing_fields)
    return RunReport(name="c", source="", filename=CELL, line_offset=1, compiled=True,
                     timings=timings)


# ---------------------------------------------------------------------------------------------
# Reading DOT text
# ---------------------------------------------------------------------------------------------

_EDGE = re.compile(r"^\s*(\w+) -> (\w+)(?: \[(.*)\])?;?$", re.M)
# `key=value` or `key="value"` in an attribute list, separated by spaces or commas.
_ATTRIBUTE = re.compile(r'(\w+)=("(?:[^"\\]|\\.)*"|[^\s,\]]+)')


def nodes(dot: str, pattern: str) -> list[str]:
    return re.findall(rf"^\s*({pattern}) \[", dot, re.M)


def node_line(dot: str, node_id: str) -> str:
    return next(line for line in dot.splitlines() if line.strip().startswith(f"{node_id} ["))


def attributes(statement: str) -> dict[str, str]:
    """The attributes of a DOT statement (`e1 [label="a\\nb" class=psc_hl]`), as Graphviz
    reads them: quoted or not, `\\"` is a quote; escapes such as `\\n` stay as written."""
    return {key: value[1:-1].replace('\\"', '"') if value.startswith('"') else value
            for key, value in _ATTRIBUTE.findall(statement)}


def node_attributes(dot: str, node_id: str) -> dict[str, str]:
    return attributes(node_line(dot, node_id))


def edges(dot: str) -> list[tuple[str, str, dict[str, str]]]:
    """(tail, head, attributes) of each edge statement."""
    return [(tail, head, attributes(attrs)) for tail, head, attrs in _EDGE.findall(dot)]


def node_of(graph: Graph, prim_name: str) -> str:
    labels = graph.labels()
    return next(labels[e.id].split(":")[0] for e in graph.all_eqns() if e.prim.name == prim_name)


def cluster_body(dot: str, cluster: str) -> str:
    """The text of `subgraph cluster {...}`, nested clusters included."""
    start = dot.index(f"subgraph {cluster} {{")
    depth, index = 0, start
    for index in range(start, len(dot)):
        depth += {"{": 1, "}": -1}.get(dot[index], 0)
        if depth == 0 and dot[index] == "}":
            break
    return dot[start:index + 1]
