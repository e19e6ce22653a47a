"""The two caches, with named keys, counts, and events.

- The trace cache maps (owner, signature) to a compiled entry: owner is a function or a cell,
  signature the monomorphic signature of a call. Every miss gets a reason in the user's words
  (`x: f64[1000,1000] → f64[500,1000]`, `n: 10 → 20 (static)`, `new cell source`). It is an
  LRU bounded by entry count and reports evictions.
- The executable cache maps a hash of (StableHLO text, jaxlib version, platform, options) to a
  compiled XLA executable, so the same program is never compiled twice in a session.

Both publish `CacheEvent`s to subscribers; core never knows who listens.
"""
from __future__ import annotations

import functools
import hashlib
import logging
import time
import types
from collections import OrderedDict, deque
from dataclasses import dataclass, field
from typing import Any, Callable, Hashable

from ..frontend.sources import short_repr
from ..ir import ShapedArray
from ..tree_util import structure_change

log = logging.getLogger("psc_jit")


@dataclass(frozen=True)
class TracedLeaf:
    path: str
    aval: ShapedArray
    kind: str             # "array", "scalar" (NumPy scalar) or "python" (weak Python scalar)
    strides: tuple[int, ...] | None = None   # memory layout of an array not in C order

    def describe(self) -> str:
        suffix = {"scalar": " (NumPy scalar)", "python": " (Python scalar)"}.get(self.kind, "")
        if self.strides is not None:
            suffix += f" (strides {self.strides})"
        return f"{self.aval}{suffix}"


@dataclass(frozen=True)
class StaticLeaf:
    """A static argument leaf. Two leaves are equal when their values compute the same: of one
    type and, for floats, the same bits (1, 1.0 and True differ, so do 0.0 and -0.0; a NaN
    equals a NaN). `kind` is the value's type as the signature recorded it."""
    path: str
    value: Hashable = field(compare=False)
    kind: type | None = None
    key: Hashable = field(init=False, repr=False)

    def __post_init__(self):
        object.__setattr__(self, "key", exact_key(self.value))

    def describe(self) -> str:
        return f"{short_repr(self.value)} (static)"


def exact_key(value) -> Hashable:
    """`value` told apart from every value that compares equal but computes differently."""
    if isinstance(value, float):
        return type(value), value.hex()
    if isinstance(value, complex):
        return type(value), value.real.hex(), value.imag.hex()
    if isinstance(value, tuple):
        return type(value), tuple(exact_key(v) for v in value)
    return type(value), value


@dataclass(frozen=True)
class Signature:
    """The monomorphic signature of a call: what a compiled program is specialised to."""
    structure: Hashable                      # the pytree structure of the arguments
    leaves: tuple[TracedLeaf | StaticLeaf, ...]
    aliases: tuple[tuple[str, ...], ...] = ()   # traced inputs that are one and the same array

    def describe(self) -> str:
        return ", ".join(f"{leaf.path}: {leaf.describe()}" for leaf in self.leaves)


def explain_miss(old: Signature, new: Signature, reader: str = "") -> str:
    """Why `new` missed, next to the closest earlier signature `old`, in the user's words.
    reader: who reads the arguments (`the cell`), for functions they call."""
    if old.structure != new.structure:
        return structure_change(old.structure, new.structure) or "the arguments' structure changed"
    if [a.path for a in old.leaves] != [b.path for b in new.leaves]:
        return "the arguments' structure changed"
    changes = [_change(a, b, reader) for a, b in zip(old.leaves, new.leaves, strict=True)
               if a != b]
    if old.aliases != new.aliases:
        changes.append("inputs that are the same array changed: "
                       f"{_aliases(old.aliases)} → {_aliases(new.aliases)}")
    return "; ".join(changes) or "no change (the entry was evicted)"


def _change(old, new, reader: str = "") -> str:
    if isinstance(old, StaticLeaf) and isinstance(new, StaticLeaf):
        if _redefined(old.value, new.value):
            called = f" (called by {reader})" if reader else ""
            return f"{new.path}{called}: redefined"
        return f"{new.path}: {short_repr(old.value)} → {short_repr(new.value)} (static)"
    return f"{new.path}: {old.describe()} → {new.describe()}"


def _redefined(old, new) -> bool:
    """Two functions of the same name: the user ran its `def` again."""
    return isinstance(old, types.FunctionType) and isinstance(new, types.FunctionType) and \
        old.__qualname__ == new.__qualname__


def _aliases(groups) -> str:
    return ", ".join("=".join(g) for g in groups) or "none"


@dataclass(frozen=True)
class CacheEvent:
    cache: str            # "trace" or "executable"
    kind: str             # "hit", "miss", "insert", "evict", "clear"
    owner: str
    detail: str = ""
    time: float = field(default_factory=time.time)


