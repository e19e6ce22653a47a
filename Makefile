# psc_jit: make setup | make demo | make lab | make test | make conformance | make fuzz | make lint
# Everything runs from the project's own virtual environment in .venv.

SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
# Written after a successful `pip install -e '.[test,browser]'`; redone when pyproject.toml, setup.py
# or a C module (built in place) changes.
INSTALLED := $(VENV)/.psc_jit-installed
KERNEL_SPEC := $(VENV)/share/jupyter/kernels/python3/kernel.json
WORKLOADS := ../shared/workloads/run.py
# The Array API conformance suite, pinned (see its PROVENANCE.md); examples per test.
ARRAY_API_TESTS := ../shared/array-api-tests
CONFORMANCE_EXAMPLES ?= 5
CONFORMANCE_MODES ?= numpy,compiled,strict
# `make test` runs the suite too (CI), against NumPy and the strict compiled namespace only,
# with this budget, to stay within a few minutes.
TEST_CONFORMANCE_EXAMPLES ?= 3

.PHONY: setup demo lab test conformance lint graphviz chromium compiler fuzz corpus

setup: $(INSTALLED) $(KERNEL_SPEC) graphviz

$(PY):
	$(PYTHON) -m venv $(VENV) || { echo "make setup: '$(PYTHON) -m venv' failed;" \
	  "on Debian/Ubuntu install it with: apt-get install python3-venv" >&2; exit 1; }

$(INSTALLED): pyproject.toml setup.py core/compile/_host_memory.c core/compile/_blas_calls.c \
		core/compile/_host_kernels.c core/compile/_ffi_handler.h \
		core/frontend/_audit_events.c | $(PY) compiler
	$(PY) -m pip install --quiet --disable-pip-version-check -e '.[test,browser]'
	@touch $@

# ipykernel ships a kernelspec named python3 into the venv; install one if it did not.
$(KERNEL_SPEC): | $(INSTALLED)
	$(PY) -m ipykernel install --sys-prefix --name python3

# Install a Debian package with apt-get when its program is missing and we are root; otherwise
# say what it is for and how to install it. $(1): the program, $(2): the package, $(3): why.
define apt_install
	@if command -v $(1) >/dev/null 2>&1 || [ -x /usr/bin/$(1) ]; then exit 0; fi; \
	if command -v apt-get >/dev/null 2>&1 && [ "$$(id -u)" = 0 ]; then \
	  echo "make: installing $(2) with apt-get ($(3))"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(2) >/dev/null; \
	else \
	  echo "make: '$(1)' is missing ($(3))."; \
	  echo "  Install it with: sudo apt-get install $(2)   (Fedora: dnf, macOS: brew install $(2))"; \
	fi
endef

# A C compiler builds the C modules (at install) and the host loops (core/compile/hostloops.py,
# while a program compiles); without one both are left out and loops stay XLA's.
compiler:
	$(call apt_install,cc,gcc,it builds the C modules and the loops that run as C; without it they stay XLA's)

# Graphviz's `dot` draws the Explorer's graphs; everything else works without it.
graphviz:
	$(call apt_install,dot,graphviz,it draws the graph views; without it they say how to get it)

# Debian's Chromium runs the browser test (tests/e2e/test_browser.py, driven by Playwright,
# which never downloads a browser of its own). Without it that test is skipped, or fails in CI.
chromium:
	$(call apt_install,chromium,chromium,for the browser test; without it that test is skipped or fails in CI)

demo: setup
	$(PY) examples/run_notebook.py examples/quickstart.ipynb artifacts/quickstart.ipynb \
	  --html artifacts/quickstart.html

# JupyterLab (from the project's environment) on the example notebooks; it prints the address
# to open (with its token). Ctrl+C stops it.
lab: setup
	$(VENV)/bin/jupyter lab --ServerApp.root_dir=examples $(if $(filter 0,$(shell id -u)),--allow-root)

test: setup chromium
	$(PY) -m pytest -q
	@if [ -d $(ARRAY_API_TESTS) ] || [ -n "$$CI" ]; then \
	  $(MAKE) --no-print-directory conformance CONFORMANCE_EXAMPLES=$(TEST_CONFORMANCE_EXAMPLES) \
	    CONFORMANCE_MODES=numpy,strict; \
	else \
	  echo "== conformance: skipped, the pinned Array API suite is not at $(ARRAY_API_TESTS)" \
	    "(in CI, where CI is set, its absence fails)"; \
	fi
	@# A workload whose outputs disagree with plain Python fails the tests. One that only ran
	@# otherwise than its EXPECT says is told: impure_print expects the whole cell to fall
	@# back at its print, and since issue 29 it compiles around the print as a host step.
	@if [ -f $(WORKLOADS) ]; then \
	  echo "== reference workloads: $(PY) $(WORKLOADS)"; \
	  out=$$($(PY) $(WORKLOADS)); status=$$?; echo "$$out"; \
	  if echo "$$out" | grep -Eq '^[a-z_0-9]+ +[a-z]+ +NO '; then exit 1; fi; \
	  if [ $$status -ne 0 ] && ! echo "$$out" | grep -q 'expected '; then exit $$status; fi; \
	  if [ $$status -ne 0 ]; then echo "== reference workloads: all agree; the ones above" \
	    "marked 'expected ...' ran otherwise than their EXPECT says"; fi; \
	fi

# The suite against NumPy and against psc_jit.array_api (compiled; strict: no NumPy fallback),
# pass counts side by side; fails when a test NumPy passes fails compiled (see the script).
# More examples: make conformance CONFORMANCE_EXAMPLES=50
conformance: setup
	@if [ ! -d $(ARRAY_API_TESTS) ]; then \
	  echo "make conformance: the pinned suite is not at $(ARRAY_API_TESTS)" >&2; exit 1; fi
	$(PY) tests/conformance/array_api_suite.py --suite $(ARRAY_API_TESTS) \
	  --examples $(CONFORMANCE_EXAMPLES) --modes $(CONFORMANCE_MODES)

# Names that a %%psc_jit cell assigns are unknown to ruff in the notebook cells after it.
lint: setup
	$(VENV)/bin/ruff check --extend-per-file-ignores '*.ipynb:F821' .

# Differential fuzzing of whole cells (tests/fuzz): fresh cells for FUZZ_MINUTES minutes, each
# run plain and through %%psc_jit in a worker process; prints cells tried, fallbacks by
# reason and each failure with its minimal cell. Exits 1 when it found a failure.
FUZZ_MINUTES ?= 30
fuzz: setup
	cd tests/fuzz && PSC_HYPOTHESIS_PROFILE=fuzz ../../$(PY) fuzz_main.py --minutes $(FUZZ_MINUTES)

# The notebook corpus (tests/corpus): every cell plain and under %%psc_jit, in worker processes;
# prints cells compiled whole / split / plain, fallback reasons grouped, and each difference.
# Exits 1 when a cell ends differently from plain. CORPUS_ARGS: e.g. --tag random --details
corpus: setup
	$(PY) tests/corpus/report.py $(CORPUS_ARGS)
