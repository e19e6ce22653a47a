"""The explorer: the traced graph before fusion and XLA's kernels after it, side by side and
cross-highlighted with the cell's source, built from stock ipywidgets.

Choosing a kernel (in the list, costliest first: by estimated bytes or flops, or by the time
measured in one profiled call, which can also colour the kernels) highlights its IR equations in both graphs
and the cell lines they came from; choosing a line highlights its equations and the kernels
they went into; a search does the same for names, kinds, ops or line numbers. Python
observers re-render the affected HTML children, so it works in any live kernel with
ipywidgets' stock front end. Zoom scales the SVGs, their boxes scroll to pan; loops and
kernels can be collapsed to one node each.
"""
from __future__ import annotations

import html

import ipywidgets

from .digraph import HIGHLIGHT_FILL
from .graphs import fused_dot, fused_html, graph_html, ir_dot, too_big_to_draw
from .selection import Highlight, for_kernel, for_line, for_query, kernel_choices, line_choices
from .source import kernel_table_html, measured_times, source_html
from .svg import svg_or_hint

__all__ = ["Explorer"]

NONE = ("(none)", None)
VIEWS = ("side by side", "before fusion", "after fusion")


def _layout(**kwargs) -> ipywidgets.Layout:
    return ipywidgets.Layout(**kwargs)


