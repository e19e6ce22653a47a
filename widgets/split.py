"""The report of a cell split into compiled regions and host steps, as one HTML page: the
head line (the cell, how it was split), the picture of its parts in the order they ran
(`plan_dot`), a row per region (its lines, compiled or why not, cache, primitives → kernels,
time), and each compiled region's own report (`report.report_html`: its Lines, Explorer,
Timing, ...) in a `<details>` of its own, the first one open. It needs no widget, like every
report."""
from __future__ import annotations

from html import escape

from .markup import style_html, table_html
from .plan_dot import plan_html
from .summary import cache_text, fusion_text, report_text, title_text
from .units import fmt_seconds

__all__ = ["split_html", "split_head_html", "regions_table_html", "split_text"]


def split_html(report, region_html) -> str:
    """The page; `region_html(region)`: a compiled region's own report (`report_html`)."""
    compiled = [r for r in report.regions if r.compiled]
    details = "".join(
        f'<details class="psc-region"{" open" if k == 0 else ""}><summary>'
        f"{escape(_lines(region))}: {escape(fusion_text(region))}</summary>"
        f"{region_html(region)}</details>" for k, region in enumerate(compiled))
    return (f'<div class="psc-jit psc-report psc-split">{style_html()}'
            f"{split_head_html(report)}{plan_html(report)}{regions_table_html(report)}"
            f"{details}</div>")


def split_head_html(report) -> str:
    kind = "psc-ok" if report.compiled else "psc-fallback"
    word = "compiled around host steps" if report.compiled else "ran as plain Python"
    text = report.split_summary() if report.compiled else (report.fallback_reason or "")
    host = report.stage_seconds.get("host")
    parts = [f'<span class="psc-title {kind}">{escape(title_text(report))}: {word}</span>',
             f"<span>{escape(text)}</span>"]
    if host is not None:
        parts.append(f'<span class="psc-dim">outside the compiled regions: '
                     f"{escape(fmt_seconds(host))}</span>")
    return f'<div class="psc-head">{"".join(parts)}</div>'


def regions_table_html(report) -> str:
    rows = []
    for region in report.regions:
        if region.compiled:
            how = f"compiled, cache {cache_text(region)}; {fusion_text(region)}"
        else:
            how = f"plain Python: {region.fallback_reason or ''}"
        seconds = region.stage_seconds.get("run")
        rows.append((escape(_lines(region)), escape(how),
                     escape(fmt_seconds(seconds)) if seconds is not None else ""))
    return table_html(("region", "how it ran", "run"), rows, css_class="psc-summary")


def _lines(region) -> str:
    if region.lines is None:
        return region.name
    first, last = region.lines
    return f"line {first}" if first == last else f"lines {first}-{last}"


def split_text(report) -> str:
    """The terminal summary of a split cell: how it was split, then each region's."""
    return "\n".join([report_text(report)] + [
        "  " + report_text(region).replace("\n", "\n  ") for region in report.regions
        if region.compiled])
