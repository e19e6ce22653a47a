"""Driving JupyterLab for the browser tests: a server of the test's own (its settings,
workspace and runtime folders in a temporary directory) on a free localhost port, stopped by
its own process; notebooks opened on a page of their own and run with Run > Run All Cells."""
from __future__ import annotations

import contextlib
import json
import os
import pathlib
import re
import socket
import subprocess
import time
import urllib.error
import urllib.request

import pytest

try:
    from playwright.sync_api import Error as PlaywrightError
except ImportError:         # the browser tests skip, or fail in CI, without Playwright
    PlaywrightError = Exception

ROOT = pathlib.Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
CHROMIUM = os.environ.get("PSC_JIT_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]
SERVER_START_SECONDS = 90
NOTEBOOK_RUN_SECONDS = 300
LAPTOP = {"width": 1440, "height": 900}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def lab_environment(base: pathlib.Path) -> dict[str, str]:
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


def wait_for_server(url: str, server: subprocess.Popen, log: pathlib.Path) -> None:
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


def stop(server: subprocess.Popen) -> None:
    """Stop the server by its own process (it shuts its kernels down on SIGTERM)."""
    if server.poll() is None:
        server.terminate()
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait(timeout=10)


SHOWN = ".jp-NotebookPanel:not(.lm-mod-hidden)"     # the notebook in front


def open_notebook(browser, lab: str, name: str):
    """The notebook `name` on a laptop-sized page of its own, in a workspace of its own."""
    page = browser.new_page(viewport=LAPTOP)
    page.set_default_timeout(60_000)
    workspace = name.removesuffix(".ipynb").replace("_", "-")
    page.goto(f"{lab}/lab/workspaces/{workspace}/tree/{name}?reset")
    page.wait_for_selector(f"{SHOWN} .jp-Notebook .jp-CodeCell")
    accept_kernel_dialog(page)
    return page


def open_and_run(browser, lab: str, name: str):
    """The notebook `name` (a locator of its panel) after Run > Run All Cells has finished."""
    page = open_notebook(browser, lab, name)
    wait_for_kernel_idle(page)
    menu(page, "Run", "Run All Cells")
    page.wait_for_function(ALL_CELLS_RAN, timeout=NOTEBOOK_RUN_SECONDS * 1000, polling=500)
    notebook = page.locator(SHOWN)
    errors = notebook.locator('.jp-OutputArea-output[data-mime-type='
                              '"application/vnd.jupyter.stderr"]').filter(has_text="Traceback")
    assert errors.count() == 0, f"{name}: a cell failed: {errors.first.inner_text()}"
    return notebook


def menu(page, menu: str, item: str) -> None:
    page.locator(".lm-MenuBar-itemLabel", has_text=re.compile(rf"^{menu}$")).click()
    page.locator(".lm-Menu-itemLabel", has_text=re.compile(rf"^{re.escape(item)}$")).click()


def accept_kernel_dialog(page) -> None:
    """JupyterLab may ask which kernel to start (the notebook's own, python3, is offered)."""
    with contextlib.suppress(PlaywrightError):
        page.locator(".jp-Dialog .jp-mod-accept").click(timeout=3_000)


def wait_for_kernel_idle(page) -> None:
    page.wait_for_function("""() => {
        const status = document.querySelector('.jp-Notebook-ExecutionIndicator');
        return status !== null && status.getAttribute('data-status') === 'idle';
    }""", timeout=NOTEBOOK_RUN_SECONDS * 1000, polling=250)


ALL_CELLS_RAN = """() => {
    const prompts = [...document.querySelectorAll(
        '.jp-NotebookPanel:not(.lm-mod-hidden) .jp-CodeCell .jp-InputArea-prompt')];
    const status = document.querySelector('.jp-Notebook-ExecutionIndicator');
    return prompts.length > 0 && prompts.every(p => /\\[\\d+\\]/.test(p.textContent))
        && status !== null && status.getAttribute('data-status') === 'idle';
}"""
