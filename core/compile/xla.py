"""The XLA adapter: the only module of psc_jit that imports jaxlib.

jaxlib's Python surface is not a public API, so every use of it is here, against a pinned
and tested range. It offers: compile StableHLO text to an executable; execute it with NumPy
arrays in and out; the optimized HLO text (after fusion); XLA's cost analysis; memory stats;
serialize and deserialize.
"""
from __future__ import annotations

import functools
import os
import threading
from dataclasses import dataclass
from typing import Sequence

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
def _client():
    """One CPU client per process: buffers and executables of two clients do not mix, so
    creating it is serialized (two threads' first calls must not make two)."""
    with _CLIENT_LOCK:
        return _make_client()


@functools.cache
def _make_client():
    _, _jax, xla_client = _jaxlib()
    return xla_client.make_cpu_client()


@functools.cache
def _device():
    return _client().devices()[0]


def platform() -> str:
    return _client().platform


@functools.cache
def _sharding():
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

    return DeviceSharding(_device())


@dataclass(frozen=True)
class MemoryStats:
    argument_bytes: int
    output_bytes: int
    temp_bytes: int
    generated_code_bytes: int


class Executable:
    """A compiled XLA program with fixed input and output types."""

    def __init__(self, loaded, in_avals: Sequence[ShapedArray], out_avals: Sequence[ShapedArray]):
        _, _jax, _ = _jaxlib()
        self._loaded = loaded
        self.in_avals = tuple(in_avals)
        self.out_avals = tuple(out_avals)
        sharding = _sharding()
        device = _device()
        self._put_args = [(aval, sharding, device) for aval in self.in_avals]
        self._handlers = [_jax.array_result_handler(aval, sharding, True, _skip_checks=True)
                          for aval in self.out_avals]
        self._put = _jax.batched_device_put

    def execute(self, arrays: Sequence[np.ndarray]) -> list[np.ndarray]:
        """Run with NumPy inputs (of exactly in_avals' dtypes and shapes); NumPy outputs."""
        put = self._put
        buffers = [put(aval, sharding, [x], [device], True, enable_x64=True)
                   for (aval, sharding, device), x in zip(self._put_args, arrays, strict=True)]
        results = self._loaded.execute_sharded(buffers).consume_with_handlers(self._handlers)
        arrays = [np.asarray(r) for r in results]
        for result, array in zip(results, arrays, strict=True):
            if array.dtype == object:     # the buffer was not readable: the run failed
                _raise_run_error(result)
        return arrays

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
        return _client().serialize_executable(self._loaded)


def _raise_run_error(result) -> None:
    """XLA's error for a failed run (out of memory, a kernel's error), which NumPy's asarray
    would otherwise wrap, silently, in an object array."""
    try:
        result.block_until_ready()
    except Exception as err:      # jaxlib raises its own JaxRuntimeError; keep its text
        raise XlaError(f"the compiled program failed: {err}") from err
    raise XlaError("the compiled program's result could not be read")


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


def compile_stablehlo(text: str, in_avals: Sequence[ShapedArray],
                      out_avals: Sequence[ShapedArray]) -> Executable:
    """Compile a StableHLO module (text) for the CPU device."""
    _, _jax, xla_client = _jaxlib()
    if f'"{LAPACK_TARGET_PREFIX}' in text:      # a custom_call's call_target_name
        register_lapack_targets()
    try:
        loaded = _client().compile_and_load(
            text.encode(), _jax.DeviceList((_device(),)), xla_client.CompileOptions())
    except Exception as err:   # jaxlib raises its own XlaRuntimeError; keep its text
        raise XlaError(f"XLA could not compile the lowered module: {err}") from err
    return Executable(loaded, in_avals, out_avals)


def deserialize(data: bytes, in_avals: Sequence[ShapedArray],
                out_avals: Sequence[ShapedArray]) -> Executable:
    _, _jax, xla_client = _jaxlib()
    register_lapack_targets()     # the program may call them; its text is not at hand
    loaded = _client().deserialize_executable(data, _jax.DeviceList((_device(),)),
                                              xla_client.CompileOptions())
    return Executable(loaded, in_avals, out_avals)
