"""The Timing tab and the notebook-wide comparison of `%psc_timings`.

Every figure comes from one measurement: plain and compiled timed in turns (`core.Timings`),
the verdict from their medians and spreads; the parts of a compiled call and each kernel's
time as their shares (from one clocked call and one profiled call) of the compiled median.
The chart comes first, with an axis; the table after it."""
from __future__ import annotations

import math
from html import escape
from typing import Any, Iterable

from .markup import notice_html, paragraph_html, table_html, wrap_html
from .units import fmt_bytes, fmt_count, fmt_seconds

__all__ = ["timing_html", "timing_chart_svg", "breakdown_chart_svg", "timings_overview_html",
           "timings_overview_text", "timings_chart_svg", "latest_timed", "kernel_time_items",
           "rate_text"]


def timing_html(report) -> str:
    """Plain against compiled: the chart, then the verdict, medians and spreads, compile and
    first call, the median call part by part, the kernels, the rates, the differences."""
    timings = report.timings
    if timings is None:
        return notice_html("Not timed: the comparison runs on a cache miss or with --compare.")
    rows = [(escape(name), escape(value)) for name, value in _timing_items(report)]
    return (f'<div class="psc-timing">{timing_chart_svg(timings)}'
            f'{table_html(None, rows, css_class="psc-summary")}</div>')


def _timing_items(report) -> list[tuple[str, str]]:
    timings = report.timings
    items = [("verdict", timings.verdict.text()),
             ("plain Python (median)", _median_text(timings, "plain")),
             ("compiled (median)", _median_text(timings, "compiled")),
             ("compile (trace + lower + XLA)", _compile_text(report)),
             ("first compiled call", fmt_seconds(timings.first_call_seconds))]
    return (items + _breakdown_items(timings) + kernel_time_items(report) + _rate_items(report)
            + _difference_items(timings))


SHOWN_KERNELS = 8


def kernel_time_items(report, shown: int = SHOWN_KERNELS) -> list[tuple[str, str]]:
    """Each fused kernel's part of the compiled median, slowest first (at most `shown`), or
    in one line why no kernel was measured."""
    measured, timings = report.measured, report.timings
    if measured is None:
        return []
    if not measured.available:
        return [("kernels (measured)", measured.describe())]
    items = [("kernels (measured)", f"{len(measured.seconds)} kernels, each as its share of "
                                    "one profiled call, taken of the median")]
    for name, _ in measured.slowest(shown):
        runs = measured.runs.get(name, 1)
        times = f" · {runs:,} runs" if runs != 1 else ""
        items.append((f"· {name}", f"{fmt_seconds(timings.kernel_seconds(name))} "
                                   f"({measured.share(name):.0%} of XLA execution){times}"))
    hidden = len(measured.seconds) - shown
    return items + ([("· …", f"{hidden} more in the Explorer")] if hidden > 0 else [])


def _breakdown_items(timings) -> list[tuple[str, str]]:
    """The median call, part by part (the shares of one clocked call), the inputs copied, and
    why compiled is slower when it is."""
    call = timings.median_call
    if call is None:
        return []
    items = [("the median compiled call", f"{fmt_seconds(call.measured)}, split by one "
                                          "clocked call")]
    for name, seconds in call.parts:
        share = seconds / call.measured if call.measured else 0.0
        items.append((f"· {name}", f"{fmt_seconds(seconds)} ({share:.0%})"))
    items += [("· copied on the way in", copy) for copy in call.copies]
    why = timings.why_slower()
    return items + ([("why it is slower", why)] if why else [])


def _compile_text(report) -> str:
    seconds = report.timings.compile_seconds
    if seconds is None:
        return "none: a cache hit"
    stages = [f"{stage} {fmt_seconds(report.stage_seconds[stage])}"
              for stage in ("trace", "lower", "compile", "load from disk")
              if stage in report.stage_seconds]
    total = fmt_seconds(seconds)
    return f"{total} ({', '.join(stages)})" if stages else total


def _median_text(timings, which: str) -> str:
    median = timings.plain_median if which == "plain" else timings.compiled_median
    low, high = timings.spread(which)
    runs = len(timings.plain_seconds if which == "plain" else timings.compiled_seconds)
    return (f"{fmt_seconds(median)}, middle half {fmt_seconds(low)} – {fmt_seconds(high)} over "
            f"{runs} run{'s' * (runs != 1)}")


