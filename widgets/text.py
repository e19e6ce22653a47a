"""The Text tab: the IR, the StableHLO module and XLA's optimized HLO, escaped."""
from __future__ import annotations

from html import escape

from .markup import paragraph_html, pre_html

__all__ = ["text_html"]


def text_html(report) -> str:
    """The IR, the StableHLO module and XLA's optimized HLO, each in an escaped <pre>."""
    texts = (("IR (traced graph)", str(report.graph) if report.graph is not None else None),
             ("StableHLO", report.stablehlo), ("Optimized HLO (after fusion)",
                                               report.optimized_hlo))
    return "".join(_text_block(title, text, open_=i == 0)
                   for i, (title, text) in enumerate(texts))


def _text_block(title: str, text: str | None, open_: bool) -> str:
    body = pre_html(text) if text else paragraph_html("Not available for this run.")
    state = " open" if open_ else ""
    return (f'<details{state}><summary style="cursor:pointer; font-weight:bold">'
            f"{escape(title)}</summary>{body}</details>")
