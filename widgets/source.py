"""The cell's lines with the time each one took, and the kernels as a table: the Lines tab, and
the lists of the Explorer.

A line's time is its part of the kernels that hold its operations: each kernel's measured
time (its share of the profiled call, taken of the compiled median: `Timings.kernel_seconds`)
split over the lines its equations came from, by how many of them came from each. A loop's
own time (beyond its body's kernels) goes to the lines of the loop itself. Without a
measurement, the lines are weighed by the kernels' estimated bytes moved, and say so.

Rows carry `data-line` / `data-kernel` for the page's script, which highlights what belongs
together; highlighted rows have class `psc_hl`."""
from __future__ import annotations

from collections import Counter, OrderedDict
from dataclasses import dataclass
from html import escape
from typing import Any, Iterable

from .kernel_dot import (flops_text, kernel_colours, kernel_labels, lines_text, ops_summary,
                         time_colours)
from .markup import chip_html, notice_html, table_html
from .units import fmt_bytes, fmt_seconds

__all__ = ["kernel_table_html", "lines_html", "source_html", "kernels_by_cost", "kernel_cost",
           "COST_KEYS", "report_colours", "measured_times", "kernel_seconds", "line_costs",
           "kernel_index", "CHIPS_SHOWN", "Links", "links", "per_program"]


COST_KEYS = {"bytes": lambda k: (k.bytes_estimate, k.flops or 0.0),
             "flops": lambda k: (k.flops or 0.0, k.bytes_estimate)}


def kernel_cost(kernel) -> tuple[float, float]:
    """Estimated cost: bytes moved first (fused loops on CPU are memory bound), then flops."""
    return COST_KEYS["bytes"](kernel)


def measured_times(report):
    """The report's kernel times when a profiled call measured some (else None)."""
    measured = report.measured
    return measured if measured is not None and measured.available else None


def kernel_seconds(report) -> dict[str, float] | None:
    """Kernel name -> its part of the compiled median (None when nothing was measured)."""
    if measured_times(report) is None:
        return None
    timings = report.timings
    return {name: timings.kernel_seconds(name) for name in report.measured.seconds
            if timings.kernel_seconds(name) is not None}


def kernel_index(report) -> dict[str, int]:
    """Kernel name -> its index in `all_kernels()`: the `psc-k{index}` of the page."""
    if report.kernels is None:
        return {}
    return {kernel.name: i for i, kernel in enumerate(report.kernels.all_kernels())}


def kernels_by_cost(model, sort_by: str = "bytes", seconds: dict[str, float] | None = None
                    ) -> list[Any]:
    """Every kernel (bodies' too), costliest first by estimated bytes or flops, or by
    measured time (`sort_by="time"`; kernels without a time last)."""
    if sort_by == "time":
        def key(kernel):
            taken = (seconds or {}).get(kernel.name)
            return (-1.0 if taken is None else taken, *kernel_cost(kernel))
        return sorted(model.all_kernels(), key=key, reverse=True)
    return sorted(model.all_kernels(), key=COST_KEYS[sort_by], reverse=True)


def report_colours(report, colour_by: str = "kernel") -> dict[str, str]:
    """Kernel name -> fill: one pastel per kernel, or (`colour_by="time"`, when measured)
    pale to red by measured time."""
    if report.kernels is None:
        return {}
    seconds = kernel_seconds(report)
    if colour_by == "time" and seconds is not None:
        return time_colours(report.kernels, seconds)
    return kernel_colours(report.kernels)


# ---------------------------------------------------------------------------------------------
# The kernel table
# ---------------------------------------------------------------------------------------------

def kernel_table_html(report, highlight: Iterable[str] = ()) -> str:
    """Every kernel, slowest first when measured (else by estimated bytes): measured time and
    share, kind, fused ops, shapes, flops (XLA's count), estimated bytes, lines. Each row has
    `data-kernel` (its index) and the sort keys; highlighted rows have class `psc_hl`."""
    if report.kernels is None:
        return notice_html("No kernels.")
    seconds, index = kernel_seconds(report), kernel_index(report)
    colours, lit = kernel_colours(report.kernels), frozenset(highlight)
    total = sum(seconds.values()) if seconds else 0.0
    rows, attrs = [], []
    for k in kernels_by_cost(report.kernels, "time" if seconds else "bytes", seconds):
        taken = (seconds or {}).get(k.name)
        rows.append((chip_html(colours[k.name], k.name) + escape(k.name),
                     _time_cell(taken, total) if seconds is not None else "",
                     escape(k.kind), escape(ops_summary(k.fused_ops, limit=8)),
                     _shapes_text(k), escape(flops_text(k)), fmt_bytes(k.bytes_estimate),
                     escape(lines_text(k, report.filename))))
        attrs.append(_row_attrs(index[k.name], k, taken, k.name in lit))
    header = ("kernel", "time (of the median)" if seconds is not None else "",
              "kind", "fused ops", "shapes (out ← in)", "FLOP", "bytes (est.)", "lines")
    note = "" if seconds is not None or report.measured is None else \
        notice_html(f"Measured time: {report.measured.describe()}")
    return note + table_html(header, rows, attrs, css_class="psc-kernel-table")


