"""The head line, the Summary tab's words and the terminal summary."""
from __future__ import annotations

import re

import pytest
from psc_jit.core import RunReport, Timings
from psc_jit.widgets.summary import head_html, report_text, shown_inputs, title_text
from widget_records import CELL, fallback_report, timed_report


@pytest.mark.pure
def test_a_slower_compiled_run_is_called_slower_and_says_why():
    report = timed_report()
    report.timings = Timings((1e-4,) * 5, (2e-4,) * 5, 1e-4, 0.1, None)
    text = report_text(report)
    assert "2× slower than plain Python" in text
    assert "why slower: the compiled median 200 µs is over plain Python's 100 µs" in text


@pytest.mark.pure
def test_equal_medians_are_about_the_same_never_1x_slower():
    report = timed_report()
    report.timings = Timings((1e-4, 1.02e-4, 0.99e-4, 1.01e-4, 1e-4),
                             (1.01e-4, 0.99e-4, 1.0e-4, 1.02e-4, 1e-4), 1e-4, 0.1, None)
    text = report_text(report)
    assert "about the same as plain Python (±" in text
    assert "1× slower" not in text and "why slower" not in text
    assert "about the same as plain Python" in head_html(report)


@pytest.mark.pure
def test_the_title_is_the_cells_name_or_what_it_assigns_never_a_hash():
    report = RunReport(name="cell 3f2a9b1c0d4e", source="mu = x.mean()\n", filename=CELL,
                       line_offset=1, compiled=True, outputs=("mu", "var", "y", "h", "z"))
    assert title_text(report) == "cell assigning mu, var, y, h, …"
    report.name = "softmax"
    assert title_text(report) == "softmax"
    nothing = RunReport(name="cell 3f2a9b1c0d4e", source="\nx.sum()\n", filename=CELL,
                        line_offset=1, compiled=True)
    assert title_text(nothing) == "cell: x.sum()"
    assert "3f2a9b1c" not in report_text(fallback_report())


@pytest.mark.pure
def test_modules_builtins_and_functions_are_not_listed_as_inputs():
    report = RunReport(name="c", source="", filename=CELL, line_offset=1, compiled=True,
                       inputs=("range", "n", "np", "x", "f", "print"),
                       signature="n: 3 (static), np: module numpy (static), x: f64[5], "
                                 "f: function f (static)")
    assert shown_inputs(report) == ("n", "x")
    plain = fallback_report()
    plain.inputs = ("x", "print")
    assert shown_inputs(plain) == ("x",)


@pytest.mark.pure
def test_a_cache_hit_has_no_compile_time():
    report = timed_report()
    report.cache_hit = True
    report.stage_seconds = {"run": 1e-4}
    report.timings = Timings((1e-3,) * 3, (1e-4,) * 3, 1e-4, None, None)
    from psc_jit.widgets.timing import timing_html
    assert "none: a cache hit" in timing_html(report) and "0 ns" not in timing_html(report)
    assert "stages: run 100 µs\n" in report_text(report)


@pytest.mark.xla
def test_report_text_summarises_the_run(report):
    text = report_text(report)
    assert "compiled with XLA" in text and "cache: miss: first call" in text
    assert f"{report.n_primitives} primitives → {report.n_kernels} kernels" in text
    assert "10× faster than plain Python" in text
    assert re.search(r"stages: trace [\d.]+ [mµ]?s · lower", text)
    assert "<" not in text.replace(CELL, "")                  # plain text, no markup
