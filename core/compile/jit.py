"""`jit`: trace a Python function on abstract values, lower, compile with XLA, cache, run.

The staged API mirrors JAX's ahead-of-time API:
    jit(f).trace(*args)  -> Traced   (.graph)
    Traced.lower()       -> Lowered  (.as_text(): StableHLO)
    Lowered.compile()    -> Compiled (.as_text(): optimized HLO, .cost_analysis(), .kernels)
and `jit(f)(*args)` does all of it once per monomorphic signature, then only runs.
"""
from __future__ import annotations

import functools
import inspect
import logging
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Hashable, Sequence

import numpy as np

from .. import passes
from ..control.convert import converted_function
from ..control.reads import Reads, Recorder, check_error_state, recording
from ..control.runtime import unroll_notes
from ..ir import Graph
from ..lowering import lower
from ..numpy import check_outputs, verify_checks
from ..tracing import Trace, Tracer, UnsupportedError, tracing
from ..tree_util import LEAF, flatten_with_paths, unflatten
from . import xla
from .cache import EXECUTABLE_CACHE, TRACE_CACHE, CacheRecord, Signature, executable_key
from .kernels import parse_optimized_hlo
from .signature import CallSpec, call_spec, fast_key, overlapping_inputs

log = logging.getLogger("psc_jit")


# -- tracing ----------------------------------------------------------------------------------

@dataclass(frozen=True)
class OutSpec:
    """How to rebuild one output leaf: from a graph output, a constant, or a static value; or
    ("view") as the view NumPy hands back: the same view steps (`ViewOp`s) applied to the input
    array it views (value = (leaf position, steps)) or to a graph output (index)."""
    how: str            # "traced", "view", "const" or "static"
    index: int = -1     # graph output index for "traced" (and "view" of a non-input)
    kind: str = "array"
    value: Any = None


@dataclass
class TraceResult:
    """A traced call. Leaf positions count the call's argument leaves, then the implicit
    inputs (`reads.inputs`: what the trace read from outside its arguments)."""
    graph: Graph
    out_structure: Hashable
    out_specs: tuple[OutSpec, ...]
    mutated: tuple[tuple[int, int], ...]    # (leaf position, graph output index)
    trace_seconds: float
    checks: tuple[tuple[str, type], ...] = ()   # run-time checks: (message, error)
    check_index: int = -1                       # graph outputs: oks, then reported values
    reads: Reads = Reads()
    inputs: tuple[tuple[int, Any], ...] = ()    # per graph input: (leaf position, dtype of a
                                                # scalar to make an array of, or None)


def trace_function(call: Callable[[dict], Any], spec: CallSpec,
                   on_reads: Callable[[Reads], None] = lambda reads: None) -> TraceResult:
    """Run `call(arguments)` with tracers for the traced leaves; record the graph and what it
    read from outside them (`on_reads` is told even when the trace fails)."""
    start = time.perf_counter()
    trace = Trace()
    tracers: dict[int, Tracer] = {}
    by_object: dict[int, Tracer] = {}
    leaf_values = list(spec.leaves)
    for i in spec.traced_index:
        leaf = spec.signature.leaves[i]
        value = spec.leaves[i]
        shared = by_object.get(id(value)) if isinstance(value, np.ndarray) else None
        tracer = shared if shared is not None else trace.new_input(
            leaf.aval, leaf.kind, leaf.strides)
        by_object.setdefault(id(value), tracer)
        tracers[i] = tracer
        leaf_values[i] = tracer
    arguments = unflatten(spec.signature.structure, leaf_values)
    recorder = Recorder(trace, list(spec.leaves), tracers, spec.paths)
    try:
        check_error_state()
        with tracing(trace), recording(recorder):
            result = call(arguments)
    finally:
        on_reads(recorder.finish())
    n = len(spec.leaves)
    tracers.update({n + k: t for k, t in enumerate(recorder.input_tracers)})
    leaves = list(spec.leaves) + recorder.input_values
    return _finish_trace(trace, spec, tracers, leaves, result, start, recorder.finish())