class _Observable:
    """Publishes CacheEvents: the last `KEEP` of all, and the last `KEEP_PER_OWNER` of each
    owner (so a view of one cell finds its own without scanning everyone's)."""
    KEEP = 1000
    KEEP_PER_OWNER = 100

    def __init__(self):
        self._subscribers: list[Callable[[CacheEvent], None]] = []
        self.events: deque[CacheEvent] = deque(maxlen=self.KEEP)
        self._owner_events: dict[str, deque[CacheEvent]] = {}

    def subscribe(self, callback: Callable[[CacheEvent], None]) -> Callable[[], None]:
        self._subscribers.append(callback)
        return lambda: self._subscribers.remove(callback)

    def events_of(self, owner: str) -> tuple[CacheEvent, ...]:
        """The last events of one owner, oldest first."""
        return tuple(self._owner_events.get(owner, ()))

    def _publish(self, event: CacheEvent) -> None:
        self.events.append(event)
        mine = self._owner_events.get(event.owner)
        if mine is None:
            mine = self._owner_events[event.owner] = deque(maxlen=self.KEEP_PER_OWNER)
        mine.append(event)
        for callback in self._subscribers:
            callback(event)


@dataclass(eq=False)
class CacheRecord:
    """One entry of the trace cache, as views show it. `entry` is what the call runs (a
    compiled program, or the decision to run as plain Python), valid while `guards` (the
    description of what it assumed, beyond the signature) hold."""
    owner: str
    signature: Signature
    entry: Any
    hits: int = 0
    created: float = field(default_factory=time.time)
    guards: str = ""
    alive: bool = True
    hits_when_placed: int = field(default=0, repr=False)    # see TraceCache._evict_least_recent
    never_dispatched: bool = field(default=False, repr=False)   # see dispatch.cache_miss

    @functools.cached_property
    def signature_text(self) -> str:
        return self.signature.describe()


@dataclass(frozen=True)
class Released:
    """What an evicted (or cleared) entry leaves behind for the views that still show its
    record: its compile time and memory. The program itself (graphs, texts, XLA's executable)
    is freed, however long a report of an old run keeps the record."""
    compile_seconds: float | None
    stats: Any = None

    def memory_stats(self):
        if self.stats is None:
            raise AttributeError("no memory statistics: the entry was not a compiled program")
        return self.stats


def released(entry) -> Released:
    stats = getattr(entry, "memory_stats", None)
    return Released(getattr(entry, "compile_seconds", None),
                    stats() if stats is not None else None)


_NONE: tuple = ()        # the variants of a signature that has none


