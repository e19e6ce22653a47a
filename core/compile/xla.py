"""The XLA adapter: the only module of psc_jit that imports jaxlib.

jaxlib's Python surface is not a public API, so every use of it is here, against a pinned
and tested range. It offers: compile StableHLO text to an executable; execute it with NumPy
arrays in and out; the optimized HLO text (after fusion); XLA's cost analysis; memory stats;
serialize and deserialize; one call under jaxlib's profiler (each thunk XLA:CPU ran, by
its HLO instruction's name, with its time).
"""
from __future__ import annotations

import contextlib
import functools
import itertools
import operator
import os
import threading
import time
import weakref
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np

from ..ir import ShapedArray
from . import blas, hostkernels
from .errors import XlaError, run_failed as _run_failed
from .machine import host_machine
from .hostmemory import (COPIED_AT_ONCE_BYTES, InputSlot, ResultView, large_ones_aligned,
                         release_staged)
from .fastpath import FastPath, Finished
from .thunks import ThunkTrace, thunk_trace
from .waiting import run_on_worker, runs_where_called, wait_for_result, wait_for_thread

SUPPORTED_JAXLIB = ((0, 10, 2), (0, 11, 0))     # [lowest, first unsupported)


def _version_tuple(text: str) -> tuple[int, ...]:
    return tuple(int("".join(c for c in piece if c.isdigit()) or 0)
                 for piece in text.split(".")[:3])


@functools.cache
def _jaxlib():
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "1")   # keep XLA's start-up INFO lines quiet
    try:
        import jaxlib
        from jaxlib import _jax, xla_client
    except ImportError as err:
        raise XlaError("psc_jit needs jaxlib (the XLA runtime): pip install 'jaxlib>=0.10.2,<0.11'"
                       ) from err
    version = _version_tuple(jaxlib.__version__)
    lo, hi = SUPPORTED_JAXLIB
    if not lo <= version < hi:
        raise XlaError(
            f"psc_jit is tested with jaxlib >= {'.'.join(map(str, lo))} and < "
            f"{'.'.join(map(str, hi))}; this is jaxlib {jaxlib.__version__}. "
            f"Install a tested one: pip install 'jaxlib>=0.10.2,<0.11'")
    return jaxlib, _jax, xla_client


def jaxlib_version() -> str:
    return _jaxlib()[0].__version__


_CLIENT_LOCK = threading.Lock()
_DISTRIBUTED: list = []     # the distributed runtime, once started (xla_distributed.py)


@functools.cache
def _client(inline: bool):
    """The process's CPU clients: the asynchronous one (XLA runs a program on a thread of its
    own while the caller waits in slices it can interrupt) and the inline one (the program
    runs on the calling thread: no hand-off to XLA's thread and back, which costs a small
    call tens of µs, but an interrupt waits for the run's end; see `Executable`). Buffers and
    executables of two clients do not mix (NumPy arrays pass between them), so creating each
    is serialized (two threads' first calls must not make two). `inline` has no default: the
    cache keys on the arguments as given, and `_client()` beside `_client(False)` would make
    a second asynchronous client."""
    with _CLIENT_LOCK:
        return _make_client(inline)


@functools.cache
def _make_client(inline: bool):
    _, _jax, xla_client = _jaxlib()
    if _DISTRIBUTED and not inline:     # every process's devices (`start_distributed`)
        return _DISTRIBUTED[0].cpu_client
    return xla_client.make_cpu_client(asynchronous=not inline)


@functools.cache
def _device(inline: bool):
    return _client(inline).local_devices()[0]   # (distributed: devices()[0] is process 0's)


def platform() -> str:
    return _client(False).platform


def live_arrays() -> int:
    """How many XLA arrays of psc_jit's clients Python still holds (results kept as NumPy
    arrays included): a run's buffers are freed once none refers to them and it has ended."""
    return sum(len(_client(inline).live_arrays()) for inline in (False, True))


# XLA options beyond jaxlib's defaults: none (`xla_cpu_copy_insertion_use_region_analysis`
# saved a loop's array copies, but with jaxlib 0.10.2 it miscompiles nested loops: an inner
# loop read its outer index one pass ahead; tests/core/compile/test_xla_loops.py).
COMPILE_OVERRIDES: tuple[tuple[str, object], ...] = ()


def compile_options(xla_client):
    options = xla_client.CompileOptions()
    options.env_option_overrides = list(COMPILE_OVERRIDES)
    return options


