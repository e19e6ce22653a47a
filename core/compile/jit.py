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
from ..control.vectorise import loop_notes
from ..frontend.convert import converted_function
from ..frontend.reads import Reads, guard_globals, is_user_function
from ..frontend.unrolled import unroll_notes
from ..ir import Graph
from ..lowering import lower
from ..numpy import verify_checks
from ..tracing import current_trace
from ..tree_util import LEAF, unflatten
from . import blas, hostkernels, hostloops, hostmemory, results, xla
from .cache import EXECUTABLE_CACHE, TRACE_CACHE, CacheRecord, Signature, executable_key
from .devicecall import DevicePrograms, device_call, takes_device_path
from .diskcache import FromDisk, load_or_compile
from .dispatch import cache_miss, install_dispatcher
from .estimate import check_compile_budget, runs_briefly
from .kernels import parse_optimized_hlo
from .profile import EVENT_BUDGET, KernelTimes, profile_call
from .report import CallBreakdown
from .prepare import Memo, PreparedCall, find_fast, prepare
from .signature import CallSpec, call_spec
from .trace import OutSpec, TraceResult, trace_function
from .units import fmt_bytes

log = logging.getLogger("psc_jit")


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
        loops = hostloops.plan(graph, xla.ffi_include_dirs())
        text = lower(graph, self.name,
                     blas.available_targets() | hostkernels.available_targets(),
                     host_loops=loops.targets)
        consts = tuple(hostmemory.aligned_copy(c) for c in consts)    # read in place on every call
        return Lowered(self, graph, consts, text, time.perf_counter() - start, loops)


@dataclass
class Lowered:
    traced: Traced
    graph: Graph               # the graph lowered (large constants hoisted to inputs)
    consts: tuple[np.ndarray, ...]
    text: str
    lower_seconds: float
    loops: hostloops.Plan | None = None     # which loops run as C (host loops), and why not

    def as_text(self) -> str:
        return self.text

    def compile(self, waiting: Callable[[float], None] | None = None) -> Compiled:
        """XLA's executable (from the cache, or compiled now: refused first when its estimated
        compile time is over the budget; `waiting(seconds)` is told about a long compile)."""
        start = time.perf_counter()
        key = executable_key(self.text, xla.jaxlib_version(), xla.platform(),
                             xla.target_description())
        origin = []

        inline = runs_briefly(self.graph)

        def compile_now():
            check_compile_budget(self.graph, unroll_notes(self.traced.graph, limit=0))
            return xla.compile_stablehlo(self.text, self.graph.in_avals, self.graph.out_avals,
                                         waiting, inline)

        def load_or_compile_now():
            executable, from_disk = load_or_compile(key, self.text, self.graph.in_avals,
                                                    self.graph.out_avals, compile_now,
                                                    inline=inline)
            origin.append(from_disk)
            return executable
        executable, hit = EXECUTABLE_CACHE.get_or_compile(key, self.traced.name,
                                                          load_or_compile_now)
        executable.compile_variants_with(_variant_compiler(self.graph.out_avals, inline))
        return Compiled(self, executable, time.perf_counter() - start, hit,
                        origin[0] if origin else None)


def _variant_compiler(out_avals, inline: bool) -> Callable:
    """How a variant of a program for misaligned inputs is compiled (`offsets`): through the
    disk cache too, so that a later session loads it instead of compiling it anew."""
    def compile_variant(text: str, in_avals) -> xla.Executable:
        key = executable_key(text, xla.jaxlib_version(), xla.platform(),
                             xla.target_description())
        return load_or_compile(key, text, in_avals, out_avals, lambda: xla.compile_stablehlo(
            text, in_avals, out_avals, inline=inline), inline=inline)[0]
    return compile_variant