def rate_text(amount: float | None, seconds: float, unit: str) -> str:
    """`10 GFLOP/s`, `74.5 GiB/s`, or "" when there is no amount or time."""
    if not amount or not seconds:
        return ""
    return (f"{fmt_bytes(amount / seconds)}/s" if unit == "B"
            else fmt_count(amount / seconds, "FLOP/s"))


def _rate_items(report) -> list[tuple[str, str]]:
    timings, items = report.timings, []
    flops = timings.flops if timings.flops is not None else report.cost.get("flops")
    moved = (timings.bytes_accessed if timings.bytes_accessed is not None
             else report.cost.get("bytes accessed"))
    median = timings.compiled_median
    if flops and median:
        items.append(("achieved FLOP/s", f"{rate_text(flops, median, 'FLOP')} "
                                         f"({fmt_count(flops, 'FLOP')} per run)"))
    elif flops is None and report.kernels is not None and report.kernels.flops is None:
        items.append(("achieved FLOP/s", "unknown: a loop's iterations are known only when it "
                                         "runs"))
    if moved and median:
        items.append(("achieved bytes/s", f"{rate_text(moved, median, 'B')} "
                                          f"({fmt_bytes(moved)} per run)"))
    return items


def _difference_items(timings) -> list[tuple[str, str]]:
    if timings.largest_difference is None:
        return []
    items = [("largest difference", f"{timings.largest_difference:.3g}")]
    return items + [(f"difference in {name}", f"{value:.3g}")
                    for name, value in timings.differences.items()]


# ---------------------------------------------------------------------------------------------
# Charts: bars on a time axis
# ---------------------------------------------------------------------------------------------

_BAR_COLOURS = {"plain": "#9e9e9e", "compiled": "#1e88e5", "first call": "#90caf9"}
_PART_COLOURS = {"Python dispatch": "#fb8c00", "input transfer": "#8e24aa",
                 "XLA execution": "#1e88e5", "output handling": "#43a047"}
_LABEL_WIDTH = 80
_ROW = 22


def timing_chart_svg(timings, width: int = 460) -> str:
    """Horizontal bars on one time axis: plain and compiled medians (whiskers: the middle half
    of their runs) and the first call; then the plain median next to the median compiled call
    stacked part by part, on an axis of its own, with its legend."""
    bars = [("plain", timings.plain_median, timings.spread("plain")),
            ("compiled", timings.compiled_median, timings.spread("compiled")),
            ("first call", timings.first_call_seconds, None)]
    top = max(max((value, *(spread or ()))) for _, value, spread in bars) or 1.0
    scale = (width - _LABEL_WIDTH - 70) / top
    rows = [_bar(i, name, value, spread, scale) for i, (name, value, spread) in enumerate(bars)]
    chart = _svg("psc-chart psc-timing-chart", width, _ROW * len(bars) + 22,
                 "".join(rows) + _axis(_ROW * len(bars) + 2, top, scale))
    parts = f"<div>{breakdown_chart_svg(timings, width)}</div>" if timings.breakdown else ""
    return f'<div class="psc-charts"><div>{chart}</div>{parts}</div>'



def breakdown_chart_svg(timings, width: int = 460) -> str:
    """Plain Python's median against the median compiled call, its parts end to end."""
    call = timings.median_call
    top = max(timings.plain_median, call.measured) or 1.0
    scale = (width - _LABEL_WIDTH - 70) / top
    rows = _bar(0, "plain", timings.plain_median, None, scale) + _stacked_bar(1, call, scale)
    chart = _svg("psc-chart psc-breakdown", width, _ROW * 2 + 22,
                 rows + _axis(_ROW * 2 + 2, top, scale))
    return chart + _legend_html()


def _svg(css_class: str, width: int, height: int, body: str) -> str:
    return (f'<svg class="{css_class}" xmlns="http://www.w3.org/2000/svg" width="{width}" '
            f'height="{height}" font-family="Helvetica,Arial,sans-serif" font-size="11">'
            f"{body}</svg>")


def _legend_html() -> str:
    items = "".join(f'<span><span class="psc-chip" style="background:{colour}"></span>'
                    f"{escape(name)}</span>" for name, colour in _PART_COLOURS.items())
    return f'<div class="psc-legend">{items}</div>'


