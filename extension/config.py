"""psc_jit's settings, through IPython's configuration system.

    %config PscJit                      lists the settings, their values and help
    %config PscJit.cache_size = 64      sets one for this session

The same traits can be set in an IPython profile (`c.PscJit.timing_budget = 0.5`). A change
takes effect at once: the trait observers hand it to core (`psc_jit.core` never imports IPython,
so the settings live in core as plain values and this class only mirrors them).
"""
from __future__ import annotations

from traitlets import Float, Int, observe
from traitlets.config import Configurable

from .core import EXECUTABLE_CACHE, TRACE_CACHE, budget


class PscJit(Configurable):
    """Settings of the %%psc_jit magic and of psc_jit.jit."""

    cache_size = Int(TRACE_CACHE.maxsize, min=1, help=(
        "How many compiled programs the in-memory caches keep (least recently used are "
        "evicted, and %psc_cache shows evictions).")).tag(config=True)
    timing_budget = Float(1.0, min=0.0, help=(
        "Seconds spent on each side (plain Python, compiled) when a %%psc_jit cell is timed "
        "against plain Python (on a cache miss, or with --compare); 0 times one run of each."
    )).tag(config=True)

    max_equations = Int(budget.current().max_equations, min=1, help=(
        "The largest program a trace may record, in equations (an unrolled loop counts every "
        "iteration); past it the cell stops with the line and falls back.")).tag(config=True)
    max_compile_seconds = Float(budget.current().max_compile_seconds, min=0.0, help=(
        "A program whose estimated XLA compile time is over this many seconds is refused "
        "before XLA starts (the cell falls back and says why).")).tag(config=True)

    @observe("max_equations", "max_compile_seconds")
    def _budget_changed(self, change) -> None:
        budget.set_budget(**{change["name"]: change["new"]})

    @observe("cache_size")
    def _cache_size_changed(self, change) -> None:
        for cache in (TRACE_CACHE, EXECUTABLE_CACHE):
            cache.resize(change["new"])
