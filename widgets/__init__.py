"""psc_jit.widgets: views of core's records (pure renderers, and one ipywidgets Tab per run).

`render` and `selection` hold pure functions from records to DOT, SVG, HTML, text and
highlights; `view` and `explorer` place them in stock ipywidgets. ipywidgets is imported only
when `RunView`, `ProgressView`, `Explorer` or `mimebundle` is first used.
"""
from .render import DotMissing, dot_to_svg, graph_to_dot, kernels_to_dot, report_html, report_text

__all__ = ["DotMissing", "dot_to_svg", "graph_to_dot", "kernels_to_dot", "report_html",
           "report_text", "RunView", "ProgressView", "Explorer", "mimebundle"]


def __getattr__(name: str):
    if name in ("RunView", "ProgressView", "mimebundle"):
        from . import view
        return getattr(view, name)
    if name == "Explorer":
        from .explorer import Explorer
        return Explorer
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
