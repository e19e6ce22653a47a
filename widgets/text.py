"""The Text tab: the IR, the StableHLO module and XLA's optimized HLO, escaped; each cut at
SHOWN_CHARS (a notebook output carries the whole report on every run), the rest a call away
(`psc_jit.last_report().stablehlo`, `.optimized_hlo`, `.graph`)."""
from __future__ import annotations

from html import escape

from .markup import paragraph_html, pre_html
from .source import per_program

__all__ = ["text_html"]


def text_html(report) -> str:
    """The IR, the StableHLO module and XLA's optimized HLO, each in an escaped <pre> (made
    once per program: a re-run that hits shows the same)."""
    return per_program(report, "text", _text_html, report.stablehlo, report.optimized_hlo)


SHOWN_CHARS = 60_000


def _text_html(report) -> str:
    texts = (("IR (traced graph)", "graph", str(report.graph) if report.graph is not None
              else None),
             ("StableHLO", "stablehlo", report.stablehlo),
             ("Optimized HLO (after fusion)", "optimized_hlo", report.optimized_hlo))
    return "".join(_text_block(title, field, text, open_=i == 0)
                   for i, (title, field, text) in enumerate(texts))


def _text_block(title: str, field: str, text: str | None, open_: bool) -> str:
    if not text:
        body = paragraph_html("Not available for this run.")
    elif len(text) > SHOWN_CHARS:
        cut = text.rfind("\n", 0, SHOWN_CHARS) + 1 or SHOWN_CHARS
        body = pre_html(text[:cut]) + paragraph_html(
            f"… {len(text) - cut:,} more characters: psc_jit.last_report().{field} has all "
            f"{len(text):,}.")
    else:
        body = pre_html(text)
    state = " open" if open_ else ""
    return f"<details{state}><summary>{escape(title)}</summary>{body}</details>"
