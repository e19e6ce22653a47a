"""The Timing tab (plain Python against compiled: medians and spreads, compile and first
call, speed-up, one call part by part, each fused kernel's measured time, achieved rates,
agreement, a bar chart) and the notebook-wide comparison of
`%psc_timings` (the latest timing of each cell, a table and a log-scale chart)."""
from __future__ import annotations

import math
from html import escape
from typing import Any, Iterable

from .markup import notice_html, paragraph_html, table_html, wrap_html
from .units import fmt_bytes, fmt_count, fmt_seconds, fmt_speedup

__all__ = ["timing_html", "timing_chart_svg", "breakdown_chart_svg", "timings_overview_html",
           "timings_overview_text", "timings_chart_svg", "latest_timed", "kernel_time_items"]


def timing_html(report) -> str:
    """Plain against compiled: medians, spreads, compile and first call, speed-up, rates."""
    timings = report.timings
    if timings is None:
        return notice_html("Not timed: the comparison runs on a cache miss or with --compare.")
    rows = [(escape(name), escape(value)) for name, value in _timing_items(report)]
    return f'<div class="psc-timing">{table_html(None, rows)}{timing_chart_svg(timings)}</div>'


def _timing_items(report) -> list[tuple[str, str]]:
    timings = report.timings
    items = [("plain Python (median)", _median_text(timings, "plain")),
             ("compiled (median)", _median_text(timings, "compiled"))]
    items += [("compile (trace + lower + XLA)", _compile_text(report)),
              ("first compiled call", fmt_seconds(timings.first_call_seconds)),
              ("speed-up", fmt_speedup(timings.speedup))]
    return (items + _breakdown_items(timings) + kernel_time_items(report) + _rate_items(report)
            + _difference_items(timings))


SHOWN_KERNELS = 8


def kernel_time_items(report, shown: int = SHOWN_KERNELS) -> list[tuple[str, str]]:
    """What each fused kernel took in one profiled call, slowest first (at most `shown`), or
    in one line why no kernel was measured."""
    measured = report.measured
    if measured is None:
        return []
    items = [("kernels (measured)", measured.describe())]
    if not measured.available:
        return items
    for name, seconds in measured.slowest(shown):
        runs = measured.runs.get(name, 1)
        times = f" · {runs:,} runs" if runs != 1 else ""
        items.append((f"· {name}", f"{fmt_seconds(seconds)} ({measured.share(name):.0%} of "
                                   f"XLA execution){times}"))
    hidden = len(measured.seconds) - shown
    return items + ([("· …", f"{hidden} more in the Explorer")] if hidden > 0 else [])


def _breakdown_items(timings) -> list[tuple[str, str]]:
    """One compiled call, part by part (they add up to the call), and the inputs copied."""
    breakdown = timings.breakdown
    if breakdown is None:
        return []
    items = [("one compiled call", fmt_seconds(breakdown.measured))]
    for name, seconds in breakdown.parts:
        share = seconds / breakdown.measured if breakdown.measured else 0.0
        items.append((f"· {name}", f"{fmt_seconds(seconds)} ({share:.0%})"))
    items += [("· copied on the way in", copy) for copy in breakdown.copies]
    advice = breakdown.advice(timings.plain_median)
    return items + ([("why it is slower", advice)] if advice else [])


def _compile_text(report) -> str:
    total = fmt_seconds(report.timings.compile_seconds)
    stages = [f"{stage} {fmt_seconds(report.stage_seconds[stage])}"
              for stage in ("trace", "lower", "compile") if stage in report.stage_seconds]
    return f"{total} ({', '.join(stages)})" if stages else total


def _median_text(timings, which: str) -> str:
    median = timings.plain_median if which == "plain" else timings.compiled_median
    low, high = timings.spread(which)
    runs = len(timings.plain_seconds if which == "plain" else timings.compiled_seconds)
    spread = f"spread {fmt_seconds(low)} – {fmt_seconds(high)}"
    return f"{fmt_seconds(median)}, {spread} over {runs} runs"


def _rate_items(report) -> list[tuple[str, str]]:
    timings, items = report.timings, []
    flops = timings.flops if timings.flops is not None else report.cost.get("flops")
    moved = (timings.bytes_accessed if timings.bytes_accessed is not None
             else report.cost.get("bytes accessed"))
    if flops and timings.compiled_median:
        items.append(("achieved FLOP/s", f"{fmt_count(flops / timings.compiled_median, 'FLOP/s')} "
                                         f"({fmt_count(flops, 'FLOP')} per run)"))
    if moved and timings.compiled_median:
        items.append(("achieved bytes/s", f"{fmt_bytes(moved / timings.compiled_median)}/s "
                                          f"({fmt_bytes(moved)} per run)"))
    return items


