"""The Summary tab and the terminal summary: compiled or why not, cache hit or miss and why,
the stages' times, `N primitives → M kernels`, the speed-up, the slowest kernel measured.
The status, cache and fusion phrases are the other tabs' words too."""
from __future__ import annotations

from html import escape

from .markup import table_html
from .units import fmt_seconds, fmt_speedup

__all__ = ["summary_html", "report_text", "summary_items", "status_text", "cache_text", "disk_text",
           "fusion_text"]


def status_text(report) -> str:
    if report.compiled and getattr(report, "split", False):
        return f"compiled around host steps: {report.split_summary()}"
    if report.compiled:
        return "compiled with XLA"
    return f"not compiled, ran as plain Python: {report.fallback_reason or 'no reason given'}"


def cache_text(report) -> str:
    if report.cache_hit:
        return "hit"
    text = f"miss: {report.miss_reason}" if report.miss_reason else "miss"
    disk = disk_text(getattr(report, "from_disk", None))
    return f"{text}; {disk}" if disk else text


def disk_text(from_disk) -> str:
    """"loaded from disk in 3 ms (compiled in 680 ms in an earlier session)", or ""."""
    if from_disk is None:
        return ""
    text = f"loaded from disk in {fmt_seconds(from_disk.load_seconds)}"
    if from_disk.compile_seconds is not None:
        text += f" (compiled in {fmt_seconds(from_disk.compile_seconds)} in an earlier session)"
    return text


def _stages_text(report) -> str:
    return " · ".join(f"{stage} {fmt_seconds(seconds)}"
                      for stage, seconds in report.stage_seconds.items())


def _speedup_text(report) -> str:
    timings = report.timings
    if timings is None:
        return "not timed (run with --compare to time it)"
    return (f"{fmt_speedup(timings.speedup)} (plain {fmt_seconds(timings.plain_median)}, "
            f"compiled {fmt_seconds(timings.compiled_median)})")


def _why_slower(report) -> list[str]:
    """When compiled is slower than plain Python: which part of a call dominates, and what
    would help (from the timed call's breakdown)."""
    timings = report.timings
    if timings is None or timings.breakdown is None or timings.speedup >= 1:
        return []
    advice = timings.breakdown.advice(timings.plain_median)
    return [advice] if advice else []


def _slowest_kernel(report) -> list[str]:
    """`multiply_add_fusion: 263 µs (44% of XLA execution), line 2` from a profiled call."""
    measured = report.measured
    if measured is None or not measured.available or report.kernels is None:
        return []
    name, seconds = measured.slowest(1)[0]
    kernel = next((k for k in report.kernels.all_kernels() if k.name == name), None)
    lines = list(dict.fromkeys(source.line for source in kernel.source_lines
                               if source.file == report.filename)) if kernel else []
    where = f", line{'s' * (len(lines) > 1)} {', '.join(map(str, lines))}" if lines else ""
    return [f"{name}: {fmt_seconds(seconds)} ({measured.share(name):.0%} of XLA execution)"
            f"{where}"]


def summary_items(report) -> list[tuple[str, str]]:
    """(name, plain text) rows shared by the Summary tab and the terminal summary."""
    items = [("status", status_text(report))]
    if report.compiled:
        items += [("cache", cache_text(report))]
    items += [("signature", report.signature)] if report.signature else []
    items += [("stages", _stages_text(report))] if report.stage_seconds else []
    if report.graph is not None:
        items += [("fusion", fusion_text(report))]
    if report.compiled:
        items += [("speed-up", _speedup_text(report))]
        items += [("why slower", why) for why in _why_slower(report)]
        items += [("slowest kernel", text) for text in _slowest_kernel(report)]
    if report.agreement is not None:
        items += [("agreement", f"largest difference {report.agreement:.3g}")]
    items += [("note", note) for note in report.notes]
    return items


def fusion_text(report) -> str:
    """`11 primitives → 5 kernels`."""
    primitives, kernels = report.n_primitives, report.n_kernels
    return (f"{primitives} primitive{'s' * (primitives != 1)} → "
            f"{kernels} kernel{'s' * (kernels != 1)}")


def summary_html(report) -> str:
    colour = "#2e7d32" if report.compiled else "#c62828"
    title = f"{report.name}: {'compiled' if report.compiled else 'fallback'}"
    head = f'<div style="font-weight:bold; color:{colour}; margin:4px 0">{escape(title)}</div>'
    rows = [(f"<b>{escape(name)}</b>", escape(text)) for name, text in summary_items(report)]
    rows += _names_rows(report)
    return head + table_html(None, rows)


def _names_rows(report) -> list[tuple[str, str]]:
    rows = []
    for name, values in (("inputs", report.inputs), ("outputs", report.outputs)):
        if values:
            rows.append((f"<b>{name}</b>", escape(", ".join(values))))
    return rows


def report_text(report) -> str:
    """A plain-text summary for terminal IPython."""
    lines = [f"psc_jit {report.name}"]
    lines += [f"  {name}: {text}" for name, text in summary_items(report)]
    return "\n".join(lines)
