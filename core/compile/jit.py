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
from ..control.rewrite import rolled_function
from ..control.runtime import unroll_notes
from ..ir import Graph, ShapedArray, Var
from ..lowering import lower
from ..numpy import MaskedSelection, check_outputs, verify_checks
from ..tracing import (BudgetExceeded, ConcretizationError, Trace, Tracer, UnsupportedError,
                       current_trace, traceback_source, tracing)
from ..tree_util import flatten_with_paths, unflatten
from . import xla
from .cache import (EXECUTABLE_CACHE, TRACE_CACHE, CacheRecord, Signature, StaticLeaf,
                    TracedLeaf, executable_key)
from .estimate import check_compile_budget
from .kernels import parse_optimized_hlo

log = logging.getLogger("psc_jit")

SUPPORTED_DTYPES = frozenset(np.dtype(t) for t in (
    np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64,
    np.float16, np.float32, np.float64, np.complex64, np.complex128))


# -- signatures -------------------------------------------------------------------------------

def is_traced_value(value) -> bool:
    if isinstance(value, np.ndarray):
        return value.dtype in SUPPORTED_DTYPES
    if isinstance(value, np.generic):
        return value.dtype in SUPPORTED_DTYPES
    return isinstance(value, (float, complex)) and not isinstance(value, bool)


def leaf_spec(path: str, value, force: str | None = None):
    """TracedLeaf or StaticLeaf for one argument leaf; force is "static" or "traced"."""
    traced = is_traced_value(value) if force is None else force == "traced"
    if traced:
        if isinstance(value, np.ndarray):
            strides = None if value.flags.c_contiguous else value.strides   # views follow it
            return TracedLeaf(path, ShapedArray(value.shape, value.dtype), "array", strides)
        if isinstance(value, np.generic):
            return TracedLeaf(path, ShapedArray((), value.dtype), "scalar")
        if isinstance(value, (bool, int, float, complex)):
            return TracedLeaf(path, ShapedArray((), np.result_type(value), True), "python")
        raise TypeError(f"{path}: a {type(value).__name__} cannot be traced")
    return StaticLeaf(path, static_key(path, value))


def static_key(path: str, value) -> Hashable:
    if isinstance(value, np.ndarray):
        return ("ndarray", value.shape, value.dtype.str, value.tobytes())
    try:
        hash(value)
    except TypeError:
        raise TypeError(f"{path}: a {type(value).__name__} is neither an array nor hashable, so "
                        "it cannot be a static argument") from None
    return value


@dataclass(frozen=True)
class CallSpec:
    """How one call's arguments split into traced leaves and static values."""
    signature: Signature
    leaves: tuple[Any, ...]            # every leaf value, in order
    traced_index: tuple[int, ...]      # positions of traced leaves


def call_spec(arguments: dict[str, Any], static_names=frozenset(),
              traced_names=frozenset()) -> CallSpec:
    """The spec of a call given its arguments by parameter name."""
    leaves, structure = flatten_with_paths(arguments)
    specs, values, traced = [], [], []
    for i, (path, value) in enumerate(leaves):
        name = path.split("[")[0]
        force = "static" if name in static_names else ("traced" if name in traced_names else None)
        spec = leaf_spec(path, value, force)
        specs.append(spec)
        values.append(value)
        if isinstance(spec, TracedLeaf):
            traced.append(i)
    aliases = _alias_groups([(specs[i].path, values[i]) for i in traced])
    return CallSpec(Signature(structure, tuple(specs), aliases), tuple(values), tuple(traced))


def _alias_groups(traced: list[tuple[str, Any]]) -> tuple[tuple[str, ...], ...]:
    by_id: dict[int, list[str]] = {}
    for path, value in traced:
        if isinstance(value, np.ndarray):
            by_id.setdefault(id(value), []).append(path)
    return tuple(tuple(paths) for paths in by_id.values() if len(paths) > 1)