def _difference_items(timings) -> list[tuple[str, str]]:
    if timings.largest_difference is None:
        return []
    items = [("largest difference", f"{timings.largest_difference:.3g}")]
    return items + [(f"difference in {name}", f"{value:.3g}")
                    for name, value in timings.differences.items()]


_BAR_COLOURS = {"plain": "#9e9e9e", "compiled": "#1e88e5", "first call": "#90caf9"}
_PART_COLOURS = {"Python dispatch": "#fb8c00", "input transfer": "#8e24aa",
                 "XLA execution": "#1e88e5", "output handling": "#43a047"}


def timing_chart_svg(timings, width: int = 420) -> str:
    """Horizontal bars: plain and compiled medians (whiskers: min to max), first call; then,
    on a scale of their own, the plain median next to one compiled call stacked part by part
    (dispatch, transfer, execution, outputs)."""
    bars = [("plain", timings.plain_median, timings.spread("plain")),
            ("compiled", timings.compiled_median, timings.spread("compiled")),
            ("first call", timings.first_call_seconds, None)]
    top = max(max((value, *(spread or ()))) for _, value, spread in bars) or 1.0
    scale = (width - 190) / top
    rows = [_bar(i, name, value, spread, scale) for i, (name, value, spread) in enumerate(bars)]
    height = 22 * len(bars) + 6
    chart = (f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
             f'font-family="Helvetica,Arial,sans-serif" font-size="11">{"".join(rows)}</svg>')
    return chart + (breakdown_chart_svg(timings, width) if timings.breakdown else "")


def breakdown_chart_svg(timings, width: int = 420) -> str:
    """Plain Python's median against one compiled call, its parts end to end, one scale."""
    breakdown = timings.breakdown
    scale = (width - 190) / (max(timings.plain_median, breakdown.measured) or 1.0)
    rows = [_bar(0, "plain", timings.plain_median, None, scale),
            _stacked_bar(1, breakdown, scale), _legend(2)]
    return (f'<svg class="psc-breakdown" xmlns="http://www.w3.org/2000/svg" width="{width}" '
            f'height="{22 * 3 + 6}" font-family="Helvetica,Arial,sans-serif" font-size="11">'
            f'{"".join(rows)}</svg>')


def _legend(row: int) -> str:
    y, x, parts = 4 + 22 * row + 12, 0.0, []
    for name, colour in _PART_COLOURS.items():
        parts.append(f'<text x="{x:.0f}" y="{y}" fill="{colour}">■ {escape(name)}</text>')
        x += 5.5 * (len(name) + 2) + 12
    return "".join(parts)


def _stacked_bar(row: int, breakdown, scale: float) -> str:
    """One compiled call: a bar per part, end to end, each titled with its name and time."""
    y, x = 4 + 22 * row, 80.0
    parts = [f'<text x="0" y="{y + 12}">one call</text>']
    for name, seconds in breakdown.parts:
        length = seconds * scale
        parts.append(f'<rect x="{x:.1f}" y="{y}" width="{length:.1f}" height="16" '
                     f'fill="{_PART_COLOURS[name]}"><title>{escape(name)}: '
                     f'{fmt_seconds(seconds)}</title></rect>')
        x += length
    parts.append(f'<text x="{x + 4:.1f}" y="{y + 12}">{fmt_seconds(breakdown.measured)}</text>')
    return "".join(parts)


def _bar(row: int, name: str, value: float, spread, scale: float) -> str:
    y, x0 = 4 + 22 * row, 80
    length = max(value * scale, 1.0)
    parts = [f'<text x="0" y="{y + 12}">{escape(name)}</text>',
             f'<rect x="{x0}" y="{y}" width="{length:.1f}" height="16" '
             f'fill="{_BAR_COLOURS[name]}"><title>{escape(name)}: {fmt_seconds(value)}</title>'
             "</rect>"]
    if spread is not None:
        low, high = (x0 + s * scale for s in spread)
        parts.append(f'<line x1="{low:.1f}" y1="{y + 8}" x2="{high:.1f}" y2="{y + 8}" '
                     'stroke="#333" stroke-width="1"/>')
    end = x0 + max(length, (spread[1] * scale) if spread else 0)
    parts.append(f'<text x="{end + 4:.1f}" y="{y + 12}">{fmt_seconds(value)}</text>')
    return "".join(parts)