@functools.cache
def target_description() -> str:
    """What XLA's CPU code is generated for, beyond jaxlib's version and the platform: the
    machine and its CPU's feature flags (`machine.py`), XLA_FLAGS and psc_jit's own options.
    Part of a persistent executable's key."""
    return "\n".join((_client(False).platform_version, host_machine(),
                      os.environ.get("XLA_FLAGS", ""), repr(COMPILE_OVERRIDES)))


@functools.cache
def _sharding(inline: bool):
    _, _jax, xla_client = _jaxlib()

    class DeviceSharding(_jax.SingleDeviceSharding):
        """The few attributes jaxlib's C++ asks of a sharding object."""

        def _to_xla_hlo_sharding(self, num_dimensions):
            return xla_client.HloSharding.replicate()

        @property
        def memory_kind(self):
            return self._memory_kind

        @property
        def _device_assignment(self):
            return (self._device,)

    return DeviceSharding(_device(inline))


@dataclass(frozen=True)
class MemoryStats:
    argument_bytes: int
    output_bytes: int
    temp_bytes: int
    generated_code_bytes: int


class Executable:
    """A compiled XLA program with fixed input and output types, loaded into the inline client
    (`inline`: it runs on the calling thread; for programs whose run is known to be short,
    see `estimate.runs_briefly`) or into the asynchronous one (a run an interrupt can stop).
    `hands_off`: the asynchronous client would run it on the calling thread all the same
    (XLA's cost analysis finds it cheap: a loop of a few small operations, whose trip count
    may be a trillion), so each run is handed to a worker thread while the caller waits."""

    def __init__(self, loaded, in_avals: Sequence[ShapedArray], out_avals: Sequence[ShapedArray],
                 inline: bool = False):
        _, _jax, _ = _jaxlib()
        self._loaded = loaded
        self.inline = inline
        self.in_avals = tuple(in_avals)
        self.out_avals = tuple(out_avals)
        sharding = _sharding(inline)
        devices = [_device(inline)]
        self._put_args = [(aval, sharding, devices) for aval in self.in_avals]
        slots = [InputSlot(aval) for aval in self.in_avals]
        self._large = slots if any(slot.large for slot in slots) else []   # [] : none staged
        self._handlers = [_jax.array_result_handler(aval, sharding, True, _skip_checks=True)
                          for aval in self.out_avals]
        ended_on_return = inline and all(a.nbytes < COPIED_AT_ONCE_BYTES for a in self.in_avals)
        self._results = [ResultView.of(aval, ended_on_return) for aval in self.out_avals]
        self._put = _jax.batched_device_put
        self._collect_garbage = _jax.collect_garbage   # jaxlib drops NumPy arrays it held later
        self._zero_copy = _jax.HostBufferSemantics.ZERO_COPY
        self._run = loaded.execute_sharded
        self.hands_off = not inline and runs_where_called(loaded)
        self._call = self._dispatched_call(self._results) if inline and not self._large else None
        self._aligned_call = self._dispatched_call(     # large inputs read in place: `execute`
            [ResultView.of(aval, True) for aval in self.out_avals]) \
            if inline and self._large and large_ones_aligned is not None else None

    def execute(self, arrays: Sequence[np.ndarray], marks: list | None = None
                ) -> list[np.ndarray]:
        """Run with NumPy inputs (of exactly in_avals' dtypes and shapes); NumPy outputs.

        An input goes in without a copy when C-contiguous and 64-byte aligned; a large one
        that is not is copied into an aligned staging buffer of its slot (reused), a small one
        by jaxlib. Each output is XLA's buffer, as a writable ndarray keeping XLA's array alive.
        `marks` (when given) gets the clock once the inputs are in and after XLA's run.

        A run that may be long is waited for where an interrupt stops the wait (see
        `hands_off`, `wait_abandoned`); an inline run is known to be short."""
        if marks is None and self._call is not None:    # an inline run of small inputs
            return self._call(*arrays)
        try:
            if self.hands_off:
                return run_on_worker(lambda: self._execute(arrays, marks))
            return self._execute(arrays, marks)
        except BaseException as err:
            wait_abandoned(err)
            raise

    def _execute(self, arrays: Sequence[np.ndarray], marks: list | None) -> list[np.ndarray]:
        if marks is None and not self._large:     # the common call, with the least Python
            results = self._launch(self._transfer(arrays))
            return [view(r) for view, r in zip(self._results, results, strict=True)]
        if marks is None and self._aligned_call is not None and \
                large_ones_aligned(arrays, COPIED_AT_ONCE_BYTES):   # none copied on a thread:
            return self._aligned_call(*arrays)          # the inline run ends on return
        staged = [slot.stage(x) for slot, x in zip(self._large, arrays, strict=True)] \
            if self._large else arrays
        if marks is None and self._aligned_call is not None:    # all read in place now
            outputs = self._aligned_call(*staged)
            release_staged(self._large, arrays, staged)
            return outputs
        buffers = self._transfer(staged)
        if marks is not None:
            marks.append(time.perf_counter())
        results = self._launch(buffers)
        if marks is not None:
            for result in results:
                wait_for_result(result)
            marks.append(time.perf_counter())
        outputs = [view(r) for view, r in zip(self._results, results, strict=True)]
        if self._large:
            del buffers
            self._collect_garbage()   # (jaxlib let go of the staged copies: free them now)
            release_staged(self._large, arrays, staged)
        return outputs

    def _dispatched_call(self, views: list[ResultView]) -> Callable:
        """`execute` of an inline program whose inputs are small (none staged), or large and
        read in place, through jaxlib's C++ dispatcher, results made by `views`: the inputs'
        types are checked, put on the device and run in C++ (a few µs less than `_transfer`
        and `_launch`; 10-20 µs less with a large input). Its first call with a signature
        takes the Python path and leaves a FastPath; a call it cannot keep one for (jax's x64
        off) always does. It holds the executable weakly (no cycle through the FastPath)."""
        executable = weakref.ref(self)

        def finish(results) -> list[np.ndarray]:
            return [view(r) for view, r in zip(views, results, strict=True)]

        def python_call(*arrays):
            run = executable()
            return [view(r) for view, r in zip(views, run._launch(run._transfer(arrays)),
                                               strict=True)]

        def cache_miss(*arrays):
            fast = fast_path(executable(), finish) if keeps_64_bit() else None
            return python_call(*arrays), fast, fast is None

        return dispatcher("psc_jit program", python_call, cache_miss, static=0,
                          entries=PROGRAM_DISPATCH_ENTRIES)

    def result_view(self, index: int) -> ResultView:
        return self._results[index]

    def finish(self, results: Sequence) -> list[np.ndarray]:
        """A run's results (by the C++ dispatcher) as NumPy outputs, as `execute` gives them."""
        return [view(r) for view, r in zip(self._results, results, strict=True)]

    @property
    def stages_inputs(self) -> bool:
        """Whether a misaligned input would be staged (the C++ dispatcher cannot: router)."""
        return bool(self._large)

    def _transfer(self, arrays: Sequence[np.ndarray]) -> list:
        """The inputs as jaxlib arrays (in place when aligned; all arguments positional: a
        keyword costs a measurable share of a small call)."""
        put, zero_copy = self._put, self._zero_copy
        return [put(aval, sharding, [x], devices, True, False, zero_copy, True)
                for (aval, sharding, devices), x in zip(self._put_args, arrays, strict=True)]

    def _launch(self, buffers: list) -> list:
        try:
            return self._run(buffers).consume_with_handlers(self._handlers)
        except Exception as err:    # jaxlib raises its own JaxRuntimeError; keep its text
            raise _run_failed(err) from err

    def hlo_text(self) -> str:
        """The optimized HLO module, after XLA's fusion passes."""
        return self._loaded.hlo_modules()[0].to_string()

    def cost_analysis(self) -> dict[str, float]:
        return _totals(self._loaded.cost_analysis())

    def memory_stats(self) -> MemoryStats:
        s = self._loaded.get_compiled_memory_stats()
        return MemoryStats(s.argument_size_in_bytes, s.output_size_in_bytes,
                           s.temp_size_in_bytes, s.generated_code_size_in_bytes)

    def serialize(self) -> bytes:
        return _client(self.inline).serialize_executable(self._loaded)

    @functools.cached_property
    def module_name(self) -> str:
        """The HLO module's name: the profiler tags each thunk's event with it."""
        return self._loaded.hlo_modules()[0].name