def overlapping_inputs(spec: CallSpec) -> list[tuple[str, str]]:
    """Pairs of distinct traced arrays whose memory overlaps (views of one another)."""
    arrays = [(spec.signature.leaves[i].path, spec.leaves[i]) for i in spec.traced_index
              if isinstance(spec.leaves[i], np.ndarray)]
    pairs = []
    for n, (p1, a1) in enumerate(arrays):
        for p2, a2 in arrays[n + 1:]:
            if a1 is not a2 and np.may_share_memory(a1, a2) and np.shares_memory(a1, a2):
                pairs.append((p1, p2))
    return pairs


# -- tracing ----------------------------------------------------------------------------------

@dataclass(frozen=True)
class OutSpec:
    """How to rebuild one output leaf: from a graph output, a constant, or a static value; or
    ("view") as the view NumPy hands back: the same view steps (probes) applied to the input
    array it views (value = (leaf position, probes)) or to a graph output (index)."""
    how: str            # "traced", "view", "const" or "static"
    index: int = -1     # graph output index for "traced" (and "view" of a non-input)
    kind: str = "array"
    value: Any = None


@dataclass
class TraceResult:
    graph: Graph
    out_structure: Hashable
    out_specs: tuple[OutSpec, ...]
    mutated: tuple[tuple[int, int], ...]    # (leaf position in the call, graph output index)
    trace_seconds: float
    checks: tuple[tuple[str, type], ...] = ()   # run-time checks: (message, error)
    check_index: int = -1                       # graph outputs: oks, then reported values


def trace_function(call: Callable[[dict], Any], spec: CallSpec) -> TraceResult:
    """Run `call(arguments)` with tracers for the traced leaves; record the graph."""
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
    try:
        with tracing(trace):
            result = call(arguments)
    except BudgetExceeded as err:
        notes = unroll_notes(trace.to_graph((), ()), limit=0)
        raise BudgetExceeded(err.message, err.source, "; ".join(notes) or err.hint) from None
    except ValueError as err:
        if "setting an array element with a sequence" not in str(err):
            raise
        raise ConcretizationError(
            "a traced value is written into a NumPy array that is not traced",
            traceback_source(err.__traceback__), "make that array in the traced code itself "
            "(np.zeros, np.empty_like(x), ...) so that psc_jit traces it, or pass it in as an "
            "argument") from err
    return _finish_trace(trace, spec, tracers, result, start)


def _finish_trace(trace, spec, tracers, result, start) -> TraceResult:
    out_leaves, out_structure = flatten_with_paths(result)
    out_atoms, out_specs = [], []
    input_leaf = {id(t._buffer): i for i, t in tracers.items()}
    buffer_outs: dict[int, int] = {}
    for _, value in out_leaves:
        if isinstance(value, MaskedSelection):
            raise value.refuse("the result is", at_creation=True)
        if getattr(value, "__psc_window__", False):
            value.refuse("returning the value")
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
        if buf.mutated:
            if id(buf) not in seen:
                seen[id(buf)] = len(out_atoms)
                out_atoms.append(buf.var)
            mutated.append((i, seen[id(buf)]))
    _check_overlaps(spec, mutated)
    check_index = len(out_atoms)
    if trace.checks:
        out_atoms.extend(check_outputs(trace))
    in_vars = _unique_in_vars(tracers)
    graph = passes.simplify(trace.to_graph(in_vars, out_atoms))
    return TraceResult(graph, out_structure, tuple(out_specs), tuple(mutated),
                       time.perf_counter() - start,
                       tuple((c.message, c.error) for c in trace.checks), check_index)


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


def _unique_in_vars(tracers: dict[int, Tracer]) -> list[Var]:
    seen, in_vars = set(), []
    for tracer in tracers.values():
        var = tracer._buffer.initial
        if id(var) not in seen:
            seen.add(id(var))
            in_vars.append(var)
    return in_vars


