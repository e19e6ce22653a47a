"""Past one machine: several processes (on one host or many) run one SPMD program over all
their devices, through jaxlib's distributed runtime (`xla.start_distributed`).

Words: a *process* is one Python process of the runtime, numbered 0..n-1 (process 0 hosts the
coordinator); a *global array* is a psc_jit.Array over all the processes' devices, of which
this process holds its own devices' blocks; a *tiling* says how many blocks each dimension of
one is cut into, the blocks dealt to the devices in order (a NamedSharding with one mesh axis
per dimension; a process's devices are consecutive, so a process holds a contiguous part: its
*local data*).

Every wait is bounded and says what it waited for: a coordinator that does not answer, a
process that dies while the others run a program (the coordination service's liveness, seen
within its heartbeat timeout), a process that does not reach a program, and processes that
run different programs (each publishes its program's fingerprint before each run and checks
the others').
"""
from __future__ import annotations

import atexit
import contextlib
import hashlib
import itertools
import math
import socket
import threading
import time
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

from ..ir import ShapedArray
from . import device_array
from .sharding import Mesh, NamedSharding, PartitionSpec
from .xla import distributed as xla
from .xla.spmd import compile_partitioned, is_local, same_sharding

WATCH_SECONDS = 0.25     # how often a wait looks whether every process is still alive
FAILED_RUN_LOOKS = 8     # after a failed run, how many looks (WATCH_SECONDS apart) for a dead one


class DistributedError(Exception):
    """The processes could not start, meet or go on together (see the module's docstring)."""


class ProcessLost(DistributedError):
    """A process of the runtime stopped: the others cannot run programs together again."""


@dataclass(frozen=True)
class Settings:
    """How long each wait of the distributed runtime may take, in seconds."""
    initialization_timeout: int = 60    # for every process to join (and process 0 to start)
    heartbeat_timeout: int = 10         # a process silent this long counts as dead
    shutdown_timeout: int = 10          # `shutdown` waits this long for the others to leave
    sync_timeout: int = 60              # a process waits this long for the others at a program


@dataclass
class Runtime:
    """The running distributed runtime of this process and its settings."""
    handle: xla.DistributedRuntime
    address: str
    settings: Settings
    runs: itertools.count = field(default_factory=itertools.count)
    stopped: bool = False

    @property
    def process_id(self) -> int:
        return self.handle.process_id

    @property
    def num_processes(self) -> int:
        return self.handle.num_processes


_RUNTIME: list[Runtime] = []


def initialize(coordinator_address: str, num_processes: int, process_id: int, *,
               local_devices: int | None = None, **timeouts: int) -> Runtime:
    """Join the processes coordinated at `coordinator_address` ("host:port"; process 0
    starts the coordinator there, listening on every interface): after it, this process's
    programs see every process's devices. `local_devices`: this process's CPU devices
    (jaxlib's default: one). `timeouts`: the fields of `Settings`."""
    settings = Settings(**timeouts)
    host, port = split_address(coordinator_address)
    _check_ranks(num_processes, process_id)
    if _RUNTIME:
        raise DistributedError("psc_jit.distributed.initialize was already called in this "
                               "process (once per process: restart it to join another)")
    deadline = time.monotonic() + settings.initialization_timeout
    if process_id == 0:
        check_port_free(port)
    else:
        wait_for_coordinator(host, port, settings.initialization_timeout)
    try:
        handle = xla.start_distributed(
            coordinator_address, f"[::]:{port}", num_processes, process_id, local_devices,
            max(1, math.ceil(deadline - time.monotonic())), settings.heartbeat_timeout,
            settings.shutdown_timeout)
    except xla.XlaError as err:
        raise DistributedError(str(err)) from err
    runtime = Runtime(handle, coordinator_address, settings)
    _RUNTIME.append(runtime)
    atexit.register(_leave_at_exit)
    return runtime


def split_address(address: str) -> tuple[str, int]:
    host, colon, port = address.rpartition(":")
    if not colon or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise DistributedError(f"coordinator_address must be 'host:port' with a port in "
                               f"1..65535, not {address!r}")
    return host.strip("[]"), int(port)


