"""The Cache tab (this run's hit or miss, this cell's entries, misses and evictions) and the
session-wide overview of `%psc_cache` (every cell's and function's entries since the last
clear), as HTML and as text."""
from __future__ import annotations

import time
from html import escape
from typing import Any, Iterable

from .markup import paragraph_html, section_html, table_html, wrap_html
from .summary import cache_text
from .units import fmt_bytes, fmt_seconds

__all__ = ["cache_html", "cache_overview_html", "cache_overview_text", "entries_table",
           "events_table", "disk_usage_text"]


def _entry_compile_seconds(entry) -> float | None:
    seconds = getattr(entry, "compile_seconds", None)
    if seconds is None and getattr(entry, "compiled", None) is not None:
        seconds = getattr(entry.compiled, "compile_seconds", None)
    return seconds


def _entry_size(entry) -> str:
    """The memory a cached program runs in (`1.55 MiB: in 1.53 MiB, out 7.8 KiB, temp 8 KiB`,
    and its code when XLA says), or "" when the entry does not say."""
    memory_stats = getattr(entry, "memory_stats", None)
    if memory_stats is None:
        return ""
    try:
        stats = memory_stats()
    except (RuntimeError, ValueError, AttributeError):
        return ""
    parts = {"in": stats.argument_bytes, "out": stats.output_bytes, "temp": stats.temp_bytes,
             "code": stats.generated_code_bytes}
    total = fmt_bytes(sum(parts.values()))
    return f"{total}: " + ", ".join(f"{name} {fmt_bytes(size)}" for name, size in parts.items()
                                     if size or name != "code")


def _clock(timestamp: float) -> str:
    return time.strftime("%H:%M:%S", time.localtime(timestamp))


def cache_html(report) -> str:
    """This run's hit or miss, every cached entry of this cell, every miss, every eviction."""
    this_run = paragraph_html(f"This run: {cache_text(report)}" if report.compiled
                              else "This run did not use the cache (it ran as plain Python).")
    return ('<div class="psc-cache">' + this_run
            + section_html("Entries", entries_table(report.cache_entries))
            + section_html("Misses", events_table(report.cache_events, "miss", "reason")
                           or paragraph_html("No misses recorded."))
            + section_html("Evictions", events_table(report.cache_events, "evict", "signature")
                           or paragraph_html("No evictions.")) + "</div>")


_ENTRY_HEADER = ("signature", "hits", "compile time", "size", "created")


def entries_table(records: Iterable[Any], with_owner: bool = False) -> str:
    """One row per cache entry: (owner,) signature, hits, compile time, size, creation time."""
    rows = []
    for record in records:
        seconds = _entry_compile_seconds(record.entry)
        row = (escape(record.signature.describe()), str(record.hits),
               fmt_seconds(seconds) if seconds is not None else "",
               escape(_entry_size(record.entry)), _clock(record.created))
        rows.append(((escape(record.owner),) if with_owner else ()) + row)
    if not rows:
        return paragraph_html("No cached entries.")
    return table_html((("cell / function",) if with_owner else ()) + _ENTRY_HEADER, rows)


def events_table(events: Iterable[Any], kind: str, detail: str, with_owner: bool = False) -> str:
    """The events of one kind as a table ("" when there are none)."""
    rows = [((escape(event.owner),) if with_owner else ())
            + (_clock(event.time), escape(event.cache), escape(event.detail))
            for event in events if event.kind == kind]
    header = (("cell / function",) if with_owner else ()) + ("time", "cache", detail)
    return table_html(header, rows) if rows else ""


def disk_usage_text(usage) -> str:
    """The disk cache in one line: where, how full, what it did this session (or why off)."""
    if usage is None:
        return ""
    if not usage.enabled:
        where = f" ({usage.directory})" if usage.directory else ""
        return f"on disk: off{where}: {usage.problem}"
    return (f"on disk: {usage.directory}: {usage.entries} entries, {fmt_bytes(usage.bytes)} "
            f"of {fmt_bytes(usage.max_bytes)}; {usage.hits} loaded from disk, {usage.misses} "
            f"compiled and stored, {usage.evictions} evicted, {usage.errors} unusable")


def cache_overview_html(records: Iterable[Any], events: Iterable[Any], counts: dict[str, int],
                        disk=None) -> str:
    """Every cache entry of the session (each cell and function), every miss with its reason,
    every eviction: what `%psc_cache` shows. `counts`: entries, hits, misses, evictions (and
    the in-memory executables' count and code bytes); `disk`: the disk cache's DiskUsage."""
    events = _since_last_clear(list(events))
    disk_line = paragraph_html(escape(disk_usage_text(disk))) if disk is not None else ""
    return wrap_html(f'<div class="psc-cache-overview"><b>{escape(overview_head(counts))}</b>'
                     + disk_line
                     + section_html("Entries", entries_table(records, with_owner=True))
                     + section_html("Misses", events_table(events, "miss", "reason",
                                                           with_owner=True)
                                    or paragraph_html("No misses recorded."))
                     + section_html("Evictions", events_table(events, "evict", "signature",
                                                              with_owner=True)
                                    or paragraph_html("No evictions.")) + "</div>")


def overview_head(counts: dict[str, int]) -> str:
    """The counts line, with the caches' bounds (least recently used entries are evicted
    beyond them; `%config PscJit.cache_size` sets both)."""
    bound = f" (at most {counts['maxsize']})" if "maxsize" in counts else ""
    executables = (f"; {counts['executables']} XLA executables (at most "
                   f"{counts['executable_maxsize']})") if "executables" in counts else ""
    if counts.get("executable_bytes"):
        executables += f", {fmt_bytes(counts['executable_bytes'])} of code in memory"
    elif "executable_bytes" in counts:        # XLA:CPU reports no code size
        executables += ", their code size unknown (XLA's CPU backend does not report it)"
    return (f"psc_jit cache: {counts.get('entries', 0)} entries{bound}, "
            f"{counts.get('hits', 0)} hits, {counts.get('misses', 0)} misses, "
            f"{counts.get('evictions', 0)} evictions{executables}")


def _since_last_clear(events: list[Any]) -> list[Any]:
    clears = [i for i, event in enumerate(events) if event.kind == "clear"]
    return events[clears[-1] + 1:] if clears else events


def cache_overview_text(records: Iterable[Any], events: Iterable[Any],
                        counts: dict[str, int], disk=None) -> str:
    """The same facts as plain text, for terminals."""
    lines = [overview_head(counts)] + ([disk_usage_text(disk)] if disk is not None else [])
    lines += [f"  {r.owner}: {r.signature.describe()} ({r.hits} hits)" for r in records]
    lines += [f"  {e.kind} {e.owner}: {e.detail}" for e in _since_last_clear(list(events))
              if e.kind in ("miss", "evict")]
    return "\n".join(lines)
