"""The XLA adapter: the only module of psc_jit that imports jaxlib.

jaxlib's Python surface is not a public API, so every use of it is here, against a pinned
and tested range. It offers: compile StableHLO text to an executable; execute it with NumPy
arrays in and out; the optimized HLO text (after fusion); XLA's cost analysis; memory stats;
serialize and deserialize; one call under jaxlib's profiler (each thunk XLA:CPU ran, by
its HLO instruction's name, with its time).
"""
from __future__ import annotations

import ctypes
import functools
import os
import threading
import time
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from ..ir import ShapedArray

SUPPORTED_JAXLIB = ((0, 10, 2), (0, 11, 0))     # [lowest, first unsupported)


class XlaError(Exception):
    pass


def _version_tuple(text: str) -> tuple[int, ...]:
    parts = []
    for piece in text.split(".")[:3]:
        digits = "".join(c for c in piece if c.isdigit())
        parts.append(int(digits or 0))
    return tuple(parts)


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
    return xla_client.make_cpu_client(asynchronous=not inline)


@functools.cache
def _device(inline: bool):
    return _client(inline).devices()[0]


def platform() -> str:
    return _client(False).platform


@functools.cache
def target_description() -> str:
    """What XLA's CPU code is generated for, beyond jaxlib's version and the platform: the
    machine, the host CPU's feature flags (an executable built for AVX-512 must never run
    where it is missing) and XLA_FLAGS. Part of a persistent executable's key."""
    import platform as host
    flags = ""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as cpuinfo:
            for line in cpuinfo:
                if line.startswith(("flags", "Features")):
                    flags = " ".join(sorted(line.split(":", 1)[1].split()))
                    break
    except OSError:
        flags = host.processor()
    return "\n".join((_client(False).platform_version, host.machine(), flags,
                      os.environ.get("XLA_FLAGS", "")))


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


# -- host memory: what the CPU client can read in place, and results it wrote -----------------

ALIGNMENT = 64          # the CPU client reads an input in place only at this alignment
STAGE_FROM_BYTES = 1 << 16   # below this, jaxlib's own copy of a misaligned input is as cheap


def aligned_empty(shape: tuple[int, ...], dtype) -> np.ndarray:
    """An uninitialised C-contiguous array whose data starts on an ALIGNMENT-byte boundary."""
    dtype = np.dtype(dtype)
    nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    raw = np.empty(nbytes + ALIGNMENT, np.uint8)
    start = -raw.ctypes.data % ALIGNMENT
    return raw[start:start + nbytes].view(dtype).reshape(shape)


def aligned_copy(x) -> np.ndarray:
    """x as a C-contiguous, ALIGNMENT-aligned array of its own (the input XLA reads in place).
    Public as `psc_jit.aligned(x)`: an array made once this way is never copied again on its
    way into a compiled call (NumPy's own allocations are usually only 16-byte aligned)."""
    x = np.asarray(x)
    out = aligned_empty(x.shape, x.dtype)
    np.copyto(out, x)
    return out


def is_aligned(x: np.ndarray) -> bool:
    return x.flags.c_contiguous and x.ctypes.data % ALIGNMENT == 0


class InputSlot:
    """One input of an executable: large inputs that the CPU client cannot read in place
    (misaligned, not C-contiguous) are copied into an aligned staging buffer, one memcpy into
    memory that is already mapped, instead of jaxlib's fresh allocation on every call. A
    buffer is taken from the slot's pool for the length of one call (so concurrent calls
    never share one) and given back after the call's results are ready."""

    def __init__(self, aval: ShapedArray):
        self.aval = aval
        self.large = aval.nbytes >= STAGE_FROM_BYTES
        self._pool: list[np.ndarray] = []

    def stage(self, x: np.ndarray) -> np.ndarray:
        if not self.large or not isinstance(x, np.ndarray) or is_aligned(x):
            return x
        buffer = self._pool.pop() if self._pool else aligned_empty(self.aval.shape,
                                                                   self.aval.dtype)
        np.copyto(buffer, x)
        return buffer

    def release(self, buffer: np.ndarray) -> None:
        self._pool.append(buffer)


