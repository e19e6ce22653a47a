"""The kernel table and the cell source coloured by kernel: escaping, order, highlights."""
from __future__ import annotations

import re

import pytest
from psc_jit.core import RunReport
from psc_jit.widgets.kernel_dot import kernel_colours
from psc_jit.widgets.report import report_html
from psc_jit.widgets.source import kernel_table_html, source_html
from widget_records import CELL, fallback_report, loop_model, loop_report


@pytest.mark.pure
def test_source_lines_are_escaped():
    report = RunReport(name="c", source="y = x < 1 & z\n", filename=CELL, line_offset=1,
                       compiled=False, fallback_reason="a <b> & c")
    source = source_html(report)
    assert "y = x &lt; 1 &amp; z" in source and "x < 1 &" not in source
    assert ">2</span>" in source                           # numbered after the magic line
    page = report_html(report)
    assert "a &lt;b&gt; &amp; c" in page and "<b> & c" not in page


@pytest.mark.xla
def test_source_lines_are_coloured_by_their_kernel(report):
    colours = kernel_colours(report.kernels)
    line_kernels = report.kernels.line_to_kernels()
    html = source_html(report)
    rows = re.findall(r'<div class="psc-line"[^>]* style="background:([^"]+)">(.*?)</div>', html)
    tanh_row = next(bg for bg, row in rows if "np.tanh" in row)
    assert tanh_row == colours[line_kernels[(CELL, 2)][0]]
    def_row = next(bg for bg, row in rows if "def f" in row)
    assert def_row == "transparent"
    for name in colours:                                     # the legend names every kernel
        assert f"{name} <span" in html


@pytest.mark.xla
def test_kernel_table_lists_every_kernel_with_cell_lines(report):
    table = kernel_table_html(report)
    kernels = list(report.kernels.all_kernels())
    assert table.count("<tr>") == len(kernels) + 1
    assert CELL not in table and "&lt;psc_jit" not in table  # the cell's lines show as numbers


@pytest.mark.pure
def test_kernel_table_is_sorted_by_estimated_cost():
    report = fallback_report()
    report.kernels = loop_model()
    table = kernel_table_html(report)
    order = [table.index(name) for name in ("neg.2", "body_fusion", "while.1")]
    assert order == sorted(order)                             # 96 B, 64 B, 32 B


@pytest.mark.pure
def test_kernel_table_sorts_by_flops_and_outlines_highlighted_rows():
    table = kernel_table_html(loop_report(), sort_by="flops", highlight=("neg.2",))
    order = [table.index(f"{name}</td>") for name in ("body_fusion", "while.1", "neg.2")]
    assert order == sorted(order)                   # 80 flop (64 B), 80 flop (32 B), 4 flop
    lit = re.findall(r'<tr class="psc_hl"[^>]*>(.*?)</tr>', table)
    assert len(lit) == 1 and "neg.2" in lit[0]
    assert "f64[4] ← f64[4]" in table                            # result and operand shapes


@pytest.mark.pure
def test_source_rows_carry_their_line_and_highlight():
    html = source_html(loop_report(), highlight_lines=(3,))
    rows = re.findall(r'<div class="(psc-line[^"]*)" data-line="(\d+)" data-kernels="([^"]*)"'
                      r'[^>]* style="([^"]*)"', html)
    assert [(line, names) for _, line, names, _ in rows] == [
        ("2", "while.1"), ("3", "body_fusion"), ("4", "neg.2")]
    classes = {line: cls for cls, line, _, _ in rows}
    styles = {line: style for _, line, _, style in rows}
    assert classes == {"2": "psc-line", "3": "psc-line psc_hl", "4": "psc-line"}
    assert "outline:2px solid #d32f2f" in styles["3"] and "opacity" in styles["2"]
    assert "opacity" not in source_html(loop_report())
