"""The widget of one `%%psc_jit` run: a stock `ipywidgets.Tab`, and a progress bar shown while
the run works.

Tabs (`report.TABS`, the same list the HTML report stacks): Summary, Explorer (the graphs
before and after fusion side by side, cross-highlighted with the kernels and the cell's lines;
`explorer.py`), Cache, Timing, Text. Every tab but the explorer is one `HTML` child holding
its pure renderers' string (`summary.py`, ...). Where the
Graphviz `dot` program is missing, the graph panes say how to install it and everything else
still works. `mimebundle` is the same report for front ends without widgets (terminal
IPython, nbconvert): plain text and every section stacked as HTML.
"""
from __future__ import annotations

from typing import Sequence

import ipywidgets

from .explorer import Explorer
from .report import EXPLORER, TAB_TITLES, TABS, report_html
from .summary import report_text

__all__ = ["RunView", "ProgressView", "mimebundle"]


class RunView:
    """The tabs of one run, one per entry of `report.TABS` (`.widget`, a Tab)."""

    def __init__(self, report):
        self.report = report
        self.explorer = Explorer(report)
        children = [self.explorer.widget if tab.title == EXPLORER
                    else _html(tab.html(report), tab.title) for tab in TABS]
        self.widget = ipywidgets.Tab(children=children, titles=TAB_TITLES)
        self.widget.add_class("psc-run")

    @property
    def tab(self) -> ipywidgets.Tab:
        return self.widget

    def html(self) -> str:
        """Every section stacked, for front ends that do not show widgets."""
        return report_html(self.report)

    def _repr_mimebundle_(self, include=None, exclude=None):
        """The widget where the front end has a widget manager, text/HTML elsewhere."""
        bundle = {"text/plain": report_text(self.report), "text/html": self.html()}
        widget_bundle = self.widget._repr_mimebundle_(include=include, exclude=exclude) or {}
        widget_bundle.pop("text/plain", None)
        return {**bundle, **widget_bundle}


def _html(value: str, title: str) -> ipywidgets.HTML:
    page = ipywidgets.HTML(value=value)
    page.add_class(f"psc-tab-{title.lower()}")
    return page


class ProgressView:
    """A bar and a label that a runner's `progress(stage)` callback moves, stage by stage."""

    def __init__(self, stages: Sequence[str], title: str = "psc_jit"):
        self.stages = tuple(stages)
        self.bar = ipywidgets.IntProgress(value=0, min=0, max=len(self.stages),
                                          description=title, bar_style="info")
        self.label = ipywidgets.Label("starting")
        self.widget = ipywidgets.HBox([self.bar, self.label])
        self.widget.add_class("psc-progress")

    def __call__(self, stage: str) -> None:
        """`stage` has started: the bar shows the stages before it as done."""
        if stage in self.stages:
            self.bar.value = self.stages.index(stage)
        self.label.value = f"{stage} …"

    def finish(self, text: str = "done", failed: bool = False) -> None:
        self.bar.value = self.bar.max
        self.bar.bar_style = "danger" if failed else "success"
        self.label.value = text


def mimebundle(report) -> dict[str, str]:
    """{'text/plain': the terminal summary, 'text/html': all the tabs stacked}."""
    return {"text/plain": report_text(report), "text/html": report_html(report)}
