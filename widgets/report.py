"""A run's report as one HTML page: the head line (the cell, compiled or not, the verdict),
then tabs, defined once in `TABS`: Lines (the cell with the time each line took), Summary,
Explorer, Timing, Cache, Text.

The page needs nothing but a browser: tabs are radio buttons and CSS (a page that drops its
style sheet shows every tab under its heading); highlighting is the page's own script
(`report.js`) reading the page's data (`selection.page_data`); colours are JupyterLab's theme
variables (`report.css`). So it shows the same live, in a notebook reopened without its kernel,
in nbviewer and in an exported file; no widget model is needed (a widget view in the same
output would hide this HTML once its model is gone: "Error displaying widget: model not
found"). Terminal IPython shows `summary.report_text` instead.
"""
from __future__ import annotations

import functools
import json
import pathlib
import uuid
from dataclasses import dataclass
from html import escape
from typing import Any, Callable

from .cache import cache_html
from .explorer import explorer_html
from .graphs import report_drawings
from .kernel_dot import kernel_class, kernel_colours, time_colours
from .markup import style_html
from .selection import page_data
from .source import kernel_index, kernel_seconds, lines_html
from .split import split_html, split_text
from .summary import head_html, report_text, summary_html
from .text import text_html
from .timing import timing_html

__all__ = ["Tab", "TABS", "TAB_TITLES", "report_html", "mimebundle", "page_script",
           "colour_css"]

Renderer = Callable[[Any, dict], str]          # (a RunReport, its drawings) -> HTML


@dataclass(frozen=True)
class Tab:
    """A tab of the report: its title and what renders its panel."""
    title: str
    render: Renderer

    def html(self, report, drawings: dict | None = None) -> str:
        return self.render(report, drawings if drawings is not None else {})


TABS = (
    Tab("Lines", lambda report, _: lines_html(report)),
    Tab("Summary", lambda report, _: summary_html(report)),
    Tab("Explorer", explorer_html),
    Tab("Timing", lambda report, _: timing_html(report)),
    Tab("Cache", lambda report, _: cache_html(report)),
    Tab("Text", lambda report, _: text_html(report)),
)
TAB_TITLES = tuple(tab.title for tab in TABS)


def report_html(report, drawings: dict | None = None) -> str:
    """The whole report: head line, tabs (Lines first for a compiled cell, Summary for one
    that ran as plain Python), the page's data and script. `drawings` (`report_drawings`)
    are laid out here when not given. A cell split into regions and host steps: its own page
    (`split.py`), each region's report in it."""
    if getattr(report, "split", False):
        return split_html(report, report_html)
    if drawings is None:
        drawings = report_drawings(report)
    uid = f"psc-{uuid.uuid4().hex[:12]}"
    first = 0 if report.compiled else TAB_TITLES.index("Summary")
    tabs = [_tab_input(uid, i, i == first) + _tab_label(uid, i, tab.title)
            for i, tab in enumerate(TABS)]
    panels = [f'<div class="psc-panel psc-panel-{tab.title.lower()}"><h3 class="psc-panel-title">'
              f"{escape(tab.title)}</h3>{tab.html(report, drawings)}</div>" for tab in TABS]
    colour = "psc-colour-time" if kernel_seconds(report) is not None else "psc-colour-kernel"
    return (f'<div class="psc-jit psc-report psc-run {colour}" id="{uid}">{style_html()}'
            f"<style>{colour_css(report, uid)}</style>{head_html(report)}"
            f'<div class="psc-tabs">{"".join(tabs)}{"".join(panels)}</div>'
            f"{_data_html(report)}<script>{page_script()}</script></div>")


def mimebundle(report) -> dict[str, str]:
    """What a front end shows: {'text/plain': the terminal summary, 'text/html': the report}."""
    text = split_text(report) if getattr(report, "split", False) else report_text(report)
    return {"text/plain": text, "text/html": report_html(report)}


def _tab_input(uid: str, index: int, checked: bool) -> str:
    return (f'<input type="radio" class="psc-tab-input" name="{uid}-tabs" id="{uid}-tab{index}"'
            f'{" checked" if checked else ""}>')


def _tab_label(uid: str, index: int, title: str) -> str:
    return f'<label class="psc-tab-label" for="{uid}-tab{index}">{escape(title)}</label>'


def _data_html(report) -> str:
    data = page_data(report)
    data["svg_style"] = colour_css(report, None)
    text = json.dumps(data, separators=(",", ":")).replace("</", "<\\/")
    return f'<script type="application/json" class="psc-data">{text}</script>'


@functools.cache
def page_script() -> str:
    """The page's script (`report.js` beside this module)."""
    return (pathlib.Path(__file__).resolve().parent / "report.js").read_text()


_SHAPES = ("path", "polygon", "ellipse")


def colour_css(report, uid: str | None) -> str:
    """The kernels' fills in the drawings, one rule per kernel: one pastel each, or pale to
    red by measured time (the page's root has class `psc-colour-kernel` or
    `psc-colour-time`). Without `uid`: the rules of an exported SVG (by time when measured)."""
    if report.kernels is None:
        return ""
    index, seconds = kernel_index(report), kernel_seconds(report)
    schemes = {"kernel": kernel_colours(report.kernels)}
    if seconds is not None:
        schemes["time"] = time_colours(report.kernels, seconds)
    if uid is None:
        schemes = {"": schemes.get("time", schemes["kernel"])}
    rules = []
    for scheme, colours in schemes.items():
        scope = f"#{uid}.psc-colour-{scheme} " if uid else ""
        for name, colour in colours.items():
            selector = ", ".join(f"{scope}g.node.{kernel_class(index[name])} {shape}"
                                 for shape in _SHAPES)
            rules.append(f"{selector} {{ fill: {colour}; }}")
    return "\n".join(rules)
