"""The kernels as a table (costliest first, by estimated bytes or flops or by measured time)
and the cell source with each line in the colour of the kernel(s) it went into: the
Explorer's lists and the Fused section of the HTML report. Highlighted rows have class
`psc_hl`."""
from __future__ import annotations

from html import escape
from typing import Any, Iterable

from .kernel_dot import kernel_colours, lines_text, ops_summary, time_colours
from .markup import chip_html, notice_html, table_html
from .units import fmt_bytes, fmt_count, fmt_seconds

__all__ = ["kernel_table_html", "source_html", "kernels_by_cost", "kernel_cost", "COST_KEYS",
           "report_colours", "measured_times"]


COST_KEYS = {"bytes": lambda k: (k.bytes_estimate, k.flops_estimate),
             "flops": lambda k: (k.flops_estimate, k.bytes_estimate)}


def kernel_cost(kernel) -> tuple[int, int]:
    """Estimated cost: bytes moved first (fused loops on CPU are memory bound), then flops."""
    return COST_KEYS["bytes"](kernel)


def kernels_by_cost(model, sort_by: str = "bytes", measured=None) -> list[Any]:
    """Every kernel (bodies' too), costliest first by estimated bytes or flops, or by
    measured time (`sort_by="time"`, with core's KernelTimes; unmeasured kernels last)."""
    if sort_by == "time":
        def key(kernel):
            seconds = measured.of(kernel.name) if measured is not None else None
            return (-1.0 if seconds is None else seconds, *kernel_cost(kernel))
        return sorted(model.all_kernels(), key=key, reverse=True)
    return sorted(model.all_kernels(), key=COST_KEYS[sort_by], reverse=True)


def measured_times(report):
    """The report's kernel times when a profiled call measured some (else None)."""
    measured = report.measured
    return measured if measured is not None and measured.available else None


def report_colours(report, colour_by: str = "kernel") -> dict[str, str]:
    """Kernel name -> fill: one pastel per kernel, or (`colour_by="time"`, when measured)
    pale to red by measured time."""
    if report.kernels is None:
        return {}
    measured = measured_times(report)
    if colour_by == "time" and measured is not None:
        return time_colours(report.kernels, measured)
    return kernel_colours(report.kernels)


_LIT_ROW = "background:#fff3c4; font-weight:bold; outline:2px solid #d32f2f"


def kernel_table_html(report, sort_by: str = "bytes", highlight: Iterable[str] = (),
                      colour_by: str = "kernel") -> str:
    """The kernels, costliest first: kind, fused ops, shapes, estimated bytes and flops,
    measured time (when a profiled call measured it), lines. Rows of highlighted kernels have
    class `psc_hl`. A timed run whose profile measured nothing says why in one line."""
    if report.kernels is None:
        return notice_html("No kernels.")
    colours, lit = report_colours(report, colour_by), frozenset(highlight)
    measured = measured_times(report)
    rows, attrs = [], []
    for k in kernels_by_cost(report.kernels, sort_by, measured):
        time = (_measured_text(measured, k.name),) if measured is not None else ()
        rows.append((chip_html(colours[k.name], k.name) + escape(k.name), escape(k.kind),
                     escape(ops_summary(k.fused_ops, limit=12)), _shapes_text(k),
                     fmt_bytes(k.bytes_estimate), fmt_count(k.flops_estimate), *time,
                     escape(lines_text(k, report.filename))))
        attrs.append(f'class="psc_hl" style="{_LIT_ROW}"' if k.name in lit else "")
    header = ("kernel", "kind", "fused ops", "shapes (out ← in)", "bytes (est.)",
              "flops (est.)", *(("measured",) if measured is not None else ()), "lines")
    note = report.measured is not None and measured is None
    return (notice_html(f"Measured time: {report.measured.describe()}") if note else "") + \
        table_html(header, rows, attrs)


def _measured_text(measured, name: str) -> str:
    seconds = measured.of(name)
    if seconds is None:
        return "—"
    runs = measured.runs.get(name, 1)
    return (f"{fmt_seconds(seconds)} ({measured.share(name):.0%})"
            + (f" · {runs:,} runs" if runs != 1 else ""))


def _shapes_text(kernel) -> str:
    operands = ", ".join(kernel.operand_shapes)
    return escape(f"{kernel.shape} ← {operands}" if operands else kernel.shape)


def source_html(report, highlight_lines: Iterable[int] = (), colour_by: str = "kernel") -> str:
    """The cell source with line numbers, each line coloured by the kernel(s) it went into
    (one colour per kernel, or by measured time: see `report_colours`).
    Every row has `data-line`; highlighted rows have class `psc_hl` and an outline, and the
    other rows fade while something is highlighted."""
    line_kernels = _cell_line_kernels(report)
    colours = report_colours(report, colour_by)
    lit = frozenset(highlight_lines)
    rows = [_source_row(number, text, line_kernels.get(number, ()), colours, lit)
            for number, text in enumerate(report.source.splitlines(), report.line_offset + 1)]
    code = ('<div class="psc-source" style="font-family:monospace; font-size:12px; '
            f'line-height:1.4; white-space:pre">{"".join(rows)}</div>')
    return code + _legend(report, colours)


def _cell_line_kernels(report) -> dict[int, tuple[str, ...]]:
    if report.kernels is None:
        return {}
    return {line: names for (file, line), names in report.kernels.line_to_kernels().items()
            if file == report.filename}


def _source_row(number: int, text: str, names: tuple[str, ...], colours,
                lit: frozenset[int] = frozenset()) -> str:
    background = colours.get(names[0], "transparent") if names else "transparent"
    chips = "".join(chip_html(colours.get(name, "#eee"), name) for name in names)
    title = f' title="{escape(", ".join(names))}"' if names else ""
    classes, style = "psc-line", f"background:{background}"
    if number in lit:
        classes, style = "psc-line psc_hl", f"{style}; outline:2px solid #d32f2f; font-weight:bold"
    elif lit:
        style += "; opacity:0.45"
    return (f'<div class="{classes}" data-line="{number}" data-kernels="{escape(" ".join(names))}"'
            f'{title} style="{style}">'
            f'<span style="color:#888; display:inline-block; width:3.5em; text-align:right">'
            f'{number}</span> <span style="display:inline-block; width:4em">{chips}</span>'
            f"{escape(text) or ' '}</div>")


def _legend(report, colours: dict[str, str]) -> str:
    if not colours:
        return ""
    kinds = {k.name: k.kind for k in report.kernels.all_kernels()}
    measured = measured_times(report)
    times = {name: f", {fmt_seconds(seconds)}" for name, seconds in measured.seconds.items()} \
        if measured is not None else {}
    items = [f'<span style="margin-right:12px">{chip_html(colour, name)}{escape(name)} '
             f'<span style="color:#777">({escape(kinds[name])}{times.get(name, "")})</span>'
             "</span>" for name, colour in colours.items()]
    return f'<div style="margin-top:6px; font-size:12px">{"".join(items)}</div>'
