"""The whole report: the one list of tabs, and every section stacked for front ends without
widgets."""
from __future__ import annotations

import pytest
from psc_jit.widgets.graphs import fused_html, graph_html
from psc_jit.widgets.report import EXPLORER, TAB_TITLES, TABS, report_html, report_sections
from psc_jit.widgets.summary import report_text
from widget_records import fallback_report


@pytest.mark.pure
def test_fallback_report_shows_the_reason():
    reason = "line 2: 'print(m)': print() is a side effect; remove it"
    report = fallback_report(reason)
    page = report_html(report)
    assert "ran as plain Python" in page
    assert "line 2: &#x27;print(m)&#x27;: print() is a side effect; remove it" in page
    assert reason in report_text(report)
    assert "No traced graph" in graph_html(report)
    assert "No fused kernels" in fused_html(report)


@pytest.mark.pure
def test_mimebundle_for_front_ends_without_widgets():
    from psc_jit.widgets import mimebundle
    report = fallback_report()
    bundle = mimebundle(report)
    assert set(bundle) == {"text/plain", "text/html"}
    assert bundle["text/plain"] == report_text(report)
    for title in ("Summary", "Graph", "Fused", "Cache", "Timing", "Text"):
        assert f"{title}</h3>" in bundle["text/html"]


@pytest.mark.pure
def test_the_widget_tabs_and_the_report_sections_come_from_one_tab_list():
    pytest.importorskip("ipywidgets")
    from psc_jit.widgets import RunView
    report = fallback_report()
    view = RunView(report)
    assert view.widget.titles == TAB_TITLES == tuple(tab.title for tab in TABS)
    assert [heading for heading, _ in report_sections(report)] == [
        heading for tab in TABS for heading, _ in tab.sections]
    for tab, child in zip(TABS, view.widget.children, strict=True):
        if tab.title == EXPLORER:
            assert child is view.explorer.widget
        else:
            assert child.value == tab.html(report)
    page = report_html(report)
    for tab in TABS:                         # each tab's sections, under their headings
        for heading, render in tab.sections:
            assert f"{heading}</h3>{render(report)}" in page
