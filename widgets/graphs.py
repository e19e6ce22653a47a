"""The Explorer tab's drawings of one run: the traced graph before fusion and XLA's kernels
after it, as DOT with the cell's names and lines (`ir_dot`, `fused_dot`, which the explorer
re-draws with highlights), and as the Graph and Fused sections of the HTML report for front
ends without widgets (`graph_html`, `fused_html`)."""
from __future__ import annotations

import re
from typing import Iterable

from psc_jit.core.ir import Graph

from .graph_dot import graph_to_dot
from .kernel_dot import kernels_to_dot
from .markup import notice_html, paragraph_html, section_html
from .source import kernel_table_html, measured_times, report_colours, source_html
from .summary import fusion_text, status_text
from .svg import svg_or_hint

__all__ = ["graph_html", "fused_html", "ir_dot", "fused_dot", "input_names", "cell_lines",
           "too_big_to_draw", "MAX_DRAWN_EQUATIONS"]


MAX_DRAWN_EQUATIONS = 600


def cell_lines(report) -> dict[tuple[str, int], str]:
    """(cell file, line number) -> the line's code, numbered as equations' sources are."""
    return {(report.filename, number): text for number, text
            in enumerate(report.source.splitlines(), report.line_offset + 1)}


def _output_names(report) -> tuple[str, ...]:
    """The cell's outputs name the graph's results when there is one per output."""
    graph = report.graph
    return tuple(report.outputs) if len(report.outputs) == len(graph.out_atoms) else ()


def ir_dot(report, highlight_labels: Iterable[str] = (), collapse_loops: bool = False) -> str:
    """The traced graph of a run as DOT, inputs named, tooltips quoting the cell's lines."""
    graph = report.graph
    return graph_to_dot(graph, highlight_labels, input_names(report.signature, graph),
                        _output_names(report), collapse_loops=collapse_loops,
                        source_text=cell_lines(report))


def fused_dot(report, highlight_kernels: Iterable[str] = (), highlight_labels: Iterable[str] = (),
              collapse: bool = False, colour_by: str = "kernel") -> str:
    """The fused kernels of a run as DOT (clusters, or one node per kernel), each filled with
    its own colour or (`colour_by="time"`) by measured time, labelled with that time."""
    graph = report.graph
    inputs, outputs = ((input_names(report.signature, graph), _output_names(report))
                       if graph is not None else ((), ()))
    return kernels_to_dot(report.kernels, graph, highlight_kernels, highlight_labels,
                          collapse=collapse, input_names=inputs, output_names=outputs,
                          source_text=cell_lines(report),
                          colours=report_colours(report, colour_by),
                          measured=measured_times(report))


def too_big_to_draw(report) -> bool:
    return report.graph is not None and report.n_primitives > MAX_DRAWN_EQUATIONS


def graph_html(report) -> str:
    """The traced IR before fusion, as inline SVG (or why it is not drawn)."""
    if report.graph is None:
        return notice_html(f"No traced graph: {status_text(report)}")
    if too_big_to_draw(report):
        return notice_html(f"The graph has {report.n_primitives} equations, too many to draw; "
                           "the Text tab lists them.")
    return (paragraph_html(f"{report.n_primitives} primitives before fusion")
            + svg_or_hint(ir_dot(report)))


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


def fused_html(report) -> str:
    """XLA's kernels after fusion: the cluster graph, the kernel table, the coloured source."""
    if report.kernels is None:
        return notice_html(f"No fused kernels: {status_text(report)}")
    drawing = (notice_html("Too many equations to draw the kernel graph.")
               if too_big_to_draw(report) else svg_or_hint(fused_dot(report)))
    return (paragraph_html(fusion_text(report)) + drawing
            + section_html("Kernels by estimated cost", kernel_table_html(report))
            + section_html("Source lines by kernel", source_html(report)))
