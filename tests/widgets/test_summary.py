"""The Summary tab's words and the terminal summary."""
from __future__ import annotations

import re

import pytest
from psc_jit.core import Timings
from psc_jit.widgets.summary import report_text
from widget_records import CELL, timed_report


@pytest.mark.pure
def test_slower_compiled_run_is_called_slower():
    report = timed_report()
    report.timings = Timings((1e-4,), (2e-4,), 1e-4, 0.1, None)
    assert "2× slower than plain Python" in report_text(report)


@pytest.mark.xla
def test_report_text_summarises_the_run(report):
    text = report_text(report)
    assert "compiled with XLA" in text and "cache: miss: first call" in text
    assert f"{report.n_primitives} primitives → {report.n_kernels} kernels" in text
    assert "10× faster than plain Python" in text
    assert re.search(r"stages: trace [\d.]+ [mµ]?s · lower", text)
    assert "<" not in text.replace(CELL, "")                  # plain text, no markup
