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

import hashlib
import logging
import time
import types
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any, Callable, Hashable

from ..ir import ShapedArray

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
    equals a NaN)."""
    path: str
    value: Hashable = field(compare=False)
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


def short_repr(value) -> str:
    """A static value as a user would name it: `10`, `'abc'`, `module numpy`, `function f`."""
    if isinstance(value, types.ModuleType):
        return f"module {value.__name__}"
    if isinstance(value, (types.FunctionType, types.BuiltinFunctionType, type)):
        return f"{type(value).__name__} {getattr(value, '__qualname__', value)}"
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


@dataclass(frozen=True)
class Signature:
    """The monomorphic signature of a call: what a compiled program is specialised to."""
    structure: Hashable                      # the pytree structure of the arguments
    leaves: tuple[TracedLeaf | StaticLeaf, ...]
    aliases: tuple[tuple[str, ...], ...] = ()   # traced inputs that are one and the same array

    def describe(self) -> str:
        return ", ".join(f"{leaf.path}: {leaf.describe()}" for leaf in self.leaves)


def explain_miss(old: Signature, new: Signature) -> str:
    """Why `new` missed, next to the closest earlier signature `old`, in the user's words."""
    if old.structure != new.structure or [a.path for a in old.leaves] != [
            b.path for b in new.leaves]:
        return "the arguments' structure changed"
    changes = [_change(a, b) for a, b in zip(old.leaves, new.leaves, strict=True) if a != b]
    if old.aliases != new.aliases:
        changes.append("inputs that are the same array changed: "
                       f"{_aliases(old.aliases)} → {_aliases(new.aliases)}")
    return "; ".join(changes) or "no change (the entry was evicted)"


def _change(old, new) -> str:
    if isinstance(old, StaticLeaf) and isinstance(new, StaticLeaf):
        return f"{new.path}: {short_repr(old.value)} → {short_repr(new.value)} (static)"
    return f"{new.path}: {old.describe()} → {new.describe()}"


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
    def __init__(self):
        self._subscribers: list[Callable[[CacheEvent], None]] = []
        self.events: list[CacheEvent] = []

    def subscribe(self, callback: Callable[[CacheEvent], None]) -> Callable[[], None]:
        self._subscribers.append(callback)
        return lambda: self._subscribers.remove(callback)

    def _publish(self, event: CacheEvent) -> None:
        self.events.append(event)
        del self.events[:-1000]
        for callback in list(self._subscribers):
            callback(event)


@dataclass
class CacheRecord:
    """One entry of the trace cache, as views show it."""
    owner: str
    signature: Signature
    entry: Any
    hits: int = 0
    created: float = field(default_factory=time.time)


class TraceCache(_Observable):
    def __init__(self, maxsize: int = 256):
        super().__init__()
        self.maxsize = maxsize
        self._records: OrderedDict[tuple[Hashable, Signature], CacheRecord] = OrderedDict()
        self._latest: dict[Hashable, Signature] = {}
        self.hits = 0
        self.misses = 0
        self.evictions = 0

    def lookup(self, owner_key: Hashable, signature: Signature):
        """The entry for this call, or None. Counting is the caller's (hit or miss)."""
        record = self._records.get((owner_key, signature))
        if record is None:
            return None
        self._records.move_to_end((owner_key, signature))
        return record

    def record_hit(self, record: CacheRecord) -> None:
        record.hits += 1
        self.hits += 1
        self._publish(CacheEvent("trace", "hit", record.owner))

    def miss_reason(self, owner_key: Hashable, signature: Signature, first: str) -> str:
        previous = self._latest.get(owner_key)
        return first if previous is None else explain_miss(previous, signature)

    def record_miss(self, owner: str, reason: str) -> None:
        self.misses += 1
        log.info("cache miss for %s: %s", owner, reason)
        self._publish(CacheEvent("trace", "miss", owner, reason))

    def insert(self, owner_key: Hashable, owner: str, signature: Signature, entry) -> CacheRecord:
        record = CacheRecord(owner, signature, entry)
        self._records[(owner_key, signature)] = record
        self._latest[owner_key] = signature
        self._publish(CacheEvent("trace", "insert", owner, signature.describe()))
        self._evict()
        return record

    def resize(self, maxsize: int) -> None:
        self.maxsize = maxsize
        self._evict()

    def _evict(self) -> None:
        while len(self._records) > self.maxsize:
            (_, old_sig), old = self._records.popitem(last=False)
            self.evictions += 1
            self._publish(CacheEvent("trace", "evict", old.owner, old_sig.describe()))

    def records(self, owner_key: Hashable | None = None) -> list[CacheRecord]:
        return [r for (k, _), r in self._records.items() if owner_key is None or k == owner_key]

    def clear(self) -> None:
        """Drop every entry and start counting anew."""
        self._records.clear()
        self._latest.clear()
        self.hits = self.misses = self.evictions = 0
        self._publish(CacheEvent("trace", "clear", "*"))

    def __len__(self) -> int:
        return len(self._records)


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

    def clear(self) -> None:
        """Drop every executable and start counting anew."""
        self._executables.clear()
        self.hits = self.misses = self.evictions = 0
        self._publish(CacheEvent("executable", "clear", "*"))

    def __len__(self) -> int:
        return len(self._executables)


TRACE_CACHE = TraceCache()
EXECUTABLE_CACHE = ExecutableCache()