def _finish_trace(trace, spec, tracers, leaves, result, start, reads) -> TraceResult:
    out_leaves, out_structure = flatten_with_paths(result)
    out_atoms, out_specs = [], []
    input_leaf: dict[int, int] = {}
    for i, t in tracers.items():
        input_leaf.setdefault(id(t._buffer), i)
    buffer_outs: dict[int, int] = {}
    for _, value in out_leaves:
        steps = value.view_rebuilders() if isinstance(value, Tracer) and value.kind == "array" \
            else None
        if steps is not None:
            out_specs.append(_view_out_spec(value, steps, input_leaf, buffer_outs, out_atoms))
        elif isinstance(value, Tracer):
            out_specs.append(OutSpec("traced", len(out_atoms), value.kind))
            out_atoms.append(value.ir_var)
        elif isinstance(value, (np.ndarray, np.generic)):
            out_specs.append(OutSpec("const", value=np.copy(value) if isinstance(
                value, np.ndarray) else value))
        else:
            out_specs.append(OutSpec("static", value=value))
    mutated, seen = [], {}
    for i, tracer in tracers.items():
        buf = tracer._buffer
        if buf.mutated and input_leaf[id(buf)] == i:
            if id(buf) not in seen:
                seen[id(buf)] = len(out_atoms)
                out_atoms.append(buf.var)
            mutated.append((i, seen[id(buf)]))
    _check_overlaps(spec, mutated)
    check_index = len(out_atoms)
    if trace.checks:
        out_atoms.extend(check_outputs(trace))
    inputs = _graph_inputs(tracers, leaves)
    in_vars = [tracers[i]._buffer.initial for i, _ in inputs]
    graph = passes.simplify(trace.to_graph(in_vars, out_atoms))
    return TraceResult(graph, out_structure, tuple(out_specs), tuple(mutated),
                       time.perf_counter() - start,
                       tuple((c.message, c.error) for c in trace.checks), check_index,
                       reads, inputs)


def _graph_inputs(tracers: dict[int, Tracer], leaves) -> tuple[tuple[int, Any], ...]:
    """One entry per distinct input buffer, in order: its first leaf position, and the dtype
    a scalar leaf is made an array of (None for an array)."""
    seen, inputs = set(), []
    for i, tracer in tracers.items():
        var = tracer._buffer.initial
        if id(var) not in seen:
            seen.add(id(var))
            dtype = None if isinstance(leaves[i], np.ndarray) else var.aval.dtype
            inputs.append((i, dtype))
    return tuple(inputs)


def _view_out_spec(value: Tracer, steps, input_leaf, buffer_outs, out_atoms) -> OutSpec:
    """A returned array that is (a view of) an input or of another array: rebuilt as that
    view of the caller's array (after write-back) or of one shared output array, so that it
    aliases what it aliases in NumPy. A traced index the view depends on becomes an output."""
    rebuilders = []
    for fn, operands in steps:
        rebuilders.append((fn, tuple(range(len(out_atoms), len(out_atoms) + len(operands)))))
        out_atoms.extend(t.ir_var for t in operands)
    buf = value._buffer
    if id(buf) in input_leaf:
        return OutSpec("view", -1, "array", (input_leaf[id(buf)], tuple(rebuilders)))
    if id(buf) not in buffer_outs:
        buffer_outs[id(buf)] = len(out_atoms)
        out_atoms.append(buf.var)
    return OutSpec("view", buffer_outs[id(buf)], "array", (-1, tuple(rebuilders)))


def _check_overlaps(spec: CallSpec, mutated) -> None:
    if not mutated:
        return
    paths = spec.paths
    mutated_paths = {paths[i] for i, _ in mutated if i < len(paths)}
    for p1, p2 in overlapping_inputs(spec):
        if p1 in mutated_paths or p2 in mutated_paths:
            raise UnsupportedError(
                f"{p1} and {p2} share memory (one is a view of the other) and the code updates "
                "one of them in place: psc_jit cannot follow that aliasing exactly",
                None, f"pass a copy ({p2}.copy()) or update the array through one name only")


