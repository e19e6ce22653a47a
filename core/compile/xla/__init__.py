"""The XLA adapter: the only package of psc_jit that imports jaxlib.

jaxlib's Python surface is not a public API, so every use of it is here, against a pinned
and tested range. Its modules:
- `runtime`: jaxlib, the CPU clients and their devices;
- this module: compile StableHLO text to an executable; execute it with NumPy arrays in and
  out; the optimized HLO text (after fusion); XLA's cost analysis; memory stats; serialize
  and deserialize; one call under jaxlib's profiler (each thunk XLA:CPU ran, by its HLO
  instruction's name, with its time);
- `dispatcher`: jaxlib's C++ dispatcher, for cache hits with no Python of psc_jit's;
- `spmd`: arrays that stay on the devices, asynchronous runs, SPMD-partitioned programs.
"""
from __future__ import annotations

import functools
import itertools
import os
import threading
import time
import weakref
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from ...ir import ShapedArray
from .. import blas, hostkernels, hostloops
from ..backend_options import BACKEND_OPTIONS, options_with
from ..errors import XlaError, run_failed as _run_failed
from ..machine import host_machine
from ..offsets import OffsetVariants
from ..hostmemory import (COPIED_AT_ONCE_BYTES, InputSlot, ResultView, large_ones_aligned,
                          release_staged)
from ..thunks import ThunkTrace, thunk_trace
from ..waiting import run_on_worker, runs_where_called, wait_for_result
from .runtime import (DEVICES_ENV, SUPPORTED_JAXLIB, _client, _device, _jaxlib, _sharding,
                      compile_on_worker,
                      cpu_device_count, devices, gpu_plugin, jaxlib_version, live_arrays,
                      platform, set_cpu_device_count)
from .dispatcher import (DISPATCH_ENTRIES, PROGRAM_DISPATCH_ENTRIES, FastPath, clear_dispatcher,
                         dispatched_type, dispatcher, fast_path, keeps_64_bit,
                         tracing_in_progress)
from . import spmd

__all__ = ["DEVICES_ENV", "DISPATCH_ENTRIES", "SUPPORTED_JAXLIB", "XlaError", "clear_dispatcher",
           "cpu_device_count", "devices", "dispatched_type", "dispatcher", "fast_path", "gpu_plugin",
           "jaxlib_version", "keeps_64_bit", "live_arrays", "platform", "set_cpu_device_count",
           "spmd", "tracing_in_progress", "FastPath"]

# XLA options beyond jaxlib's defaults: none (`xla_cpu_copy_insertion_use_region_analysis`
# saved a loop's array copies, but with jaxlib 0.10.2 it miscompiles nested loops: an inner
# loop read its outer index one pass ahead; tests/core/compile/test_xla_loops.py).
COMPILE_OVERRIDES: tuple[tuple[str, object], ...] = ()


def compile_options(xla_client):
    return options_with(xla_client.CompileOptions, BACKEND_OPTIONS, COMPILE_OVERRIDES)


