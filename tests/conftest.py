"""Shared fixtures. Markers (pure, xla, ipython, notebook, browser) are in pyproject.toml."""
from __future__ import annotations

import pytest


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