class TraceCache(_Observable):
    """(owner, signature) -> variants: cache records with the same signature that differ in
    what their traces read beyond it (their guards), most recent first. An LRU over records
    bounded by `maxsize` in all and `MAX_VARIANTS` per signature; `generation` changes when
    the cache is cleared (so that memos of it know)."""
    MAX_VARIANTS = 8

    def __init__(self, maxsize: int = 256):
        super().__init__()
        self.maxsize = maxsize
        self._variants: dict[tuple[Hashable, Signature], list[CacheRecord]] = {}
        self._lru: OrderedDict[CacheRecord, tuple[Hashable, Signature]] = OrderedDict()
        self._by_owner: dict[Hashable, list[CacheRecord]] = {}
        self._latest: dict[Hashable, Signature] = {}
        self.hits = 0
        self.misses = 0
        self.evictions = 0
        self.generation = 0
        self._drop_watchers: list[Callable[[], None]] = []

    def on_drop(self, callback: Callable[[], None]) -> None:
        """`callback()` hears each time records are evicted or cleared (a memo of records
        elsewhere, jaxlib's dispatcher's, forgets them)."""
        self._drop_watchers.append(callback)

    def _dropped(self) -> None:
        for callback in self._drop_watchers:
            callback()

    def variants(self, owner_key: Hashable, signature: Signature) -> list[CacheRecord]:
        """The records for this call's signature, most recent first (the list itself: it
        stays up to date as records are added and evicted); empty when there are none."""
        return self._variants.get((owner_key, signature), _NONE)

    def record_hit(self, record: CacheRecord) -> None:
        """Count a hit. Hits are told to subscribers but not kept in the event history (they
        are counted per record), so that re-runs never push a miss's reason out of it. A hit
        does not reorder the LRU (it is on the path of every cached call): the count tells
        eviction that the record was used (`_evict_least_recent`)."""
        record.hits += 1
        self.hits += 1
        if self._subscribers:
            self.tell_hit(record)

    def tell_hit(self, record: CacheRecord) -> None:
        """Tell the subscribers of a hit (counted by the caller)."""
        event = CacheEvent("trace", "hit", record.owner)
        for callback in self._subscribers:
            callback(event)

    def miss_reason(self, owner_key: Hashable, signature: Signature, first: str,
                    reader: str = "") -> str:
        previous = self._latest.get(owner_key)
        return first if previous is None else explain_miss(previous, signature, reader)

    def record_miss(self, owner: str, reason: str) -> None:
        self.misses += 1
        log.info("cache miss for %s: %s", owner, reason)
        self._publish(CacheEvent("trace", "miss", owner, reason))

    def insert(self, owner_key: Hashable, owner: str, signature: Signature, entry,
               guards: str = "") -> CacheRecord:
        record = CacheRecord(owner, signature, entry, guards=guards)
        variants = self._variants.setdefault((owner_key, signature), [])
        variants.insert(0, record)
        self._lru[record] = (owner_key, signature)
        self._by_owner.setdefault(owner_key, []).append(record)
        self._latest[owner_key] = signature
        self._publish(CacheEvent("trace", "insert", owner, record.signature_text))
        while len(variants) > self.MAX_VARIANTS:
            self._evict(variants[-1])
        while len(self._lru) > self.maxsize:
            self._evict_least_recent()
        return record

    def resize(self, maxsize: int) -> None:
        self.maxsize = maxsize
        while len(self._lru) > self.maxsize:
            self._evict_least_recent()

    def _evict_least_recent(self) -> None:
        """Evict the record used least recently: the LRU's oldest, where a record hit since it
        was put at the end goes back to the end instead (its hits are its uses)."""
        while True:
            record = next(iter(self._lru))
            if record.hits == record.hits_when_placed:
                self._evict(record)
                return
            record.hits_when_placed = record.hits
            self._lru.move_to_end(record)

    def _evict(self, record: CacheRecord) -> None:
        owner_key, signature = self._lru.pop(record)
        variants = self._variants[(owner_key, signature)]
        variants.remove(record)
        if not variants:
            del self._variants[(owner_key, signature)]
        self._by_owner[owner_key].remove(record)
        record.alive = False
        record.entry = released(record.entry)
        self.evictions += 1
        self._dropped()
        self._publish(CacheEvent("trace", "evict", record.owner, record.signature_text))

    def records(self, owner_key: Hashable | None = None) -> list[CacheRecord]:
        if owner_key is not None:
            return list(self._by_owner.get(owner_key, ()))
        return list(self._lru)

    def clear(self) -> None:
        """Drop every entry and start counting anew."""
        for record in self._lru:
            record.alive = False
            record.entry = released(record.entry)
        self._variants.clear()
        self._lru.clear()
        self._by_owner.clear()
        self._latest.clear()
        self.hits = self.misses = self.evictions = 0
        self.generation += 1
        self._dropped()
        self._publish(CacheEvent("trace", "clear", "*"))

    def __len__(self) -> int:
        return len(self._lru)


def executable_key(stablehlo: str, jaxlib_version: str, platform: str, options: str = "") -> str:
    digest = hashlib.sha256()
    for part in (stablehlo, jaxlib_version, platform, options):
        digest.update(part.encode())
        digest.update(b"\0")
    return digest.hexdigest()


class ExecutableCache(_Observable):
    def __init__(self, maxsize: int = 256):
        super().__init__()
        self.maxsize = maxsize
        self._executables: OrderedDict[str, Any] = OrderedDict()
        self.hits = 0
        self.misses = 0
        self.evictions = 0

    def get_or_compile(self, key: str, owner: str, compile_fn: Callable[[], Any]):
        """(executable, was_hit)."""
        if key in self._executables:
            self._executables.move_to_end(key)
            self.hits += 1
            self._publish(CacheEvent("executable", "hit", owner, key[:12]))
            return self._executables[key], True
        executable = compile_fn()          # an interrupted or failed compile changes nothing
        self.misses += 1
        self._publish(CacheEvent("executable", "miss", owner, key[:12]))
        self._executables[key] = executable
        self._evict(owner)
        return executable, False

    def resize(self, maxsize: int) -> None:
        self.maxsize = maxsize
        self._evict("*")

    def _evict(self, owner: str) -> None:
        while len(self._executables) > self.maxsize:
            old_key, _ = self._executables.popitem(last=False)
            self.evictions += 1
            self._publish(CacheEvent("executable", "evict", owner, old_key[:12]))

    def code_bytes(self) -> int:
        """The machine code of the executables held (as XLA reports it)."""
        total = 0
        for executable in self._executables.values():
            try:
                total += executable.memory_stats().generated_code_bytes
            except (RuntimeError, ValueError, AttributeError):
                continue
        return total

    def clear(self) -> None:
        """Drop every executable and start counting anew."""
        self._executables.clear()
        self.hits = self.misses = self.evictions = 0
        self._publish(CacheEvent("executable", "clear", "*"))

    def __len__(self) -> int:
        return len(self._executables)


TRACE_CACHE = TraceCache()
EXECUTABLE_CACHE = ExecutableCache()