def _check_overlaps(spec: CallSpec, mutated) -> None:
    if not mutated:
        return
    mutated_paths = {spec.signature.leaves[i].path for i, _ in mutated}
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
        consts = tuple(xla.aligned_copy(c) for c in consts)    # read in place on every call
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

    def compile(self, waiting: Callable[[float], None] | None = None) -> Compiled:
        """XLA's executable (from the cache, or compiled now: refused first when its estimated
        compile time is over the budget; `waiting(seconds)` is told about a long compile)."""
        start = time.perf_counter()
        key = executable_key(self.text, xla.jaxlib_version(), xla.platform())

        def compile_now():
            check_compile_budget(self.graph, unroll_notes(self.traced.graph, limit=0))
            return xla.compile_stablehlo(self.text, self.graph.in_avals, self.graph.out_avals,
                                         waiting)
        executable, hit = EXECUTABLE_CACHE.get_or_compile(key, self.traced.name, compile_now)
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

    def run(self, spec: CallSpec):
        """Execute with the call's traced leaves; write mutated inputs back; rebuild outputs."""
        inputs = _input_arrays(self.lowered.traced, spec) + list(self.lowered.consts)
        outputs = self.executable.execute(inputs)
        result = self.lowered.traced.result
        if result.checks:
            verify_checks(result.checks, outputs[result.check_index],
                                   outputs[result.check_index + 1])
        for leaf_pos, _ in result.mutated:
            if not spec.leaves[leaf_pos].flags.writeable:
                raise ValueError("assignment destination is read-only")
        for leaf_pos, out_index in result.mutated:
            np.copyto(spec.leaves[leaf_pos], outputs[out_index])
        bases: dict[int, np.ndarray] = {}
        leaves = [_rebuild(o, outputs, spec, bases) for o in result.out_specs]
        return unflatten(result.out_structure, leaves)

    def __call__(self, *args, **kwargs):
        traced = self.lowered.traced
        spec = traced.jitted.spec(args, kwargs)
        if spec.signature != traced.spec.signature:
            raise TypeError("this compiled program was specialised to "
                            f"({traced.spec.signature.describe()}); called with "
                            f"({spec.signature.describe()})")
        return self.run(spec)


def _input_arrays(traced: Traced, spec: CallSpec) -> list[np.ndarray]:
    arrays, seen = [], set()
    for i in spec.traced_index:
        value = spec.leaves[i]
        if isinstance(value, np.ndarray) and id(value) in seen:
            continue
        seen.add(id(value))
        leaf = spec.signature.leaves[i]
        arrays.append(value if isinstance(value, np.ndarray) else np.asarray(value, leaf.aval.dtype))
    return arrays


def _fresh_copy(value: np.ndarray) -> np.ndarray:
    """A constant result, copied: aligned like XLA's results when it is in C order, else in
    its own layout (as np.copy keeps it)."""
    return xla.aligned_copy(value) if value.flags.c_contiguous else np.copy(value)


def _rebuild(out: OutSpec, outputs: Sequence[np.ndarray], spec: CallSpec, bases: dict):
    if out.how == "view":
        leaf_pos, steps = out.value
        if leaf_pos >= 0:
            value = spec.leaves[leaf_pos]
        else:
            value = bases.get(out.index)
            if value is None:
                value = bases[out.index] = outputs[out.index]
        for fn, operand_outs in steps:
            value = fn(value, *(outputs[k][()] for k in operand_outs))
        return value
    if out.how == "static":
        return out.value
    if out.how == "const":
        return _fresh_copy(out.value) if isinstance(out.value, np.ndarray) else out.value
    value = outputs[out.index]
    if out.kind == "scalar":
        return value[()]
    if out.kind == "python":
        return value.item()
    return value     # XLA's result buffer: writable, the caller's own, not a copy


# -- jit --------------------------------------------------------------------------------------

@dataclass
class CallReport:
    """What the last call of a jitted function did."""
    cache_hit: bool
    miss_reason: str | None
    compiled: Compiled
    signature: Signature


