"""The Explorer's drawings of one run: XLA's kernels (one box each, linked as the optimized
module links them) and the traced graph before fusion (each equation in its kernel's colour,
with and without its reshape and broadcast steps), as DOT with the cell's names and lines,
laid out by Graphviz within a time limit (`svg.lay_out`, which caches layouts by DOT text: a
re-run that hits shows the last layout at once)."""
from __future__ import annotations

import re
import shutil
from typing import Any

from psc_jit.core.ir import Graph

from .graph_dot import STEP_PRIMITIVES, graph_to_dot
from .kernel_dot import kernel_class, kernel_colours, kernel_labels, kernels_to_dot
from .source import kernel_index, per_program
from .svg import DotMissing, lay_out

__all__ = ["ir_dot", "fused_dot", "input_names", "cell_lines", "too_big_to_draw",
           "MAX_DRAWN_EQUATIONS", "report_drawings", "step_count", "DRAWINGS", "is_drawn"]


MAX_DRAWN_EQUATIONS = 600
# name -> what it draws (the Explorer shows each in its place)
DRAWINGS = {"kernels": "XLA's kernels", "graph": "the traced graph, steps hidden",
            "graph with steps": "the traced graph"}


def cell_lines(report) -> dict[tuple[str, int], str]:
    """(cell file, line number) -> the line's code, numbered as equations' sources are."""
    return {(report.filename, number): text for number, text
            in enumerate(report.source.splitlines(), report.line_offset + 1)}


def _output_names(report) -> tuple[str, ...]:
    """The cell's outputs name the graph's results when there is one per output."""
    graph = report.graph
    return tuple(report.outputs) if len(report.outputs) == len(graph.out_atoms) else ()


def _eqn_classes(report) -> dict[str, str]:
    """Equation label -> the classes of its node: `psc-eq`, and its kernel's `psc-k{i}`
    (`psc-plain` when no kernel holds it)."""
    index = kernel_index(report)
    owner: dict[str, int] = {}
    if report.kernels is not None:
        for kernel in report.kernels.all_kernels():     # the innermost kernel wins
            for label in kernel_labels(kernel):
                owner[label] = index[kernel.name]
    return {label: f"psc-eq {kernel_class(owner[label])}" if label in owner else
            "psc-eq psc-plain" for label in report.graph.labels().values()}


def ir_dot(report, hide_steps: bool = False, collapse_loops: bool = False) -> str:
    """The traced graph of a run as DOT, inputs named, tooltips quoting the cell's lines,
    each equation's node of its kernel's class."""
    graph = report.graph
    return graph_to_dot(graph, (), input_names(report.signature, graph), _output_names(report),
                        collapse_loops=collapse_loops, source_text=cell_lines(report),
                        node_classes=_eqn_classes(report), hide_steps=hide_steps)


def fused_dot(report) -> str:
    """The kernels of a run as DOT: a box per kernel in its own colour."""
    graph = report.graph
    inputs, outputs = ((input_names(report.signature, graph), _output_names(report))
                       if graph is not None else ((), ()))
    return kernels_to_dot(report.kernels, graph, inputs, outputs,
                          colours=kernel_colours(report.kernels))


def too_big_to_draw(report) -> bool:
    return report.graph is not None and report.n_primitives > MAX_DRAWN_EQUATIONS


def step_count(report) -> int:
    """How many of the traced graph's equations are reshape and broadcast steps."""
    if report.graph is None:
        return 0
    return sum(eqn.prim.name in STEP_PRIMITIVES for eqn in report.graph.all_eqns())


def report_drawings(report) -> dict[str, Any]:
    """name (of DRAWINGS) -> its SVG, or the `DotMissing` saying why there is none, or a
    reason in words (a graph too big to draw). Laid out together, within the time limit;
    their DOT is made once per program (`svg` caches the layouts by DOT text)."""
    dots = per_program(report, "dots", _dots, report.signature, tuple(report.outputs),
                       report.source, report.line_offset)
    if shutil.which("dot") is None:
        return {name: DotMissing() for name in dots} | {
            name: text for name, text in dots.items() if not text.startswith("digraph")}
    drawn = {name: text for name, text in dots.items() if not text.startswith("digraph")}
    return {**drawn, **lay_out({name: text for name, text in dots.items() if name not in drawn})}


def _dots(report) -> dict[str, str]:
    """name -> the drawing's DOT, or why it is not drawn (a reason in words)."""
    dots = {}
    if report.kernels is not None:
        dots["kernels"] = fused_dot(report)
    if report.graph is not None:
        if too_big_to_draw(report):
            dots["graph"] = (f"The traced graph has {report.n_primitives:,} equations, too many "
                             "to draw; the Text tab lists them.")
        else:
            dots["graph"] = ir_dot(report, hide_steps=True)
            if step_count(report):
                dots["graph with steps"] = ir_dot(report)
    return dots


_TRACED_LEAF = re.compile(r"(?:^|, )([^\s:,]+): (\w+~?\[[\d,]*\])(?= \((?:NumPy|Python) "
                          r"scalar\)|, |$)")


def input_names(signature: str, graph: Graph) -> tuple[str, ...]:
    """The traced leaves' names (`x`, `params[0]`) from a signature text such as
    `x: f64[8,8], n: 3 (static), w: f64[8]`, when their types match the graph's inputs one
    to one; () otherwise (the inputs are then numbered)."""
    leaves = _TRACED_LEAF.findall(signature)
    if [aval for _, aval in leaves] != [str(v.aval) for v in graph.in_vars]:
        return ()
    return tuple(name for name, _ in leaves)


def is_drawn(drawing) -> bool:
    return isinstance(drawing, str) and drawing.startswith("<svg")