def module_cost(text: str) -> dict[str, float]:
    """XLA's cost analysis of an HLO module's text, uncompiled (`kernels`: one per kernel)."""
    _, _jax, _ = _jaxlib()
    from jaxlib import _hlo
    return _totals(_jax.hlo_module_cost_analysis(_client(False), _hlo.hlo_module_from_text(text)))


def _totals(raw: dict) -> dict[str, float]:
    return {k: float(v) for k, v in raw.items() if "{" not in k}    # (not those per operand)


# -- the profiler: what each thunk of XLA:CPU's runtime took ----------------------------------

_PROFILE_LOCK = threading.Lock()


def profiled(run: Callable[[], object], module: str, max_events: int
             ) -> tuple[object, ThunkTrace]:
    """`run()` inside one session of jaxlib's profiler: (its result, the thunk events of HLO
    module `module`, at most `max_events`). The profiler records at its lowest host level (no
    Python tracer, no HLO protos). When it cannot run, `run()` still runs, unprofiled, and
    the trace's note says why; the profiler never makes the run fail."""
    try:
        _jaxlib()
        from jaxlib import _profile_data, _profiler
    except ImportError as err:
        return run(), ThunkTrace(note=f"jaxlib {jaxlib_version()} has no profiler ({err})")
    if not _PROFILE_LOCK.acquire(blocking=False):
        return run(), ThunkTrace(note="not profiled: another psc_jit profile is running")
    try:
        session = _start_session(_profiler)
    except BaseException:
        _PROFILE_LOCK.release()
        raise
    if isinstance(session, str):
        _PROFILE_LOCK.release()
        return run(), ThunkTrace(note=session)
    try:
        result = run()
    except BaseException:
        threading.Thread(target=_stop_session, args=(session,), name="psc_jit profiler stop",
                         daemon=True).start()
        raise
    data = _stop_session(session)
    return result, thunk_trace(_profile_data.ProfileData.from_serialized_xspace, data, module,
                               max_events)


