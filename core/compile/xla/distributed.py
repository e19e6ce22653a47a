"""jaxlib's distributed runtime, which joins several processes into one set of devices (the
arrays and programs over them are `spmd`'s, as over one process's devices). Its words are
compile/distributed.py's.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Sequence

from ..errors import XlaError
from .runtime import _DISTRIBUTED, _jaxlib, _make_client


# -- the distributed runtime: several processes, one set of devices ---------------------------

@dataclass(frozen=True)
class DistributedRuntime:
    """jaxlib's distributed runtime as this process holds it: the coordination service (on
    process 0 only), this process's client of it (a key-value store, barriers, which processes
    are alive) and the CPU client made with it, whose devices are every process's (its own
    ones addressable) and whose collectives go over gloo's TCP transport."""
    service: Any
    client: Any
    cpu_client: Any
    process_id: int
    num_processes: int


def start_distributed(address: str, bind_address: str, num_processes: int, process_id: int,
                      local_devices: int | None, init_seconds: int, heartbeat_seconds: int,
                      shutdown_seconds: int) -> DistributedRuntime:
    """Join (process 0: start, then join) the runtime coordinated at `address`, and make the
    CPU client that sees every process's devices (`local_devices` of this one). It must come
    before this process's first program: the clients made then only know their own devices.
    The service is recoverable: a process that dies does not make jaxlib end the others (its
    default), so that they can say so (`live_processes`). jaxlib's connect gives up about 5 s
    after `init_seconds`."""
    _, _jax, xla_client = _jaxlib()
    if _make_client.cache_info().currsize or _DISTRIBUTED:
        raise XlaError("the distributed runtime must start before this process's first compiled "
                       "program, and only once (restart the kernel or engine first)")
    service = _jax.get_distributed_runtime_service(
        bind_address, num_processes, heartbeat_timeout=heartbeat_seconds,
        shutdown_timeout=shutdown_seconds, recoverable=True) if process_id == 0 else None
    client = _jax.get_distributed_runtime_client(
        address, process_id, init_timeout=init_seconds, heartbeat_timeout=heartbeat_seconds,
        shutdown_timeout=shutdown_seconds, use_compression=True,
        missed_heartbeat_callback=RUNTIME_ERRORS.append)
    try:
        client.connect()
        cpu_client = xla_client.make_cpu_client(
            asynchronous=True, distributed_client=client, node_id=process_id,
            num_nodes=num_processes, num_devices=local_devices,
            collectives=_jax.make_gloo_tcp_collectives(distributed_client=client),
            get_local_topology_timeout_minutes=_minutes(init_seconds),
            get_global_topology_timeout_minutes=_minutes(init_seconds))
    except Exception as err:    # jaxlib's RuntimeError says only "std::bad_cast" here
        if service is not None:
            service.shutdown()
        raise XlaError(f"process {process_id} could not join the {num_processes} processes "
                       f"coordinated at {address}: not all of them joined within {init_seconds}"
                       f" s (each calls initialize with this address and num_processes, and "
                       f"its own process_id)") from err
    runtime = DistributedRuntime(service, client, cpu_client, process_id, num_processes)
    _DISTRIBUTED.append(runtime)
    return runtime


# What jaxlib reports to the client's callback. Given none, jaxlib ends the process when a
# connect fails (peers that never join) as when the coordinator goes; given one, a failed
# connect raises instead. jaxlib 0.10.2 cannot pass the report to Python (std::bad_cast): on
# its own threads (the coordinator gone) that still ends the process, so this stays empty.
RUNTIME_ERRORS: list = []


def _minutes(seconds: int) -> int:
    return max(1, -(-seconds // 60))    # (jaxlib takes the topology exchange's in minutes)


def stop_distributed(runtime: DistributedRuntime, seconds: int) -> None:
    """Leave the runtime together: all processes meet at a barrier, then process 0 waits
    (at most `seconds`) for the others to disconnect before it stops the service; a recoverable
    service's own shutdown does not wait for them, and a process whose service went away
    before it disconnected is ended by jaxlib."""
    everyone = range(runtime.num_processes)
    try:
        runtime.client.wait_at_barrier("psc_jit/leave", seconds * 1000)
        if runtime.service is not None:
            deadline = time.monotonic() + seconds
            while len(live_processes(runtime, everyone)) > 1 and time.monotonic() < deadline:
                time.sleep(0.02)
    finally:
        try:
            runtime.client.shutdown()
        finally:
            if runtime.service is not None:
                runtime.service.shutdown()


def runtime_devices(runtime: DistributedRuntime) -> list:
    """Every process's devices, in the client's order."""
    return list(runtime.cpu_client.devices())


def live_processes(runtime: DistributedRuntime, ids: Sequence[int]) -> set[int]:
    """Which of the processes `ids` the coordination service still counts alive."""
    return set(runtime.client.get_live_nodes(list(ids)))


def publish(runtime: DistributedRuntime, key: str, value: str) -> None:
    runtime.client.key_value_set(key, value)


def published(runtime: DistributedRuntime, key: str, wait_seconds: float) -> str | None:
    """The value another process published under `key`, waiting at most `wait_seconds`; None
    when it has not by then."""
    try:
        return runtime.client.blocking_key_value_get(key, max(1, int(wait_seconds * 1000)))
    except Exception:   # jaxlib raises its own error for a key still missing at the deadline
        return None


def forget(runtime: DistributedRuntime, key: str) -> None:
    runtime.client.key_value_delete(key)
