"""Showing a run's report where the user is: the widget in a notebook front end, with HTML
and text in the same display so that exported notebooks and terminals still read it."""
from __future__ import annotations

import html

from IPython import get_ipython
from IPython.display import display

from .core.cache import TRACE_CACHE
from .core.report import RunReport


def _in_kernel() -> bool:
    shell = get_ipython()
    return shell is not None and getattr(shell, "kernel", None) is not None


def show_report(report: RunReport) -> None:
    from .widgets.render import report_html, report_text
    bundle = {"text/plain": report_text(report), "text/html": report_html(report)}
    if _in_kernel():
        from .widgets.view import RunView
        widget = RunView(report).widget
        bundle.update(widget._repr_mimebundle_())
        bundle["text/plain"] = report_text(report)
    display(bundle, raw=True)


def cache_overview() -> str:
    rows = []
    for record in TRACE_CACHE.records():
        rows.append(f"<tr><td>{html.escape(record.owner)}</td>"
                    f"<td><code>{html.escape(record.signature.describe())}</code></td>"
                    f"<td>{record.hits}</td></tr>")
    misses = [e for e in TRACE_CACHE.events if e.kind in ("miss", "evict")]
    miss_rows = "".join(f"<tr><td>{html.escape(e.owner)}</td><td>{e.kind}</td>"
                        f"<td>{html.escape(e.detail)}</td></tr>" for e in misses)
    return (f"<h4>psc_jit cache: {len(TRACE_CACHE)} entries, {TRACE_CACHE.hits} hits, "
            f"{TRACE_CACHE.misses} misses, {TRACE_CACHE.evictions} evictions</h4>"
            "<table><tr><th>cell / function</th><th>signature</th><th>hits</th></tr>"
            + "".join(rows) + "</table><h4>misses and evictions</h4>"
            "<table><tr><th>cell / function</th><th>event</th><th>reason</th></tr>"
            + miss_rows + "</table>")


def timings_overview(reports: list[RunReport]) -> str:
    rows = []
    for r in reports:
        if r.timings is None:
            continue
        t = r.timings
        rows.append(f"<tr><td>{html.escape(r.name)}</td><td>{t.plain_median * 1e3:.3f}</td>"
                    f"<td>{t.compiled_median * 1e3:.3f}</td><td>{t.compile_seconds:.3f}</td>"
                    f"<td>{t.speedup:.2f}×</td></tr>")
    if not rows:
        return "<p>No timed %%psc_jit cell yet (cells are timed on a cache miss, or with --compare).</p>"
    return ("<table><tr><th>cell</th><th>plain ms</th><th>compiled ms</th><th>compile s</th>"
            "<th>speed-up</th></tr>" + "".join(rows) + "</table>")