def _row_attrs(index: int, kernel, seconds: float | None, lit: bool) -> str:
    keys = (f'data-kernel="{index}" data-seconds="{-1 if seconds is None else seconds:.9g}" '
            f'data-bytes="{kernel.bytes_estimate}" data-flops="{kernel.flops or 0:.9g}"')
    return f'class="psc-krow{" psc_hl" if lit else ""}" {keys}'


def _time_cell(seconds: float | None, total: float) -> str:
    if seconds is None:
        return "—"
    share = seconds / total if total else 0.0
    return f"{_bar_html(share)} {fmt_seconds(seconds)} ({share:.0%})"


def _bar_html(share: float) -> str:
    return (f'<span class="psc-bar"><span style="width:{max(min(share, 1.0), 0.0) * 100:.1f}%">'
            "</span></span>")


def _shapes_text(kernel) -> str:
    operands = ", ".join(kernel.operand_shapes)
    return escape(f"{kernel.shape} ← {operands}" if operands else kernel.shape)


# ---------------------------------------------------------------------------------------------
# Time per line
# ---------------------------------------------------------------------------------------------

def line_costs(report) -> tuple[dict[int, list[tuple[str, float]]], bool]:
    """(line -> [(kernel name, its part of the line's cost)], measured): by measured time
    when there is one, else by estimated bytes (measured False)."""
    if report.kernels is None:
        return {}, False
    seconds = kernel_seconds(report)
    lines: dict[int, Counter[str]] = {}
    for kernel in report.kernels.kernels:
        _spread_kernel(report, kernel, seconds, lines)
    return ({line: sorted(parts.items(), key=lambda part: -part[1])
             for line, parts in lines.items()}, seconds is not None)


def _spread_kernel(report, kernel, seconds, lines: dict[int, Counter]) -> None:
    """A kernel's cost over its lines; a kernel with a body: the body's kernels over theirs,
    and what is left of its own time over its own lines."""
    own = seconds.get(kernel.name, 0.0) if seconds is not None else kernel.bytes_estimate
    if kernel.body:
        for inner in kernel.body:
            _spread_kernel(report, inner, seconds, lines)
        inner_cost = sum(_cost_of(report, k, seconds) for k in kernel.body)
        own = max(own - inner_cost, 0.0) if seconds is not None else 0.0
    weights = _line_weights(report, kernel)
    total = sum(weights.values())
    for line, weight in weights.items():
        lines.setdefault(line, Counter())[kernel.name] += own * weight / total


def _cost_of(report, kernel, seconds) -> float:
    if seconds is None:
        return kernel.bytes_estimate
    return seconds.get(kernel.name, 0.0)


def _line_weights(report, kernel) -> Counter:
    """Cell line -> how many of the kernel's own equations came from it (its source lines,
    one each, when no equation is known)."""
    eqn_lines = _eqn_lines(report)
    nested = {label for inner in kernel.body for label in kernel_labels(inner)}
    weights = Counter(eqn_lines[label] for label in kernel_labels(kernel)
                      if label in eqn_lines and label not in nested)
    if not weights:
        weights = Counter(source.line for source in kernel.source_lines
                          if source.file == report.filename)
    return weights


def _eqn_lines(report) -> dict[str, int]:
    return links(report).eqn_lines


@dataclass(frozen=True)
class Links:
    """How one run's equations, kernels and cell lines point at each other, indexed once
    (what a choice highlights is read from these: `selection`)."""
    eqn_lines: dict[str, int]                   # equation label -> its cell line
    kernels: dict[str, Any]                     # kernel name -> kernel (bodies' too)
    label_kernels: dict[str, tuple[str, ...]]   # equation label -> kernels holding it
    line_labels: dict[int, tuple[str, ...]]     # cell line -> equations traced from it
    line_kernels: dict[int, tuple[str, ...]]    # cell line -> kernels its ops went into


_PER_PROGRAM: OrderedDict[tuple, tuple[Any, Any, Any]] = OrderedDict()
KEPT_PER_PROGRAM = 16


def per_program(report, what: str, make, *key) -> Any:
    """`make(report)`, made once per compiled program (its graph and kernels, by identity)
    and `key`: what a re-run that hits the cache would make again the same (the drawings'
    DOT, the text of its modules, the links between its parts)."""
    full = (what, id(report.graph), id(report.kernels), report.filename, *key)
    found = _PER_PROGRAM.get(full)
    if found is not None and found[0] is report.graph and found[1] is report.kernels:
        _PER_PROGRAM.move_to_end(full)
        return found[2]
    made = make(report)
    _PER_PROGRAM[full] = (report.graph, report.kernels, made)
    while len(_PER_PROGRAM) > KEPT_PER_PROGRAM:
        _PER_PROGRAM.popitem(last=False)
    return made


