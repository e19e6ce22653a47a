"""`psc_jit.Array`: an array that stays on the devices between calls.

`device_put(x, device_or_sharding)` makes one; a jitted function given one returns them,
without waiting for XLA's run (asynchronous dispatch), so chained calls keep their data on
the devices. NumPy reads one with `np.asarray(a)`, which waits for it. A run that failed
raises where its result is read (`np.asarray`, `block_until_ready`), naming the call that
started it.

An Array is immutable, as a device buffer is: code that writes into one under `jit` is
refused with the reason.
"""
from __future__ import annotations

import os
import sys

import numpy as np

from ..ir import ShapedArray
from ..numpy import verify_checks
from . import xla
from .errors import XlaError
from .sharding import Mesh, NamedSharding, PartitionSpec, SingleDevice, assemble, within

_CORE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_ROOT = os.path.dirname(_CORE)
# psc_jit's own code, where a frame is not the user's: the installed package, or in a source
# checkout (an editable install) its three folders
_OWN_DIRS = (_ROOT + os.sep,) if os.path.basename(_ROOT) == "psc_jit" else tuple(
    os.path.join(_ROOT, d) + os.sep for d in ("core", "extension", "widgets"))


class Array:
    """An array on one or more devices, laid out as its `sharding` says."""

    __slots__ = ("_handle", "aval", "sharding", "_origin", "_checks", "__weakref__")
    __array_priority__ = 100

    def __init__(self, handle, aval: ShapedArray, sharding: NamedSharding, origin: str,
                 checks: DeferredChecks | None = None):
        self._handle = handle
        self.aval = aval
        self.sharding = sharding
        self._origin = origin
        self._checks = checks

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self.aval.shape)

    @property
    def dtype(self) -> np.dtype:
        return np.dtype(self.aval.dtype)

    @property
    def ndim(self) -> int:
        return len(self.aval.shape)

    @property
    def size(self) -> int:
        return int(np.prod(self.aval.shape, dtype=np.int64))

    @property
    def nbytes(self) -> int:
        return self.size * self.dtype.itemsize

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of a 0-d psc_jit.Array")
        return self.shape[0]

    def devices(self) -> set:
        return set(self.sharding.device_list)

    def is_ready(self) -> bool:
        """Whether the computation that makes this array has ended (without waiting)."""
        return xla.spmd.is_ready(self._handle)

    def block_until_ready(self) -> Array:
        """Wait until the array is computed; raise the run's error if it failed: XLA's, or
        NumPy's own error of a run-time check (an index out of bounds...), raised at the
        user's line that the check guards."""
        __tracebackhide__ = True    # IPython shows the user's line, not ours
        try:
            xla.spmd.block_until_ready(self._handle)
        except XlaError as err:
            raise XlaError(f"{self._origin} failed: {err}") from None
        if self._checks is not None:
            self._checks.verify()
        return self

    def __array__(self, dtype=None, copy=None):
        """The array's values as a new NumPy array (waits for them)."""
        self.block_until_ready()
        held = len(local_positions(self.sharding))
        if held < self.sharding.mesh.size and not self.sharding.is_fully_replicated(self.ndim):
            raise ValueError(
                f"this process holds {held} of the {self.sharding.mesh.size} blocks of "
                f"this array ({self.sharding.describe(self.ndim)} over several processes): "
                "ask for it replicated (out_shardings=NamedSharding(mesh)) to read all of it, "
                "or read this process's part with local_data()")
        value = self.local_data()
        return value if dtype is None else value.astype(dtype, copy=False)

    def local_data(self) -> np.ndarray:
        """The part of the array this process's devices hold, as a new NumPy array (waits
        for it): all of it, unless its blocks lie in several processes (the distributed
        runtime), where each process reads its own part."""
        self.block_until_ready()
        blocks = xla.spmd.shards(self._handle)
        if len(blocks) == 1 or self.sharding.is_fully_replicated(self.ndim):
            return np.array(blocks[0], copy=True)
        return assemble(self.sharding, self.shape, local_positions(self.sharding), blocks,
                        "this process's devices")

    def __repr__(self) -> str:
        ready = "" if self.is_ready() else ", computing"
        return (f"psc_jit.Array(shape={self.shape}, dtype={self.dtype}, "
                f"{self.sharding.describe(self.ndim)}{ready})")

    def __reduce__(self):     # pickled as its values: a device buffer does not travel
        return (np.asarray, (np.asarray(self),))

    def __setitem__(self, index, value):
        raise TypeError("a psc_jit.Array is immutable (it lives on the devices): read it "
                        "into NumPy (np.asarray(a)) to change it, or compute a new one")


class DeferredChecks:
    """A run's run-time checks (`numpy.checks`), verified when one of its results is first
    read or waited for: the run was not waited for when the call returned."""

    def __init__(self, checks: tuple, ok: Array, values: Array):
        self._checks, self._ok, self._values = checks, ok, values

    def verify(self) -> None:
        __tracebackhide__ = True    # IPython shows the user's line, not ours
        ok, values = self._ok, self._values
        verify_checks(self._checks, np.asarray(ok), np.asarray(values))