# -- stages -----------------------------------------------------------------------------------

@dataclass
class Traced:
    """A traced function: its graph and how to rebuild outputs."""
    result: TraceResult
    spec: CallSpec
    name: str
    jitted: Any = None

    @property
    def graph(self) -> Graph:
        return self.result.graph

    def lower(self) -> Lowered:
        start = time.perf_counter()
        graph, consts = passes.hoist_constants(self.graph)
        text = lower(graph, self.name)
        return Lowered(self, graph, consts, text, time.perf_counter() - start)


@dataclass
class Lowered:
    traced: Traced
    graph: Graph               # the graph lowered (large constants hoisted to inputs)
    consts: tuple[np.ndarray, ...]
    text: str
    lower_seconds: float

    def as_text(self) -> str:
        return self.text

    def compile(self) -> Compiled:
        start = time.perf_counter()
        key = executable_key(self.text, xla.jaxlib_version(), xla.platform())
        executable, hit = EXECUTABLE_CACHE.get_or_compile(
            key, self.traced.name,
            lambda: xla.compile_stablehlo(self.text, self.graph.in_avals, self.graph.out_avals))
        return Compiled(self, executable, time.perf_counter() - start, hit)


@dataclass
class Compiled:
    lowered: Lowered
    executable: xla.Executable
    compile_seconds: float
    executable_cache_hit: bool
    _kernels: Any = field(default=None, repr=False)
    _hlo_text: str | None = field(default=None, repr=False)
    _cost: dict | None = field(default=None, repr=False)

    @property
    def graph(self) -> Graph:
        return self.lowered.traced.graph

    def as_text(self) -> str:
        """The optimized HLO module (after XLA's fusion passes)."""
        if self._hlo_text is None:
            self._hlo_text = self.executable.hlo_text()
        return self._hlo_text

    def cost_analysis(self) -> dict[str, float]:
        if self._cost is None:
            self._cost = self.executable.cost_analysis()
        return dict(self._cost)

    def memory_stats(self):
        return self.executable.memory_stats()

    @property
    def kernels(self):
        """The fused kernels (psc_jit.core.kernels.FusionModel) of the optimized module."""
        if self._kernels is None:
            self._kernels = parse_optimized_hlo(self.as_text())
        return self._kernels

    @functools.cached_property
    def notes(self) -> tuple[str, ...]:
        """What a user should know about this program's size (equations from unrolled loops)."""
        return tuple(unroll_notes(self.graph))

    @property
    def timings(self) -> dict[str, float]:
        return {"trace": self.lowered.traced.result.trace_seconds,
                "lower": self.lowered.lower_seconds, "compile": self.compile_seconds}

    @functools.cached_property
    def reads(self) -> Reads:
        """What the trace read beyond its arguments: checked before every run."""
        return self.lowered.traced.result.reads

    def run(self, leaves: Sequence):
        """Execute with the call's leaves (argument leaves, then implicit inputs); write
        mutated inputs back; rebuild outputs."""
        result = self._result
        if self._arrays_only:
            inputs = [leaves[i] for i in self._positions]
        else:
            inputs = [leaves[i] if dtype is None else np.asarray(leaves[i], dtype)
                      for i, dtype in result.inputs]
        outputs = self.executable.execute(inputs + self._consts if self._consts else inputs)
        if result.checks:
            verify_checks(result.checks, outputs[result.check_index],
                          outputs[result.check_index + 1])
        if result.mutated:
            _write_back(result.mutated, leaves, outputs)
        if self._one_output is not None:
            return _rebuild(self._one_output, outputs, leaves, {})
        bases: dict[int, np.ndarray] = {}
        return unflatten(result.out_structure,
                         [_rebuild(o, outputs, leaves, bases) for o in result.out_specs])

    @functools.cached_property
    def _result(self) -> TraceResult:
        return self.lowered.traced.result

    @functools.cached_property
    def _consts(self) -> list[np.ndarray]:
        return list(self.lowered.consts)

    @functools.cached_property
    def _positions(self) -> list[int]:
        return [i for i, _ in self._result.inputs]

    @functools.cached_property
    def _arrays_only(self) -> bool:
        return all(dtype is None for _, dtype in self._result.inputs)

    @functools.cached_property
    def _one_output(self) -> OutSpec | None:
        """The output spec when the result is a single leaf (no tree to rebuild)."""
        result = self._result
        return result.out_specs[0] if result.out_structure is LEAF else None

    def __call__(self, *args, **kwargs):
        traced = self.lowered.traced
        spec = traced.jitted.spec(args, kwargs)
        if spec.signature != traced.spec.signature:
            raise TypeError("this compiled program was specialised to "
                            f"({traced.spec.signature.describe()}); called with "
                            f"({spec.signature.describe()})")
        extra = self.reads.check(spec.leaves)
        if extra is None:
            raise TypeError("this compiled program assumed what no longer holds: "
                            + self.reads.explain(spec.leaves))
        return self.run(list(spec.leaves) + extra)


