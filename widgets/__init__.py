"""psc_jit.widgets: views of core's records: pure renderers from records to DOT, SVG, HTML and
text, and a progress bar in stock ipywidgets.

One module per tab on top of shared ones (imports go one way, down this list):

    units, markup, digraph, svg          numbers, HTML pieces and the style sheet, graphviz
                                         graphs, DOT to SVG (laid out within a time limit)
    graph_dot, kernel_dot                the traced IR and the fused kernels as DOT
    summary, source, graphs, cache,      the tabs: head line and Summary; the lines with their
    timing, text                         time and the kernel table; the Explorer's drawings;
                                         Cache; Timing; Text
    selection, explorer                  what belongs together (and the page's data for it);
                                         the Explorer tab
    report                               the one list of tabs, the page (report.css, report.js)
                                         and its mime bundle
    plan_dot, split                      a cell split into regions and host steps: the
                                         picture of its parts, its page
    view                                 the progress bar

ipywidgets is imported only when `ProgressView` is first used.
"""
from .cache import cache_overview_html, cache_overview_text
from .graph_dot import graph_to_dot
from .kernel_dot import kernels_to_dot
from .plan_dot import plan_dot
from .report import mimebundle, report_html
from .summary import report_text
from .svg import DotMissing, dot_to_svg
from .timing import timings_overview_html, timings_overview_text

__all__ = ["DotMissing", "dot_to_svg", "graph_to_dot", "kernels_to_dot", "report_html",
           "report_text", "cache_overview_html", "cache_overview_text", "timings_overview_html",
           "timings_overview_text", "ProgressView", "mimebundle", "plan_dot"]


def __getattr__(name: str):
    if name == "ProgressView":
        from .view import ProgressView
        return ProgressView
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