class Explorer:
    """The widget (`.widget`) of one run's explorer; its controls are attributes."""

    def __init__(self, report):
        self.report = report
        self.highlight = Highlight()
        self._syncing = False
        self._build_controls()
        self._build_panes()
        self.widget = ipywidgets.VBox(
            [self._toolbar(), self.status, ipywidgets.HBox([self.ir_pane, self.fused_pane]),
             ipywidgets.HBox([self._kernel_column(), self._source_column()]),
             self.kernel_table])
        self.widget.add_class("psc-explorer")
        self._observe()
        self.refresh()

    # -- building ------------------------------------------------------------------------------
    def _build_controls(self) -> None:
        report = self.report
        self.kernel_select = ipywidgets.Select(
            options=[NONE, *kernel_choices(report)], value=None,
            rows=min(8, 1 + len(kernel_choices(report))), layout=_layout(width="98%"))
        measured = measured_times(report) is not None
        self.sort_by = ipywidgets.ToggleButtons(
            options=[("by bytes", "bytes"), ("by flops", "flops"),
                     *([("by time", "time")] if measured else [])], value="bytes",
            tooltips=["estimated bytes moved", "estimated floating-point operations",
                      *(["measured in one profiled call"] if measured else [])],
            style={"button_width": "80px"})
        self.colour_by = ipywidgets.ToggleButtons(
            options=[("one per kernel", "kernel"), ("by measured time", "time")],
            value="kernel", tooltips=["a colour per kernel", "pale to red: measured time"],
            style={"button_width": "120px"},
            layout=_layout(display=None if measured else "none"))
        self.measured_note = ipywidgets.HTML(_count(_measured_note(report)))
        self.line_select = ipywidgets.Select(
            options=[NONE, *line_choices(report)], value=None,
            rows=min(5, 1 + len(line_choices(report))), layout=_layout(width="98%"))
        self.search = ipywidgets.Text(placeholder="tanh, e5, fusion, line 3 (Enter)",
                                      description="search", continuous_update=False,
                                      layout=_layout(width="300px"))
        self.view = ipywidgets.ToggleButtons(options=VIEWS, value=VIEWS[0],
                                             style={"button_width": "110px"})
        self.zoom = ipywidgets.IntSlider(value=100, min=10, max=400, step=10,
                                         description="zoom %", continuous_update=False)
        self.fit = ipywidgets.Checkbox(value=True, description="fit width", indent=False,
                                       layout=_layout(width="90px"))
        self.collapse_loops = ipywidgets.Checkbox(value=False, description="collapse loops",
                                                  indent=False, layout=_layout(width="120px"))
        self.collapse_kernels = ipywidgets.Checkbox(value=False, description="collapse kernels",
                                                    indent=False, layout=_layout(width="130px"))
        self.status = ipywidgets.HTML()
        for widget, name in ((self.kernel_select, "psc-kernel-select"),
                             (self.line_select, "psc-line-select"), (self.search, "psc-search"),
                             (self.zoom, "psc-zoom"), (self.status, "psc-status"),
                             (self.colour_by, "psc-colour-by"),
                             (self.measured_note, "psc-measured-note")):
            widget.add_class(name)

    def _build_panes(self) -> None:
        self.ir_pane = ipywidgets.HTML(layout=_layout(width="50%"))
        self.fused_pane = ipywidgets.HTML(layout=_layout(width="50%"))
        self.kernel_table = ipywidgets.HTML()
        self.source = ipywidgets.HTML()
        for widget, name in ((self.ir_pane, "psc-ir"), (self.fused_pane, "psc-fused"),
                             (self.kernel_table, "psc-kernel-table"),
                             (self.source, "psc-source-pane")):
            widget.add_class(name)

    def _toolbar(self) -> ipywidgets.Widget:
        return ipywidgets.HBox([self.search, self.view, self.zoom, self.fit,
                                self.collapse_loops, self.collapse_kernels],
                               layout=_layout(flex_flow="row wrap", align_items="center"))

    def _kernel_column(self) -> ipywidgets.Widget:
        title = ipywidgets.HTML("<b>Kernels, costliest first</b> (estimated, or measured)")
        return ipywidgets.VBox([ipywidgets.HBox([title, self.sort_by]),
                                ipywidgets.HBox([self.measured_note, self.colour_by]),
                                self.kernel_select], layout=_layout(width="50%"))

    def _source_column(self) -> ipywidgets.Widget:
        title = ipywidgets.HTML("<b>Cell source</b>, each line in its kernel's colour")
        return ipywidgets.VBox([title, self.line_select, self.source],
                               layout=_layout(width="50%"))

    # -- reacting ------------------------------------------------------------------------------
    def _observe(self) -> None:
        self.kernel_select.observe(self._on_kernel, "value")
        self.line_select.observe(self._on_line, "value")
        self.search.observe(self._on_search, "value")
        self.sort_by.observe(self._on_sort, "value")
        for widget in (self.view, self.collapse_loops, self.collapse_kernels, self.fit):
            widget.observe(lambda _change: self.refresh_graphs(), "value")
        self.colour_by.observe(lambda _change: self.refresh(), "value")
        self.zoom.observe(self._on_zoom, "value")

    def _on_kernel(self, change) -> None:
        if not self._syncing:
            self.select_kernel(change["new"])

    def _on_line(self, change) -> None:
        if not self._syncing:
            self.select_line(change["new"])

    def _on_search(self, change) -> None:
        if not self._syncing:
            self.find(change["new"])

    def _on_sort(self, _change) -> None:
        chosen = self.kernel_select.value
        self._set_quietly(self.kernel_select, "options",
                          [NONE, *kernel_choices(self.report, self.sort_by.value)])
        self._set_quietly(self.kernel_select, "value", chosen)
        self.refresh_lists()

    def _on_zoom(self, _change) -> None:
        self._set_quietly(self.fit, "value", False)
        self.refresh_graphs()

    # -- choosing (also the API tests and users drive) -----------------------------------------
    def select_kernel(self, name: str | None) -> Highlight:
        self._show(for_kernel(self.report, name) if name else Highlight(),
                   kernel=name, line=None, query="")
        return self.highlight

    def select_line(self, line: int | None) -> Highlight:
        self._show(for_line(self.report, line) if line else Highlight(),
                   kernel=None, line=line, query="")
        return self.highlight

    def find(self, query: str) -> Highlight:
        self._show(for_query(self.report, query), kernel=None, line=None, query=query)
        return self.highlight

    def _show(self, highlight: Highlight, kernel, line, query: str) -> None:
        self.highlight = highlight
        self._set_quietly(self.kernel_select, "value", kernel)
        self._set_quietly(self.line_select, "value", line)
        self._set_quietly(self.search, "value", query)
        self.refresh()

    def _set_quietly(self, widget, name: str, value) -> None:
        self._syncing = True
        try:
            if name == "value" and hasattr(widget, "options") and not _offers(widget, value):
                value = None
            setattr(widget, name, value)
        finally:
            self._syncing = False

    # -- rendering -----------------------------------------------------------------------------
    def refresh(self) -> None:
        self.status.value = self._status_html()
        self.refresh_graphs()
        self.refresh_lists()

    def refresh_lists(self) -> None:
        colour_by = self.colour_by.value
        self.kernel_table.value = (
            "<b>Every kernel</b>: kind, fused ops, shapes, estimated bytes and flops, measured "
            "time, lines" + kernel_table_html(self.report, self.sort_by.value,
                                               self.highlight.kernels, colour_by))
        self.source.value = source_html(self.report, self.highlight.lines, colour_by)

    def refresh_graphs(self) -> None:
        view = self.view.value
        self.ir_pane.layout.display = "none" if view == VIEWS[2] else None
        self.fused_pane.layout.display = "none" if view == VIEWS[1] else None
        width = "50%" if view == VIEWS[0] else "100%"
        self.ir_pane.layout.width = self.fused_pane.layout.width = width
        if view != VIEWS[2]:
            self.ir_pane.value = self._pane("Before fusion: the traced graph",
                                            self._ir_svg, "psc-pane-ir")
        if view != VIEWS[1]:
            self.fused_pane.value = self._pane("After fusion: XLA's kernels",
                                               self._fused_svg, "psc-pane-fused")

    def _zoom(self) -> float | None:
        return None if self.fit.value else self.zoom.value / 100

    def _pane(self, title: str, draw, css_class: str) -> str:
        head = f'<div style="font-weight:bold; margin:2px 0">{title}</div>'
        return f'<div class="psc-pane {css_class}">{head}{draw()}</div>'

    def _ir_svg(self) -> str:
        report = self.report
        if report.graph is None:
            return graph_html(report)
        if too_big_to_draw(report) and not self.collapse_loops.value:
            return graph_html(report)
        dot = ir_dot(report, self.highlight.labels, self.collapse_loops.value)
        return _count(f"{report.n_primitives} primitives") + svg_or_hint(dot, self._zoom())

    def _fused_svg(self) -> str:
        report = self.report
        if report.kernels is None:
            return fused_html(report)
        if too_big_to_draw(report) and not self.collapse_kernels.value:
            return _count("Too many equations to draw each one; tick 'collapse kernels'.")
        dot = fused_dot(report, self.highlight.kernels, self.highlight.labels,
                        self.collapse_kernels.value, self.colour_by.value)
        return _count(f"{report.n_kernels} kernels") + svg_or_hint(dot, self._zoom())

    def _status_html(self) -> str:
        if not self.highlight and not self.highlight.text:
            return ('<span style="color:#666">Choose a kernel or a line below, or search, to '
                    "highlight what belongs together. Hover a node for its shape, dtype and "
                    "line.</span>")
        return (f'<span style="background:{HIGHLIGHT_FILL}; padding:1px 6px">'
                f"{html.escape(self.highlight.describe())}</span>")


def _measured_note(report) -> str:
    """One line on the kernels' measured time: what was measured, or why nothing was."""
    measured = report.measured
    if measured is None:
        return "Measured time: not timed (a timed run, --compare, measures each kernel)."
    return f"Measured time: {measured.describe()}"


def _offers(select, value) -> bool:
    return value is None or any(option == value for _, option in select.options)


def _count(text: str) -> str:
    return f'<div style="color:#555; font-size:12px">{html.escape(text)}</div>'
