"""The one door to the compiler: from a call's values to the cache record it runs.

`prepare(jitted, args, kwargs)` is how every call reaches a program, whoever makes it: a
`jit` function's call on the Python path, the `%%psc_jit` magic's run and its timed runs, and
the measurements (`Jitted.time_call`, `profile_call`). It finds the call's cache entry (by
the fast key of its positional arguments, else by its full signature, guards checked), or
makes one: traced, lowered and compiled (`Jitted.compile_for`), or, for a caller that falls
back, the decision to run it as plain Python, cached like a program. What comes back is a
`PreparedCall`: the record, the leaves to run it with, and how it was found.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

from ..frontend.reads import Reads
from ..lowering import LoweringError
from ..tracing import TraceError, UnsupportedError
from .cache import TRACE_CACHE, CacheRecord
from .errors import XlaError
from .signature import CallSpec, fast_key

MEMO_SIZE = 256     # fast keys a jit function remembers (cleared when full)


@dataclass(frozen=True)
class Fallback:
    """The decision to run a call as plain Python, and why: cached like a compiled program,
    valid while what its trace read (up to where it stopped) still holds. `frames`: where
    the trace was when it stopped ((file, line) of each frame, outermost first; the error's
    own source last), so that a cell can be cut at that line (frontend/regions.py)."""
    reason: str
    reads: Reads
    frames: tuple[tuple[str, int], ...] = ()


class PreparedCall:
    """One call made ready by `prepare`: the cache record it runs (`record.entry`, a
    `Compiled`, or a `Fallback` for a caller that falls back), the leaves to run it with, and
    how it was found: a hit, or a miss and why (`miss_reason`). `fallback`, when not None, is
    why the call runs as plain Python (then `leaves` is None)."""
    __slots__ = ("record", "leaves", "hit", "miss_reason", "fallback")

    def __init__(self, record: CacheRecord | None, leaves: Sequence | None, hit: bool,
                 miss_reason: str | None = None, fallback: str | None = None):
        self.record, self.leaves, self.hit = record, leaves, hit
        self.miss_reason, self.fallback = miss_reason, fallback

    @property
    def compiled(self):
        """The compiled program the call runs (None when it runs as plain Python)."""
        return self.record.entry if self.fallback is None else None

    def run(self, marks: list | None = None):
        """Run the compiled program with the call's leaves (see `Compiled.run`)."""
        return self.record.entry.run(self.leaves, marks)


def prepare(jitted, args: tuple, kwargs: dict | None = None, *, first: str = "first call",
            progress: Callable[[str], None] | None = None, fall_back: bool = False,
            count: bool = True) -> PreparedCall:
    """The call of `jitted` with these arguments made ready to run (see the module). The
    compiler hears `progress(stage)` of each stage, `first` says why a first miss missed.
    With `fall_back`, a call that cannot be compiled is not an error: the decision to run it
    as plain Python comes back in `fallback`, with the reason. `count`: count a hit (a
    measurement's calls are not the user's). An argument that can be neither traced nor
    static raises TypeError."""
    positional = jitted.positional(args, kwargs) if kwargs else args
    found = None if positional is None else find_fast(jitted, positional)
    if found is None:
        return _prepare_slow(jitted, args, kwargs or {}, positional, first, progress,
                             fall_back, count)
    record, leaves = found
    if count:
        TRACE_CACHE.record_hit(record)
    return _hit(record, leaves)


def _prepare_slow(jitted, args, kwargs, positional, first, progress, fall_back, count):
    """`prepare` past the fast key: the full signature, its entries, or a new one."""
    spec = jitted.spec(args, kwargs)
    record, leaves, reason = _find(jitted, spec, positional)
    if record is not None:
        if count:
            TRACE_CACHE.record_hit(record)
        return _hit(record, leaves)
    if not fall_back:
        record, reason = jitted.compile_for(spec, first, reason, progress)
        call = PreparedCall(record, _leaves_after_compile(record, spec), False, reason)
    else:
        call = _compile_or_decide(jitted, spec, first, reason, progress)
    _remember(jitted, positional, spec)
    return call


def _compile_or_decide(jitted, spec: CallSpec, first: str, reason: str | None,
                       progress) -> PreparedCall:
    """A new entry for a caller that falls back: a compiled program, or the decision to run
    the call as plain Python (cached under its signature, with the reason)."""
    try:
        record, reason = jitted.compile_for(spec, first, reason, progress)
    except TraceError as err:
        return _decided(_remember_fallback(jitted, spec, err.explain(), trace_frames(err)))
    except (LoweringError, XlaError) as err:
        return _decided(_remember_fallback(
            jitted, spec, f"psc_jit could not compile {jitted.reader}: {err}"))
    except Exception as err:  # the code's own error: plain Python will raise it for real
        return _decided(_remember_fallback(
            jitted, spec, f"tracing raised {type(err).__name__}: {err}", trace_frames(err)))
    try:
        leaves = _leaves_after_compile(record, spec)
    except UnsupportedError as err:
        return PreparedCall(record, None, False, reason, err.explain())
    return PreparedCall(record, leaves, False, reason)


