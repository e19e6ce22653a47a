"""The report as one HTML page: tabs that need no widget (they survive a reopened notebook),
a style sheet of JupyterLab's theme variables (dark mode), the Explorer's drawings laid out
within a time limit, the page's own script and data, and the progress bar."""
from __future__ import annotations

import html
import json
import re

import numpy as np
import pytest
from psc_jit.widgets import mimebundle
from psc_jit.widgets.graphs import report_drawings
from psc_jit.widgets.markup import style_sheet
from psc_jit.widgets.report import TAB_TITLES, report_html
from psc_jit.widgets.summary import report_text
from psc_jit.widgets.svg import DotMissing
from widget_records import fallback_report, loop_report, needs_dot

pytestmark = pytest.mark.pure


def panels(page: str) -> dict[str, str]:
    """Tab title -> its panel's HTML."""
    found = re.findall(r'<div class="psc-panel psc-panel-(\w+)"><h3 class="psc-panel-title">'
                       r"(\w+)</h3>", page)
    starts = [page.index(f'<div class="psc-panel psc-panel-{key}">') for key, _ in found]
    return {title: page[start:end] for (_, title), start, end
            in zip(found, starts, [*starts[1:], len(page)], strict=True)}


def test_the_report_is_html_and_text_with_no_widget_to_lose():
    """Issue 32: a reopened notebook showed "Error displaying widget: model not found"; the
    bundle has nothing that needs a live kernel."""
    report = loop_report()
    bundle = mimebundle(report)
    assert set(bundle) == {"text/plain", "text/html"}
    assert bundle["text/plain"] == report_text(report)
    page = bundle["text/html"]
    assert "widget" not in page.lower().replace("psc-", "")


def test_tabs_are_radio_buttons_and_every_panel_has_its_heading():
    page = report_html(loop_report(), drawings={})
    uid = re.search(r'id="(psc-[0-9a-f]{12})"', page)[1]
    inputs = re.findall(rf'<input type="radio" class="psc-tab-input" name="{uid}-tabs" '
                        rf'id="{uid}-tab(\d)"( checked)?>', page)
    assert [int(i) for i, _ in inputs] == list(range(len(TAB_TITLES)))
    assert [checked for _, checked in inputs].index(" checked") == 0   # Lines first
    labels = re.findall(rf'<label class="psc-tab-label" for="{uid}-tab\d">(\w+)</label>', page)
    assert tuple(labels) == TAB_TITLES == ("Lines", "Summary", "Explorer", "Timing", "Cache",
                                           "Text")
    assert list(panels(page)) == list(TAB_TITLES)       # (headings a page without CSS shows)
    other = report_html(loop_report(), drawings={})
    assert re.search(r'id="(psc-[0-9a-f]{12})"', other)[1] != uid      # ids of its own


def test_a_cell_that_ran_as_plain_python_opens_on_its_summary():
    page = report_html(fallback_report(), drawings={})
    checked = re.search(r'id="psc-\w+-tab(\d)" checked', page)[1]
    assert TAB_TITLES[int(checked)] == "Summary"
    assert "ran as plain Python" in page


def test_text_and_backgrounds_take_the_themes_colours():
    """Issue 32: in the dark theme the table header, chart labels and source lines vanished.
    No text or background colour is set inline; the sheet reads JupyterLab's variables."""
    page = report_html(loop_report(), drawings={})
    inline = re.findall(r'style="([^"]*)"', page)
    for style in inline:
        assert not re.search(r"(?<![-\w])(color|background(-color)?)\s*:", style) or \
            re.fullmatch(r"background:#[0-9a-f]{6}", style), style     # a kernel's chip
    sheet = style_sheet()
    for variable in ("--jp-layout-color0", "--jp-ui-font-color1", "--jp-border-color1",
                     "--jp-layout-color2"):
        assert f"var({variable}," in sheet
    assert "fill: var(--psc-fg)" in sheet                  # chart labels and graph text