def _write_back(mutated, leaves, outputs) -> None:
    for leaf_pos, _ in mutated:
        if not leaves[leaf_pos].flags.writeable:
            raise ValueError("assignment destination is read-only")
    for leaf_pos, out_index in mutated:
        np.copyto(leaves[leaf_pos], outputs[out_index])


def _rebuild(out: OutSpec, outputs: Sequence[np.ndarray], leaves: Sequence, bases: dict):
    if out.how == "view":
        leaf_pos, steps = out.value
        if leaf_pos >= 0:
            value = leaves[leaf_pos]
        else:
            value = bases.get(out.index)
            if value is None:
                value = bases[out.index] = np.array(outputs[out.index])
        for fn, operand_outs in steps:
            value = fn(value, *(outputs[k][()] for k in operand_outs))
        return value
    if out.how == "static":
        return out.value
    if out.how == "const":
        return np.copy(out.value) if isinstance(out.value, np.ndarray) else out.value
    value = outputs[out.index]
    if out.kind == "scalar":
        return value[()]
    if out.kind == "python":
        return value.item()
    return np.array(value)     # a writable array of the caller's own


# -- jit --------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Fallback:
    """The decision to run a call as plain Python, and why: cached like a compiled program,
    valid while what its trace read (up to where it stopped) still holds."""
    reason: str
    reads: Reads


@dataclass
class CallReport:
    """What the last call of a jitted function did."""
    cache_hit: bool
    miss_reason: str | None
    compiled: Compiled
    signature: Signature


MEMO_SIZE = 256


