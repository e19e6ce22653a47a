"""The report of a cell split into compiled regions and host steps: the Summary with the
picture of its parts (`plan_dot`), then each region's own report (its Explorer, Cache,
Timing and Text), chosen from a list in the widget and stacked in the HTML report."""
from __future__ import annotations

from .markup import wrap_html
from .plan_dot import plan_html
from .report import report_sections, sections_html
from .summary import summary_html

__all__ = ["split_html", "split_sections", "SplitView"]


def split_sections(report) -> list[tuple[str, str]]:
    """(heading, HTML): the Summary with the picture, then every compiled region's
    sections, each heading naming the region's lines."""
    sections = [("Summary", summary_html(report) + plan_html(report))]
    for region in report.regions:
        if region.compiled:
            sections += [(f"{region.name}: {heading}", html)
                         for heading, html in report_sections(region)
                         if heading != "Summary"]
    return sections


def split_html(report) -> str:
    return sections_html(split_sections(report))


class SplitView:
    """The widget of a split run (`.widget`, a Tab): Summary with the picture, and Regions,
    where a list chooses the region whose own tabs are shown below it."""

    def __init__(self, report):
        import ipywidgets

        from .view import RunView
        self.report = report
        compiled = [r for r in report.regions if r.compiled]
        self.choose = ipywidgets.Dropdown(
            options=[(r.name, k) for k, r in enumerate(compiled)], description="region",
            layout=ipywidgets.Layout(width="auto"))
        self.shown = ipywidgets.VBox()
        self._views: dict[int, object] = {}

        def show(change=None):
            k = self.choose.value
            if k is None:
                return
            if k not in self._views:
                self._views[k] = RunView(compiled[k]).widget
            self.shown.children = [self._views[k]]
        self.choose.observe(show, names="value")
        show()
        summary = ipywidgets.HTML(wrap_html(summary_html(report) + plan_html(report)))
        self.widget = ipywidgets.Tab(children=[summary, ipywidgets.VBox([self.choose,
                                                                          self.shown])],
                                     titles=("Summary", "Regions"))
        self.widget.add_class("psc-run")

    def html(self) -> str:
        return split_html(self.report)
