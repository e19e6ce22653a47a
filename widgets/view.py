"""What a notebook shows of a run while it works: a progress bar (stock ipywidgets), replaced
by the report when it is done, which is plain HTML (`report.mimebundle`), not a widget.

The report is no widget: a widget's view needs its model, which dies with the kernel, and
JupyterLab then shows "Error displaying widget: model not found" in place of everything else
in the output. HTML with its own style sheet and script shows the same live, after the
notebook is reopened, and in nbviewer or an exported file.
"""
from __future__ import annotations

from typing import Sequence

import ipywidgets

__all__ = ["ProgressView"]


class ProgressView:
    """A bar and a label that a runner's `progress(stage)` callback moves, stage by stage."""

    def __init__(self, stages: Sequence[str], title: str = "psc_jit"):
        self.stages = tuple(stages)
        self.bar = ipywidgets.IntProgress(value=0, min=0, max=len(self.stages),
                                          description=title, bar_style="info")
        self.label = ipywidgets.Label("starting")
        self.widget = ipywidgets.HBox([self.bar, self.label])
        self.widget.add_class("psc-progress")

    def __call__(self, stage: str) -> None:
        """`stage` has started: the bar shows the stages before it as done."""
        if stage in self.stages:
            self.bar.value = self.stages.index(stage)
        self.label.value = f"{stage} …"

    def finish(self, text: str = "done", failed: bool = False) -> None:
        self.bar.value = self.bar.max
        self.bar.bar_style = "danger" if failed else "success"
        self.label.value = text

    def close(self) -> None:
        """Close the bar's models: the output that showed it now shows the report."""
        for widget in (self.widget, self.bar, self.label):
            widget.close()