class Jitted:
    """`jit(f)`: f compiled once per monomorphic signature (and per what its trace read
    beyond its arguments: see `control.reads`).

    A call first tries the fast path: a key of its positional arguments (`fast_key`) finds
    the cache entries of its signature without building the signature, and their guards are
    checked; anything else takes the full path (`spec`, `find`), which also fills the memo."""

    def __init__(self, fun: Callable, static_argnames: Sequence[str] = (),
                 static_argnums: Sequence[int] = (), name: str | None = None,
                 traced_argnames: Sequence[str] = (), roll: bool = True,
                 convert: bool = True, reader: str | None = None):
        self.fun = fun
        self._roll = roll
        self._convert = convert
        self._fun_to_trace: Callable | None = None
        self.name = name or getattr(fun, "__qualname__", getattr(fun, "__name__", "function"))
        self.reader = reader or self.name
        self._signature = _python_signature(fun)
        self._params = _positional_params(self._signature)
        params = list(self._signature.parameters) if self._signature else []
        self.static_names = frozenset(static_argnames) | frozenset(
            params[i] for i in static_argnums if i < len(params))
        self.traced_names = frozenset(traced_argnames)
        self._forced_static = frozenset(i for i, p in enumerate(params)
                                        if p in self.static_names)
        self.owner_key: Hashable = ("function", id(fun), self.name)
        self._memo: dict[tuple, list[CacheRecord]] = {}
        self._memo_generation = TRACE_CACHE.generation
        self._last: tuple[bool, str | None, CacheRecord] | None = None
        self.last_reads: Reads | None = None
        functools.update_wrapper(self, fun)

    @property
    def last_call(self) -> CallReport | None:
        if self._last is None:
            return None
        hit, reason, record = self._last
        return CallReport(hit, reason, record.entry, record.signature)

    def arguments(self, args, kwargs) -> dict[str, Any]:
        """The call's arguments by parameter name (so that cache reasons name them)."""
        if self._params is not None and not kwargs and len(args) == len(self._params):
            return dict(zip(self._params, args, strict=True))
        if self._signature is None:
            return {"args": list(args), "kwargs": dict(kwargs)}
        return dict(self._signature.bind(*args, **kwargs).arguments)

    def fun_to_trace(self) -> Callable:
        """The function traced: `fun` converted (its reads made visible, its Python loops and
        branches rolled) where its source is available (see control.convert)."""
        if self._fun_to_trace is None:
            self._fun_to_trace = converted_function(self.fun, self._roll) if self._convert \
                else self.fun
        return self._fun_to_trace

    def call_with(self, arguments: dict[str, Any]):
        fun = self.fun_to_trace()
        if self._signature is None:
            return fun(*arguments["args"], **arguments["kwargs"])
        bound = inspect.BoundArguments(self._signature, arguments)
        return fun(*bound.args, **bound.kwargs)

    def spec(self, args, kwargs) -> CallSpec:
        return call_spec(self.arguments(args, kwargs), self.static_names, self.traced_names)

    # calls ---------------------------------------------------------------------------------
    def __call__(self, *args, **kwargs):
        found = None if kwargs else self.find_fast(args)
        if found is not None:
            record, leaves = found
            TRACE_CACHE.record_hit(record)
            self._last = (True, None, record)
            return record.entry.run(leaves)
        spec = self.spec(args, kwargs)
        record, leaves, reason = self.find(spec, args if not kwargs else None)
        if record is None:
            record, reason = self.compile_for(spec, reason=reason)
            leaves = self.leaves_after_compile(record, spec)
            self.remember(args if not kwargs else None, spec)
        else:
            TRACE_CACHE.record_hit(record)
        self._last = (reason is None, reason, record)
        return record.entry.run(leaves)

    def find_fast(self, args) -> tuple[CacheRecord, Sequence] | None:
        """The cache entry whose guards hold for a call with these positional arguments, by
        the fast key; None when the fast path cannot tell."""
        if self._params is None or len(args) != len(self._params):
            return None
        if self._memo_generation != TRACE_CACHE.generation:
            self._memo.clear()
            self._memo_generation = TRACE_CACHE.generation
        key = fast_key(args, self._forced_static)
        variants = self._memo.get(key) if key is not None else None
        return None if variants is None else first_holding(variants, args)

    def find(self, spec: CallSpec, args=None) -> tuple[CacheRecord | None, Sequence | None,
                                                       str | None]:
        """(record, leaves, None) for the entry whose guards hold, or (None, None, why not)
        when the signature has entries but none holds (None: it has none)."""
        variants = TRACE_CACHE.variants(self.owner_key, spec.signature)
        found = first_holding(variants, spec.leaves)
        if found is not None:
            self.remember(args, spec)
            return found[0], found[1], None
        if variants:
            return None, None, variants[0].entry.reads.explain(spec.leaves) or \
                "what the trace read changed"
        return None, None, None

    def remember(self, args, spec: CallSpec) -> None:
        """Let re-runs with these arguments find this signature's entries by the fast key."""
        key = fast_key(args, self._forced_static) if args is not None and \
            self._params is not None and len(args) == len(self._params) else None
        if key is not None:
            if len(self._memo) >= MEMO_SIZE:
                self._memo.clear()
            self._memo[key] = TRACE_CACHE.variants(self.owner_key, spec.signature)

    def leaves_after_compile(self, record: CacheRecord, spec: CallSpec) -> list:
        """The leaves to run a new entry with: its implicit inputs fetched again (as a re-run
        would); an error when the trace itself changed what it read."""
        extra = record.entry.reads.check(spec.leaves)
        if extra is None:
            raise UnsupportedError(
                "running it changes what it reads: " + record.entry.reads.explain(spec.leaves),
                None, "set such values before, not inside, the compiled code")
        return list(spec.leaves) + extra

    # compiling -----------------------------------------------------------------------------
    def compile_for(self, spec: CallSpec, first: str = "first call",
                    reason: str | None = None) -> tuple[CacheRecord, str]:
        """Trace, lower and compile for this call's signature; cache it; say why it missed."""
        reason = reason or TRACE_CACHE.miss_reason(self.owner_key, spec.signature, first,
                                                   self.reader)
        TRACE_CACHE.record_miss(self.name, reason)
        compiled = self.traced_for(spec).lower().compile()
        record = TRACE_CACHE.insert(self.owner_key, self.name, spec.signature, compiled,
                                    compiled.reads.describe())
        log.info("compiled %s for (%s): %s", self.name, record.signature_text,
                 ", ".join(f"{stage} {seconds * 1e3:.1f} ms"
                           for stage, seconds in compiled.timings.items()))
        return record, reason

    def remember_fallback(self, spec: CallSpec, reason: str) -> CacheRecord:
        """Cache the decision to run this signature as plain Python (with the guards its
        trace recorded before it stopped)."""
        reads = self.last_reads or Reads()
        return TRACE_CACHE.insert(self.owner_key, self.name, spec.signature,
                                  Fallback(reason, reads), reads.describe())

    def _note_reads(self, reads: Reads) -> None:
        self.last_reads = reads

    def traced_for(self, spec: CallSpec) -> Traced:
        self.last_reads = None
        return Traced(trace_function(self.call_with, spec, self._note_reads), spec, self.name,
                      self)

    def trace(self, *args, **kwargs) -> Traced:
        return self.traced_for(self.spec(args, kwargs))

    def lower(self, *args, **kwargs) -> Lowered:
        return self.trace(*args, **kwargs).lower()

    def cache_records(self) -> list[CacheRecord]:
        return TRACE_CACHE.records(self.owner_key)


