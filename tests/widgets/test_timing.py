"""The Timing tab and the %psc_timings overview."""
from __future__ import annotations

import re

import pytest
from psc_jit.core import RunReport, Timings
from psc_jit.widgets.timing import timing_html, timings_overview_html, timings_overview_text
from widget_records import CELL, fallback_report, timed_report


@pytest.mark.pure
def test_timing_tab_compares_medians_and_rates():
    html = timing_html(timed_report(flops=1e6, bytes_accessed=8e6))
    assert "1 ms, middle half 800 µs – 1.4 ms over 3 runs" in html
    assert "100 µs, middle half 90 µs – 120 µs over 3 runs" in html
    assert "10× faster than plain Python" in html
    assert "200 ms" in html and "300 µs" in html             # compile, first call
    assert "10 GFLOP/s" in html and "74.5 GiB/s" in html      # 1e6 / 1e-4, 8e6 / 1e-4
    chart = html[html.index("<svg"):html.index("</svg>")]
    assert chart.count("<rect") == 3
    assert html.index("<svg") < html.index("<table")          # the chart first
    ticks = re.findall(r'<text x="[\d.]+" y="\d+" text-anchor="middle">([^<]+)</text>', chart)
    assert ticks == ["0", "500 µs", "1 ms"]                    # an axis, in round steps


@pytest.mark.pure
def test_timing_tab_when_not_timed():
    assert "Not timed" in timing_html(fallback_report())


def _timed(name, signature, plain, compiled):
    return RunReport(name=name, source="", filename=CELL, line_offset=1, compiled=True,
                     signature=signature,
                     timings=Timings((plain,), (compiled,), compiled, 0.1, 0.0, flops=1e6,
                                     bytes_accessed=2e6))


@pytest.mark.pure
def test_timings_overview_compares_the_latest_timing_of_each_cell():
    reports = [_timed("chain", "a: f64[10]", 4e-3, 1e-3), _timed("norms", "a: f64[10]", 2e-3, 1e-3),
               _timed("chain", "a: f64[10]", 8e-3, 2e-3), _timed("chain", "a: f64[5]", 1e-3, 1e-3),
               fallback_report()]
    html = timings_overview_html(reports)
    rows = re.findall(r"<tr>(.*?)</tr>", html[html.index("<tbody>"):])
    assert [re.findall(r">([^<]*)</td>", row)[:2] for row in rows] == [
        ["chain", "a: f64[10]"], ["norms", "a: f64[10]"], ["chain", "a: f64[5]"]]
    assert "8 ms (7.2 ms – 8.8 ms)" in rows[0] and "4× faster<" in rows[0]   # the later run
    assert "500 MFLOP/s" in rows[0] and "954 MiB/s" in rows[0]
    chart = html[html.index("<svg"):]
    assert chart.count("<rect") == 6                              # plain and compiled per cell
    assert "No timed" in timings_overview_html([fallback_report()])
    assert "chain: plain 8 ms" in timings_overview_text(reports)


@pytest.mark.pure
def test_timing_tab_breaks_one_call_into_parts_next_to_plain():
    from psc_jit.core import CallBreakdown
    breakdown = CallBreakdown(6e-5, 3e-4, 5e-5, 1e-5, 4.2e-4,
                              ("x is not 64-byte aligned: 8 MiB copied",))
    report = timed_report(breakdown=breakdown)
    html = timing_html(report)
    # the median (100 µs) split by the shares of the clocked call (420 µs)
    for text in ("the median compiled call", "Python dispatch", "14.3 µs (14%)",
                 "input transfer", "71.4 µs (71%)", "XLA execution", "output handling",
                 "x is not 64-byte aligned: 8 MiB copied"):
        assert text in html
    breakdown_chart = html[html.index('<svg class="psc-chart psc-breakdown"'):]
    breakdown_chart = breakdown_chart[:breakdown_chart.index("</svg>")]
    assert breakdown_chart.count("<rect") == 1 + 4          # plain, the call part by part
    assert "input transfer: 71.4 µs" in breakdown_chart


@pytest.mark.pure
def test_a_slower_call_says_which_part_dominates():
    from psc_jit.core import CallBreakdown
    from psc_jit.widgets.summary import report_text
    report = timed_report(breakdown=CallBreakdown(1.5e-3, 1e-5, 1e-5, 1e-5, 1.53e-3))
    report.timings = Timings((1e-4,), (1.53e-3,), 2e-3, 0.1, 0.0,
                             breakdown=report.timings.breakdown)
    text = report_text(report)
    assert "15.3× slower than plain Python" in text
    assert "why slower: Python dispatch takes 1.5 ms of the 1.53 ms call" in text


@pytest.mark.pure
def test_the_overview_says_slower_in_words():
    html = timings_overview_html([_timed("tiny", "a: f64[3]", 1e-6, 4e-6)])
    assert "4× slower<" in html and "0.25×" not in html