@dataclass
class Compiled:
    lowered: Lowered
    executable: xla.Executable
    compile_seconds: float
    executable_cache_hit: bool
    from_disk: FromDisk | None = None      # loaded from the disk cache, not compiled
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
        """XLA's cost analysis of the executable (bytes accessed, ...), with `flops` and
        `transcendentals` the sums of its kernels' (`kernels`: each kernel counted alone by
        XLA, psc_jit's custom calls by their shapes, loops by their iterations), which the
        whole-executable count gets wrong for those; `flops` is absent when a loop's
        iterations are not known before it runs."""
        if self._cost is None:
            cost = self.executable.cost_analysis()
            cost.pop("flops", None)
            flops = self.kernels.flops
            if flops is not None:
                cost["flops"] = flops
            cost["transcendentals"] = float(sum(k.transcendentals for k in self.kernels.kernels))
            self._cost = cost
        return dict(self._cost)

    def memory_stats(self):
        return self.executable.memory_stats()

    @property
    def kernels(self):
        """The fused kernels (psc_jit.core.kernels.FusionModel) of the optimized module."""
        if self._kernels is None:
            self._kernels = parse_optimized_hlo(self.as_text(), xla.module_cost)
        return self._kernels

    @functools.cached_property
    def notes(self) -> tuple[str, ...]:
        """What a user should know about this program's size (equations from unrolled loops)
        and its loops (which ran as one batched computation, and why the others did not)."""
        host = self.lowered.loops.notes() if self.lowered.loops is not None else []
        return tuple(unroll_notes(self.graph)) + tuple(loop_notes(self.graph)) + tuple(host)

    @property
    def timings(self) -> dict[str, float]:
        if self.from_disk is not None:      # one figure for the load, where it is told
            last, seconds = "load from disk", self.from_disk.load_seconds
        else:
            last, seconds = "compile", self.compile_seconds
        return {"trace": self.lowered.traced.result.trace_seconds,
                "lower": self.lowered.lower_seconds, last: seconds}

    @functools.cached_property
    def reads(self) -> Reads:
        """What the trace read beyond its arguments: checked before every run."""
        return self.lowered.traced.result.reads

    def run(self, leaves: Sequence, marks: list | None = None):
        """Execute with the call's leaves (argument leaves, then implicit inputs); write
        mutated inputs back; rebuild outputs. `marks`, when given, gets the clock before the
        inputs go to XLA, after they are there, and after XLA's run (see `CallBreakdown`)."""
        __tracebackhide__ = True    # IPython shows the cell's line, not ours
        result = self._result
        if self._arrays_only:
            inputs = [leaves[i] for i in self._positions]
        else:
            inputs = [leaves[i] if dtype is None else np.asarray(leaves[i], dtype)
                      for i, dtype in result.inputs]
        if self._consts:
            inputs += self._consts
        if marks is None:
            outputs = self.executable.execute(inputs)
        else:
            marks.append(time.perf_counter())
            outputs = self.executable.execute(inputs, marks)
        if result.checks:
            verify_checks(result.checks, outputs[result.check_index],
                          outputs[result.check_index + 1])
        if result.mutated:
            results.write_back(result.mutated, leaves, outputs)
        if self._one_output is not None:
            return results.rebuild(self._one_output, outputs, leaves, {})
        bases: dict[int, np.ndarray] = {}
        return unflatten(result.out_structure,
                         [results.rebuild(o, outputs, leaves, bases) for o in result.out_specs])

    def rebuild(self, outputs: Sequence[np.ndarray]):
        """The return value from XLA's outputs alone, checks verified (a dispatcher's hit)."""
        result = self._result
        if result.checks:
            verify_checks(result.checks, outputs[result.check_index],
                          outputs[result.check_index + 1])
        if self._one_output is not None:
            return results.rebuild(self._one_output, outputs, (), {})
        bases: dict[int, np.ndarray] = {}
        return unflatten(self._result.out_structure,
                         [results.rebuild(o, outputs, (), bases) for o in self._result.out_specs])

    @property
    def mutates(self) -> bool:
        """Whether a call updates some of its inputs in place."""
        return bool(self._result.mutated)

    def updated_arrays(self, leaves: Sequence) -> list[np.ndarray]:
        """The caller's arrays a call with these leaves updates in place (each once)."""
        found: dict[int, np.ndarray] = {}
        for leaf_pos, _ in self._result.mutated:
            found.setdefault(id(leaves[leaf_pos]), leaves[leaf_pos])
        return list(found.values())

    def copies(self, leaves: Sequence) -> tuple[str, ...]:
        """The inputs of a call with these leaves that are copied on their way into XLA, and
        why: XLA's CPU client takes an array without a copy only when its data is contiguous
        and 64-byte aligned."""
        found = []
        in_place = self.executable.read_in_place([leaves[i] for i, _ in self._result.inputs] +
                                                 list(self._consts))
        for k, ((i, dtype), name) in enumerate(zip(self._result.inputs, self.input_names,
                                                   strict=True)):
            value = leaves[i]
            if dtype is not None or not isinstance(value, np.ndarray) or value.nbytes < 64 \
                    or k in in_place:
                continue
            if not value.flags.c_contiguous:
                found.append(f"{name} is not contiguous: {fmt_bytes(value.nbytes)} copied")
            elif value.ctypes.data % 64:
                found.append(f"{name} is not 64-byte aligned: {fmt_bytes(value.nbytes)} copied")
        return tuple(found)

    @functools.cached_property
    def input_names(self) -> tuple[str, ...]:
        """How the user names each input of the program (`x`, `W (read by f)`)."""
        traced = self.lowered.traced
        paths, reads = traced.spec.paths, self._result.reads
        implicit = [r.source.text() for r in reads.inputs]
        return tuple(paths[i] if i < len(paths) else implicit[i - len(paths)]
                     for i, _ in self._result.inputs)

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


