"""Shared fixtures. Markers (pure, xla, ipython, notebook, browser) are in pyproject.toml."""
from __future__ import annotations

import atexit
import os
import shutil
import tempfile

import pytest
from hypothesis import settings

# `make test` (and CI) draws the same examples on every run, so a red run is reproducible and a
# green one is not luck; `make fuzz` draws fresh ones, many more of them.
settings.register_profile("repeatable", derandomize=True, print_blob=True)
settings.register_profile("fuzz", max_examples=2000, deadline=None, print_blob=True)
settings.load_profile(os.environ.get("PSC_HYPOTHESIS_PROFILE", "repeatable"))

# The persistent compile cache is on by default: the tests (and the kernels and shells they
# start, which inherit the environment) keep theirs in a directory of this run, never in the
# user's home.
_CACHE_DIR = tempfile.mkdtemp(prefix="psc_jit-test-cache-")
os.environ["PSC_JIT_CACHE_DIR"] = _CACHE_DIR
atexit.register(shutil.rmtree, _CACHE_DIR, True)

# The tests of what compiled runs do re-run small cells, where plain Python is faster and the
# magic would pick it (by a timing, so by the machine's load): here every run of a cell is
# compiled unless a test turns the pick on (tests/extension/test_magic_picks_faster.py).
os.environ["PSC_JIT_PICK_FASTER"] = "0"

# The suite runs with 4 CPU devices (tests/core/compile/test_devices.py shards over them): a
# program without shardings runs on the first, as it does with one.
os.environ.setdefault("PSC_JIT_CPU_DEVICES", "4")


@pytest.fixture(scope="module")
def compile_cached():
    """compile_stablehlo with one cache per test module, keyed by the StableHLO text: a test
    that runs the same module many times (hypothesis examples) compiles it once."""
    from psc_jit.core.compile.xla import compile_stablehlo
    executables = {}

    def compile_(text, in_avals, out_avals):
        if text not in executables:
            executables[text] = compile_stablehlo(text, in_avals, out_avals)
        return executables[text]
    return compile_


@pytest.fixture
def xla_loops(monkeypatch):
    """Rolled loops stay XLA's `while` loops (no host loops in C, core/compile/hostloops.py):
    for the tests of what XLA makes of a loop."""
    monkeypatch.setenv("PSC_JIT_HOST_LOOPS", "0")
