"""Arrays that stay on the devices, and programs partitioned over them.

A placed array is jaxlib's own array (one buffer per device, in the sharding's device order);
psc_jit wraps it (`device_array.Array`) and hands it back here to run, read or wait on. A
partitioned program is compiled with XLA's SPMD partitioner (Shardy) for the devices of one
mesh, `num_partitions` = their number, partition p running on the mesh's p-th device. Its
runs are asynchronous: `PartitionedExecutable.execute` returns the result arrays at once,
while XLA's threads compute them; reading or waiting on them is what waits.
"""
from __future__ import annotations

import functools
from typing import Callable, Sequence

import numpy as np

from ...ir import ShapedArray
from ..errors import run_failed
from ..hostmemory import aligned_copy
from .runtime import _jaxlib, compile_on_worker


@functools.cache
def _sharding_class():
    _, _jax, _ = _jaxlib()

    class Placement(_jax.GSPMDSharding):
        """An HLO sharding over devices (of this process or of all the processes of the
        distributed runtime): the attributes jaxlib's C++ asks of a sharding."""

        def _to_xla_hlo_sharding(self, num_dimensions):
            return self._hlo_sharding

        @property
        def memory_kind(self):
            return None

        @property
        def _device_assignment(self):
            return tuple(self._devices)

    return Placement


@functools.cache
def _placement(devices: tuple, hlo_text: str):
    """jaxlib's sharding object for an HLO sharding over these devices (in partition
    order)."""
    _, _jax, xla_client = _jaxlib()
    return _sharding_class()(_jax.DeviceList(devices),
                             xla_client.HloSharding.from_string(hlo_text))


def is_local(device) -> bool:
    """Whether this process holds the device's memory (with the distributed runtime, the
    other processes' devices are listed too)."""
    return device.process_index == device.client.process_index()


def put(data: np.ndarray, shape: tuple[int, ...], devices: Sequence, hlo_text: str,
        slices: Sequence[tuple[slice, ...]]):
    """An array of `shape` placed on `devices` as `hlo_text` says, of which this process gives
    its own devices' blocks, `data[slices[i]]` for its device i: the whole value (`data` of
    `shape`), or with the distributed runtime this process's part of it. Each block is copied
    once, here, and the device reads the copy in place (jaxlib keeps it alive), so a later
    change of `data` does not reach the placed array; jaxlib's own copy semantics refuse
    empty blocks."""
    _, _jax, _ = _jaxlib()
    mine = [(d, s) for d, s in zip(devices, slices, strict=True) if is_local(d)]
    blocks = [aligned_copy(np.ascontiguousarray(data[s])) if data.ndim else np.array(data)
              for _, s in mine]
    return _jax.batched_device_put(ShapedArray(shape, data.dtype),
                                   _placement(tuple(devices), hlo_text), blocks,
                                   [d for d, _ in mine], True, False,
                                   _jax.HostBufferSemantics.ZERO_COPY, True)


def shards(array) -> list[np.ndarray]:
    """The blocks of a placed array this process holds, as NumPy arrays (waits for them), in
    its sharding's device order."""
    blocks = []
    for single in array._arrays:
        value, _copied = single._single_device_array_to_np_array_did_copy()
        blocks.append(value)
    return blocks


def block_until_ready(array) -> None:
    """Wait until the array's computation has ended; its error, if it failed."""
    try:
        array.block_until_ready()
    except Exception as err:   # jaxlib raises its own JaxRuntimeError; keep its text
        raise run_failed(err) from err


def is_ready(array) -> bool:
    return bool(array.is_ready())


def same_sharding(first: str, second: str) -> bool:
    """Whether two HLO shardings (as text, in either of XLA's notations) are one layout."""
    return _hlo_sharding(first) == _hlo_sharding(second)


@functools.cache
def _hlo_sharding(text: str):
    return _jaxlib()[2].HloSharding.from_string(text)


