"""Fixtures of the browser tests: the folder JupyterLab serves, the server, and Chromium."""
from __future__ import annotations

import shutil
import subprocess
import sys

import pytest
from lab_session import (CHROMIUM, CHROMIUM_ARGS, EXAMPLES, free_port, lab_environment, stop,
                         wait_for_server)


@pytest.fixture(scope="module")
def lab_folder(tmp_path_factory):
    """The folder JupyterLab serves: copies of the example notebooks."""
    notebooks = tmp_path_factory.mktemp("lab") / "notebooks"
    notebooks.mkdir()
    for name in ("fusion_explained.ipynb", "cache_behaviour.ipynb"):
        shutil.copy(EXAMPLES / name, notebooks / name)
    return notebooks


@pytest.fixture(scope="module")
def lab(lab_folder):
    """The URL of a JupyterLab serving `lab_folder`."""
    base = lab_folder.parent
    port = free_port()
    log = base / "lab.log"
    command = [sys.executable, "-m", "jupyterlab", "--no-browser", "--ServerApp.ip=127.0.0.1",
               f"--port={port}", "--ServerApp.port_retries=0", "--ServerApp.token=",
               "--ServerApp.password=", "--allow-root", f"--ServerApp.root_dir={lab_folder}"]
    with open(log, "wb") as output:
        server = subprocess.Popen(command, stdout=output, stderr=subprocess.STDOUT,
                                  env=lab_environment(base), cwd=lab_folder)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_for_server(url, server, log)
        yield url
    finally:
        stop(server)


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield chromium
        finally:
            chromium.close()
