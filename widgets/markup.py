"""HTML building blocks shared by the tabs: tables, headed sections, notes, preformatted text,
colour chips, and the outer box with its style sheet. Cells and bodies are already-escaped
HTML; plain text arguments (titles, notes, paragraphs) are escaped here.

Colours come from the style sheet (`report.css`), which reads JupyterLab's theme variables
(`--jp-layout-color0`, `--jp-ui-font-color1`, ...) with light fallbacks for other pages, so
a report reads in a light and a dark theme alike; nothing here sets a colour of text or
background inline, except the kernels' own colours (chips, which carry a border)."""
from __future__ import annotations

import functools
import itertools
import pathlib
from html import escape
from typing import Iterable

__all__ = ["table_html", "section_html", "notice_html", "paragraph_html", "pre_html",
           "chip_html", "wrap_html", "style_html", "style_sheet"]

HERE = pathlib.Path(__file__).resolve().parent


@functools.cache
def style_sheet() -> str:
    """The report's CSS (`report.css` beside this module)."""
    return (HERE / "report.css").read_text()


def style_html() -> str:
    """The report's style sheet in a `<style>` element (every report carries it, so a saved
    notebook or an exported page shows it alone)."""
    return f"<style>{style_sheet()}</style>"


def table_html(header: Iterable[str] | None, rows: Iterable[Iterable[str]],
               row_attrs: Iterable[str] = (), css_class: str = "") -> str:
    """A table of already-escaped cells (no header row when `header` is None); `row_attrs`
    are attributes for each row's `<tr>`, in order."""
    head = "".join(f"<th>{cell}</th>" for cell in header or ())
    head = f"<thead><tr>{head}</tr></thead>" if head else ""
    attrs = itertools.chain(row_attrs, itertools.repeat(""))
    body = "".join(_tr(next(attrs)) + "".join(f"<td>{cell}</td>" for cell in row)
                   + "</tr>" for row in rows)
    classes = f"psc-table {css_class}".strip()
    return f'<table class="{classes}">{head}<tbody>{body}</tbody></table>'


def _tr(attrs: str) -> str:
    return f"<tr {attrs}>" if attrs else "<tr>"


def section_html(title: str, body: str) -> str:
    return f'<h4 class="psc-section">{escape(title)}</h4>{body}'


def notice_html(text: str) -> str:
    """A note: why something is not shown, or how to make it shown."""
    return f'<p class="psc-notice">{escape(text)}</p>'


def paragraph_html(text: str) -> str:
    return f"<p>{escape(text)}</p>"


def pre_html(text: str) -> str:
    return f'<pre class="psc-pre">{escape(text)}</pre>'


def chip_html(colour: str, title: str = "") -> str:
    return f'<span class="psc-chip" title="{escape(title)}" style="background:{colour}"></span>'


def wrap_html(body: str) -> str:
    """A box of the report's style holding `body` (the overviews of `%psc_cache` and
    `%psc_timings`)."""
    return f'<div class="psc-jit psc-report">{style_html()}{body}</div>'
