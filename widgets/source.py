"""The kernels as a table (costliest first, by estimated bytes or flops) and the cell source
with each line in the colour of the kernel(s) it went into: the Explorer's lists and the
Fused section of the HTML report. Highlighted rows have class `psc_hl`."""
from __future__ import annotations

from html import escape
from typing import Any, Iterable

from .kernel_dot import kernel_colours, lines_text, ops_summary
from .markup import chip_html, notice_html, table_html
from .units import fmt_bytes, fmt_count

__all__ = ["kernel_table_html", "source_html", "kernels_by_cost", "kernel_cost", "COST_KEYS"]


COST_KEYS = {"bytes": lambda k: (k.bytes_estimate, k.flops_estimate),
             "flops": lambda k: (k.flops_estimate, k.bytes_estimate)}


def kernel_cost(kernel) -> tuple[int, int]:
    """Estimated cost: bytes moved first (fused loops on CPU are memory bound), then flops."""
    return COST_KEYS["bytes"](kernel)


def kernels_by_cost(model, sort_by: str = "bytes") -> list[Any]:
    """Every kernel (bodies' too), costliest first by estimated bytes or flops."""
    return sorted(model.all_kernels(), key=COST_KEYS[sort_by], reverse=True)


_LIT_ROW = "background:#fff3c4; font-weight:bold; outline:2px solid #d32f2f"


def kernel_table_html(report, sort_by: str = "bytes", highlight: Iterable[str] = ()) -> str:
    """The kernels, costliest first: kind, fused ops, shapes, estimated bytes and flops, lines.
    Rows of highlighted kernels have class `psc_hl`."""
    if report.kernels is None:
        return notice_html("No kernels.")
    colours, lit = kernel_colours(report.kernels), frozenset(highlight)
    rows, attrs = [], []
    for k in kernels_by_cost(report.kernels, sort_by):
        rows.append((chip_html(colours[k.name], k.name) + escape(k.name), escape(k.kind),
                     escape(ops_summary(k.fused_ops, limit=12)), _shapes_text(k),
                     fmt_bytes(k.bytes_estimate), fmt_count(k.flops_estimate),
                     escape(lines_text(k, report.filename))))
        attrs.append(f'class="psc_hl" style="{_LIT_ROW}"' if k.name in lit else "")
    header = ("kernel", "kind", "fused ops", "shapes (out ← in)", "bytes (est.)",
              "flops (est.)", "lines")
    return table_html(header, rows, attrs)


def _shapes_text(kernel) -> str:
    operands = ", ".join(kernel.operand_shapes)
    return escape(f"{kernel.shape} ← {operands}" if operands else kernel.shape)


def source_html(report, highlight_lines: Iterable[int] = ()) -> str:
    """The cell source with line numbers, each line coloured by the kernel(s) it went into.
    Every row has `data-line`; highlighted rows have class `psc_hl` and an outline, and the
    other rows fade while something is highlighted."""
    line_kernels = _cell_line_kernels(report)
    colours = kernel_colours(report.kernels) if report.kernels is not None else {}
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
    items = [f'<span style="margin-right:12px">{chip_html(colour, name)}{escape(name)} '
             f'<span style="color:#777">({escape(kinds[name])})</span></span>'
             for name, colour in colours.items()]
    return f'<div style="margin-top:6px; font-size:12px">{"".join(items)}</div>'