def links(report) -> Links:
    """The report's `Links` (a page asks for them for every kernel, line and equation)."""
    return per_program(report, "links", _make_links)


def _make_links(report) -> Links:
    eqn_lines: dict[str, int] = {}
    if report.graph is not None:
        labels = report.graph.labels()
        eqn_lines = {labels[eqn.id]: eqn.source.line for eqn in report.graph.all_eqns()
                     if eqn.source is not None and eqn.source.file == report.filename}
    kernels = {k.name: k for k in report.kernels.all_kernels()} if report.kernels else {}
    label_kernels: dict[str, list[str]] = {}
    line_kernels: dict[int, list[str]] = {}
    for kernel in kernels.values():
        for label in kernel_labels(kernel):
            label_kernels.setdefault(label, []).append(kernel.name)
        for source in kernel.source_lines:
            if source.file == report.filename:
                line_kernels.setdefault(source.line, []).append(kernel.name)
    line_labels: dict[int, list[str]] = {}
    for label, line in eqn_lines.items():
        line_labels.setdefault(line, []).append(label)
    return Links(eqn_lines, kernels, _tuples(label_kernels), _tuples(line_labels),
                 _tuples(line_kernels))


def _tuples(index: dict) -> dict:
    return {key: tuple(dict.fromkeys(values)) for key, values in index.items()}


CHIPS_SHOWN = 3


def lines_html(report, compact: bool = False) -> str:
    """The cell, one row per line: its time (or estimated share) with a bar, the kernels it
    went into (CHIPS_SHOWN colour chips, then `+N`), its code. `compact`: number, chips and
    code only (the Explorer's list)."""
    costs, measured = line_costs(report)
    total = sum(cost for parts in costs.values() for _, cost in parts)
    colours, index = kernel_colours(report.kernels) if report.kernels else {}, \
        kernel_index(report)
    rows = []
    for number, text in enumerate(report.source.splitlines(), report.line_offset + 1):
        parts = costs.get(number, [])
        rows.append(_line_row(number, text, parts, total, measured, colours, index, compact))
    head = "" if compact else _lines_head(report, measured, total)
    return (f'{head}<div class="psc-scroll"><table class="psc-lines{" psc-compact" * compact}">'
            f'<tbody>{"".join(rows)}</tbody></table></div>')


def _lines_head(report, measured: bool, total: float) -> str:
    if report.kernels is None:
        return ""
    if measured:
        text = (f"Each line's part of the compiled run's XLA execution ({fmt_seconds(total)} of "
                f"the {fmt_seconds(report.timings.compiled_median)} median call), from the "
                "time each kernel took; click a line to see its kernels in the Explorer.")
    else:
        text = ("Each line's share of the bytes its kernels move (an estimate: a timed run, "
                "--compare, measures time per line).")
    return f'<p class="psc-note">{escape(text)}</p>'


def _line_row(number: int, text: str, parts, total: float, measured: bool, colours, index,
              compact: bool) -> str:
    names = [name for name, _ in parts]
    kernels = " ".join(str(index[name]) for name in names if name in index)
    cost = sum(c for _, c in parts)
    chips = "".join(chip_html(colours.get(name, "#eee"), name) for name in names[:CHIPS_SHOWN])
    if len(names) > CHIPS_SHOWN:
        chips += f'<span class="psc-more" title="{escape(", ".join(names))}">' \
                 f"+{len(names) - CHIPS_SHOWN}</span>"
    cells = [f'<td class="psc-ln">{number}</td>']
    if not compact:
        share = cost / total if total else 0.0
        amount = (fmt_seconds(cost) if measured else fmt_bytes(cost)) if parts else ""
        cells += [f'<td class="psc-linebar">{_bar_html(share) if parts else ""}</td>',
                  f'<td class="psc-linetime">{amount}{f" · {share:.0%}" if parts else ""}</td>']
    cells += [f'<td class="psc-chips">{chips}</td>',
              f'<td class="psc-code">{escape(text) or " "}</td>']
    amount_of = fmt_seconds if measured else fmt_bytes
    title = (f' title="{escape(", ".join(f"{name}: {amount_of(c)}" for name, c in parts))}"'
             if names else "")
    return (f'<tr class="psc-line" data-line="{number}" data-kernels="{kernels}"{title}>'
            f'{"".join(cells)}</tr>')


def source_html(report) -> str:
    """The cell's lines with their kernels (the compact list)."""
    return lines_html(report, compact=True)