@functools.cache
def target_description() -> str:
    """What XLA's CPU code is generated for, beyond jaxlib's version and the platform: the
    machine and its CPU's feature flags (`machine.py`), XLA_FLAGS and psc_jit's own options.
    Part of a persistent executable's key."""
    return "\n".join((_client(False).platform_version, host_machine(),
                      os.environ.get("XLA_FLAGS", ""), repr(COMPILE_OVERRIDES),
                      repr(BACKEND_OPTIONS)))


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
                 inline: bool = False, source: str | None = None):
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
        self._unaligned = OffsetVariants(      # large misaligned inputs read in place
            source, self.in_avals, self.out_avals,
            lambda text, avals: compile_stablehlo(text, avals, self.out_avals, inline=inline)) \
            if source is not None and self._large else None

    def compile_variants_with(self, compile_fn: Callable) -> None:
        """Compile this program's variants for misaligned inputs with `compile_fn(text,
        in_avals)` (jit's: through the disk cache) instead of compiling them directly."""
        if self._unaligned is not None:
            self._unaligned.compile_fn = compile_fn

    def read_in_place(self, arrays: Sequence[np.ndarray]) -> frozenset[int]:
        """The positions of the misaligned inputs among `arrays` that a variant of the
        program (`offsets`) reads in place: no longer copied."""
        return self._unaligned.read_in_place(arrays) if self._unaligned else frozenset()

    def execute(self, arrays: Sequence[np.ndarray], marks: list | None = None
                ) -> list[np.ndarray]:
        """Run with NumPy inputs (of exactly in_avals' dtypes and shapes); NumPy outputs.

        An input goes in without a copy when C-contiguous and 64-byte aligned; a large one
        that is not is copied into an aligned staging buffer of its slot (reused), a small one
        by jaxlib; a large C-contiguous one off the boundary is read in place by a variant
        of the program from the second call with its offset on (`offsets`). Each output is XLA's buffer, as a writable ndarray keeping XLA's array alive.
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
        if self._unaligned is not None:
            outputs = self._unaligned.call(arrays, marks)
            if outputs is not None:
                return outputs
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
    calls: jaxlib's LAPACK kernels, psc_jit's own, its host loops."""
    if uses_lapack(text):
        register_lapack_targets()
    if blas.calls_blas(text) or hostkernels.calls_host_kernels(text):
        register_own_targets()
    for target in hostloops.targets_in(text):
        register_host_loop(target)


@functools.cache
def register_host_loop(target: str) -> None:
    """Register a host loop's handler (built by `hostloops` from the C it planned)."""
    try:
        capsule = hostloops.handler(target, ffi_include_dirs())
    except (KeyError, OSError, RuntimeError) as err:
        raise XlaError(f"the host loop {target} cannot be loaded: {err}") from err
    _jaxlib()[2].register_custom_call_target(target, capsule, platform="cpu", api_version=1)


@functools.cache
def ffi_include_dirs() -> tuple[str, ...]:
    """Where jaxlib's XLA FFI header (xla/ffi/api/c_api.h) is, for C that includes it."""
    jaxlib = _jaxlib()[0]
    path = os.path.join(os.path.dirname(jaxlib.__file__), "include")
    return (path,) if os.path.exists(os.path.join(path, "xla", "ffi", "api", "c_api.h")) else ()


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
    loaded = compile_on_worker(_client(inline), text, _jax.DeviceList((_device(inline),)),
                               compile_options(xla_client), waiting, "lowered module")
    return Executable(loaded, in_avals, out_avals, inline, source=text)


def uses_lapack(text: str) -> bool:
    """Whether a StableHLO module calls one of jaxlib's LAPACK kernels."""
    return f'"{LAPACK_TARGET_PREFIX}' in text     # a custom_call's call_target_name


def uses_custom_targets(text: str) -> bool:
    """Whether a StableHLO module calls a custom target that must be registered to load it."""
    return (uses_lapack(text) or blas.calls_blas(text) or hostkernels.calls_host_kernels(text)
            or hostloops.calls_host_loops(text))


def deserialize(data: bytes, in_avals: Sequence[ShapedArray],
                out_avals: Sequence[ShapedArray], lapack: bool = True,
                inline: bool = False, source: str | None = None) -> Executable:
    """An executable serialized by `Executable.serialize` (in this or an earlier process, by
    either client), loaded into the inline client when `inline` (see `Executable`).
    `lapack`: whether the program calls custom targets, LAPACK's or psc_jit's own
    (registered first; loading SciPy's LAPACK and BLAS takes tenths of a second, so say False
    when the program is known not to)."""
    _, _jax, xla_client = _jaxlib()
    if lapack:
        register_lapack_targets()
        register_own_targets()
        register_custom_targets(source or "")
    try:
        loaded = _client(inline).deserialize_executable(
            data, _jax.DeviceList((_device(inline),)), xla_client.CompileOptions())
    except Exception as err:   # jaxlib raises its own XlaRuntimeError; keep its text
        raise XlaError(f"XLA could not load the serialized executable: {err}") from err
    return Executable(loaded, in_avals, out_avals, inline, source)


