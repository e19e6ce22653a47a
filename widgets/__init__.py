"""psc_jit.widgets: views of core's records (pure renderers, and one ipywidgets Tab per run).

`render` holds pure functions from records to DOT, SVG, HTML and text; `view` places them in
stock ipywidgets. ipywidgets is imported only when `RunView` or `mimebundle` is first used.
"""
from .render import DotMissing, dot_to_svg, graph_to_dot, kernels_to_dot, report_html, report_text

__all__ = ["DotMissing", "dot_to_svg", "graph_to_dot", "kernels_to_dot", "report_html",
           "report_text", "RunView", "mimebundle"]


def __getattr__(name: str):
    if name in ("RunView", "mimebundle"):
        from . import view
        return getattr(view, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