def find_fast(jitted, args) -> tuple[CacheRecord, Sequence] | None:
    """The cache entry of `jitted` whose guards hold for a call with these positional
    arguments, by the fast key; None when the fast path cannot tell."""
    if jitted.params is None or len(args) != len(jitted.params):
        return None
    memo = jitted.memo
    if memo.generation != TRACE_CACHE.generation:
        memo.clear()
        memo.generation = TRACE_CACHE.generation
    key = fast_key(args, jitted.forced_static)
    variants = memo.get(key) if key is not None else None
    return None if variants is None else first_holding(variants, args)


def _find(jitted, spec: CallSpec, args=None) -> tuple[CacheRecord | None, Sequence | None,
                                                      str | None]:
    """(record, leaves, None) for the entry whose guards hold, or (None, None, why not) when
    the signature has entries but none holds (None: it has none)."""
    variants = TRACE_CACHE.variants(jitted.owner_key, spec.signature)
    found = first_holding(variants, spec.leaves)
    if found is not None:
        _remember(jitted, args, spec)
        return found[0], found[1], None
    if variants:
        return None, None, variants[0].entry.reads.explain(spec.leaves) or \
            "what the trace read changed"
    return None, None, None


def _remember(jitted, args, spec: CallSpec) -> None:
    """Let re-runs with these arguments find this signature's entries by the fast key."""
    params = jitted.params
    key = fast_key(args, jitted.forced_static) if args is not None and \
        params is not None and len(args) == len(params) else None
    if key is not None:
        memo = jitted.memo
        if len(memo) >= MEMO_SIZE:
            memo.clear()
        memo[key] = TRACE_CACHE.variants(jitted.owner_key, spec.signature)


def _leaves_after_compile(record: CacheRecord, spec: CallSpec) -> list:
    """The leaves to run a new entry with: its implicit inputs fetched again (as a re-run
    would); an error when the trace itself changed what it read."""
    extra = record.entry.reads.check(spec.leaves)
    if extra is None:
        raise UnsupportedError(
            "running it changes what it reads: " + record.entry.reads.explain(spec.leaves),
            None, "set such values before, not inside, the compiled code")
    return list(spec.leaves) + extra


def _remember_fallback(jitted, spec: CallSpec, reason: str, frames=()) -> CacheRecord:
    """Cache the decision to run this signature as plain Python (with the guards its trace
    recorded before it stopped, and where it stopped)."""
    reads = jitted.last_reads or Reads()
    return TRACE_CACHE.insert(jitted.owner_key, jitted.name, spec.signature,
                              Fallback(reason, reads, frames), reads.describe())


def trace_frames(err: BaseException) -> tuple[tuple[str, int], ...]:
    """(file, line) of each frame the error passed through, outermost first, then its own
    source (a TraceError's `source`) when it names one."""
    frames = []
    tb = err.__traceback__
    while tb is not None:
        frames.append((tb.tb_frame.f_code.co_filename, tb.tb_lineno))
        tb = tb.tb_next
    source = getattr(err, "source", None)
    if source is not None and getattr(source, "file", None):
        frames.append((source.file, source.line))
    return tuple(frames)


def _hit(record: CacheRecord, leaves: Sequence) -> PreparedCall:
    """A call whose cache entry was found: a compiled program, or a cached decision to run
    it as plain Python."""
    entry = record.entry
    if type(entry) is Fallback:
        return PreparedCall(record, None, True, None, entry.reason)
    return PreparedCall(record, leaves, True, None, None)


def _decided(record: CacheRecord) -> PreparedCall:
    """A new cached decision to run a call as plain Python."""
    return PreparedCall(record, None, False, None, record.entry.reason)


def first_holding(variants: list[CacheRecord], leaves) -> tuple[CacheRecord, Sequence] | None:
    """The first record whose guards hold for these leaves, and the leaves to run it with."""
    for record in variants:
        extra = record.entry.reads.check(leaves)
        if extra is not None:
            return record, ([*leaves, *extra] if extra else leaves)
    return None


class Memo(dict):
    """A jit function's fast keys -> its cache records of their signature, valid for one
    generation of the trace cache."""
    __slots__ = ("generation",)

    def __init__(self, generation: int):
        super().__init__()
        self.generation = generation
