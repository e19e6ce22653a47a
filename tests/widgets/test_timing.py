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
    assert "1 ms, spread 800 µs – 1.4 ms over 3 runs" in html
    assert "100 µs, spread 90 µs – 120 µs over 3 runs" in html
    assert "10× faster than plain Python" in html
    assert "200 ms" in html and "300 µs" in html             # compile, first call
    assert "10 GFLOP/s" in html and "74.5 GiB/s" in html      # 1e6 / 1e-4, 8e6 / 1e-4
    chart = html[html.index("<svg"):]
    assert chart.count("<rect") == 3 and "</svg>" in chart


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
    assert "8 ms (8 ms – 8 ms)" in rows[0] and "4×" in rows[0]   # the later chain run
    assert "500 MFLOP/s" in rows[0] and "954 MiB/s" in rows[0]
    chart = html[html.index("<svg"):]
    assert chart.count("<rect") == 6                              # plain and compiled per cell
    assert "No timed" in timings_overview_html([fallback_report()])
    assert "chain: plain 8 ms" in timings_overview_text(reports)