def caller_line() -> str:
    """Where the user's code called in (the first frame outside psc_jit): how a failed
    asynchronous run is named when its result is read later."""
    frame = sys._getframe(1)
    while frame is not None and frame.f_code.co_filename.startswith(_OWN_DIRS):
        frame = frame.f_back
    if frame is None:
        return "the call"
    return f"the call at {frame.f_code.co_filename}, line {frame.f_lineno}"


def as_sharding(where, rank: int | None = None) -> NamedSharding:
    """A device (of `xla.devices()`), a device's index, or a NamedSharding, as a sharding."""
    if where is None:
        return SingleDevice(xla.devices()[0])
    if isinstance(where, NamedSharding):
        return where
    if isinstance(where, (int, np.integer)) and not isinstance(where, bool):
        devices = xla.devices()
        if not 0 <= where < len(devices):
            raise ValueError(f"device {where}: this process has {len(devices)} device(s) "
                             f"(psc_jit.devices()); more CPU devices: PSC_JIT_CPU_DEVICES")
        return SingleDevice(devices[where])
    if hasattr(where, "id") and hasattr(where, "platform"):
        return SingleDevice(where)
    raise TypeError(f"device_put places on a device (psc_jit.devices()[i]) or a "
                    f"NamedSharding; got {type(where).__name__}")


def place(value, sharding: NamedSharding, origin: str = "device_put") -> Array:
    """A NumPy value (or anything np.asarray takes) as an Array laid out as `sharding`."""
    array = np.asarray(value)
    if array.dtype.kind in "OUSVMm" or array.dtype == np.longdouble:
        raise TypeError(f"XLA has no {array.dtype} type: an array of it cannot be placed on "
                        "a device")
    array = np.asarray(array, order="C")
    slices = sharding.shard_slices(array.shape)
    handle = xla.spmd.put(array, array.shape, sharding.device_list,
                          sharding.hlo_text(array.ndim), slices)
    return Array(handle, ShapedArray(array.shape, array.dtype), sharding, origin)


def device_put(x, device=None) -> Array:
    """`x` placed on a device (`psc_jit.devices()[i]`, or its index; the first by default) or
    split over a mesh's devices (a NamedSharding), as a psc_jit.Array. The data is copied:
    changing `x` afterwards does not change the Array."""
    if isinstance(x, Array):
        sharding = as_sharding(device, x.ndim)
        if sharding == x.sharding:
            return x
        return place(np.asarray(x), sharding)
    return place(x, as_sharding(device))


__all__ = ["Array", "Mesh", "NamedSharding", "PartitionSpec", "device_put"]


def local_positions(sharding: NamedSharding) -> list[int]:
    """Which devices of the sharding (by position) are this process's."""
    return [p for p, d in enumerate(sharding.device_list) if xla.spmd.is_local(d)]


def local_box(sharding: NamedSharding, shape: tuple[int, ...]) -> tuple[slice, ...]:
    """The part of a global array of `shape` that this process's devices hold between them
    (a box; a layout whose local blocks are not one box is refused)."""
    return sharding.part_held(shape, local_positions(sharding), "this process's devices")


def global_shape_of(sharding: NamedSharding, local_shape: tuple[int, ...]) -> tuple[int, ...]:
    """The global shape of which this process's part has `local_shape`: each dimension
    times the number of processes' parts along it."""
    positions = local_positions(sharding)
    if not positions:
        raise ValueError(f"{sharding!r} puts nothing on this process's devices")
    return sharding.global_shape(local_shape, positions)


def place_local(sharding: NamedSharding, local_data, global_shape=None) -> Array:
    """One array over all the processes' devices, laid out as `sharding` says, from this
    process's part of it (`distributed.make_array_from_process_local_data`, run in every
    process); `global_shape` by default grows each split dimension by the number of
    processes' parts along it."""
    local = np.asarray(local_data, order="C")
    shape = tuple(global_shape) if global_shape is not None else \
        global_shape_of(sharding, local.shape)
    box = local_box(sharding, shape)
    if tuple(b.stop - b.start for b in box) != local.shape:
        raise ValueError(f"this process's part of a {shape} array laid out as "
                         f"{sharding.describe(len(shape))} has shape "
                         f"{tuple(b.stop - b.start for b in box)}, not {local.shape}")
    slices = [within(box, block) if xla.spmd.is_local(d) else block
              for d, block in zip(sharding.device_list, sharding.shard_slices(shape),
                                  strict=True)]
    handle = xla.spmd.put(local, shape, sharding.device_list, sharding.hlo_text(len(shape)),
                          slices)
    return Array(handle, ShapedArray(shape, local.dtype), sharding,
                 "make_array_from_process_local_data")