def _check_ranks(num_processes: int, process_id: int) -> None:
    if not (isinstance(num_processes, int) and isinstance(process_id, int)
            and 0 <= process_id < num_processes):
        raise DistributedError(f"process_id must be an int in 0..num_processes-1; got "
                               f"process_id={process_id!r}, num_processes={num_processes!r}")


def check_port_free(port: int) -> None:
    """Refuse a coordinator port that something listens on already: jaxlib 0.10.2's service
    crashes the process (a segmentation fault) when it cannot bind its port."""
    family, anywhere = (socket.AF_INET6, "::") if socket.has_ipv6 else (socket.AF_INET, "")
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)    # (as the service does)
        try:
            probe.bind((anywhere, port))
        except OSError as err:
            raise DistributedError(
                f"process 0 cannot start the coordinator on port {port}: {err.strerror} (is "
                f"another runtime's coordinator still there? choose another port)") from None


def wait_for_coordinator(host: str, port: int, seconds: float) -> None:
    """Knock at the coordinator's port until it answers, for at most `seconds` (process 0 may
    start it a moment after the others start knocking). jaxlib's own connect would give up
    only seconds after its timeout, with the text "std::bad_cast"."""
    deadline = time.monotonic() + seconds
    while True:
        left = deadline - time.monotonic()
        try:
            socket.create_connection((host, port), timeout=max(0.05, min(left, 1.0))).close()
            return
        except OSError as err:
            if left <= 0.1:
                raise DistributedError(
                    f"no coordinator answered at {host}:{port} within {seconds:g} s ({err}): "
                    f"process 0 starts it when it calls initialize; is process 0 running, and "
                    f"is the address right and reachable from this host?") from None
            time.sleep(min(0.1, left))


def runtime() -> Runtime:
    if not _RUNTIME:
        raise DistributedError("the distributed runtime is not started: call "
                               "psc_jit.distributed.initialize(...) in every process first")
    return _RUNTIME[0]


def is_initialized() -> bool:
    return bool(_RUNTIME)


def process_index() -> int:
    return _RUNTIME[0].process_id if _RUNTIME else 0


def process_count() -> int:
    return _RUNTIME[0].num_processes if _RUNTIME else 1


def device_count() -> int:
    """How many devices every process has between them."""
    return len(_devices())


def local_device_count() -> int:
    return sum(map(is_local, _devices()))


def shutdown() -> None:
    """Leave the runtime (it waits for the other processes to leave too, up to the shutdown
    timeout). This process cannot join another afterwards: its client stays as it was made."""
    if _RUNTIME and not _RUNTIME[0].stopped:
        _RUNTIME[0].stopped = True
        try:
            xla.stop_distributed(_RUNTIME[0].handle, _RUNTIME[0].settings.shutdown_timeout)
        except Exception as err:    # jaxlib raises its own error when others did not leave
            raise DistributedError(f"the processes did not all leave within "
                                   f"{_RUNTIME[0].settings.shutdown_timeout} s: {err}") from err


def _leave_at_exit() -> None:
    try:
        shutdown()
    except DistributedError:
        pass    # (at exit, a process that left first is no error to report)


# -- tilings and global arrays -----------------------------------------------------------------

@dataclass(frozen=True)
class Tiling:
    """How a global array is cut: `tiles[d]` blocks along dimension d, dealt to the devices in
    row-major block order; () replicates it (every device holds all of it). It is a
    NamedSharding over a mesh with one axis per dimension (`sharding`)."""
    tiles: tuple[int, ...] = ()

    def hlo_text(self, num_devices: int) -> str:
        """As XLA's `mhlo.sharding` attribute says it."""
        if not self.tiles:
            return "{replicated}"
        self._check_count(num_devices)
        return f"{{devices=[{','.join(map(str, self.tiles))}]<=[{num_devices}]}}"

    def sharding(self, devices: Sequence) -> NamedSharding:
        """The same layout over `devices` (in block order), in the device layer's words: a
        mesh of one axis per dimension (`dim0`, `dim1`...), each dimension cut into more than
        one block split over its own axis (replicated: a mesh of one axis, `devices`, that
        splits nothing)."""
        if not self.tiles:
            return NamedSharding(Mesh(list(devices), ("devices",)))
        self._check_count(len(devices))
        grid = np.empty(len(devices), dtype=object)
        grid[:] = list(devices)
        names = tuple(f"dim{k}" for k in range(len(self.tiles)))
        spec = PartitionSpec(*(n if t > 1 else None
                               for n, t in zip(names, self.tiles, strict=True)))
        return NamedSharding(Mesh(grid.reshape(self.tiles), names), spec)

    def _check_count(self, num_devices: int) -> None:
        if math.prod(self.tiles) != num_devices:
            raise DistributedError(f"a tiling of {self.tiles} blocks needs "
                                   f"{math.prod(self.tiles)} devices; there are {num_devices}")


