"""psc_jit's settings, through IPython's configuration system.

    %config PscJit                      lists the settings, their values and help
    %config PscJit.cache_size = 64      sets one for this session

The same traits can be set in an IPython profile (`c.PscJit.timing_budget = 0.5`). A change
takes effect at once: the trait observers hand it to core (`psc_jit.core` never imports IPython,
so the settings live in core as plain values and this class only mirrors them).
"""
from __future__ import annotations

import os

from traitlets import Bool, Float, Int, Unicode, default, observe
from traitlets.config import Configurable

from .core import (DISK_CACHE, EXECUTABLE_CACHE, TRACE_CACHE, align_new_arrays,
                   cpu_device_count, current_budget, keep_freed_memory, set_budget,
                   set_cpu_device_count, XlaError)


class PscJit(Configurable):
    """Settings of the %%psc_jit magic and of psc_jit.jit."""

    cache_size = Int(TRACE_CACHE.maxsize, min=1, help=(
        "How many compiled programs the in-memory caches keep (least recently used are "
        "evicted, and %psc_cache shows evictions).")).tag(config=True)
    timing_budget = Float(1.0, min=0.0, help=(
        "Seconds spent on each side (plain Python, compiled) when a %%psc_jit cell is timed "
        "against plain Python (on a cache miss, or with --compare); 0 times one run of each."
    )).tag(config=True)

    pick_faster = Bool(help=(
        "After a %%psc_jit cell's timed run finds plain Python faster beyond the noise, run "
        "its later runs with that signature as plain Python (the report says so; --force "
        "compiles one run anyway). False: always run compiled. Default: on, unless the "
        "environment has PSC_JIT_PICK_FASTER=0.")).tag(config=True)

    @default("pick_faster")
    def _pick_faster_default(self) -> bool:
        """Read when the settings are made (a shell loads psc_jit), not when psc_jit is
        imported: an environment set after the import still counts."""
        return os.environ.get("PSC_JIT_PICK_FASTER", "1") != "0"

    max_equations = Int(current_budget().max_equations, min=1, help=(
        "The largest program a trace may record, in equations (an unrolled loop counts every "
        "iteration); past it the cell stops with the line and falls back.")).tag(config=True)
    max_compile_seconds = Float(current_budget().max_compile_seconds, min=0.0, help=(
        "A program whose estimated XLA compile time is over this many seconds is refused "
        "before XLA starts (the cell falls back and says why).")).tag(config=True)

    @observe("max_equations", "max_compile_seconds")
    def _budget_changed(self, change) -> None:
        set_budget(**{change["name"]: change["new"]})

    cache_dir = Unicode("", help=(
        "Where compiled programs are kept between sessions ('' : $PSC_JIT_CACHE_DIR, else "
        "$XDG_CACHE_HOME/psc_jit or ~/.cache/psc_jit; 'off' keeps none). The directory is "
        "created private (0700) and refused when others may write to it.")).tag(config=True)
    disk_cache = Bool(True, help=(
        "Keep compiled programs on disk so that a restarted kernel loads them instead of "
        "compiling again (%psc_cache --clear-disk empties it).")).tag(config=True)
    disk_cache_bytes = Int(DISK_CACHE.max_bytes, min=0, help=(
        "The disk cache's size cap in bytes; the least recently used programs are deleted "
        "beyond it.")).tag(config=True)

    @observe("cache_dir", "disk_cache", "disk_cache_bytes")
    def _disk_cache_changed(self, change) -> None:
        DISK_CACHE.configure(self.cache_dir or None, enabled=self.disk_cache,
                             max_bytes=self.disk_cache_bytes)

    align_arrays = Bool(True, help=(
        "Allocate NumPy arrays made after the extension loads 64-byte aligned, so that they go "
        "into compiled cells without a copy (NumPy's own allocator aligns to 16 bytes, and "
        "XLA copies such an input on every call). Arrays made before keep their memory."
    )).tag(config=True)

    @observe("align_arrays")
    def _align_arrays_changed(self, change) -> None:
        align_new_arrays(change["new"])

    kept_freed_memory = Int(1024, min=0, help=(
        "MiB of freed memory the process keeps for reuse (0: none, glibc's default). Large "
        "blocks are then served from malloc's heap instead of fresh mappings, so a compiled "
        "cell whose result is over 32 MiB reuses the memory its last result left, without a "
        "page fault per 4 KiB (a 48 MB result ran 4.7x faster). After each %%psc_jit cell, "
        "freed memory beyond this is given back to the system. glibc only.")
    ).tag(config=True)

    @observe("kept_freed_memory")
    def _kept_freed_memory_changed(self, change) -> None:
        keep_freed_memory(change["new"] << 20)

    cpu_devices = Int(help=(
        "How many CPU devices XLA's client has (psc_jit.devices()): more than one lets "
        "`%%psc_jit --mesh` and sharded `jit` calls partition a program over them. Fixed once "
        "the first program is compiled: set it first (or PSC_JIT_CPU_DEVICES in the "
        "environment), else restart the kernel. Default: PSC_JIT_CPU_DEVICES, else 1.")
    ).tag(config=True)

    @default("cpu_devices")
    def _cpu_devices_default(self) -> int:
        return cpu_device_count()

    @observe("cpu_devices")
    def _cpu_devices_changed(self, change) -> None:
        try:
            set_cpu_device_count(change["new"])
        except (XlaError, ValueError):
            self.cpu_devices = cpu_device_count()     # the setting says what the process has
            raise

    @observe("cache_size")
    def _cache_size_changed(self, change) -> None:
        for cache in (TRACE_CACHE, EXECUTABLE_CACHE):
            cache.resize(change["new"])
