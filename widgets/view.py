"""The widget of one `%%psc_jit` run: a stock `ipywidgets.Tab` of `HTML` children.

The views only place the pure renderers' strings (`render.py`); graphs go in as inline SVG.
Where the Graphviz `dot` program is missing, the Graph and Fused tabs say how to install it
and the other tabs still work. `mimebundle` is the same report for front ends without
widgets (terminal IPython, nbconvert): plain text and all tabs stacked as HTML.
"""
from __future__ import annotations

import ipywidgets

from .render import TAB_TITLES, report_sections, report_text, sections_html

__all__ = ["RunView", "mimebundle", "TAB_TITLES"]


class RunView:
    """The tabs of one run: Summary, Graph, Fused, Cache, Timing, Text."""

    def __init__(self, report):
        self.report = report
        self.sections = report_sections(report)      # rendered once: DOT layout is not free
        self.tab = ipywidgets.Tab(children=[ipywidgets.HTML(value=section)
                                            for _, section in self.sections])
        self.tab.titles = tuple(title for title, _ in self.sections)

    def html(self) -> str:
        """Every tab stacked, for front ends that do not show widgets."""
        return sections_html(self.sections)

    def _repr_mimebundle_(self, include=None, exclude=None):
        """The widget where the front end has a widget manager, text/HTML elsewhere."""
        bundle = {"text/plain": report_text(self.report), "text/html": self.html()}
        widget_bundle = self.tab._repr_mimebundle_(include=include, exclude=exclude) or {}
        widget_bundle.pop("text/plain", None)
        return {**bundle, **widget_bundle}


def mimebundle(report) -> dict[str, str]:
    """{'text/plain': the terminal summary, 'text/html': all the tabs stacked}."""
    return {"text/plain": report_text(report), "text/html": sections_html(report_sections(report))}
