"""The Cache tab and the %psc_cache overview."""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
from psc_jit.core import CacheEvent, CacheRecord, RunReport, Signature, StaticLeaf, TracedLeaf
from psc_jit.core.ir import ShapedArray
from psc_jit.widgets.cache import (cache_html, cache_overview_html, cache_overview_text,
                                   entries_table)
from widget_records import CELL, fallback_report


@pytest.mark.pure
def test_cache_tab_lists_entries_misses_and_evictions():
    signature = Signature("s", (TracedLeaf("x", ShapedArray((50, 200), np.float64), "array"),
                                StaticLeaf("n", 3)))
    entry = SimpleNamespace(compile_seconds=0.25)
    report = RunReport(
        name="c", source="", filename=CELL, line_offset=1, compiled=True, cache_hit=False,
        miss_reason="x: f64[300,200] → f64[50,200]",
        cache_entries=(CacheRecord("c", signature, entry, hits=7),),
        cache_events=(CacheEvent("trace", "miss", "c", "first call"),
                      CacheEvent("trace", "miss", "c", "x: f64[300,200] → f64[50,200]"),
                      CacheEvent("trace", "evict", "c", "x: f64[300,200]"),
                      CacheEvent("trace", "hit", "c")))
    html = cache_html(report)
    assert "This run: miss: x: f64[300,200] → f64[50,200]" in html
    assert "x: f64[50,200], n: 3 (static)" in html and "<td" in html and ">7<" in html
    assert "250 ms" in html
    misses = html[html.index("Misses"):html.index("Evictions")]
    assert misses.count("<tr>") == 3 and "first call" in misses
    assert "x: f64[300,200]</td>" in html[html.index("Evictions"):]


@pytest.mark.pure
def test_cache_tab_without_events_says_so():
    html = cache_html(fallback_report())
    assert "No cached entries" in html and "No misses" in html and "No evictions" in html


def _signature(rows: int) -> Signature:
    return Signature("s", (TracedLeaf("x", ShapedArray((rows, 200), np.float64), "array"),))


def _entry(argument=1600, output=8, temp=0, code=0):
    stats = SimpleNamespace(argument_bytes=argument, output_bytes=output, temp_bytes=temp,
                            generated_code_bytes=code)
    return SimpleNamespace(compile_seconds=0.5, memory_stats=lambda: stats)


@pytest.mark.pure
def test_cache_entries_show_their_size():
    table = entries_table([CacheRecord("c", _signature(2), _entry(2048, 1024, 0, 512))])
    assert "3.5 KiB: in 2 KiB, out 1 KiB, temp 0 B, code 512 B" in table
    assert "500 ms" in table
    assert "code" not in entries_table([CacheRecord("c", _signature(2), _entry())])


@pytest.mark.pure
def test_cache_overview_lists_every_cell_since_the_last_clear():
    records = [CacheRecord("layer", _signature(500), _entry(), hits=3),
               CacheRecord("softmax", _signature(9), _entry())]
    events = [CacheEvent("trace", "miss", "old", "before the clear"),
              CacheEvent("trace", "clear", "*"),
              CacheEvent("trace", "miss", "layer", "x: f64[1000,200] → f64[500,200]"),
              CacheEvent("trace", "evict", "softmax", "x: f64[3,200]")]
    counts = {"entries": 2, "hits": 3, "misses": 1, "evictions": 1}
    html = cache_overview_html(records, events, counts)
    assert "2 entries, 3 hits, 1 misses, 1 evictions" in html
    entries = html[html.index("Entries"):html.index("Misses")]
    assert entries.count("<tr>") == 3 and "layer</td>" in entries and ">3<" in entries
    misses = html[html.index("Misses"):html.index("Evictions")]
    assert "x: f64[1000,200] → f64[500,200]" in misses and "before the clear" not in misses
    assert "softmax</td>" in html[html.index("Evictions"):]
    text = cache_overview_text(records, events, counts)
    assert "layer: x: f64[500,200] (3 hits)" in text and "evict softmax: x: f64[3,200]" in text


@pytest.mark.pure
def test_cache_tab_says_a_program_came_from_disk_and_its_earlier_compile_time():
    from psc_jit.core import FromDisk
    report = RunReport(name="c", source="", filename=CELL, line_offset=1, compiled=True,
                       miss_reason="first run of this cell",
                       from_disk=FromDisk(0.003, 0.68, 0.0))
    assert report.loaded_from_disk
    assert ("This run: miss: first run of this cell; loaded from disk in 3 ms (compiled in "
            "680 ms in an earlier session)") in cache_html(report)


@pytest.mark.pure
def test_overview_shows_the_disk_cache_or_why_it_is_off():
    from psc_jit.core.compile.diskcache import DiskUsage
    usage = DiskUsage("/c", True, None, 3, 3 << 20, 1 << 30, 2, 1, 1, 0, 0)
    text = cache_overview_text([], [], {"executables": 2, "executable_maxsize": 9,
                                        "executable_bytes": 0}, usage)
    assert "on disk: /c: 3 entries, 3 MiB of 1 GiB; 2 loaded from disk" in text
    off = DiskUsage("/c", False, "others may write to it", 0, 0, 1 << 30, 0, 0, 0, 0, 0)
    assert "on disk: off (/c): others may write to it" in cache_overview_html([], [], {}, off)


@pytest.mark.pure
def test_a_code_size_xla_does_not_report_is_unknown_not_zero():
    """XLA:CPU reports no code size: the overview said "0 B of code"."""
    counts = {"entries": 1, "hits": 0, "misses": 1, "evictions": 0, "maxsize": 8,
              "executables": 1, "executable_maxsize": 8, "executable_bytes": 0}
    html = cache_overview_html([], [], counts)
    assert "0 B of code" not in html and "code size unknown" in html
    counts["executable_bytes"] = 4096
    assert "4 KiB of code in memory" in cache_overview_html([], [], counts)
