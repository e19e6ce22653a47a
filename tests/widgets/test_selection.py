"""What the explorer highlights for a chosen kernel, line or search (pure)."""
from __future__ import annotations

import pytest
from psc_jit.widgets.selection import Highlight, for_kernel, for_line, for_query, page_data
from widget_records import CELL, fallback_report, loop_report

pytestmark = pytest.mark.pure


def test_a_kernel_lights_its_body_its_equations_and_their_lines():
    lit = for_kernel(loop_report(), "while.1")
    assert lit.kernels == {"while.1", "body_fusion"}
    assert lit.labels == {"e0:while_loop", "e1:sin", "e2:multiply"}
    assert lit.lines == {2, 3}
    assert lit.describe() == "kernel while.1: 3 equations, 2 kernels, lines 2, 3"


def test_a_kernel_that_is_not_there_lights_nothing():
    lit = for_kernel(loop_report(), "nope")
    assert not lit and "not in this run" in lit.text


def test_a_line_lights_its_equations_and_the_kernels_they_went_into():
    lit = for_line(loop_report(), 3)
    assert lit.labels == {"e1:sin", "e2:multiply"}
    assert lit.kernels == {"while.1", "body_fusion"}       # both hold e1 and e2
    assert lit.lines == {3}
    assert for_line(loop_report(), 4).kernels == {"neg.2"}
    assert not for_line(loop_report(), 99).kernels


def test_search_by_line_number_or_name():
    report = loop_report()
    assert for_query(report, "line 4") == for_line(report, 4)
    assert for_query(report, " 3 ") == for_line(report, 3)
    sin = for_query(report, "SIN")
    assert {"e1:sin"} <= sin.labels and sin.lines >= {3}
    assert "e1:sin" in for_query(report, "e1").labels and "e3:neg" not in for_query(report, "e1").labels
    negate = for_query(report, "negate")                    # a kernel's kind
    assert negate.kernels == {"neg.2"} and negate.labels == {"e3:neg"}
    assert not for_query(report, "") and not for_query(report, "no such thing")


def test_highlights_combine():
    both = Highlight(frozenset({"a"}), lines=frozenset({1}), text="x") | Highlight(
        kernels=frozenset({"k"}), lines=frozenset({2}))
    assert both == Highlight(frozenset({"a"}), frozenset({"k"}), frozenset({1, 2}), "x")


def test_the_pages_data_holds_the_same_highlights_for_the_browser():
    report = loop_report()
    data = page_data(report)
    names = [kernel["name"] for kernel in data["kernels"]]
    assert names == ["while.1", "body_fusion", "neg.2"]          # all_kernels() order
    loop = data["kernels"][0]
    assert loop["kernels"] == [0, 1] and loop["nodes"] == ["e0", "e1", "e2"]
    assert loop["lines"] == [2, 3] and loop["words"][:2] == ["while.1", "while"]
    assert data["lines"]["3"] == {"kernels": [0, 1], "nodes": ["e1", "e2"], "lines": [3]}
    assert data["nodes"]["e3"] == {"label": "e3:neg", "kernels": [2], "nodes": ["e3"],
                                   "lines": [4]}
    assert loop["time"] is None                                  # not timed


def test_a_fallback_report_offers_lines_but_no_kernels():
    report = fallback_report()
    assert page_data(report)["kernels"] == []
    assert for_line(report, 2) == Highlight(lines=frozenset({2}), text="line 2")
    assert CELL == report.filename