class ResultView:
    """Makes one XLA result buffer the memory of a writable ndarray, without a copy.

    jaxlib exposes a result only read-only (its buffer protocol refuses writers), so the
    ndarray is built on a ctypes array at the buffer's address; the ctypes object holds the
    jaxlib array, so XLA's buffer lives exactly as long as the ndarray (or any view of it)
    does. The buffer is the result's alone: XLA allocates every output of every execution
    afresh (nothing is donated or aliased to inputs, and distinct outputs get distinct
    buffers), and the CPU client aligns it to 64 bytes, so it can be passed on to the next
    compiled call without a copy."""

    def __init__(self, aval: ShapedArray):
        self.shape = aval.shape
        self.dtype = np.dtype(aval.dtype)
        self.nbytes = aval.nbytes
        self.holder = type("XlaResultMemory", (ctypes.c_char * self.nbytes,),
                           {"__slots__": ("owner",)})

    def __call__(self, result) -> np.ndarray:
        try:                           # the execution is asynchronous: wait for the values
            result.block_until_ready()
        except Exception as err:       # jaxlib raises its own JaxRuntimeError; keep its text
            raise _run_failed(err) from err
        if not self.nbytes:
            return np.empty(self.shape, self.dtype)
        memory = self.holder.from_address(result.unsafe_buffer_pointer())
        memory.owner = result
        return np.ndarray(self.shape, self.dtype, memory)


class Executable:
    """A compiled XLA program with fixed input and output types, loaded into the inline client
    (`inline`: it runs on the calling thread; for programs whose run is known to be short,
    see `estimate.runs_briefly`) or into the asynchronous one (a run an interrupt can stop)."""

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
        self._results = [ResultView(aval) for aval in self.out_avals]
        self._put = _jax.batched_device_put
        self._zero_copy = _jax.HostBufferSemantics.ZERO_COPY
        self._run = loaded.execute_sharded

    def execute(self, arrays: Sequence[np.ndarray], marks: list | None = None
                ) -> list[np.ndarray]:
        """Run with NumPy inputs (of exactly in_avals' dtypes and shapes); NumPy outputs.

        An input goes in without a copy when its data is C-contiguous and 64-byte aligned;
        a large one that is not is copied once into an aligned staging buffer of its slot
        (reused by the next call); a small one is copied by jaxlib. Each output is the buffer
        XLA wrote, as a writable ndarray that keeps XLA's array alive (no copy). `marks`, when
        given, gets the clock after the inputs are on the device and after XLA's run (for a
        breakdown of the call's time)."""
        if marks is None and not self._large:     # the common call, with the least Python
            results = self._launch(self._transfer(arrays))
            return [view(r) for view, r in zip(self._results, results, strict=True)]
        staged = [slot.stage(x) for slot, x in zip(self._large, arrays, strict=True)] \
            if self._large else arrays
        buffers = self._transfer(staged)
        if marks is not None:
            marks.append(time.perf_counter())
        results = self._launch(buffers)
        if marks is not None:
            for result in results:
                _wait_for(result)
            marks.append(time.perf_counter())
        outputs = [view(r) for view, r in zip(self._results, results, strict=True)]
        if self._large:
            del buffers
            for slot, x, put_in in zip(self._large, arrays, staged, strict=True):
                if put_in is not x:
                    slot.release(put_in)
        return outputs

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
        raw = self._loaded.cost_analysis()
        return {k: float(v) for k, v in raw.items() if "{" not in k}

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


# -- the profiler: what each thunk of XLA:CPU's runtime took ----------------------------------

@dataclass(frozen=True)
class ThunkEvent:
    """One run of one thunk: `name` is the HLO instruction it runs (a fusion, a loop, ...)."""
    name: str
    start_ns: int
    duration_ns: int


@dataclass(frozen=True)
class ThunkTrace:
    """The thunk events of one module seen by one profiler session. `note` says in one line
    why there are none (no profiler, another session active, ...) or what was left unread."""
    events: tuple[ThunkEvent, ...] = ()
    note: str | None = None


_PROFILE_LOCK = threading.Lock()
_CPU_PLANE = "/host:CPU"


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
        if isinstance(session, str):
            return run(), ThunkTrace(note=session)
        try:
            result = run()
        finally:
            data = session.stop()
        return result, _thunk_trace(_profile_data, data, module, max_events)
    finally:
        _PROFILE_LOCK.release()


def _start_session(_profiler):
    options = _profiler.ProfileOptions()
    options.python_tracer_level = 0
    options.host_tracer_level = 1
    options.enable_hlo_proto = False
    try:
        return _profiler.ProfilerSession(options)
    except Exception as err:    # jaxlib raises its own JaxRuntimeError (ALREADY_EXISTS: ...)
        return f"not profiled: jaxlib's profiler did not start ({err})"