def test_the_pages_data_and_script_travel_with_it():
    page = report_html(loop_report(), drawings={})
    data = json.loads(re.search(r'<script type="application/json" class="psc-data">(.*?)'
                                r"</script>", page)[1])
    assert [k["name"] for k in data["kernels"]] == ["while.1", "body_fusion", "neg.2"]
    assert "svg_style" in data
    script = re.findall(r"<script>(.*?)</script>", page, re.S)[-1]
    assert "chooseKernel" in script and "exportAs" in script


def test_script_text_in_the_data_cannot_close_its_element():
    report = loop_report()
    report.name = "</script><b>x</b>"
    page = report_html(report, drawings={})
    data = re.search(r'<script type="application/json" class="psc-data">(.*?)</script>', page)[1]
    assert json.loads(data)["name"] == "</script><b>x</b>"


@needs_dot
def test_the_explorer_opens_on_the_kernels_with_the_traced_graph_a_click_away():
    report = loop_report()
    explorer = html.unescape(panels(report_html(report))["Explorer"])   # (Graphviz writes &#45;)
    kernels = explorer[explorer.index('data-view="kernels"'):explorer.index('data-view="graph"')]
    assert kernels.count('class="node psc-kernel psc-k') == 3 and "hidden" not in \
        kernels[:kernels.index(">")]
    graph = explorer[explorer.index('data-view="graph"'):]
    assert graph[:graph.index(">")].endswith("hidden")               # one drawing at first
    assert 'class="node psc-eq psc-k' in graph
    for control in ('data-psc="view"', 'data-psc="zoom"', 'class="psc-search"',
                    'data-value="html"', 'data-value="svg"'):
        assert control in explorer


def test_without_dot_the_drawings_say_how_to_get_it_and_the_rest_stays(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))
    explorer = panels(report_html(loop_report()))["Explorer"]
    assert "apt-get install graphviz" in explorer and "<svg" not in explorer
    assert "psc-kernel-table" in explorer and "psc-lines" in explorer


def test_a_drawing_past_the_time_limit_gives_way_to_a_simpler_view():
    slow = DotMissing(hint="Graphviz took longer than 4 s to lay out this graph")
    explorer = html.unescape(panels(report_html(loop_report(), drawings={
        "kernels": slow, "graph": slow}))["Explorer"])
    assert "took longer than 4 s to lay out this graph; shown instead: the kernels' drawing" \
        in explorer
    assert "psc-kernel-table" in explorer                 # the simpler view: the table


@needs_dot
def test_a_hit_rerun_reuses_the_layouts(monkeypatch):
    import psc_jit.widgets.svg as svg
    report = loop_report()
    report.source += "# layouts reused\n"
    report_drawings(report)
    calls = []
    monkeypatch.setattr(svg, "_pipe_svg", lambda *args: calls.append(args) or "<svg/>")
    again = report_drawings(report)
    assert calls == [] and all(d.startswith("<svg") for d in again.values())


def test_progress_bar_follows_the_stages():
    pytest.importorskip("ipywidgets")
    from psc_jit.widgets import ProgressView
    progress = ProgressView(("compile", "run", "time"))
    progress("run")
    assert (progress.bar.value, progress.bar.max, progress.label.value) == (1, 3, "run …")
    progress("something else")                                    # unknown: label only
    assert progress.bar.value == 1 and progress.label.value == "something else …"
    progress.finish()
    assert progress.bar.value == 3 and progress.bar.bar_style == "success"
    progress.finish("stopped", failed=True)
    assert progress.bar.bar_style == "danger" and progress.label.value == "stopped"


@pytest.mark.xla
def test_the_runner_reports_each_stage_it_runs():
    from psc_jit.runner import PROGRESS_STAGES, CellRunner, Options
    runner = CellRunner({"np": np, "x": np.ones(8)})
    seen: list[str] = []
    runner.run("y = np.sin(x) * 2.0\n", Options(compare=True, budget=0.01), progress=seen.append)
    assert seen == list(PROGRESS_STAGES)
    seen.clear()
    runner.run("y = np.sin(x) * 2.0\n", Options(compare=False), progress=seen.append)
    assert seen == ["run"]                                        # a cache hit only runs
