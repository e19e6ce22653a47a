"""HTML building blocks shared by the tabs: tables, headed sections, notes, preformatted text,
colour chips, and the report's outer box. Cells and bodies are already-escaped HTML; plain
text arguments (titles, notes, paragraphs) are escaped here."""
from __future__ import annotations

import itertools
from html import escape
from typing import Iterable

__all__ = ["table_html", "section_html", "notice_html", "paragraph_html", "pre_html",
           "chip_html", "wrap_html"]

_TABLE = 'style="border-collapse:collapse; font-size:12px; margin:4px 0 8px 0"'
_CELL = 'style="border:1px solid #ddd; padding:2px 6px; text-align:left; vertical-align:top"'
_HEAD = ('style="border:1px solid #ddd; padding:2px 6px; text-align:left; '
         'background:#f3f3f3"')
_PRE = ('style="font-size:11px; line-height:1.35; background:#fafafa; padding:6px; '
        'overflow:auto; max-height:480px; border:1px solid #eee"')


def table_html(header: Iterable[str] | None, rows: Iterable[Iterable[str]],
               row_attrs: Iterable[str] = ()) -> str:
    """A table of already-escaped cells (no header row when `header` is None); `row_attrs`
    are attributes for each row's `<tr>`, in order."""
    head = "".join(f"<th {_HEAD}>{cell}</th>" for cell in header or ())
    head = f"<thead><tr>{head}</tr></thead>" if head else ""
    attrs = itertools.chain(row_attrs, itertools.repeat(""))
    body = "".join(_tr(next(attrs)) + "".join(f"<td {_CELL}>{cell}</td>" for cell in row)
                   + "</tr>" for row in rows)
    return f"<table {_TABLE}>{head}<tbody>{body}</tbody></table>"


def _tr(attrs: str) -> str:
    return f"<tr {attrs}>" if attrs else "<tr>"


def section_html(title: str, body: str) -> str:
    return f'<h4 style="margin:8px 0 4px 0">{escape(title)}</h4>{body}'


def notice_html(text: str) -> str:
    """A yellow note: why something is not shown, or how to make it shown."""
    return f'<p style="color:#8a6d3b; background:#fcf8e3; padding:4px 8px">{escape(text)}</p>'



def paragraph_html(text: str) -> str:
    return f"<p>{escape(text)}</p>"


def pre_html(text: str) -> str:
    return f"<pre {_PRE}>{escape(text)}</pre>"


def chip_html(colour: str, title: str = "") -> str:
    return (f'<span title="{escape(title)}" style="display:inline-block; width:10px; '
            f'height:10px; margin-right:2px; background:{colour}; border:1px solid #888">'
            "</span>")


def wrap_html(body: str) -> str:
    return ('<div class="psc-jit" style="font-family:Helvetica,Arial,sans-serif; '
            f'font-size:13px">{body}</div>')
