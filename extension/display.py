"""Showing a run's report where the user is: HTML (with its own style sheet and script) and
text in one display, which a live notebook, a reopened one, nbviewer and terminals all read; a
progress bar in that same place while the run works; the notebook-wide cache and timing
overviews of `%psc_cache` and `%psc_timings`."""
from __future__ import annotations

import contextlib
from typing import Iterator

from IPython import get_ipython
from IPython.display import display

from .core import DISK_CACHE, EXECUTABLE_CACHE, TRACE_CACHE, RunReport


def _in_kernel() -> bool:
    shell = get_ipython()
    return shell is not None and getattr(shell, "kernel", None) is not None


class ProgressDisplay:
    """A progress bar displayed before a run starts; `show_report` later puts the report in
    its place. Calling it with a stage name moves the bar (the runner's `progress`)."""

    def __init__(self, stages):
        from .widgets import ProgressView
        self.view = ProgressView(stages)
        self.handle = display(self.view.widget, display_id=True)

    def __call__(self, stage: str) -> None:
        self.view(stage)

    def replace(self, bundle: dict) -> None:
        self.view.finish()
        self.handle.update(bundle, raw=True)
        self.view.close()            # no widget is left in the output, nor its model behind

    def fail(self) -> None:
        self.view.finish("stopped: see the error below", failed=True)


@contextlib.contextmanager
def progress_display(enabled: bool = True) -> Iterator[ProgressDisplay | None]:
    """A ProgressDisplay in a notebook kernel when enabled, else None (nothing is shown)."""
    if not (enabled and _in_kernel()):
        yield None
        return
    from .runner import PROGRESS_STAGES
    progress = ProgressDisplay(PROGRESS_STAGES)
    try:
        yield progress
    except BaseException:
        progress.fail()
        raise


def report_bundle(report: RunReport) -> dict:
    """text/plain and text/html: the report is HTML with its own style and script, no widget,
    so a notebook reopened without its kernel, nbviewer and exported files show it too."""
    from .widgets import mimebundle
    return mimebundle(report)


def show_report(report: RunReport, progress: ProgressDisplay | None = None) -> None:
    """Display the report (in the progress bar's place when there is one)."""
    bundle = report_bundle(report)
    if progress is not None:
        progress.replace(bundle)
    else:
        display(bundle, raw=True)


def _cache_counts() -> dict[str, int]:
    return {"entries": len(TRACE_CACHE), "hits": TRACE_CACHE.hits, "misses": TRACE_CACHE.misses,
            "evictions": TRACE_CACHE.evictions, "maxsize": TRACE_CACHE.maxsize,
            "executables": len(EXECUTABLE_CACHE), "executable_maxsize": EXECUTABLE_CACHE.maxsize,
            "executable_bytes": EXECUTABLE_CACHE.code_bytes()}


def cache_overview() -> str:
    """Every cache entry of the session, with hits, compile time and size; every miss with
    its reason; every eviction; the disk cache (HTML)."""
    from .widgets import cache_overview_html
    return cache_overview_html(TRACE_CACHE.records(), TRACE_CACHE.events, _cache_counts(),
                               DISK_CACHE.usage())


def cache_overview_bundle() -> dict:
    from .widgets import cache_overview_text
    text = cache_overview_text(TRACE_CACHE.records(), TRACE_CACHE.events, _cache_counts(),
                               DISK_CACHE.usage())
    return {"text/plain": text, "text/html": cache_overview()}


def timings_overview(reports: list[RunReport]) -> str:
    """One table and chart comparing every timed cell (HTML)."""
    from .widgets import timings_overview_html
    return timings_overview_html(reports)


def timings_overview_bundle(reports: list[RunReport]) -> dict:
    from .widgets import timings_overview_text
    return {"text/plain": timings_overview_text(reports), "text/html": timings_overview(reports)}
