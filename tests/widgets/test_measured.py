"""Measured time per kernel in the Timing tab and the Explorer: the slowest kernels with their
share of XLA's execution, a "by time" order, kernels coloured pale to red by time, and one
line saying why when a profile measured nothing."""
from __future__ import annotations

import dataclasses
import re

import pytest
from psc_jit.core import KernelTimes, RunReport, Timings, jit
from psc_jit.widgets.graphs import fused_dot
from psc_jit.widgets.kernel_dot import TIME_HOT, UNMEASURED
from psc_jit.widgets.source import kernel_table_html, source_html
from psc_jit.widgets.summary import report_text
from psc_jit.widgets.timing import timing_html
from widget_records import LOOP_SOURCE, args, cell_function, loop_graph, loop_model

HOT = "#" + "".join(f"{channel:02x}" for channel in TIME_HOT)


def table_rows(html: str) -> list[list[str]]:
    """The cells of each row of the HTML's tables, as text."""
    return [re.findall(r"<td[^>]*>(.*?)</td>", row) for row in re.findall(r"<tr[^>]*>(.*?)</tr>",
                                                                         html)]


def kernel_rows(html: str) -> list[list[str]]:
    """The Timing tab's rows of single kernels: `· name`, its time."""
    return [row for row in table_rows(html) if row and row[0].startswith("· ")
            and row[1].endswith(("execution)", " runs"))]


def measured_loop_report(times: KernelTimes) -> RunReport:
    timings = Timings((1e-3,), (4e-4,), 5e-4, 0.2, 0.0, kernel_times=times)
    return RunReport(name="loop", source=LOOP_SOURCE, filename="<psc_jit cell widgets-test>",
                     line_offset=1, compiled=True, graph=loop_graph(), kernels=loop_model(),
                     signature="c: f64[4]", inputs=("c",), outputs=("r",), timings=timings)


def loop_times() -> KernelTimes:
    return KernelTimes(seconds={"while.1": 3e-4, "body_fusion": 2.5e-4, "neg.2": 2e-5},
                       runs={"while.1": 1, "body_fusion": 10, "neg.2": 1},
                       top_level=("while.1", "neg.2"), execute=4e-4)


@pytest.mark.pure
def test_the_timing_tab_lists_kernels_slowest_first_with_their_share():
    report = measured_loop_report(loop_times())
    assert report.measured is report.timings.kernel_times
    html = timing_html(report)
    assert "3 kernels measured: 320 µs of the 400 µs XLA execution (80%)" in html
    assert kernel_rows(html) == [["· while.1", "300 µs (75% of XLA execution)"],
                                 ["· body_fusion", "250 µs (62% of XLA execution) · 10 runs"],
                                 ["· neg.2", "20 µs (5% of XLA execution)"]]
    assert "slowest kernel: while.1: 300 µs (75% of XLA execution), line 2" in \
        report_text(report)


@pytest.mark.pure
def test_a_profile_that_measured_nothing_says_why_in_one_line():
    note = "not profiled: another psc_jit profile is running"
    report = measured_loop_report(KernelTimes.unavailable(note, 4e-4))
    assert ["kernels (measured)", note] in table_rows(timing_html(report))
    table = kernel_table_html(report)
    assert f"Measured time: {note}" in table and ">measured<" not in table


@pytest.mark.pure
def test_the_kernel_table_sorts_by_measured_time_and_colours_by_it():
    report = measured_loop_report(loop_times())
    table = kernel_table_html(report, sort_by="time", colour_by="time")
    assert ">measured<" in table
    names = re.findall(r"</span>([\w.]+)</td>", table)
    assert names == ["while.1", "body_fusion", "neg.2"]
    assert "250 µs (62%) · 10 runs" in table
    assert f"background:{HOT}" in table                      # the slowest kernel's chip
    source = source_html(report, colour_by="time")
    assert f"background:{HOT}" in source and "(while, 300 µs)" in source


@pytest.mark.pure
def test_the_fused_graph_labels_and_colours_kernels_by_measured_time():
    report = measured_loop_report(dataclasses.replace(loop_times(), seconds={"while.1": 3e-4}))
    dot = fused_dot(report, colour_by="time")
    assert "measured 300 µs" in dot
    assert f'fillcolor="{HOT}"' in dot and f'fillcolor="{UNMEASURED}"' in dot


@pytest.mark.pure
def test_the_explorer_offers_time_order_and_time_colours_only_when_measured():
    ipywidgets = pytest.importorskip("ipywidgets")
    from psc_jit.widgets.explorer import Explorer
    explorer = Explorer(measured_loop_report(loop_times()))
    assert ("by time", "time") in [tuple(o) for o in explorer.sort_by.options]
    explorer.sort_by.value = "time"
    assert [name for _, name in explorer.kernel_select.options][1:] == [
        "while.1", "body_fusion", "neg.2"]
    explorer.colour_by.value = "time"
    assert f"background:{HOT}" in explorer.source.value
    assert "3 kernels measured" in explorer.measured_note.value
    unmeasured = Explorer(measured_loop_report(KernelTimes.unavailable("no profiler")))
    assert "time" not in [value for _, value in unmeasured.sort_by.options]
    assert unmeasured.colour_by.layout.display == "none"
    assert "Measured time: no profiler" in unmeasured.measured_note.value
    assert isinstance(explorer.widget, ipywidgets.VBox)


@pytest.mark.xla
def test_a_real_profiled_call_shows_each_measured_kernel_in_the_timing_tab(report):
    f = jit(cell_function())
    f(*args())
    _, breakdown, times = f.profile_call(*args())
    assert times.available, times.note
    timed = dataclasses.replace(report, kernels=f.last_call.compiled.kernels,
                                timings=dataclasses.replace(report.timings,
                                                            breakdown=breakdown,
                                                            kernel_times=times))
    html = timing_html(timed)
    assert "kernels measured: " in html
    assert {row[0] for row in kernel_rows(html)} == {f"· {name}" for name in times.seconds}
    assert ">measured<" in kernel_table_html(timed, sort_by="time")
