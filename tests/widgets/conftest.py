"""Fixtures of the widget tests: one small cell, traced, compiled and reported."""
from __future__ import annotations

import pytest
from psc_jit.core import CacheEvent, CacheRecord, RunReport, Timings, jit
from widget_records import CELL, SOURCE, args, cell_function


@pytest.fixture(scope="module")
def traced():
    return jit(cell_function()).trace(*args())


@pytest.fixture(scope="module")
def compiled(traced):
    return traced.lower().compile()


@pytest.fixture(scope="module")
def report(traced, compiled):
    signature = traced.spec.signature
    return RunReport(
        name="cell widgets-test", source=SOURCE, filename=CELL, line_offset=0, compiled=True,
        cache_hit=False, miss_reason="first call", graph=traced.graph, kernels=compiled.kernels,
        stablehlo=traced.lower().as_text(), optimized_hlo=compiled.as_text(),
        stage_seconds=compiled.timings, cost=compiled.cost_analysis(),
        timings=Timings((1e-3, 1.2e-3, 0.9e-3), (1e-4, 1.1e-4, 0.9e-4), 2e-4, 0.15, 1e-16),
        inputs=("x", "w"), outputs=("h",), signature=signature.describe(),
        cache_entries=(CacheRecord("cell widgets-test", signature, compiled, hits=2),),
        cache_events=(CacheEvent("trace", "miss", "cell widgets-test", "first call"),))