def _stop_session(session) -> bytes:
    """Stop a profiler session and let the next one start. After an interrupted run, on a
    thread of its own: stopping collects every event recorded so far (2 s after a second of a
    loop's iterations), and the interrupt must not wait for it."""
    try:
        return session.stop()
    finally:
        _PROFILE_LOCK.release()


def _start_session(_profiler):
    options = _profiler.ProfileOptions()
    options.python_tracer_level, options.host_tracer_level, options.enable_hlo_proto = 0, 1, False
    try:
        return _profiler.ProfilerSession(options)
    except Exception as err:    # jaxlib raises its own JaxRuntimeError (ALREADY_EXISTS: ...)
        return f"not profiled: jaxlib's profiler did not start ({err})"


_STREAMS = itertools.count(1)   # execution streams of threads that abandoned a run


def wait_abandoned(err: BaseException) -> None:
    """A wait for a run ended in `err` (about to be re-raised): the run may go on in XLA.
    This thread's later runs must not queue behind it: XLA runs a thread's programs in order
    on its execution stream (by default one per thread), so the thread moves to a fresh one.
    An interrupt goes on without the frames under the one handling it, which held the
    run's results: a traceback kept for later (IPython keeps the last one) would keep its
    buffers alive after the run ends (and the user sees the line they ran, not psc_jit's)."""
    if not isinstance(err, Exception):
        err.__traceback__ = None
    _jaxlib()[1].set_execution_stream_id(next(_STREAMS))


LAPACK_TARGET_PREFIX = "lapack_"


@functools.cache
def register_lapack_targets() -> tuple[str, ...]:
    """Make the CPU LAPACK kernels that jaxlib ships (`lapack_dgetrf_ffi`, ...) callable from
    `stablehlo.custom_call` (typed FFI), as jaxlib's own lapack module does. Their LAPACK comes
    from SciPy, loaded here (a few tenths of a second, once per process, only when a program
    needs it). Returns the target names."""
    _, _jax, xla_client = _jaxlib()
    from jaxlib.cpu import _lapack
    _lapack.initialize()
    targets = _lapack.registrations()
    for name, capsule in targets.items():
        xla_client.register_custom_call_target(name, capsule, platform="cpu", api_version=1)
    return tuple(sorted(targets))


@functools.cache
def register_own_targets() -> tuple[str, ...]:
    """Register psc_jit's own targets that were built with XLA: its BLAS products (`blas.py`,
    their BLAS set first) and host kernels (`hostkernels.py`)."""
    _, _jax, xla_client = _jaxlib()
    targets = {**(blas.targets_with_blas() if blas.available_targets() else {}),
               **(hostkernels.targets() if hostkernels.available_targets() else {})}
    for name, capsule in targets.items():
        xla_client.register_custom_call_target(name, capsule, platform="cpu", api_version=1)
    return tuple(sorted(targets))


