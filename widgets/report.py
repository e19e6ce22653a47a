"""The tabs of a run, defined once, and the whole report stacked for front ends without widgets.

`TABS` is the one list: the widget shows one tab per entry (`view.RunView`, where the
Explorer tab is the interactive explorer), and the HTML report stacks every entry's sections
under headings. The Explorer stands for two sections there, the graph before fusion and the
kernels after it, since a page without widgets cannot cross-highlight them. Terminal IPython
shows `summary.report_text` instead.
"""
from __future__ import annotations

from dataclasses import dataclass
from html import escape
from typing import Any, Callable, Iterable

from .cache import cache_html
from .graphs import fused_html, graph_html
from .markup import wrap_html
from .summary import summary_html
from .text import text_html
from .timing import timing_html

__all__ = ["Tab", "TABS", "TAB_TITLES", "EXPLORER", "report_sections", "report_html",
           "sections_html"]

Renderer = Callable[[Any], str]          # a RunReport -> HTML


@dataclass(frozen=True)
class Tab:
    """A tab of a run's widget, and the sections (heading, renderer) it is in the HTML report."""
    title: str
    sections: tuple[tuple[str, Renderer], ...]

    def html(self, report) -> str:
        """The tab's page: its sections' HTML, one after the other."""
        return "".join(render(report) for _, render in self.sections)


def _page(title: str, render: Renderer) -> Tab:
    """A tab that is one section of the same name."""
    return Tab(title, ((title, render),))


EXPLORER = "Explorer"
TABS = (
    _page("Summary", summary_html),
    Tab(EXPLORER, (("Graph", graph_html), ("Fused", fused_html))),
    _page("Cache", cache_html),
    _page("Timing", timing_html),
    _page("Text", text_html),
)
TAB_TITLES = tuple(tab.title for tab in TABS)


def report_sections(report) -> list[tuple[str, str]]:
    """(heading, HTML) for each section of each tab, in order; graph sections explain a
    missing `dot`."""
    return [(heading, render(report)) for tab in TABS for heading, render in tab.sections]


def report_html(report) -> str:
    """Every tab stacked in one HTML document fragment (for front ends without widgets); a
    split cell's regions each in turn (`split.py`)."""
    if getattr(report, "split", False):
        from .split import split_html
        return split_html(report)
    return sections_html(report_sections(report))


def sections_html(sections: Iterable[tuple[str, str]]) -> str:
    """(title, HTML) sections stacked under headings."""
    body = "".join(f'<h3 style="margin:12px 0 4px 0; border-bottom:1px solid #ddd">'
                   f"{escape(title)}</h3>{section}" for title, section in sections)
    return wrap_html(body)