class Jitted:
    """`jit(f)`: f compiled once per monomorphic signature."""

    def __init__(self, fun: Callable, static_argnames: Sequence[str] = (),
                 static_argnums: Sequence[int] = (), name: str | None = None,
                 traced_argnames: Sequence[str] = (), roll: bool = True):
        self.fun = fun
        self._roll = roll
        self._fun_to_trace: Callable | None = None
        self.name = name or getattr(fun, "__qualname__", getattr(fun, "__name__", "function"))
        self._signature = _python_signature(fun)
        params = list(self._signature.parameters) if self._signature else []
        self.static_names = frozenset(static_argnames) | frozenset(
            params[i] for i in static_argnums if i < len(params))
        self.traced_names = frozenset(traced_argnames)
        self.owner_key: Hashable = ("function", id(fun), self.name)
        self.last_call: CallReport | None = None
        functools.update_wrapper(self, fun, updated=())   # its names, not its attributes

    def arguments(self, args, kwargs) -> dict[str, Any]:
        """The call's arguments by parameter name (so that cache reasons name them)."""
        if self._signature is None:
            return {"args": list(args), "kwargs": dict(kwargs)}
        return dict(self._signature.bind(*args, **kwargs).arguments)

    def fun_to_trace(self) -> Callable:
        """The function traced: `fun` with its Python loops and branches rolled into XLA
        loops and conditionals where its source is available (see core.rolling)."""
        if self._fun_to_trace is None:
            self._fun_to_trace = rolled_function(self.fun) if self._roll else self.fun
        return self._fun_to_trace

    def call_with(self, arguments: dict[str, Any]):
        fun = self.fun_to_trace()
        if self._signature is None:
            return fun(*arguments["args"], **arguments["kwargs"])
        bound = inspect.BoundArguments(self._signature, arguments)
        return fun(*bound.args, **bound.kwargs)

    def spec(self, args, kwargs) -> CallSpec:
        return call_spec(self.arguments(args, kwargs), self.static_names, self.traced_names)

    def __call__(self, *args, **kwargs):
        if current_trace() is not None:     # inside another trace (grad(jit(f))): join it
            return self.call_with(self.arguments(args, kwargs))
        spec = self.spec(args, kwargs)
        record = TRACE_CACHE.lookup(self.owner_key, spec.signature)
        if record is not None:
            TRACE_CACHE.record_hit(record)
            self.last_call = CallReport(True, None, record.entry, spec.signature)
            return record.entry.run(spec)
        compiled, reason = self.compile_for(spec)
        self.last_call = CallReport(False, reason, compiled, spec.signature)
        return compiled.run(spec)

    def compile_for(self, spec: CallSpec, first: str = "first call",
                    progress: Callable[[str], None] | None = None) -> tuple[Compiled, str]:
        """Trace, lower and compile for this call's signature; cache it; say why it missed.
        `progress(stage)` hears "trace", "lower", "compile" and, while XLA compiles, how long it
        has been at it. An interrupt leaves the cache as it was."""
        progress = progress or _silent
        reason = TRACE_CACHE.miss_reason(self.owner_key, spec.signature, first)
        try:
            progress("trace")
            traced = self.traced_for(spec)
            progress("lower")
            lowered = traced.lower()
            progress("compile")
            compiled = lowered.compile(lambda seconds: progress(
                f"compile: XLA has been at it for {seconds:.0f} s (Kernel → Interrupt stops it)"))
        except Exception:
            TRACE_CACHE.record_miss(self.name, reason)
            raise
        TRACE_CACHE.record_miss(self.name, reason)
        TRACE_CACHE.insert(self.owner_key, self.name, spec.signature, compiled)
        log.info("compiled %s for (%s): %s", self.name, spec.signature.describe(),
                 ", ".join(f"{stage} {seconds * 1e3:.1f} ms"
                           for stage, seconds in compiled.timings.items()))
        return compiled, reason

    def traced_for(self, spec: CallSpec) -> Traced:
        return Traced(trace_function(self.call_with, spec), spec, self.name, self)

    def trace(self, *args, **kwargs) -> Traced:
        return self.traced_for(self.spec(args, kwargs))

    def lower(self, *args, **kwargs) -> Lowered:
        return self.trace(*args, **kwargs).lower()

    def cache_records(self) -> list[CacheRecord]:
        return TRACE_CACHE.records(self.owner_key)


def _silent(stage: str) -> None:
    """The default progress callback: tells no one."""


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