def first_holding(variants: list[CacheRecord], leaves) -> tuple[CacheRecord, Sequence] | None:
    """The first record whose guards hold for these leaves, and the leaves to run it with."""
    for record in variants:
        extra = record.entry.reads.check(leaves)
        if extra is not None:
            return record, ([*leaves, *extra] if extra else leaves)
    return None


def _positional_params(signature: inspect.Signature | None) -> tuple[str, ...] | None:
    """The parameter names when every parameter can be given by position (and none is *args,
    **kwargs or keyword-only): calls with all of them by position take the fast path."""
    if signature is None:
        return None
    kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    if any(p.kind not in kinds for p in signature.parameters.values()):
        return None
    return tuple(signature.parameters)


def _python_signature(fun) -> inspect.Signature | None:
    try:
        return inspect.signature(fun)
    except (TypeError, ValueError):
        return None


def jit(fun: Callable | None = None, *, static_argnames: Sequence[str] = (),
        static_argnums: Sequence[int] = (), roll: bool = True):
    """Compile `fun` with XLA, once per monomorphic signature of its arguments.

    Arrays and NumPy scalars are traced; Python floats and complexes are traced as weak
    scalars; everything else (ints, bools, strings, None, tuples of those) is static: part of
    the cache key. `static_argnames`/`static_argnums` make traced arguments static.
    `roll=False` traces Python loops by running them (unrolled) instead of rolling them
    into XLA loops."""
    if fun is None:
        return functools.partial(jit, static_argnames=static_argnames,
                                 static_argnums=static_argnums, roll=roll)
    if isinstance(static_argnames, str):
        static_argnames = (static_argnames,)
    return Jitted(fun, static_argnames, static_argnums, roll=roll)