def _shardings(xla_client, protos, count: int) -> list[str]:
    """The HLO shardings XLA gives a program's parameters or results (none: a program of
    one partition, whose values are whole on its device)."""
    if protos is None:
        return ["{replicated}"] * count
    return [str(xla_client.HloSharding.from_proto(p)) for p in protos]


class PartitionedExecutable:
    """A program compiled for a mesh's devices; runs return placed arrays without waiting."""

    def __init__(self, loaded, devices: Sequence, in_avals: Sequence[ShapedArray],
                 out_avals: Sequence[ShapedArray]):
        _, _jax, xla_client = _jaxlib()
        self._loaded = loaded
        self.devices = tuple(devices)
        self.in_avals, self.out_avals = tuple(in_avals), tuple(out_avals)
        self.out_hlo = _shardings(xla_client, loaded.get_output_shardings(), len(out_avals))
        self.in_hlo = _shardings(xla_client, loaded.get_parameter_shardings(), len(in_avals))
        self._handlers = [_jax.array_result_handler(aval, _placement(self.devices, text), True,
                                                    _skip_checks=True)
                          for aval, text in zip(self.out_avals, self.out_hlo, strict=True)]

    def run(self, arrays: Sequence) -> list:
        """A run waited for to its end (on the calling thread); its placed results."""
        outputs = self.execute(arrays)
        for output in outputs:
            block_until_ready(output)
        return outputs

    def execute(self, arrays: Sequence) -> list:
        """Start a run on placed inputs (each as `in_hlo` says); its placed results."""
        try:
            return self._loaded.execute_sharded(list(arrays)).consume_with_handlers(
                self._handlers)
        except Exception as err:   # jaxlib raises its own JaxRuntimeError; keep its text
            raise run_failed(err) from err

    @functools.cached_property
    def module_name(self) -> str:
        """The HLO module's name: the profiler tags each thunk's event with it."""
        return self._loaded.hlo_modules()[0].name

    def hlo_text(self) -> str:
        """The optimized, partitioned HLO module: per-device shapes and the collectives."""
        return self._loaded.hlo_modules()[0].to_string()


def partition_options(xla_client, devices: Sequence, shardy: bool):
    """psc_jit's compile options (as every program's) for a program of one partition per
    device, partition p on devices[p], split by XLA's SPMD partitioner from the module's
    Shardy shardings (`shardy`) or its `mhlo.sharding` attributes."""
    from . import compile_options
    options = compile_options(xla_client)
    build = options.executable_build_options
    build.num_partitions, build.num_replicas = len(devices), 1
    build.use_spmd_partitioning = True
    build.use_shardy_partitioner = shardy
    build.device_assignment = xla_client.DeviceAssignment.create(
        np.array([[d.id for d in devices]]))    # (replicas, partitions)
    return options


def compile_partitioned(text: str, devices: Sequence, in_avals: Sequence[ShapedArray],
                        out_avals: Sequence[ShapedArray],
                        waiting: Callable[[float], None] | None = None, shardy: bool = True
                        ) -> PartitionedExecutable:
    """Compile a StableHLO module with `len(devices)` partitions (partition p on devices[p]),
    partitioned by XLA's SPMD partitioner from its arguments' and results' Shardy shardings
    (or, not `shardy`, their `mhlo.sharding` attributes: a hand-written module's).
    The compile runs on a worker thread, the wait interruptible (as `compile_stablehlo`), by
    the devices' own client (the CPU's, or a GPU plugin's)."""
    _, _jax, xla_client = _jaxlib()
    from . import register_custom_targets
    register_custom_targets(text)
    options = partition_options(xla_client, devices, shardy)
    loaded = compile_on_worker(devices[0].client, text, _jax.DeviceList(tuple(devices)),
                               options, waiting, "partitioned module")
    return PartitionedExecutable(loaded, devices, in_avals, out_avals)