# -- jit --------------------------------------------------------------------------------------

@dataclass
class CallReport:
    """What the last call of a jitted function did."""
    cache_hit: bool
    miss_reason: str | None
    compiled: Compiled
    signature: Signature


class Jitted:
    """`jit(f)`: f compiled once per monomorphic signature (and per what its trace read
    beyond its arguments: see `frontend.reads`).

    A call that jaxlib's dispatcher cannot run (see dispatch.py) goes through `prepare`, the
    one door to the compiler, which the magic takes too: the fast key of its positional
    arguments finds the cache entries of its signature, or the full signature does (which
    also fills the memo), or the call is compiled (`compile_for`)."""

    def __init__(self, fun: Callable, static_argnames: Sequence[str] = (),
                 static_argnums: Sequence[int] = (), name: str | None = None,
                 traced_argnames: Sequence[str] = (), roll: bool = True,
                 convert: bool = True, reader: str | None = None,
                 in_shardings=None, out_shardings=None):
        self.fun = fun
        self.in_shardings, self.out_shardings = in_shardings, out_shardings
        self.device_programs = DevicePrograms()     # programs of calls on devices
        self._roll = roll
        self._convert = convert
        self._fun_to_trace: Callable | None = None
        self.name = name or getattr(fun, "__qualname__", getattr(fun, "__name__", "function"))
        self.reader = reader or self.name
        self._signature = _python_signature(fun)
        self.params = _positional_params(self._signature)
        self._by_keyword = frozenset(
            p.name for p in (self._signature.parameters.values() if self._signature else ())
            if p.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD)
        params = list(self._signature.parameters) if self._signature else []
        self.static_names = frozenset(static_argnames) | frozenset(
            params[i] for i in static_argnums if i < len(params))
        self.traced_names = frozenset(traced_argnames)
        self.forced_static = frozenset(i for i, p in enumerate(params)
                                        if p in self.static_names)
        # wrappers of one function share programs only when they trace it alike
        self.owner_key: Hashable = ("function", id(fun), self.name, roll, convert)
        self.memo = Memo(TRACE_CACHE.generation)    # fast keys -> records (see prepare.py)
        self._router_guards: tuple = ()     # what hits read beyond arguments (dispatch.GUARDS)
        self._last: tuple[bool, str | None, CacheRecord] | None = None
        self.last_reads: Reads | None = None
        functools.update_wrapper(self, fun, updated=())   # its names, not its attributes

    @property
    def last_call(self) -> CallReport | None:
        if self._last is None:
            return None
        hit, reason, record = self._last
        return CallReport(hit, reason, record.entry, record.signature)

    def arguments(self, args, kwargs) -> dict[str, Any]:
        """The call's arguments by parameter name (so that cache reasons name them)."""
        if self.params is not None and not kwargs and len(args) == len(self.params):
            return dict(zip(self.params, args, strict=True))
        if self._signature is None:
            return {"args": list(args), "kwargs": dict(kwargs)}
        return dict(self._signature.bind(*args, **kwargs).arguments)

    def fun_to_trace(self) -> Callable:
        """The function traced: `fun` converted (its reads made visible, its Python loops and
        branches rolled) where its source is available (see frontend.convert)."""
        if self._fun_to_trace is None:
            user = is_user_function(getattr(self.fun, "__func__", self.fun))
            self._fun_to_trace = converted_function(self.fun, self._roll) \
                if self._convert and user else self.fun
        return self._fun_to_trace

    def call_with(self, arguments: dict[str, Any]):
        fun = self.fun_to_trace()
        if fun is self.fun and self._convert and is_user_function(fun):
            guard_globals(fun)          # (its source unavailable: it reads its globals unseen)
        if self._signature is None:
            return fun(*arguments["args"], **arguments["kwargs"])
        bound = inspect.BoundArguments(self._signature, arguments)
        return fun(*bound.args, **bound.kwargs)

    def spec(self, args, kwargs) -> CallSpec:
        return call_spec(self.arguments(args, kwargs), self.static_names, self.traced_names)

    # calls ---------------------------------------------------------------------------------
    def __call__(self, *args, **kwargs):     # the first call: see dispatch.install_dispatcher
        return install_dispatcher(Jitted)(self, *args, **kwargs)

    def _cache_miss(self, *args, **kwargs):
        return cache_miss(self, args, kwargs)     # the dispatcher's miss: see dispatch.py

    def _python_call(self, *args, **kwargs):
        if current_trace() is not None:     # inside another trace (grad(jit(f))): join it
            return self.call_with(self.arguments(args, kwargs))
        if takes_device_path(self, args, kwargs):
            self._last = None       # (no entry of the trace cache ran: no FastPath for it)
            return device_call(self, args, kwargs)
        call = prepare(self, args, kwargs)
        self._last = (call.hit, call.miss_reason, call.record)
        try:
            return call.run()
        except ValueError as err:
            if not getattr(err, "psc_plain_raises", False):
                raise
        # An update of a read-only input was refused before anything was written back: plain
        # Python makes the same call and raises NumPy's own error, with the text of the
        # operation that wrote (outside the handler: not shown chained to psc_jit's).
        return self.fun(*args, **kwargs)

    def prepare(self, args: tuple, kwargs: dict | None = None, *, first: str = "first call",
                progress: Callable[[str], None] | None = None, fall_back: bool = False,
                count: bool = True) -> PreparedCall:
        """The call made ready to run, through the one door to the compiler (prepare.py)."""
        return prepare(self, args, kwargs, first=first, progress=progress, fall_back=fall_back,
                       count=count)

    def find_fast(self, args) -> tuple[CacheRecord, Sequence] | None:
        """The cache entry whose guards hold for a call with these positional arguments, by
        the fast key; None when the fast path cannot tell."""
        return find_fast(self, args)

    def positional(self, args: tuple, kwargs: dict) -> tuple | None:
        """The call's arguments in parameter order when the keywords given are exactly the
        parameters after the positional ones (so `f(x=a, y=b)` re-runs by the fast key as
        `f(a, b)` does); None when only binding the signature can tell."""
        if not kwargs:
            return args
        if self.params is None:
            return None
        rest = self.params[len(args):]
        if len(rest) != len(kwargs) or not self._by_keyword.issuperset(rest):
            return None
        try:
            return args + tuple(kwargs[p] for p in rest)
        except KeyError:
            return None

    # compiling -----------------------------------------------------------------------------
    def compile_for(self, spec: CallSpec, first: str = "first call",
                    reason: str | None = None, progress: Callable[[str], None] | None = None
                    ) -> tuple[CacheRecord, str]:
        """Trace, lower and compile for this call's signature; cache it; say why it missed.
        `progress(stage)` hears "trace", "lower", "compile" and, while XLA compiles, how long it
        has been at it. An interrupt leaves the cache as it was."""
        progress = progress or _silent
        reason = reason or TRACE_CACHE.miss_reason(self.owner_key, spec.signature, first,
                                                   self.reader)
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
        record = TRACE_CACHE.insert(self.owner_key, self.name, spec.signature, compiled,
                                    compiled.reads.describe())
        log.info("compiled %s for (%s): %s", self.name, record.signature_text,
                 ", ".join(f"{stage} {seconds * 1e3:.1f} ms"
                           for stage, seconds in compiled.timings.items()))
        return record, reason

    def _note_reads(self, reads: Reads) -> None:
        self.last_reads = reads

    def traced_for(self, spec: CallSpec) -> Traced:
        self.last_reads = None
        return Traced(trace_function(self.call_with, spec, self._note_reads), spec, self.name,
                      self)

    def trace(self, *args, **kwargs) -> Traced:
        return self.traced_for(self.spec(args, kwargs))

    def time_call(self, *args) -> tuple[Any, CallBreakdown]:
        """One call through `prepare`, as a re-run makes it, with the clock read between the
        parts of the call: (result, CallBreakdown). A call that has no entry yet is compiled
        first, untimed. The call happens: in-place updates land."""
        start = time.perf_counter()
        call = self.compiled_call(args)
        if not call.hit:
            start = time.perf_counter()
            call = self.compiled_call(args)
        marks = [start]
        result = call.run(marks)
        marks.append(time.perf_counter())
        return result, CallBreakdown.from_marks(marks, call.record.entry.copies(call.leaves))

    def profile_call(self, *args, max_events: int = EVENT_BUDGET
                     ) -> tuple[Any, CallBreakdown, KernelTimes]:
        """`time_call` under jaxlib's profiler: also what each fused kernel took (opt-in, one
        call; see `profile.profile_call`)."""
        return profile_call(self, *args, max_events=max_events)

    def compiled_call(self, args: tuple) -> PreparedCall:
        """`prepare` for a measurement (its hit not counted), which needs a compiled program:
        LookupError when the call runs as plain Python."""
        call = prepare(self, args, count=False)
        if call.fallback is not None or not isinstance(call.record.entry, Compiled):
            raise LookupError(f"{self.name} runs this call as plain Python: "
                              f"{call.fallback or call.record.entry.reason}")
        return call

    def lower(self, *args, **kwargs) -> Lowered:
        return self.trace(*args, **kwargs).lower()

    def cache_records(self) -> list[CacheRecord]:
        return TRACE_CACHE.records(self.owner_key)


