"""The widgets as a person sees them: JupyterLab in headless Chromium runs the example
notebooks, and the test reads the page.

It starts JupyterLab on a free localhost port (its own settings, workspace and runtime
folders in a temporary directory), opens examples/fusion_explained.ipynb and
examples/cache_behaviour.ipynb there, runs them with Run > Run All Cells, and checks: the
report widget renders; the Explorer's two graphs are SVG with as many nodes and clusters as
the same cell, run through psc_jit in this process, has equations and kernels; choosing a
kernel highlights its source lines and equations, and choosing a line its kernels; node
tooltips carry shape, dtype and line; the Cache tab shows a hit on re-run and a miss with its
reason after a shape change. Screenshots go to artifacts/screenshots/.

Needs `pip install -e '.[browser]'` (JupyterLab, Playwright) and Debian's Chromium at
/usr/bin/chromium (`make test` installs both); never `playwright install`. Without them the
test is skipped, except in CI (CI=true), where it fails.
"""
from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import pathlib
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request

import nbformat
import pytest

try:
    from playwright.sync_api import Error as PlaywrightError
except ImportError:         # browser_requirements skips the tests, or fails them in CI
    PlaywrightError = Exception

pytestmark = pytest.mark.browser

ROOT = pathlib.Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
SCREENSHOTS = ROOT / "artifacts" / "screenshots"
CHROMIUM = os.environ.get("PSC_JIT_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]
SERVER_START_SECONDS = 90
NOTEBOOK_RUN_SECONDS = 300
UPDATE_MS = 30_000          # a widget's re-render after a choice (a kernel round trip + dot)
HIGHLIGHT_OUTLINE = "rgb(211, 47, 47)"


# ---------------------------------------------------------------------------------------------
# What is needed, and what happens without it
# ---------------------------------------------------------------------------------------------

def _missing() -> str | None:
    for module, extra in (("playwright", "browser"), ("jupyterlab", "browser")):
        if importlib.util.find_spec(module) is None:
            return f"{module} is not installed: pip install -e '.[{extra}]'"
    if not os.access(CHROMIUM, os.X_OK):
        return f"no Chromium at {CHROMIUM}: apt-get install chromium (make test does, as root)"
    if shutil.which("dot") is None:
        return "Graphviz's dot is missing: apt-get install graphviz"
    return None


def _in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() in ("1", "true", "yes")


@pytest.fixture(scope="module", autouse=True)
def browser_requirements():
    reason = _missing()
    if reason is not None:
        if _in_ci():
            pytest.fail(f"the browser test must run in CI, but {reason}", pytrace=False)
        pytest.skip(reason)


# ---------------------------------------------------------------------------------------------
# JupyterLab, started and stopped by the test
# ---------------------------------------------------------------------------------------------

def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _lab_environment(base: pathlib.Path) -> dict[str, str]:
    """Folders of the test's own (nothing of the user's Jupyter setup is read or written);
    notebook cells are always all rendered; no news pop-up over the outputs."""
    folders = {name: base / name for name in ("config", "data", "runtime", "settings",
                                             "workspaces")}
    for folder in folders.values():
        folder.mkdir(parents=True, exist_ok=True)
    tracker = folders["settings"] / "@jupyterlab" / "notebook-extension"
    tracker.mkdir(parents=True)
    (tracker / "tracker.jupyterlab-settings").write_text(json.dumps(
        {"windowingMode": "none", "autoStartDefaultKernel": True}))
    labconfig = folders["config"] / "labconfig"
    labconfig.mkdir()
    (labconfig / "page_config.json").write_text(json.dumps(
        {"disabledExtensions": {"@jupyterlab/apputils-extension:announcements": True}}))
    return {**os.environ, "JUPYTER_CONFIG_DIR": str(folders["config"]),
            "JUPYTER_DATA_DIR": str(folders["data"]),
            "JUPYTER_RUNTIME_DIR": str(folders["runtime"]),
            "JUPYTERLAB_SETTINGS_DIR": str(folders["settings"]),
            "JUPYTERLAB_WORKSPACES_DIR": str(folders["workspaces"]),
            "PYTHONUNBUFFERED": "1"}


def _wait_for_server(url: str, server: subprocess.Popen, log: pathlib.Path) -> None:
    deadline = time.monotonic() + SERVER_START_SECONDS
    while time.monotonic() < deadline:
        if server.poll() is not None:
            pytest.fail(f"JupyterLab exited with {server.returncode}:\n{log.read_text()[-3000:]}")
        with contextlib.suppress(urllib.error.URLError, ConnectionError, TimeoutError):
            with urllib.request.urlopen(f"{url}/api/status", timeout=2) as response:
                if response.status == 200:
                    return
        time.sleep(0.5)
    pytest.fail(f"JupyterLab did not answer within {SERVER_START_SECONDS} s:\n"
                f"{log.read_text()[-3000:]}")


def _stop(server: subprocess.Popen) -> None:
    """Stop the server by its own process (it shuts its kernels down on SIGTERM)."""
    if server.poll() is None:
        server.terminate()
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait(timeout=10)


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    """The URL of a JupyterLab serving a folder holding copies of the example notebooks."""
    base = tmp_path_factory.mktemp("lab")
    notebooks = base / "notebooks"
    notebooks.mkdir()
    for name in ("fusion_explained.ipynb", "cache_behaviour.ipynb"):
        shutil.copy(EXAMPLES / name, notebooks / name)
    port = _free_port()
    log = base / "lab.log"
    command = [sys.executable, "-m", "jupyterlab", "--no-browser", "--ServerApp.ip=127.0.0.1",
               f"--port={port}", "--ServerApp.port_retries=0", "--ServerApp.token=",
               "--ServerApp.password=", "--allow-root", f"--ServerApp.root_dir={notebooks}"]
    with open(log, "wb") as output:
        server = subprocess.Popen(command, stdout=output, stderr=subprocess.STDOUT,
                                  env=_lab_environment(base), cwd=notebooks)
    url = f"http://127.0.0.1:{port}"
    try:
        _wait_for_server(url, server, log)
        yield url
    finally:
        _stop(server)


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield chromium
        finally:
            chromium.close()


SHOWN = ".jp-NotebookPanel:not(.lm-mod-hidden)"     # the notebook in front


def _open_and_run(browser, lab: str, name: str):
    """The notebook `name` (a locator of its panel, on a page of its own, in a workspace of
    its own) after Run > Run All Cells has finished."""
    page = browser.new_page(viewport={"width": 1600, "height": 2000})   # a whole widget fits
    page.set_default_timeout(60_000)
    workspace = name.removesuffix(".ipynb").replace("_", "-")
    page.goto(f"{lab}/lab/workspaces/{workspace}/tree/{name}?reset")
    page.wait_for_selector(f"{SHOWN} .jp-Notebook .jp-CodeCell")
    _accept_kernel_dialog(page)
    _wait_for_kernel_idle(page)
    page.locator(".lm-MenuBar-itemLabel", has_text=re.compile(r"^Run$")).click()
    page.locator(".lm-Menu-itemLabel", has_text=re.compile(r"^Run All Cells$")).click()
    page.wait_for_function(_ALL_CELLS_RAN, timeout=NOTEBOOK_RUN_SECONDS * 1000, polling=500)
    notebook = page.locator(SHOWN)
    errors = notebook.locator('.jp-OutputArea-output[data-mime-type='
                              '"application/vnd.jupyter.stderr"]').filter(has_text="Traceback")
    assert errors.count() == 0, f"{name}: a cell failed: {errors.first.inner_text()}"
    return notebook


def _accept_kernel_dialog(page) -> None:
    """JupyterLab may ask which kernel to start (the notebook's own, python3, is offered)."""
    with contextlib.suppress(PlaywrightError):
        page.locator(".jp-Dialog .jp-mod-accept").click(timeout=3_000)


def _wait_for_kernel_idle(page) -> None:
    page.wait_for_function("""() => {
        const status = document.querySelector('.jp-Notebook-ExecutionIndicator');
        return status !== null && status.getAttribute('data-status') === 'idle';
    }""", timeout=NOTEBOOK_RUN_SECONDS * 1000, polling=250)


_ALL_CELLS_RAN = """() => {
    const prompts = [...document.querySelectorAll(
        '.jp-NotebookPanel:not(.lm-mod-hidden) .jp-CodeCell .jp-InputArea-prompt')];
    const status = document.querySelector('.jp-Notebook-ExecutionIndicator');
    return prompts.length > 0 && prompts.every(p => /\\[\\d+\\]/.test(p.textContent))
        && status !== null && status.getAttribute('data-status') === 'idle';
}"""


@pytest.fixture(scope="module")
def fusion_notebook(browser, lab):
    notebook = _open_and_run(browser, lab, "fusion_explained.ipynb")
    yield notebook
    notebook.page.close()


@pytest.fixture(scope="module")
def cache_notebook(browser, lab):
    notebook = _open_and_run(browser, lab, "cache_behaviour.ipynb")
    yield notebook
    notebook.page.close()


# ---------------------------------------------------------------------------------------------
# The same cells, run through psc_jit in this process: what the page should show
# ---------------------------------------------------------------------------------------------

def _code_cells(name: str) -> list[str]:
    notebook = nbformat.read(EXAMPLES / name, as_version=4)
    return [cell.source for cell in notebook.cells if cell.cell_type == "code"]


@pytest.fixture(scope="module")
def reports():
    """The reports of fusion_explained.ipynb's %%psc_jit cells by name, run here through
    psc_jit in a real IPython shell, each with the cells before it."""
    import psc_jit
    from IPython.core.interactiveshell import InteractiveShell
    shell, found = InteractiveShell.instance(), {}
    for source in _code_cells("fusion_explained.ipynb"):
        name = re.match(r"%%psc_jit.*--name (\w+)", source)
        if name:
            first, _, body = source.partition("\n")
            source = f"{first} --quiet --no-compare\n{body}"
        shell.run_cell(source).raise_error()
        if name:
            found[name[1]] = psc_jit.last_report()
    return found


@pytest.fixture(scope="module")
def softmax_report(reports):
    return reports["softmax"]


def _expected_ir_counts(report) -> tuple[int, int]:
    """(nodes, clusters) of the traced graph's drawing: an equation each, inputs and outputs
    (of sub-graphs too), a copy of a many-times-read input per use; a cluster per loop/branch
    equation and per sub-graph."""
    from psc_jit.core.ir import subgraphs
    from psc_jit.widgets.graph_dot import FAN_OUT_LIMIT
    graph = report.graph
    eqns = list(graph.all_eqns())
    subs = [sub for eqn in eqns for sub in subgraphs(eqn)]
    nodes = len(eqns) + len(graph.in_vars) + len(graph.out_atoms)
    nodes += sum(len(sub.in_vars) + len(sub.out_atoms) for sub in subs)
    for var in graph.in_vars:
        readers = [eqn for eqn in eqns if any(a is var for a in eqn.inputs)]
        if len(readers) > FAN_OUT_LIMIT:
            nodes += sum(a is var for eqn in readers for a in eqn.inputs)
    owners = sum(1 for eqn in eqns if subgraphs(eqn))
    return nodes, owners + len(subs)


def _expected_fused_counts(report) -> tuple[int, int]:
    """(nodes, clusters) of the kernels' drawing: a cluster per kernel holding a node per
    equation it fused (or a placeholder), plus the graph's inputs and outputs."""
    from psc_jit.widgets.kernel_dot import kernel_labels
    kernels = list(report.kernels.all_kernels())
    nodes = len(report.graph.in_vars) + len(report.graph.out_atoms)
    for kernel in kernels:
        nested = {label for inner in kernel.body for label in kernel_labels(inner)}
        own = [label for label in kernel_labels(kernel) if label not in nested]
        nodes += len(own) or (0 if kernel.body else 1)
    return nodes, len(kernels)


# ---------------------------------------------------------------------------------------------
# Reading the page
# ---------------------------------------------------------------------------------------------

def _cell(notebook, marker: str, index: int = 0):
    """The code cell whose input contains `marker` (the index-th such cell)."""
    inputs = notebook.locator(".jp-CodeCell").filter(
        has=notebook.page.locator(".jp-InputArea", has_text=marker))
    return inputs.nth(index)


def _open_tab(cell, title: str):
    cell.locator(".psc-run .lm-TabBar-tab", has_text=title).first.click()


def _svg_counts(pane) -> tuple[int, int]:
    svg = pane.locator("svg").first
    return svg.locator("g.node").count(), svg.locator("g.cluster").count()


def _lit_lines(explorer) -> list[int]:
    rows = explorer.locator(".psc-source-pane .psc-line.psc_hl")
    return sorted(int(rows.nth(i).get_attribute("data-line")) for i in range(rows.count()))


def _wait_lit(explorer, expected: list[int]) -> None:
    explorer.page.wait_for_function(
        """([root, wanted]) => {
            const rows = [...root.querySelectorAll('.psc-source-pane .psc-line.psc_hl')];
            const lines = rows.map(r => Number(r.dataset.line)).sort((a, b) => a - b);
            return JSON.stringify(lines) === JSON.stringify(wanted);
        }""", arg=[explorer.element_handle(), expected], timeout=UPDATE_MS)


def _shot(locator, name: str) -> pathlib.Path:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOTS / name
    locator.scroll_into_view_if_needed()
    locator.screenshot(path=str(path))
    return path


# ---------------------------------------------------------------------------------------------
# The explorer
# ---------------------------------------------------------------------------------------------

def test_report_widget_renders_with_its_tabs(fusion_notebook):
    cell = _cell(fusion_notebook, "--name softmax")
    tabs = cell.locator(".psc-run .lm-TabBar-tab")
    assert [tabs.nth(i).inner_text().strip() for i in range(tabs.count())] == [
        "Summary", "Explorer", "Cache", "Timing", "Text"]
    summary = cell.locator(".psc-run .psc-tab-summary")
    assert "compiled with XLA" in summary.inner_text()
    assert fusion_notebook.locator(".psc-progress").count() == 0   # replaced by the reports


def test_timing_tab_compares_plain_and_compiled(fusion_notebook):
    cell = _cell(fusion_notebook, "--name softmax")
    _open_tab(cell, "Timing")
    panel = cell.locator(".psc-timing")
    text = panel.inner_text()
    for part in ("plain Python (median)", "compiled (median)", "compile (trace + lower + XLA)",
                 "first compiled call", "speed-up", "achieved FLOP/s", "achieved bytes/s",
                 "one compiled call", "Python dispatch", "input transfer", "XLA execution",
                 "output handling"):
        assert part in text
    # plain, compiled, first call; then plain next to one call stacked part by part
    assert panel.locator("svg rect").count() == 3 + 1 + 4
    _shot(cell.locator(".psc-run"), "timing_softmax.png")


def test_both_graphs_are_svg_with_the_expected_nodes_and_clusters(fusion_notebook, softmax_report):
    cell = _cell(fusion_notebook, "--name softmax")
    _open_tab(cell, "Explorer")
    explorer = cell.locator(".psc-explorer")
    before, after = explorer.locator(".psc-ir"), explorer.locator(".psc-fused")
    before.locator("svg").first.wait_for()
    after.locator("svg").first.wait_for()
    assert _svg_counts(before) == _expected_ir_counts(softmax_report)
    assert _svg_counts(after) == _expected_fused_counts(softmax_report)
    box_ir, box_fused = before.bounding_box(), after.bounding_box()
    assert box_ir["x"] + box_ir["width"] <= box_fused["x"] + 1      # side by side
    _shot(cell.locator(".psc-run"), "explorer_softmax.png")


def test_node_tooltips_give_shape_dtype_and_source_line(fusion_notebook):
    explorer = _cell(fusion_notebook, "--name softmax").locator(".psc-explorer")
    titles = explorer.locator(".psc-ir svg").first.evaluate(
        """svg => [...svg.querySelectorAll('a')].map(
            a => a.getAttributeNS('http://www.w3.org/1999/xlink', 'title') || '')""")
    exp_title = next(title for title in titles if ":exp" in title)
    assert "shape (256, 1000)" in exp_title and "dtype float64" in exp_title
    assert "line 3: e = np.exp(shifted)" in exp_title


def test_choosing_a_kernel_highlights_its_lines_and_equations(fusion_notebook, softmax_report):
    from psc_jit.widgets.selection import for_kernel, kernel_choices
    explorer = _cell(fusion_notebook, "--name softmax").locator(".psc-explorer")
    assert _lit_lines(explorer) == []
    label, name = next((label, name) for label, name in kernel_choices(softmax_report)
                       if "exponential" in _kernel(softmax_report, name).fused_ops)
    expected = for_kernel(softmax_report, name)
    row = explorer.locator(".psc-source-pane .psc-line").filter(has_text="np.exp(shifted)")
    plain_outline = row.evaluate("r => getComputedStyle(r).outlineColor")

    explorer.locator(".psc-kernel-select select").select_option(value=label)
    _wait_lit(explorer, sorted(expected.lines))
    assert row.evaluate("r => getComputedStyle(r).outlineColor") == HIGHLIGHT_OUTLINE
    assert plain_outline != HIGHLIGHT_OUTLINE
    assert row.evaluate("r => getComputedStyle(r).fontWeight") in ("700", "bold")
    ir_lit = explorer.locator(".psc-ir svg g.node.psc_hl")
    labels_in_graph = set(softmax_report.graph.labels().values()) & expected.labels
    assert ir_lit.count() == len(labels_in_graph) > 0
    assert explorer.locator(".psc-fused svg g.cluster.psc_hl").count() == len(expected.kernels)
    assert explorer.locator(".psc-kernel-table tr.psc_hl").count() == len(expected.kernels)
    assert name in explorer.locator(".psc-status").inner_text()
    _shot(explorer, "explorer_kernel_selected.png")


def test_choosing_a_line_highlights_its_kernels(fusion_notebook, softmax_report):
    from psc_jit.widgets.selection import for_line, line_choices
    explorer = _cell(fusion_notebook, "--name softmax").locator(".psc-explorer")
    label, line = next((label, line) for label, line in line_choices(softmax_report)
                       if "probs" in label)
    expected = for_line(softmax_report, line)
    explorer.locator(".psc-line-select select").select_option(value=label)
    _wait_lit(explorer, [line])
    fused_lit = explorer.locator(".psc-fused svg g.cluster.psc_hl")
    assert fused_lit.count() == len(expected.kernels) > 0
    ir_lit = explorer.locator(".psc-ir svg g.node.psc_hl")
    assert ir_lit.count() == len(expected.labels) > 0
    chosen = explorer.locator(".psc-kernel-select select").input_value()
    assert chosen in ("", "(none)")                            # the kernel choice is cleared
    _shot(explorer, "explorer_line_selected.png")


def test_search_and_zoom(fusion_notebook):
    explorer = _cell(fusion_notebook, "--name softmax").locator(".psc-explorer")
    search = explorer.locator(".psc-search input")
    search.fill("line 2")
    search.press("Enter")
    _wait_lit(explorer, [2])
    svg = explorer.locator(".psc-ir svg").first
    assert svg.get_attribute("width") == "100%"                  # fit width
    explorer.locator(".widget-checkbox", has_text="fit width").locator("input").uncheck()
    fusion_notebook.page.wait_for_function(
        "svg => svg.isConnected === false || svg.getAttribute('width').endsWith('pt')",
        arg=svg.element_handle(), timeout=UPDATE_MS)
    width = explorer.locator(".psc-ir svg").first.get_attribute("width")
    assert width.endswith("pt")


def test_loops_are_clusters_that_collapse(fusion_notebook, reports):
    report = reports["loop"]
    cell = _cell(fusion_notebook, "--name loop")
    _open_tab(cell, "Explorer")
    explorer = cell.locator(".psc-explorer")
    before, after = explorer.locator(".psc-ir"), explorer.locator(".psc-fused")
    after.locator("svg").first.wait_for()
    assert _svg_counts(before) == _expected_ir_counts(report)
    assert _svg_counts(after) == _expected_fused_counts(report)
    assert _expected_ir_counts(report)[1] > 0, "the loop was not rolled into a while_loop"
    _shot(cell.locator(".psc-run"), "explorer_loop.png")
    graph = report.graph
    for box in ("collapse loops", "collapse kernels"):
        explorer.locator(".widget-checkbox", has_text=box).locator("input").check()
    explorer.page.wait_for_function(
        """root => root.querySelectorAll('.psc-ir svg g.cluster, .psc-fused svg g.cluster')
            .length === 0""", arg=explorer.element_handle(), timeout=UPDATE_MS)
    top_level = len(graph.eqns) + len(graph.in_vars) + len(graph.out_atoms)
    assert _svg_counts(before) == (top_level, 0)
    kernels = len(report.kernels.kernels) + len(graph.in_vars) + len(graph.out_atoms)
    assert _svg_counts(after) == (kernels, 0)
    _shot(cell.locator(".psc-run"), "explorer_loop_collapsed.png")


def _kernel(report, name: str):
    return next(k for k in report.kernels.all_kernels() if k.name == name)


# ---------------------------------------------------------------------------------------------
# The cache panel
# ---------------------------------------------------------------------------------------------

def test_cache_panel_shows_a_hit_on_rerun_and_a_miss_with_reason_after_a_shape_change(
        cache_notebook):
    first, again, reshaped = (_cell(cache_notebook, "--name layer", i) for i in range(3))
    for cell in (first, again, reshaped):
        _open_tab(cell, "Cache")
    assert "This run: miss: first run of this cell" in first.locator(".psc-cache").inner_text()
    assert "This run: hit" in again.locator(".psc-cache").inner_text()
    panel = reshaped.locator(".psc-cache")
    text = panel.inner_text()
    assert "This run: miss: x: f64[1000,200] → f64[500,200]" in text
    misses = panel.locator("table").nth(1).inner_text()
    assert "x: f64[1000,200] → f64[500,200]" in misses and "first run of this cell" in misses
    entries = panel.locator("table").first.locator("tbody tr")
    assert entries.count() == 2                                # both shapes are cached
    assert "1" in entries.first.inner_text().split("\t")       # the first entry's hit
    _shot(reshaped.locator(".psc-run"), "cache_miss_after_shape_change.png")


def test_psc_cache_lists_the_whole_notebook(cache_notebook):
    overview = _cell(cache_notebook, "%psc_cache", 0).locator(".psc-cache-overview")
    text = overview.inner_text()
    assert "x: f64[1000,200] → f64[500,200]" in text and "n: 3 → 5 (static)" in text
    assert overview.locator("table").first.locator("tbody tr").count() == 5
