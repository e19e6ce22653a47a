"""The whole report of a run: every tab's HTML in order, stacked under headings, for front
ends without widgets (terminal IPython shows `summary.report_text` instead)."""
from __future__ import annotations

from html import escape
from typing import Iterable

from .cache import cache_html
from .graphs import fused_html, graph_html
from .markup import wrap_html
from .summary import summary_html
from .text import text_html
from .timing import timing_html

__all__ = ["report_sections", "report_html", "sections_html", "TAB_TITLES"]


TAB_TITLES = ("Summary", "Graph", "Fused", "Cache", "Timing", "Text")


def report_sections(report) -> list[tuple[str, str]]:
    """(tab title, HTML) for each tab, in order; graph tabs explain a missing `dot`."""
    renderers = (summary_html, graph_html, fused_html, cache_html, timing_html, text_html)
    return [(title, render(report)) for title, render in zip(TAB_TITLES, renderers,
                                                                 strict=True)]


def report_html(report) -> str:
    """Every tab stacked in one HTML document fragment (for front ends without widgets)."""
    return sections_html(report_sections(report))


def sections_html(sections: Iterable[tuple[str, str]]) -> str:
    """(title, HTML) sections stacked under headings."""
    body = "".join(f'<h3 style="margin:12px 0 4px 0; border-bottom:1px solid #ddd">'
                   f"{escape(title)}</h3>{section}" for title, section in sections)
    return wrap_html(body)
