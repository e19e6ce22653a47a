"""The cell's lines with their time, and the kernel table: escaping, order, each line's part of
the kernels' time, chips that never cover the code."""
from __future__ import annotations

import re

import pytest
from psc_jit.core import KernelTimes, RunReport, Timings
from psc_jit.widgets.report import report_html
from psc_jit.widgets.source import (CHIPS_SHOWN, kernel_table_html, line_costs, lines_html,
                                    source_html)
from widget_records import CELL, LOOP_SOURCE, fallback_report, loop_graph, loop_model, loop_report

pytestmark = pytest.mark.pure


def measured_loop_report() -> RunReport:
    """The loop, timed: 1 ms plain, 400 µs compiled (the median; all of it XLA execution),
    and a profiled call whose kernels took 300, 250 (in the loop) and 20 µs of 400."""
    times = KernelTimes(seconds={"while.1": 3e-4, "body_fusion": 2.5e-4, "neg.2": 2e-5},
                        runs={"while.1": 1, "body_fusion": 10, "neg.2": 1},
                        top_level=("while.1", "neg.2"), execute=4e-4)
    timings = Timings((1e-3,) * 5, (4e-4,) * 5, 5e-4, 0.2, 0.0, kernel_times=times)
    return RunReport(name="loop", source=LOOP_SOURCE, filename=CELL, line_offset=1,
                     compiled=True, graph=loop_graph(), kernels=loop_model(),
                     signature="c: f64[4]", inputs=("c",), outputs=("r",), timings=timings)


def rows(html: str) -> dict[int, str]:
    return {int(n): row for n, row in re.findall(r'<tr class="psc-line" data-line="(\d+)"'
                                                 r'[^>]*>(.*?)</tr>', html)}


def test_source_lines_are_escaped():
    report = RunReport(name="c", source="y = x < 1 & z\n", filename=CELL, line_offset=1,
                       compiled=False, fallback_reason="a <b> & c")
    source = lines_html(report)
    assert "y = x &lt; 1 &amp; z" in source and "x < 1 &" not in source
    assert '<td class="psc-ln">2</td>' in source           # numbered after the magic line
    page = report_html(report)
    assert "a &lt;b&gt; &amp; c" in page and "<b> & c" not in page


def test_each_line_gets_its_part_of_the_measured_time():
    """The loop's body kernel (250 µs) is line 3's; what the loop took beyond its body
    (50 µs) is line 2's; neg (20 µs) is line 4's."""
    costs, measured = line_costs(measured_loop_report())
    assert measured
    totals = {line: sum(c for _, c in parts) for line, parts in costs.items()}
    assert totals == pytest.approx({2: 50e-6, 3: 250e-6, 4: 20e-6})
    html = lines_html(measured_loop_report())
    by_line = rows(html)
    assert "250 µs · 78%" in by_line[3] and "20 µs · 6%" in by_line[4]
    assert 'style="width:78.1%"' in by_line[3]                     # the bar
    assert "part of the compiled run" in html


def test_without_a_measurement_lines_are_weighed_by_estimated_bytes_and_say_so():
    html = lines_html(loop_report())
    assert "an estimate" in html
    assert "64 B" in rows(html)[3]                                 # body_fusion's bytes


def test_a_line_of_many_kernels_shows_a_few_chips_and_a_count_beside_its_code():
    report = loop_report()
    many = [f"k{i}" for i in range(CHIPS_SHOWN + 3)]
    costs = {3: [(name, 1.0) for name in many]}
    import psc_jit.widgets.source as source
    original = source.line_costs
    source.line_costs = lambda report: (costs, False)
    try:
        row = rows(lines_html(report))[3]
    finally:
        source.line_costs = original
    assert row.count('class="psc-chip"') == CHIPS_SHOWN and ">+3</span>" in row
    cells = re.findall(r'<td class="([\w-]+)"', row)
    assert cells.index("psc-chips") < cells.index("psc-code")      # a column of their own


def test_compact_source_lists_number_chips_and_code():
    html = source_html(loop_report())
    assert "psc-linebar" not in html and 'data-line="3" data-kernels="1"' in html


def test_kernel_table_is_slowest_first_when_measured_with_times_of_the_median():
    table = kernel_table_html(measured_loop_report())
    names = re.findall(r'data-kernel="\d+"[^>]*><td><span[^>]*></span>([\w.]+)</td>', table)
    assert names == ["while.1", "body_fusion", "neg.2"]
    assert "250 µs (44%)" in table                   # 250 of the 570 µs the kernels took
    assert 'data-seconds="0.00025"' in table


def test_kernel_table_is_by_estimated_bytes_without_a_measurement():
    report = fallback_report()
    report.kernels = loop_model()
    table = kernel_table_html(report)
    order = [table.index(f"</span>{name}</td>") for name in ("neg.2", "body_fusion", "while.1")]
    assert order == sorted(order)                             # 96 B, 64 B, 32 B
    assert "f64[4] ← f64[4]" in table and "80 FLOP" in table


def test_a_profile_that_measured_nothing_says_why_in_one_line():
    report = measured_loop_report()
    report.timings = Timings((1e-3,), (4e-4,), 5e-4, 0.2, 0.0,
                             kernel_times=KernelTimes.unavailable("no profiler", 4e-4))
    table = kernel_table_html(report)
    assert "Measured time: no profiler" in table and "time (of the median)" not in table