def register_custom_targets(text: str) -> None:
    """Register the custom call targets a StableHLO module (or a module lowered as `text`)
    calls: jaxlib's LAPACK kernels, psc_jit's own."""
    if uses_lapack(text):
        register_lapack_targets()
    if blas.calls_blas(text) or hostkernels.calls_host_kernels(text):
        register_own_targets()


def compile_stablehlo(text: str, in_avals: Sequence[ShapedArray],
                      out_avals: Sequence[ShapedArray],
                      waiting: Callable[[float], None] | None = None,
                      inline: bool = False) -> Executable:
    """Compile a StableHLO module (text) for the CPU device (run by the inline client when
    `inline`, see `Executable`).

    XLA compiles in a worker thread (jaxlib releases the GIL meanwhile) while this thread waits
    in short slices, so an interrupt (Kernel -> Interrupt: KeyboardInterrupt in the main thread)
    stops the wait at once: the compile is abandoned (it finishes in the background and its
    result is dropped), and nothing is cached. `waiting(seconds so far)` is called about every
    second while it runs."""
    _, _jax, xla_client = _jaxlib()
    register_custom_targets(text)
    client, devices = _client(inline), _jax.DeviceList((_device(inline),))
    outcome: dict = {}

    def work():
        try:
            outcome["loaded"] = client.compile_and_load(text.encode(), devices,
                                                        compile_options(xla_client))
        except Exception as err:   # jaxlib raises its own XlaRuntimeError; keep its text
            outcome["error"] = err

    worker = threading.Thread(target=work, name="psc_jit XLA compile", daemon=True)
    worker.start()
    wait_for_thread(worker, waiting)
    if "error" in outcome:
        raise XlaError(f"XLA could not compile the lowered module: {outcome['error']}"
                       ) from outcome["error"]
    return Executable(outcome["loaded"], in_avals, out_avals, inline)


def uses_lapack(text: str) -> bool:
    """Whether a StableHLO module calls one of jaxlib's LAPACK kernels."""
    return f'"{LAPACK_TARGET_PREFIX}' in text     # a custom_call's call_target_name


def uses_custom_targets(text: str) -> bool:
    """Whether a StableHLO module calls a custom target that must be registered to load it."""
    return uses_lapack(text) or blas.calls_blas(text) or hostkernels.calls_host_kernels(text)


def deserialize(data: bytes, in_avals: Sequence[ShapedArray],
                out_avals: Sequence[ShapedArray], lapack: bool = True,
                inline: bool = False) -> Executable:
    """An executable serialized by `Executable.serialize` (in this or an earlier process, by
    either client), loaded into the inline client when `inline` (see `Executable`).
    `lapack`: whether the program calls custom targets, LAPACK's or psc_jit's own
    (registered first; loading SciPy's LAPACK and BLAS takes tenths of a second, so say False
    when the program is known not to)."""
    _, _jax, xla_client = _jaxlib()
    if lapack:
        register_lapack_targets()
        register_own_targets()
    try:
        loaded = _client(inline).deserialize_executable(
            data, _jax.DeviceList((_device(inline),)), xla_client.CompileOptions())
    except Exception as err:   # jaxlib raises its own XlaRuntimeError; keep its text
        raise XlaError(f"XLA could not load the serialized executable: {err}") from err
    return Executable(loaded, in_avals, out_avals, inline)


# -- jaxlib's C++ dispatcher: a cache-hit call with no Python of psc_jit's ---------------------

DISPATCH_ENTRIES = 4096        # call signatures the C++ dispatcher keeps (an LRU)
PROGRAM_DISPATCH_ENTRIES = 4   # ... the one of a single program (its inputs' one signature)
_DISPATCHERS: list[str] = []   # a dispatcher was made (their settings exist)
JAX_X64 = "jax_enable_x64"     # jax's setting, once jax is imported in the process
OWN_X64 = "psc_jit_enable_x64"


@functools.cache
def _registry():
    _, _jax, _ = _jaxlib()
    registry = _jax.pytree.PyTreeRegistry(False, False, False, False, False)   # all leaves
    registry.register_node(Finished, Finished.parts, operator.call)
    return registry