# ---------------------------------------------------------------------------------------------
# Every timed cell compared (%psc_timings)
# ---------------------------------------------------------------------------------------------


def latest_timed(reports: Iterable[Any]) -> list[Any]:
    """The last timed report of each (cell, signature), in the order cells were first timed."""
    latest: dict[tuple[str, str], Any] = {}
    for report in reports:
        if report.timings is not None:
            latest[(report.name, report.signature)] = report
    return list(latest.values())


def _median_spread(timings, which: str) -> str:
    low, high = timings.spread(which)
    median = timings.plain_median if which == "plain" else timings.compiled_median
    return f"{fmt_seconds(median)} ({fmt_seconds(low)} – {fmt_seconds(high)})"


def _rate_text(amount: float | None, seconds: float, unit: str) -> str:
    if not amount or not seconds:
        return ""
    return (f"{fmt_bytes(amount / seconds)}/s" if unit == "B"
            else fmt_count(amount / seconds, "FLOP/s"))


def _comparison_row(report) -> tuple[str, ...]:
    t = report.timings
    return (escape(report.name), escape(report.signature), escape(_median_spread(t, "plain")),
            escape(_median_spread(t, "compiled")), fmt_seconds(t.compile_seconds),
            fmt_seconds(t.first_call_seconds), escape(fmt_speedup(t.speedup, versus="")),
            _rate_text(t.flops, t.compiled_median, "flop"),
            _rate_text(t.bytes_accessed, t.compiled_median, "B"))


_COMPARISON_HEADER = ("cell", "signature", "plain median (min – max)",
                      "compiled median (min – max)", "compile", "first call", "speed-up",
                      "FLOP/s", "bytes/s")


def timings_overview_html(reports: Iterable[Any]) -> str:
    """One table and one chart comparing every timed cell: what `%psc_timings` shows."""
    timed = latest_timed(reports)
    if not timed:
        return wrap_html(paragraph_html("No timed %%psc_jit cell yet (cells are timed on a "
                                        "cache miss, or with --compare)."))
    table = table_html(_COMPARISON_HEADER, [_comparison_row(r) for r in timed])
    return wrap_html(f'<div class="psc-timings">{table}{timings_chart_svg(timed)}</div>')


def timings_overview_text(reports: Iterable[Any]) -> str:
    timed = latest_timed(reports)
    if not timed:
        return "No timed %%psc_jit cell yet (cells are timed on a cache miss, or with --compare)."
    return "\n".join(f"{r.name}: plain {_median_spread(r.timings, 'plain')}, compiled "
                     f"{_median_spread(r.timings, 'compiled')}, {fmt_speedup(r.timings.speedup)}"
                     for r in timed)


def timings_chart_svg(reports: list[Any], width: int = 560) -> str:
    """Per cell, a grey bar (plain median) and a blue one (compiled median) on one log scale,
    so cells whose times differ a thousandfold still read."""
    values = [v for r in reports for v in (r.timings.plain_median, r.timings.compiled_median)]
    low, high = _log_range(values)
    rows = []
    for i, report in enumerate(reports):
        for j, which in enumerate(("plain", "compiled")):
            value = getattr(report.timings, f"{which}_median")
            rows.append(_log_bar(30 * i + 13 * j, which, value, low, high, width - 260))
        rows.append(f'<text x="0" y="{30 * i + 16}">{escape(report.name[:22])}</text>')
    height = 30 * len(reports) + 4
    return (f'<svg class="psc-timings-chart" xmlns="http://www.w3.org/2000/svg" width="{width}" '
            f'height="{height}" font-family="Helvetica,Arial,sans-serif" font-size="11">'
            f'{"".join(rows)}</svg>')


def _log_range(values: list[float]) -> tuple[float, float]:
    positive = [v for v in values if v > 0] or [1e-6]
    return math.log10(min(positive)) - 0.5, math.log10(max(positive)) + 0.1


def _log_bar(y: int, which: str, value: float, low: float, high: float, span: int) -> str:
    x0 = 150
    fraction = (math.log10(value) - low) / (high - low) if value > 0 else 0.0
    length = max(fraction * span, 1.0)
    return (f'<rect x="{x0}" y="{y + 4}" width="{length:.1f}" height="11" '
            f'fill="{_BAR_COLOURS[which]}"><title>{which}: {fmt_seconds(value)}</title></rect>'
            f'<text x="{x0 + length + 4:.1f}" y="{y + 13}">{which} {fmt_seconds(value)}</text>')
