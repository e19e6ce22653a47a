"""The explorer, the run view and the progress bar as ipywidgets (no front end needed: the
tests drive the widgets' values as a front end would, and read the HTML they re-render)."""
from __future__ import annotations

import re

import numpy as np
import pytest
from psc_jit.widgets.graphs import ir_dot
from psc_jit.widgets.summary import report_text
from psc_jit.widgets.svg import dot_to_svg
from widget_records import fallback_report, loop_report, needs_dot

ipywidgets = pytest.importorskip("ipywidgets")


def _explorer(report=None):
    from psc_jit.widgets.explorer import Explorer
    return Explorer(report if report is not None else loop_report())


def _lit_lines(explorer) -> list[int]:
    return [int(n) for n in re.findall(r'class="psc-line psc_hl" data-line="(\d+)"',
                                       explorer.source.value)]


def _lit_nodes(pane_html: str) -> int:
    return len(re.findall(r'<g id="\w+" class="(?:node|cluster) psc_hl"', pane_html))


@needs_dot
@pytest.mark.pure
def test_both_graphs_side_by_side_as_svg():
    explorer = _explorer()
    assert "<svg" in explorer.ir_pane.value and "<svg" in explorer.fused_pane.value
    assert explorer.ir_pane.layout.width == explorer.fused_pane.layout.width == "50%"
    assert explorer.ir_pane.value.count('class="node') == 8   # 4 equations, in, out, body's
    assert explorer.fused_pane.value.count('class="cluster') == 3
    assert _lit_lines(explorer) == [] and "Choose a kernel" in explorer.status.value


@needs_dot
@pytest.mark.pure
def test_choosing_a_kernel_in_the_list_highlights_everything_it_holds():
    explorer = _explorer()
    explorer.kernel_select.value = "neg.2"                        # as the front end would
    assert _lit_lines(explorer) == [4]
    assert _lit_nodes(explorer.ir_pane.value) == 1                # e3:neg
    assert _lit_nodes(explorer.fused_pane.value) == 2             # its cluster and its node
    assert explorer.kernel_table.value.count('class="psc_hl"') == 1
    assert "kernel neg.2: 1 equation, 1 kernel, line 4" in explorer.status.value


@needs_dot
@pytest.mark.pure
def test_choosing_a_line_clears_the_kernel_and_highlights_its_kernels():
    explorer = _explorer()
    explorer.kernel_select.value = "neg.2"
    explorer.line_select.value = 3
    assert explorer.kernel_select.value is None
    assert _lit_lines(explorer) == [3]
    assert 'class="cluster psc_hl"' in explorer.fused_pane.value
    assert explorer.highlight.kernels == {"while.1", "body_fusion"}
    explorer.line_select.value = None
    assert not explorer.highlight and _lit_lines(explorer) == []


@pytest.mark.pure
def test_search_selects_and_clears_the_lists():
    explorer = _explorer()
    explorer.line_select.value = 2
    explorer.search.value = "neg"
    assert explorer.line_select.value is None and _lit_lines(explorer) == [4]
    assert explorer.find("line 3").lines == {3}
    assert explorer.search.value == "line 3"


@needs_dot
@pytest.mark.pure
def test_zoom_and_fit_scale_the_drawings():
    explorer = _explorer()
    assert '<svg width="100%"' in explorer.ir_pane.value
    explorer.zoom.value = 200
    assert explorer.fit.value is False
    natural = re.search(r'<svg width="([\d.]+)pt"', dot_to_svg(ir_dot(
        explorer.report)))[1]
    zoomed = re.search(r'<svg width="([\d.]+)pt"', explorer.ir_pane.value)[1]
    assert float(zoomed) == pytest.approx(2 * float(natural), abs=0.1)
    explorer.fit.value = True
    assert '<svg width="100%"' in explorer.ir_pane.value


@needs_dot
@pytest.mark.pure
def test_loops_and_kernels_collapse():
    explorer = _explorer()
    explorer.collapse_loops.value = True
    assert 'class="cluster' not in explorer.ir_pane.value
    assert "2 equations inside" in explorer.ir_pane.value
    explorer.collapse_kernels.value = True
    assert 'class="cluster' not in explorer.fused_pane.value
    assert explorer.fused_pane.value.count('class="node') == 4    # 2 kernels, in, out


@pytest.mark.pure
def test_one_graph_at_a_time():
    explorer = _explorer()
    explorer.view.value = "after fusion"
    assert explorer.ir_pane.layout.display == "none" and explorer.fused_pane.layout.width == "100%"
    explorer.view.value = "before fusion"
    assert explorer.fused_pane.layout.display == "none" and explorer.ir_pane.layout.display is None


@pytest.mark.pure
def test_sorting_by_flops_reorders_the_list_and_keeps_the_choice():
    explorer = _explorer()
    explorer.kernel_select.value = "while.1"
    explorer.sort_by.value = "flops"
    assert [name for _, name in explorer.kernel_select.options][1:] == [
        "body_fusion", "while.1", "neg.2"]
    assert explorer.kernel_select.value == "while.1"


@pytest.mark.pure
def test_without_dot_the_panes_say_how_to_install_it(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))
    explorer = _explorer()
    for pane in (explorer.ir_pane, explorer.fused_pane):
        assert "apt-get install graphviz" in pane.value and "<svg" not in pane.value
    explorer.kernel_select.value = "neg.2"                        # the rest still works
    assert _lit_lines(explorer) == [4]


@pytest.mark.pure
def test_a_fallback_run_explains_instead_of_drawing():
    explorer = _explorer(fallback_report())
    assert "No traced graph" in explorer.ir_pane.value
    assert "No fused kernels" in explorer.fused_pane.value
    assert [value for _, value in explorer.line_select.options] == [None, 2, 3]


# ---------------------------------------------------------------------------------------------
# The run's tabs
# ---------------------------------------------------------------------------------------------

@needs_dot
@pytest.mark.xla
def test_run_view_tabs(report):
    from psc_jit.widgets import RunView
    view = RunView(report)
    assert view.widget.titles == ("Summary", "Explorer", "Cache", "Timing", "Text")
    summary, explorer, cache, timing, text = view.widget.children
    assert explorer is view.explorer.widget
    for child in (summary, cache, timing, text):
        assert isinstance(child, ipywidgets.HTML) and child.value.strip()
    assert "<svg" in view.explorer.ir_pane.value and "<svg" in view.explorer.fused_pane.value
    assert "compiled with XLA" in summary.value and "This run: miss" in cache.value
    bundle = view._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle
    assert bundle["text/plain"] == report_text(report)
    assert "Graph</h3>" in bundle["text/html"]                      # every section, stacked


@pytest.mark.xla
def test_run_view_without_dot_keeps_every_other_tab(report, monkeypatch, tmp_path):
    from psc_jit.widgets import RunView
    monkeypatch.setenv("PATH", str(tmp_path))
    view = RunView(report)
    tabs = dict(zip(view.widget.titles, view.widget.children, strict=True))
    assert "apt-get install graphviz" in view.explorer.ir_pane.value
    assert "Every kernel" in view.explorer.kernel_table.value      # the table needs no Graphviz
    assert "compiled with XLA" in tabs["Summary"].value
    assert "<svg" in tabs["Timing"].value and "<pre" in tabs["Text"].value


# ---------------------------------------------------------------------------------------------
# Progress: the runner calls back, the bar moves
# ---------------------------------------------------------------------------------------------

@pytest.mark.pure
def test_progress_bar_follows_the_stages():
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
    report, _ = runner.run("y = np.sin(x)\n", Options(compare=False))   # no callback: fine
    assert report.compiled