def _thunk_trace(_profile_data, data: bytes, module: str, max_events: int) -> ThunkTrace:
    try:
        plane = _profile_data.ProfileData.from_serialized_xspace(data) \
            .find_plane_with_name(_CPU_PLANE)
    except Exception as err:    # jaxlib's own error type for a profile it cannot read
        return ThunkTrace(note=f"jaxlib's profile could not be read ({err})")
    events, left = [], 0
    for line in plane.lines if plane is not None else ():
        for event in line.events:
            stats = dict(event.stats)
            if stats.get("hlo_module") != module or "hlo_op" not in stats:
                continue
            if len(events) >= max_events:
                left += 1
                continue
            events.append(ThunkEvent(str(stats["hlo_op"]), int(event.start_ns),
                                     int(event.duration_ns)))
    if not events:
        return ThunkTrace(note="jaxlib's profiler recorded no kernel of this program")
    note = f"{left:,} kernel runs past the budget of {max_events:,} were not read" \
        if left else None
    return ThunkTrace(tuple(events), note)


SPIN_SECONDS = 2e-4     # a run's wait first looks without sleeping (most calls end by then)
POLL_SHORTEST = 5e-5    # then sleeps this long between looks
POLL_SHORT_FOR = 0.02   # for the first this many seconds, then longer and longer,
POLL_LONGEST = 5e-3     # up to this long


def _wait_for(result) -> None:
    """Block until a result is computed; XLA's error for a failed run (out of memory, a
    kernel's error) as an XlaError, as when the launch itself fails.

    XLA runs the program on its own threads; this thread waits by looking, then sleeping in
    short slices, never inside jaxlib's blocking wait, so that an interrupt (Kernel ->
    Interrupt: KeyboardInterrupt in the main thread) stops the wait within a slice. The
    abandoned run finishes in the background; its buffers are freed when it ends (jaxlib holds
    them, and the inputs it reads, until then)."""
    try:
        if not result.is_ready():
            _poll(result)
        result.block_until_ready()
    except Exception as err:      # jaxlib raises its own JaxRuntimeError; keep its text
        raise _run_failed(err) from err


def _poll(result) -> None:
    """Look until `result` is ready: without sleeping at first, then in short sleeps (a run of
    a few milliseconds ends at most a slice late), longer ones as the run goes on."""
    start = time.perf_counter()
    while not result.is_ready() and time.perf_counter() - start < SPIN_SECONDS:
        pass
    delay = POLL_SHORTEST
    while not result.is_ready():
        time.sleep(delay)
        if time.perf_counter() - start > POLL_SHORT_FOR:
            delay = min(delay * 2, POLL_LONGEST)


def _run_failed(err: Exception) -> XlaError:
    return XlaError(f"the compiled program failed: {err}")


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


WAIT_SLICE = 0.05      # seconds between looks at a running compile (and at interrupts)


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
    if uses_lapack(text):
        register_lapack_targets()
    client, devices = _client(inline), _jax.DeviceList((_device(inline),))
    outcome: dict = {}

    def work():
        try:
            outcome["loaded"] = client.compile_and_load(text.encode(), devices,
                                                        xla_client.CompileOptions())
        except Exception as err:   # jaxlib raises its own XlaRuntimeError; keep its text
            outcome["error"] = err

    worker = threading.Thread(target=work, name="psc_jit XLA compile", daemon=True)
    worker.start()
    _wait(worker, waiting)
    if "error" in outcome:
        raise XlaError(f"XLA could not compile the lowered module: {outcome['error']}"
                       ) from outcome["error"]
    return Executable(outcome["loaded"], in_avals, out_avals, inline)


def _wait(worker: threading.Thread, waiting) -> None:
    start = last = time.monotonic()
    while worker.is_alive():
        worker.join(WAIT_SLICE)
        now = time.monotonic()
        if waiting is not None and now - last >= 1.0:
            last = now
            waiting(now - start)


def uses_lapack(text: str) -> bool:
    """Whether a StableHLO module calls one of jaxlib's LAPACK kernels."""
    return f'"{LAPACK_TARGET_PREFIX}' in text     # a custom_call's call_target_name


def deserialize(data: bytes, in_avals: Sequence[ShapedArray],
                out_avals: Sequence[ShapedArray], lapack: bool = True,
                inline: bool = False) -> Executable:
    """An executable serialized by `Executable.serialize` (in this or an earlier process, by
    either client), loaded into the inline client when `inline` (see `Executable`).
    `lapack`: whether the program calls LAPACK kernels (registered first; loading SciPy's
    LAPACK takes tenths of a second, so say False when the program is known not to)."""
    _, _jax, xla_client = _jaxlib()
    if lapack:
        register_lapack_targets()
    try:
        loaded = _client(inline).deserialize_executable(
            data, _jax.DeviceList((_device(inline),)), xla_client.CompileOptions())
    except Exception as err:   # jaxlib raises its own XlaRuntimeError; keep its text
        raise XlaError(f"XLA could not load the serialized executable: {err}") from err
    return Executable(loaded, in_avals, out_avals, inline)
