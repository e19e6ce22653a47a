"""The report's head line and Summary tab, and the terminal summary: compiled or why not, cache
hit or miss and why, the stages' times, `N primitives → M kernels`, the verdict against plain
Python (and why, when compiled is slower), the slowest kernel. Every time is read from the
one timed measurement (`core.Timings`). The status, cache and fusion phrases are the other
tabs' words too."""
from __future__ import annotations

import builtins
import re
from html import escape

from .markup import table_html
from .units import fmt_seconds

__all__ = ["summary_html", "head_html", "report_text", "summary_items", "status_text",
           "cache_text", "disk_text", "fusion_text", "title_text", "verdict_text",
           "shown_inputs"]


def title_text(report) -> str:
    """What the report calls the cell: its --name, else the names it assigns (`cell
    assigning mu, var, y, h`), else its first line."""
    if not report.name.startswith("cell "):
        return report.name
    outputs = [name for name in report.outputs if not name.startswith("_")]
    if outputs:
        shown = ", ".join(outputs[:4]) + (", …" if len(outputs) > 4 else "")
        return f"cell assigning {shown}"
    first = next((line.strip() for line in report.source.splitlines() if line.strip()), "")
    return f"cell: {first[:60]}" if first else report.name


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


def verdict_text(report, versus: str = " than plain Python") -> str:
    """`3.2× faster than plain Python`, `about the same as plain Python (±4%)`, or why the
    cell was not timed."""
    timings = report.timings
    if timings is None:
        return "not timed (run with --compare to time it)"
    return timings.verdict.text(versus)


def _verdict_detail(report) -> str:
    timings = report.timings
    runs = len(timings.compiled_seconds)
    return (f"{verdict_text(report)} (plain {fmt_seconds(timings.plain_median)}, compiled "
            f"{fmt_seconds(timings.compiled_median)}: medians of {runs} run"
            f"{'s' * (runs != 1)} each, timed in turns)")


def _slowest_kernel(report) -> list[str]:
    """`multiply_add_fusion: 103 µs of the 233 µs median (44% of XLA execution), line 2`."""
    timings = report.timings
    measured = report.measured
    if measured is None or not measured.available or report.kernels is None:
        return []
    name = measured.slowest(1)[0][0]
    kernel = next((k for k in report.kernels.all_kernels() if k.name == name), None)
    lines = list(dict.fromkeys(source.line for source in kernel.source_lines
                               if source.file == report.filename)) if kernel else []
    where = f", line{'s' * (len(lines) > 1)} {', '.join(map(str, lines))}" if lines else ""
    return [f"{name}: {fmt_seconds(timings.kernel_seconds(name))} of the "
            f"{fmt_seconds(timings.compiled_median)} median ({measured.share(name):.0%} of XLA "
            f"execution){where}"]


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
        items += [("speed-up", _verdict_detail(report) if report.timings else verdict_text(
            report))]
        why = report.timings.why_slower() if report.timings else None
        items += [("why slower", why)] if why else []
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


def head_html(report) -> str:
    """The line above the tabs: the cell, compiled or not, and the verdict."""
    kind = "psc-ok" if report.compiled else "psc-fallback"
    word = "compiled" if report.compiled else "ran as plain Python"
    parts = [f'<span class="psc-title {kind}">{escape(title_text(report))}: {word}</span>']
    if report.compiled:
        parts.append(f'<span class="psc-dim">cache {escape(cache_text(report))}</span>')
        verdict = verdict_text(report)
        parts.append(f'<span class="psc-verdict">{escape(verdict)}</span>')
    else:
        parts.append(f'<span>{escape(report.fallback_reason or "")}</span>')
    return f'<div class="psc-head">{"".join(parts)}</div>'


def summary_html(report) -> str:
    rows = [(escape(name), escape(text)) for name, text in summary_items(report)]
    rows += _names_rows(report)
    return table_html(None, rows, css_class="psc-summary")


_SIGNATURE_ENTRY = re.compile(r"(?:^|, )([\w.\[\]]+): ")


def shown_inputs(report) -> tuple[str, ...]:
    """The inputs a reader cares about: the values the cell reads from the notebook (those
    of its signature, once compiled), not the builtins, modules and functions it calls
    (`np`, `range`, `print`)."""
    names = [name for name in report.inputs if not hasattr(builtins, name)]
    if not report.signature:
        return tuple(names)
    described = {match[1]: report.signature[match.end():match.end() + 9]
                 for match in _SIGNATURE_ENTRY.finditer(report.signature)}
    return tuple(name for name in names if name in described
                 and not described[name].startswith(("module ", "function")))


def _names_rows(report) -> list[tuple[str, str]]:
    rows = []
    for name, values in (("inputs", shown_inputs(report)), ("outputs", report.outputs)):
        if values:
            rows.append((name, escape(", ".join(values))))
    return rows


def report_text(report) -> str:
    """A plain-text summary for terminal IPython."""
    lines = [f"psc_jit {title_text(report)}"]
    lines += [f"  {name}: {text}" for name, text in summary_items(report)]
    return "\n".join(lines)