GlobalArray = device_array.Array   # (its former name here: one array type serves both)


def _devices() -> list:
    """Every process's devices, in the runtime's order (the order blocks are dealt in)."""
    return xla.runtime_devices(runtime().handle)


@contextlib.contextmanager
def _as_distributed_error():
    """A layout refused by the device layer (ValueError) as the runtime's own error."""
    try:
        yield
    except ValueError as err:
        raise DistributedError(str(err)) from None


def make_array_from_process_local_data(sharding: NamedSharding | Tiling, local_data,
                                       global_shape: Sequence[int] | None = None
                                       ) -> device_array.Array:
    """One array over all the processes' devices from each process's part of it (run in
    every process), as JAX's function of this name: with a NamedSharding over a mesh of the
    distributed runtime's devices, a psc_jit.Array that jit takes as any other (its
    computations then span the processes), or with a Tiling, over all those devices in order
    (its refusals a DistributedError). `global_shape`: by default each split dimension grows
    by the number of processes' parts along it."""
    if isinstance(sharding, NamedSharding):
        return device_array.place_local(sharding, local_data, global_shape)
    with _as_distributed_error():
        return device_array.place_local(sharding.sharding(_devices()), local_data,
                                        global_shape)


# -- one program over every process's devices ---------------------------------------------------

class SpmdProgram:
    """A hand-written StableHLO module partitioned over every device of the runtime: its
    arguments and results are psc_jit.Arrays over all the devices, cut as
    `in_tilings`/`out_tilings` say (the module carries the same shardings as `mhlo.sharding`
    attributes and `mhlo.num_partitions`). `label` names the program in errors (which cell or
    function it came from)."""

    def __init__(self, text: str, in_avals: Sequence[ShapedArray],
                 out_avals: Sequence[ShapedArray], in_tilings: Sequence[Tiling],
                 out_tilings: Sequence[Tiling], label: str):
        devices = _devices()
        self.label, self.out_avals = label, tuple(out_avals)
        self.in_types = tuple((aval, tiling.sharding(devices)) for aval, tiling
                              in zip(in_avals, in_tilings, strict=True))
        self.out_shardings = tuple(t.sharding(devices) for t in out_tilings)
        self.fingerprint = hashlib.sha256(text.encode()).hexdigest()
        self.executable = compile_partitioned(text, devices, in_avals, out_avals, shardy=False)
        for k, (aval, sharding, hlo) in enumerate(zip(
                self.out_avals, self.out_shardings, self.executable.out_hlo, strict=True)):
            if not _same_layout(sharding, hlo, len(aval.shape)):
                raise DistributedError(f"result {k} of {label} is laid out as {hlo} in the "
                                       f"module, not as its tiling says ({out_tilings[k]})")

    def __call__(self, *arrays: device_array.Array) -> list[device_array.Array]:
        if len(arrays) != len(self.in_types) or not all(
                _fits(a, aval, sharding)
                for a, (aval, sharding) in zip(arrays, self.in_types, strict=False)):
            expected = [f"{aval} {s.describe(len(aval.shape))}" for aval, s in self.in_types]
            raise DistributedError(f"{self.label} takes psc_jit.Arrays {expected}, not "
                                   f"{[_describe(a) for a in arrays]}")
        results = run_together(self.executable, [a._handle for a in arrays], self.fingerprint,
                               self.label)
        return [device_array.Array(result, aval, sharding, self.label) for result, aval, sharding
                in zip(results, self.out_avals, self.out_shardings, strict=True)]


def _same_layout(sharding: NamedSharding, hlo_text: str, rank: int) -> bool:
    return same_sharding(sharding.hlo_text(rank), hlo_text)


