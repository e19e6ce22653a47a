"""The Explorer tab: XLA's kernels drawn one box each (heat-coloured by measured time when the
run was timed), the traced graph before fusion beside or instead of them, the kernels as a
table (slowest first) and the cell's lines, all cross-highlighted in the browser by the
page's script (`report.js`): click a kernel's box, a row, a line or an equation, or search.

Its toolbar: which drawing (kernels, traced graph, both), colour (by time, one per kernel),
hide the reshape and broadcast steps of the traced graph, zoom, search, and export (the whole
report as an HTML file, the drawing in view as SVG). A drawing Graphviz could not lay out
within the time limit gives way to a note: the table and the lines still say everything."""
from __future__ import annotations

from html import escape

from .graphs import DRAWINGS, is_drawn, step_count
from .markup import notice_html
from .source import kernel_seconds, kernel_table_html, source_html
from .summary import fusion_text, status_text
from .svg import DotMissing

__all__ = ["explorer_html", "STATUS_HINT"]

STATUS_HINT = ("Click a kernel's box, a row or a line, or search, to see what belongs "
               "together; hover a box for its equations.")


def explorer_html(report, drawings: dict) -> str:
    """The Explorer's page: toolbar, status, drawings, then the kernel table and the lines."""
    if report.kernels is None and report.graph is None:
        return notice_html(f"Nothing to explore: {status_text(report)}")
    graphs = f'<div class="psc-graphs">{_kernels_pane(report, drawings)}' \
             f'{_graph_pane(report, drawings)}</div>'
    columns = (f'<div class="psc-columns"><div><h4 class="psc-section">Kernels</h4>'
               f'{kernel_table_html(report)}</div><div><h4 class="psc-section">Cell lines</h4>'
               f'{source_html(report)}</div></div>')
    status = f'<div class="psc-status" data-hint="{escape(STATUS_HINT)}"></div>'
    return f'<div class="psc-explorer">{_toolbar(report)}{status}{graphs}{columns}</div>'


def _button(group: str, value: str, text: str, pressed: bool | None = None,
            title: str = "") -> str:
    state = "" if pressed is None else f' aria-pressed="{"true" if pressed else "false"}"'
    hint = f' title="{escape(title)}"' if title else ""
    return (f'<button type="button" data-psc="{group}" data-value="{value}"{state}{hint}>'
            f"{escape(text)}</button>")


def _group(label: str, buttons: list[str]) -> str:
    return f'<span class="psc-group"><span class="psc-dim">{escape(label)}</span>' \
           f'{"".join(buttons)}</span>'


def _toolbar(report) -> str:
    parts = [_group("show", [_button("view", "kernels", "kernels", True),
                             _button("view", "graph", "traced graph", False),
                             _button("view", "both", "both", False)])]
    if kernel_seconds(report) is not None:
        parts.append(_group("colour", [
            _button("colour", "time", "by time", True, "pale to red: measured time"),
            _button("colour", "kernel", "per kernel", False, "a colour per kernel")]))
    steps = step_count(report)
    if steps:
        parts.append(f'<label title="reshape and broadcast_in_dim equations"><input '
                     f'type="checkbox" class="psc-steps" checked> hide {steps} of '
                     f"{report.n_primitives} steps (reshape, broadcast)</label>")
    parts.append(_group("zoom", [_button("zoom", "out", "−", None, "smaller"),
                                 _button("zoom", "fit", "fit", None, "as wide as the pane"),
                                 _button("zoom", "one", "100%", None, "natural size"),
                                 _button("zoom", "in", "+", None, "larger"),
                                 '<span class="psc-zoom-level psc-dim">fit</span>']))
    parts.append('<input type="search" class="psc-search" placeholder="search: tanh, e5, '
                 'line 3" aria-label="search kernels, equations and lines">')
    parts.append(_group("save", [_button("export", "html", "HTML", None,
                                         "the whole report as an HTML file"),
                                 _button("export", "svg", "SVG", None,
                                         "the drawing in view as an SVG file")]))
    return f'<div class="psc-toolbar">{"".join(parts)}</div>'


def _kernels_pane(report, drawings: dict) -> str:
    if report.kernels is None:
        return ""
    measured = kernel_seconds(report) is not None
    title = (f"After fusion: {report.n_kernels} kernel{'s' * (report.n_kernels != 1)}"
             + (", red the slowest" if measured else ""))
    body = _drawing(drawings.get("kernels"), "kernels",
                    "the kernels' drawing; the table below lists them")
    return (f'<div class="psc-graph" data-view="kernels"><div class="psc-graph-title">'
            f"{escape(title)}</div>{body}</div>")


def _graph_pane(report, drawings: dict) -> str:
    if report.graph is None:
        return ""
    title = f"Before fusion: {fusion_text(report)}, each equation in its kernel's colour"
    body = _drawing(drawings.get("graph"), "graph", "the traced graph; the Text tab lists it",
                    steps="hidden")
    if "graph with steps" in drawings:
        body += _drawing(drawings["graph with steps"], "graph", "the traced graph with its "
                         "steps; untick 'hide steps' for the drawing without them", steps="all")
    hidden = " hidden" if report.kernels is not None else ""
    return (f'<div class="psc-graph" data-view="graph"{hidden}><div class="psc-graph-title">'
            f"{escape(title)}</div>{body}</div>")


def _drawing(drawing, name: str, instead: str, steps: str | None = None) -> str:
    """One laid-out drawing, or the simpler view: a note saying why, and what to read."""
    attrs = f' data-steps="{steps}"' if steps else ""
    attrs += " hidden" if steps == "all" else ""          # (the script shows it on request)
    if is_drawn(drawing):
        return f'<div class="psc-drawing" data-drawing="{name}"{attrs}>{drawing}</div>'
    if isinstance(drawing, DotMissing):
        text = f"{str(drawing).rstrip('.')}; shown instead: {instead}."
    else:
        text = drawing or f"Not drawn: {DRAWINGS[name]}."
    return f'<div class="psc-drawing" data-drawing="{name}"{attrs}>{notice_html(text)}</div>'
