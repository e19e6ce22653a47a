"""A cache hit of `jit(f)` through jaxlib's C++ dispatcher (`xla.dispatcher`, the one behind
jax.jit): the call's signature is looked up and the executable run in C++, and the only Python
of a hit is `Hit.finish`, which checks NumPy's error state, counts the hit and makes the
writable result. A signature gets its FastPath on a miss, from the entry the Python path ran,
when nothing else has to be checked or done around XLA's run (see `dispatchable`); any other
call goes to the Python path (`Jitted._python_call`) as before.
"""
from __future__ import annotations

import functools
from typing import Callable

import numpy as np

from ..frontend.reads import check_error_state
from ..frontend.sources import Guard, value_key
from ..numpy.base import ERROR_STATE
from ..numpy.subclasses import plain_base
from ..tracing import current_trace
from ..tree_util import LEAF
from . import xla
from .cache import TRACE_CACHE, CacheRecord, TracedLeaf
from .hostmemory import STAGE_FROM_BYTES, router

# A call that raised on a miss (a failed check, a bug, an interrupt) leaves its signature with
# the dispatcher for good as "always ask Python"; the next miss that could hit clears them all.
_SIGNATURES_FAILED = [False]
_DISPATCHERS: dict[type, Callable] = {}     # a class -> the dispatcher of its calls
# Guards a function's calls check in C before the dispatcher (the router), across all of its
# signatures with a FastPath: a signature whose guards would go over keeps the Python path.
GUARD_BUDGET = 32
GUARDS = "_router_guards"      # the instance attribute the router reads them from


@functools.cache
def install_dispatcher(cls) -> Callable:
    """jaxlib's C++ dispatcher as `cls.__call__` (the instance is its static first argument),
    made at the first call of any instance: misses go to `cls._cache_miss`, calls with jit
    disabled (jax.disable_jit) to `cls._python_call`, which is also what stays when there is
    no jaxlib (its error comes when a call compiles) or no NumPy error-state object. With
    the C module, a router stands in front of it (`hostmemory.router`): a call with a large
    argument the CPU client would copy goes to the Python path, which stages it, so that a
    program with large inputs can keep a FastPath for its calls that read them in place.
    Returns what `cls.__call__` became."""
    try:
        if ERROR_STATE is None:
            raise xla.XlaError("NumPy has no error-state object to check hits against")
        dispatch = xla.dispatcher("psc_jit", cls._python_call, cls._cache_miss)
    except xla.XlaError:
        return cls._python_call
    TRACE_CACHE.on_drop(lambda: xla.clear_dispatcher(dispatch))
    _DISPATCHERS[cls] = dispatch
    cls.__call__ = subclass_router(dispatch, cls._python_call) if router is None else \
        router(dispatch, cls._python_call, STAGE_FROM_BYTES, GUARDS)
    return cls.__call__


def subclass_router(dispatch: Callable, python_call: Callable) -> Callable:
    """Without the C router (`hostmemory.router`, which does this too): a call with an
    argument of a subclass (a masked array, a matrix, a float subclass) goes to the Python
    path, which refuses it, as the dispatcher would take it for its base type."""
    def route(self, *args, **kwargs):
        if any(plain_base(a) is not None for a in args) or \
                any(plain_base(a) is not None for a in kwargs.values()):
            return python_call(self, *args, **kwargs)
        return dispatch(self, *args, **kwargs)
    return route


def cache_miss(jitted, args, kwargs) -> tuple:
    """The dispatcher has no FastPath for this call signature: the call takes the Python path
    (a failure is noted, see _SIGNATURES_FAILED), and the dispatcher keeps a FastPath for the
    signature when the compiled entry the call ran allows one (else it forgets the signature
    again: the next such call asks anew). Returns (result, FastPath or None, forget)."""
    try:
        result = jitted._python_call(*args, **kwargs)
    except BaseException:
        _SIGNATURES_FAILED[0] = True
        raise
    last = jitted._last
    record = last[2] if last is not None and not kwargs and current_trace() is None else None
    if record is None or record.never_dispatched:
        return result, None, True
    if not hasattr(record.entry, "executable") or not dispatchable(record.entry) or \
            router is None and record.entry.executable.stages_inputs:   # (inputs: arguments)
        record.never_dispatched = True      # (the dispatcher asks again on every such call)
        return result, None, True
    fast = fast_path_for(jitted, record, args)
    return result, fast, fast is None


def fast_path_for(jitted, record: CacheRecord, args) -> xla.FastPath | None:
    """The dispatcher's FastPath for the compiled entry a call with these positional arguments
    just ran, when a hit can run it with no Python but `Hit.finish` (see `dispatchable`):
    every argument is a traced leaf that the dispatcher types as the program's input (a Python
    int, static here, never is), none is 0-d but a Python float or complex (the dispatcher
    types a 0-d array and a NumPy scalar alike, psc_jit's results do not), no two are the
    same array, and 64-bit inputs are kept."""
    entry = record.entry
    if not record.alive or not dispatchable(entry):
        return None
    signature, in_avals = record.signature, entry.executable.in_avals
    if signature.aliases or len(signature.leaves) != len(args) or len(in_avals) != len(args) \
            or not all(isinstance(leaf, TracedLeaf) and (leaf.kind == "python" or
                                                         leaf.aval.shape)
                       for leaf in signature.leaves):
        return None     # (a 0-d array and a NumPy scalar are one type to the dispatcher)
    if any(value_key(a) is None or xla.dispatched_type(a) != (aval.shape, np.dtype(aval.dtype))
           for a, aval in zip(args, in_avals, strict=True)):
        return None
    if not xla.keeps_64_bit() or not _guard_hits(jitted, entry):
        return None
    fast = xla.fast_path(entry.executable, Hit(jitted, record).finish)
    if fast is not None and _SIGNATURES_FAILED[0]:
        _SIGNATURES_FAILED[0] = False
        xla.clear_dispatcher(_DISPATCHERS[type(jitted)])
    return fast