def _axis(y: int, top: float, scale: float) -> str:
    """A time axis under the bars: a line and about four ticks at round values."""
    step = _round_step(top / 4)
    ticks, value = [], 0.0
    while value <= top * 1.0001:
        x = _LABEL_WIDTH + value * scale
        ticks.append(f'<line class="psc-axis" x1="{x:.1f}" y1="{y}" x2="{x:.1f}" y2="{y + 4}"/>'
                     f'<text x="{x:.1f}" y="{y + 15}" text-anchor="middle">'
                     f"{fmt_seconds(value) if value else '0'}</text>")
        value += step
    end = _LABEL_WIDTH + top * scale
    return (f'<line class="psc-axis" x1="{_LABEL_WIDTH}" y1="{y}" x2="{end:.1f}" y2="{y}"/>'
            + "".join(ticks))


def _round_step(raw: float) -> float:
    """1, 2 or 5 times a power of ten, at least `raw`."""
    if raw <= 0:
        return 1.0
    power = 10 ** math.floor(math.log10(raw))
    return next(m * power for m in (1, 2, 5, 10) if m * power >= raw)


def _stacked_bar(row: int, call, scale: float) -> str:
    """The median call: a bar per part, end to end, each titled with its name and time."""
    y, x = 4 + _ROW * row, float(_LABEL_WIDTH)
    parts = [f'<text x="0" y="{y + 12}">median call</text>']
    for name, seconds in call.parts:
        length = seconds * scale
        parts.append(f'<rect x="{x:.1f}" y="{y}" width="{length:.1f}" height="16" '
                     f'fill="{_PART_COLOURS[name]}"><title>{escape(name)}: '
                     f'{fmt_seconds(seconds)}</title></rect>')
        x += length
    parts.append(f'<text x="{x + 4:.1f}" y="{y + 12}">{fmt_seconds(call.measured)}</text>')
    return "".join(parts)


def _bar(row: int, name: str, value: float, spread, scale: float) -> str:
    y, x0 = 4 + _ROW * row, _LABEL_WIDTH
    length = max(value * scale, 1.0)
    parts = [f'<text x="0" y="{y + 12}">{escape(name)}</text>',
             f'<rect x="{x0}" y="{y}" width="{length:.1f}" height="16" '
             f'fill="{_BAR_COLOURS[name]}"><title>{escape(name)}: {fmt_seconds(value)}</title>'
             "</rect>"]
    if spread is not None:
        low, high = (x0 + s * scale for s in spread)
        parts.append(f'<line class="psc-whisker" x1="{low:.1f}" y1="{y + 8}" x2="{high:.1f}" '
                     f'y2="{y + 8}" stroke-width="1.5"/>')
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


def _comparison_row(report) -> tuple[str, ...]:
    t = report.timings
    compile_text = fmt_seconds(t.compile_seconds) if t.compile_seconds is not None else "hit"
    return (escape(report.name), escape(report.signature), escape(_median_spread(t, "plain")),
            escape(_median_spread(t, "compiled")), compile_text,
            fmt_seconds(t.first_call_seconds), escape(t.verdict.text(versus="")),
            rate_text(t.flops, t.compiled_median, "FLOP"),
            rate_text(t.bytes_accessed, t.compiled_median, "B"))


_COMPARISON_HEADER = ("cell", "signature", "plain median (middle half)",
                      "compiled median (middle half)", "compile", "first call", "verdict",
                      "FLOP/s", "bytes/s")


def timings_overview_html(reports: Iterable[Any]) -> str:
    """One table and one chart comparing every timed cell: what `%psc_timings` shows."""
    timed = latest_timed(reports)
    if not timed:
        return wrap_html(paragraph_html("No timed %%psc_jit cell yet (cells are timed on a "
                                        "cache miss, or with --compare)."))
    table = table_html(_COMPARISON_HEADER, [_comparison_row(r) for r in timed])
    return wrap_html(f'<div class="psc-timings">{timings_chart_svg(timed)}{table}</div>')


def timings_overview_text(reports: Iterable[Any]) -> str:
    timed = latest_timed(reports)
    if not timed:
        return "No timed %%psc_jit cell yet (cells are timed on a cache miss, or with --compare)."
    return "\n".join(f"{r.name}: plain {_median_spread(r.timings, 'plain')}, compiled "
                     f"{_median_spread(r.timings, 'compiled')}, {r.timings.verdict.text()}"
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
    return _svg("psc-chart psc-timings-chart", width, 30 * len(reports) + 4, "".join(rows))


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