def _fits(array, aval: ShapedArray, sharding: NamedSharding) -> bool:
    """Whether an argument is an Array of this type laid out so (over the same devices, in
    the same blocks, whatever its mesh's axes are named)."""
    return (isinstance(array, device_array.Array) and array.aval == aval
            and array.sharding.device_list == sharding.device_list
            and _same_layout(sharding, array.sharding.hlo_text(array.ndim), array.ndim))


def _describe(array) -> str:
    if isinstance(array, device_array.Array):
        return f"{array.aval} {array.sharding.describe(array.ndim)}"
    return type(array).__name__


def run_together(executable, inputs: list, fingerprint: str, label: str) -> list:
    """A run of a partitioned program (`xla.spmd.PartitionedExecutable`) that every process of
    the runtime makes together: first each checks that the others run this very program
    (else its collectives would wait for ever), then it runs while this process watches that
    every other one is still alive; it waits for the end (a failure is raised here, with the
    process that stopped)."""
    current = runtime()
    check_same_program(current, fingerprint, label)
    return run_watched(current, lambda: executable.run(inputs), label)


def check_same_program(current: Runtime, fingerprint: str, label: str) -> None:
    """Before each run: publish this program's fingerprint under the run's number and read
    every other process's; a process that runs another program (or none within the sync
    timeout) is an error here, where otherwise the collectives would wait on each other."""
    run, me = next(current.runs), current.process_id
    xla.publish(current.handle, _program_key(run, me), f"{fingerprint} {label}")
    if run >= 2:
        xla.forget(current.handle, _program_key(run - 2, me))   # (every other read it by now)
    for other in range(current.num_processes):
        if other != me:
            theirs = _wait_for_key(current, _program_key(run, other), other, label)
            their_fingerprint, _, their_label = theirs.partition(" ")
            if their_fingerprint != fingerprint:
                raise DistributedError(
                    f"the processes run different programs: process {me} runs {label} "
                    f"(program {fingerprint[:12]}), process {other} runs {their_label} "
                    f"(program {their_fingerprint[:12]}); every process must run the same "
                    f"programs, with the same types, in the same order")


def _program_key(run: int, process: int) -> str:
    return f"psc_jit/program/{run}/{process}"


def _wait_for_key(current: Runtime, key: str, other: int, label: str) -> str:
    deadline = time.monotonic() + current.settings.sync_timeout
    while (left := deadline - time.monotonic()) > 0:
        value = xla.published(current.handle, key, min(left, WATCH_SECONDS))
        if value is not None:
            return value
        raise_if_gone(current, label)
    raise DistributedError(
        f"process {other} did not reach {label} within {current.settings.sync_timeout} s "
        f"(process {current.process_id} waited for it there): did it fail before it, or is it "
        f"running something else?")


def raise_if_gone(current: Runtime, label: str) -> None:
    everyone = range(current.num_processes)
    gone = sorted(set(everyone) - xla.live_processes(current.handle, everyone))
    if gone:
        raise ProcessLost(
            f"process {', '.join(map(str, gone))} of {current.num_processes} stopped (its "
            f"engine died or was stopped) while process {current.process_id} ran {label}; "
            f"the others cannot go on without it: restart all the processes")


def run_watched(current: Runtime, run, label: str):
    """`run()` on a worker thread while this thread looks, every WATCH_SECONDS, whether every
    process is still alive: a collective whose peer died may never end (gloo waits for a peer
    that has not connected yet), so a dead process ends the wait with its name. The worker
    is then abandoned, hung in XLA (the runtime cannot be used again)."""
    outcome: dict = {}

    def work():
        try:
            outcome["results"] = run()
        except Exception as err:    # XlaError: kept for the waiting thread
            outcome["error"] = err

    worker = threading.Thread(target=work, name=f"psc_jit run of {label}", daemon=True)
    worker.start()
    while worker.is_alive():
        worker.join(WATCH_SECONDS)
        if worker.is_alive():
            raise_if_gone(current, label)
    if "error" in outcome:
        _name_the_dead(current, label, outcome["error"])
    return outcome["results"]


def _name_the_dead(current: Runtime, label: str, err: Exception):
    """A failed run (gloo: "Connection closed by peer" at once when a peer dies): the dead
    process by name once the coordination service has seen it go, else the run's own error."""
    for _ in range(FAILED_RUN_LOOKS):
        try:
            raise_if_gone(current, label)
        except DistributedError as gone:
            raise gone from err
        time.sleep(WATCH_SECONDS)
    raise err