def dispatchable(entry) -> bool:
    """Whether the dispatcher may run a compiled entry on a hit: its inputs are the call's
    argument leaves, in order, and nothing is checked before the run or done after it with
    the call's leaves (no guards but NumPy's error state, which a hit checks, and those the
    router checks, see `router_guard`; no implicit input or hoisted constant; no output a
    view of an input), and no array was updated in place and no answer of NumPy's was taken
    from a memory layout: whether an update shows through an input, or a result is a view of
    it, can depend on the input's memory layout (`x.T.reshape(-1)` is a copy of a C-ordered
    x, a view of a Fortran-ordered one), which the dispatcher's key does not hold. Run-time
    checks are verified by `Hit.finish`."""
    result = entry.lowered.traced.result
    guards_checked = all(_errstate_guard(r) or router_guard(r) is not None
                         for r in result.reads.items)
    return guards_checked and not (result.writes or result.layout_questions
                                   or entry.lowered.consts) \
        and all(o.how != "view" or o.value[0] < 0 for o in result.out_specs) \
        and [i for i, _ in result.inputs] == list(range(len(result.inputs)))


def _errstate_guard(read) -> bool:
    return isinstance(read, Guard) and read.source.root == "errstate" and not read.expected


def router_guard(read) -> tuple | None:
    """The guard as the router checks it before the dispatcher (hostmemory.router), or None
    when it cannot: a global or closure value, or an attribute of one (`np`, `np.sum`, a
    helper, a constant), compared by identity, which is at least as strict as the guard's
    own test (a value that fails it goes to the Python path, which checks the guard itself
    and retraces where it fails)."""
    source = read.source if isinstance(read, Guard) else None
    if router is None or source is None or read.test not in ("identity", "value") or \
            source.root not in ("global", "closure") or \
            any(kind != "attr" for kind, _ in source.steps):
        return None
    return (source.where, source.name, tuple(name for _, name in source.steps), read.expected)


def _guard_hits(jitted, entry) -> bool:
    """Add the guards of an entry to those the router checks before every call of `jitted`
    (kept by identity, within GUARD_BUDGET); False when they would go over it."""
    known = getattr(jitted, GUARDS)
    new = [g for g in map(router_guard, entry.lowered.traced.result.reads.items)
           if g is not None and not any(_same_guard(g, k) for k in known)]
    if len(known) + len(new) > GUARD_BUDGET:
        return False
    if new:
        setattr(jitted, GUARDS, known + tuple(new))
    return True


def _same_guard(a: tuple, b: tuple) -> bool:
    return a[0] is b[0] and a[1] == b[1] and a[2] == b[2] and a[3] is b[3]


def one_array_output(entry) -> bool:
    """Whether a compiled entry's return value is XLA's first output as it is (one array,
    no run-time checks)."""
    result = entry.lowered.traced.result
    out = result.out_specs[0] if result.out_structure is LEAF else None
    return out is not None and not result.checks and \
        out.kind == "array" and out.index == 0 and (
            out.how == "traced" or out.how == "view" and out.value == (-1, ()))


class Hit:
    """What a hit of the dispatcher runs after XLA, called by it with the run's results
    (`finish`): checks NumPy's error state, counts the hit as the Python path does and makes
    the call's return value."""
    __slots__ = ("jitted", "record", "last", "view", "outputs", "rebuild", "finish", "errstate")

    def __init__(self, jitted, record: CacheRecord):
        entry = record.entry
        self.jitted = jitted
        self.record = record
        self.errstate = ERROR_STATE.get()
        self.last = (True, None, record)
        self.outputs = entry.executable.finish
        self.rebuild = entry.rebuild
        self.view = entry.executable.result_view(0) if one_array_output(entry) else None
        self.finish = self._one_array if self.view is not None else self._any

    def _one_array(self, results):
        if ERROR_STATE.get() is not self.errstate:
            self._check_error_state()
        record = self.record
        record.hits += 1                    # TRACE_CACHE.record_hit, inlined (every hit)
        TRACE_CACHE.hits += 1
        if TRACE_CACHE._subscribers:
            TRACE_CACHE.tell_hit(record)
        self.jitted._last = self.last
        return self.view(results[0])

    def _any(self, results):
        if ERROR_STATE.get() is not self.errstate:
            self._check_error_state()
        TRACE_CACHE.record_hit(self.record)
        self.jitted._last = self.last
        return self.rebuild(self.outputs(results))

    def _check_error_state(self) -> None:
        """NumPy's error state changed since this signature's FastPath was made: the run was
        pure, so its result stands while the entry's guard on the error state holds; when it
        fails the Python path would miss and refuse to trace (it asks to raise): do so."""
        entry = self.record.entry
        if entry.reads.check(()) is None:
            TRACE_CACHE.record_miss(self.jitted.name, entry.reads.explain(()))
            check_error_state()
        self.errstate = ERROR_STATE.get()
