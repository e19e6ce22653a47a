# psc_jit: make setup | make demo | make test | make lint
# Everything runs from the project's own virtual environment in .venv.

SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
# Written after a successful `pip install -e '.[test,browser]'`; redone when pyproject.toml changes.
INSTALLED := $(VENV)/.psc_jit-installed
KERNEL_SPEC := $(VENV)/share/jupyter/kernels/python3/kernel.json
WORKLOADS := ../shared/workloads/run.py

.PHONY: setup demo test lint graphviz chromium

setup: $(INSTALLED) $(KERNEL_SPEC) graphviz

$(PY):
	$(PYTHON) -m venv $(VENV) || { echo "make setup: '$(PYTHON) -m venv' failed;" \
	  "on Debian/Ubuntu install it with: apt-get install python3-venv" >&2; exit 1; }

$(INSTALLED): pyproject.toml | $(PY)
	$(PY) -m pip install --quiet --disable-pip-version-check -e '.[test,browser]'
	@touch $@

# ipykernel ships a kernelspec named python3 into the venv; install one if it did not.
$(KERNEL_SPEC): | $(INSTALLED)
	$(PY) -m ipykernel install --sys-prefix --name python3

# Graphviz's `dot` draws the Graph and Fused tabs; everything else works without it.
graphviz:
	@if command -v dot >/dev/null 2>&1; then exit 0; fi; \
	if command -v apt-get >/dev/null 2>&1 && [ "$$(id -u)" = 0 ]; then \
	  echo "make setup: installing Graphviz (dot) with apt-get"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq graphviz >/dev/null; \
	else \
	  echo "make setup: Graphviz's 'dot' program is not installed, so the Graph and Fused tabs"; \
	  echo "  will show how to install it instead of a drawing. Install it with one of:"; \
	  echo "    sudo apt-get install graphviz    (Debian, Ubuntu)"; \
	  echo "    sudo dnf install graphviz        (Fedora)"; \
	  echo "    brew install graphviz            (macOS)"; \
	fi

# Debian's Chromium runs the browser test (tests/e2e/test_browser.py, driven by Playwright,
# which never downloads a browser of its own). Without it that test is skipped, or fails in CI.
chromium:
	@if [ -x /usr/bin/chromium ]; then exit 0; fi; \
	if command -v apt-get >/dev/null 2>&1 && [ "$$(id -u)" = 0 ]; then \
	  echo "make test: installing Chromium with apt-get for the browser test"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; \
	else \
	  echo "make test: /usr/bin/chromium is missing, so the browser test is skipped here (in CI"; \
	  echo "  it fails). Install it with: sudo apt-get install chromium"; \
	fi

demo: setup
	$(PY) examples/run_notebook.py examples/quickstart.ipynb artifacts/quickstart.ipynb \
	  --html artifacts/quickstart.html

test: setup chromium
	$(PY) -m pytest -q
	@if [ -f $(WORKLOADS) ]; then \
	  echo "== reference workloads: $(PY) $(WORKLOADS)"; \
	  $(PY) $(WORKLOADS); \
	fi

# Names that a %%psc_jit cell assigns are unknown to ruff in the notebook cells after it.
lint: setup
	$(VENV)/bin/ruff check --extend-per-file-ignores '*.ipynb:F821' .
