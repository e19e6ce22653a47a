"""psc_jit.widgets: views of core's records (pure renderers, and one ipywidgets Tab per run).

Pure functions from records to DOT, SVG, HTML, text and highlights, one module per tab on top
of shared ones (imports go one way, down this list):

    units, markup, digraph, svg          numbers, HTML pieces, graphviz graphs, DOT to SVG
    graph_dot, kernel_dot                the traced IR and the fused kernels as DOT
    summary, source, graphs, cache,      the tabs: Summary; kernel table and coloured source;
    timing, text                         the Explorer's drawings; Cache; Timing; Text
    report                               the one list of tabs, and the stacked HTML report
    plan_dot, split                      a cell split into regions and host steps
    selection                            what the explorer highlights for a choice
    view, explorer                       the same, placed in stock ipywidgets

ipywidgets is imported only when `RunView`, `ProgressView`, `Explorer` or `mimebundle` is
first used.
"""
from .cache import cache_overview_html, cache_overview_text
from .graph_dot import graph_to_dot
from .kernel_dot import kernels_to_dot
from .plan_dot import plan_dot
from .report import report_html
from .summary import report_text
from .svg import DotMissing, dot_to_svg
from .timing import timings_overview_html, timings_overview_text

__all__ = ["DotMissing", "dot_to_svg", "graph_to_dot", "kernels_to_dot", "report_html",
           "report_text", "cache_overview_html", "cache_overview_text", "timings_overview_html",
           "timings_overview_text", "RunView", "ProgressView", "Explorer", "mimebundle",
           "SplitView", "plan_dot"]


def __getattr__(name: str):
    if name in ("RunView", "ProgressView", "mimebundle"):
        from . import view
        return getattr(view, name)
    if name == "SplitView":
        from .split import SplitView
        return SplitView
    if name == "Explorer":
        from .explorer import Explorer
        return Explorer
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