def _silent(stage: str) -> None:
    """The default progress callback: tells no one."""


def _positional_params(signature: inspect.Signature | None) -> tuple[str, ...] | None:
    """The names of the parameters that can be given by position, when no parameter is
    *args or **kwargs and every keyword-only one has a default (`np.linalg.cholesky(a, /, *,
    upper=False)`): calls with all of them by position take the fast path (binding them by
    name gives the same arguments, the defaults left out)."""
    if signature is None:
        return None
    kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    params = signature.parameters.values()
    if any(p.kind not in kinds and not (p.kind is inspect.Parameter.KEYWORD_ONLY and
                                        p.default is not inspect.Parameter.empty)
           for p in params):
        return None
    return tuple(p.name for p in params if p.kind in kinds)


def _python_signature(fun) -> inspect.Signature | None:
    try:
        return inspect.signature(fun)
    except (TypeError, ValueError):
        return None


def jit(fun: Callable | None = None, *, static_argnames: Sequence[str] = (),
        static_argnums: Sequence[int] = (), roll: bool = True, in_shardings=None,
        out_shardings=None):
    """Compile `fun` with XLA, once per monomorphic signature of its arguments.

    Arrays and NumPy scalars are traced; Python floats and complexes are traced as weak
    scalars; everything else (ints, bools, strings, None, tuples of those) is static: part of
    the cache key. `static_argnames`/`static_argnums` make traced arguments static.
    `roll=False` traces Python loops by running them (unrolled) instead of rolling them
    into XLA loops.

    `in_shardings` (one NamedSharding for every argument, or one per parameter by position
    or by name, None where the argument's own layout holds) and `out_shardings` (one for
    every result, or one per result) partition the program over a mesh's devices (see
    devicecall.py); so does an argument that is a psc_jit.Array. Such calls return Arrays
    without waiting when given an Array or `out_shardings`."""
    if fun is None:
        return functools.partial(jit, static_argnames=static_argnames,
                                 static_argnums=static_argnums, roll=roll,
                                 in_shardings=in_shardings, out_shardings=out_shardings)
    if isinstance(static_argnames, str):
        static_argnames = (static_argnames,)
    return Jitted(fun, static_argnames, static_argnums, roll=roll, in_shardings=in_shardings,
                  out_shardings=out_shardings)