@functools.cache
def _tracing_setting():
    """The settings the C++ dispatcher reads: whether 64-bit inputs are kept (x64), whether
    jit is disabled, a hook after each call. jax registers its own when it is imported (before
    or after psc_jit: then jax's rule); without jax they are psc_jit's (x64 on, jit on, no
    hook). Returns psc_jit's own setting "inside a psc_jit trace", part of every call
    signature, so that a hit never happens inside a trace (the call joins the trace instead)."""
    _, _jax, _ = _jaxlib()
    config = _jax.config
    tracing = config.Config("psc_jit_tracing", False, include_in_jit_key=True)
    if JAX_X64 not in config.trace_context_names():
        _jax.jax_jit.set_enable_x64_state(config.Config(
            OWN_X64, True, include_in_jit_key=True, include_in_trace_context=True))
        _jax.jax_jit.set_disable_jit_state(config.Config("psc_jit_disable_jit", False))
        _jax.jax_jit.set_post_hook_state(config.Config("psc_jit_post_hook", None))
    return tracing


def keeps_64_bit() -> bool:
    """Whether the C++ dispatcher keeps 64-bit inputs in this thread (jax's x64 off would make
    f64 inputs f32); x64 is part of every signature, so flipping it makes calls miss again."""
    _, _jax, _ = _jaxlib()
    names, values = _jax.config.trace_context_names(), _jax.config.trace_context()
    return next((values[names.index(n)] is True for n in (JAX_X64, OWN_X64) if n in names),
                False)


@contextlib.contextmanager
def tracing_in_progress():
    """Inside: this thread is tracing, which is part of the dispatcher's key, so that a call
    inside a trace never hits (it joins the trace). Nothing to say before a dispatcher is made:
    a trace running then made no entry it could hit."""
    if not _DISPATCHERS:
        yield
        return
    setting = _tracing_setting()
    previous = setting.swap_local(True)
    try:
        yield
    finally:
        setting.set_local(previous)


def _no_shard_fallback(value, sharding, layout):
    raise XlaError("psc_jit's dispatcher cannot place this input on the device")


def dispatcher(name: str, python_call: Callable, cache_miss: Callable,
               static: int = 1, entries: int = DISPATCH_ENTRIES) -> Callable:
    """jaxlib's C++ dispatcher (the one behind jax.jit): its first `static` arguments are
    static (part of the key, compared with ==), the others the call's inputs. A call whose
    signature
    (shapes, dtypes, weak types, the settings above) it has a FastPath for runs the executable
    in C++; any other goes to `cache_miss(*args, **kwargs)`, which returns (result,
    FastPath or None, whether to forget the signature again); with jit disabled (jax's
    `disable_jit`) to `python_call`."""
    _, _jax, _ = _jaxlib()
    _tracing_setting()
    if not _DISPATCHERS:
        _DISPATCHERS.append(name)
    return _jax.pjit(name, python_call, cache_miss, list(range(static)), [], name, _registry(),
                     _no_shard_fallback, _jax.PjitFunctionCache(entries))


def clear_dispatcher(dispatch: Callable) -> None:
    dispatch._clear_cache()


def dispatched_type(value) -> tuple[tuple[int, ...], np.dtype] | None:
    """(shape, dtype) the C++ dispatcher gives an argument with 64-bit types kept, or None
    when it takes no such value."""
    _, _jax, _ = _jaxlib()
    try:
        signature = _jax.jax_jit._ArgSignatureOfValue(value, True)
    except Exception:       # jaxlib raises its own JaxRuntimeError for a value it refuses
        return None
    return tuple(signature.shape), np.dtype(signature.dtype)


def fast_path(executable: Executable, finish: Callable[[tuple], Any]) -> FastPath:
    """The dispatcher's FastPath for an executable whose inputs are a call's arguments, in
    order; `finish(results)` makes the call's return value. The caller sees to the inputs'
    layout: a large misaligned input (`executable.stages_inputs`) would be copied by jaxlib
    afresh on every call, and its results must then be waited for."""
    n_in, n_out = len(executable.in_avals), len(executable.out_avals)
    _, treedef = _registry().flatten(Finished(n_out, finish))
    sharding = _sharding(executable.inline)
    return FastPath(executable._loaded, treedef, [sharding] * n_in, [sharding] * n_out,
                    list(executable.out_avals), [True] * n_out, [True] * n_in, [None] * n_in,
                    [])
