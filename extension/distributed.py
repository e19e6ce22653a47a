"""psc_jit.distributed: several processes, on one host or many, run one program over all their
devices (jaxlib's distributed runtime: a coordinator in process 0, gloo collectives over TCP).

In every process, before its first compiled program:

    psc_jit.distributed.initialize("10.0.0.1:4321", num_processes=2, process_id=0)  # 1 on the other

With ipyparallel, from the notebook that drives the engines (the user only starts a cluster):

    import ipyparallel as ipp
    rc = ipp.Cluster(n=2).start_and_connect_sync()
    psc_jit.distributed.initialize_from_ipyparallel(rc)

Every wait is bounded and fails with what it waited for (see `Settings` for the timeouts).
"""
from __future__ import annotations

from .core import distributed as _core

initialize, shutdown, is_initialized = _core.initialize, _core.shutdown, _core.is_initialized
process_index, process_count = _core.process_index, _core.process_count
device_count, local_device_count = _core.device_count, _core.local_device_count
from .core import make_array_from_process_local_data  # noqa: E402
Tiling, GlobalArray, SpmdProgram = _core.Tiling, _core.GlobalArray, _core.SpmdProgram
Settings, DistributedError, ProcessLost = _core.Settings, _core.DistributedError, _core.ProcessLost

__all__ = ["initialize", "initialize_from_ipyparallel", "shutdown", "is_initialized",
           "process_index", "process_count", "device_count", "local_device_count",
           "make_array_from_process_local_data", "Tiling", "GlobalArray", "SpmdProgram",
           "Settings", "DistributedError", "ProcessLost"]

ENGINE_REPLY_SECONDS = 30   # for an engine to answer a question (its host, a free port)


def initialize_from_ipyparallel(client, *, port: int | None = None,
                                local_devices: int | None = None, **timeouts: int
                                ) -> dict[int, int]:
    """Start the distributed runtime on every engine of an ipyparallel `client`: ranks follow
    the engine ids (the lowest is process 0, which hosts the coordinator); the coordinator's
    address is 127.0.0.1 when all engines share a host, else process 0's host name, on a
    free port of its host unless `port` is given. Returns {engine id: process index}.
    `timeouts`: the fields of `psc_jit.distributed.Settings`."""
    settings = Settings(**timeouts)
    ids = sorted(client.ids)
    if not ids:
        raise DistributedError("the ipyparallel cluster has no engines yet: start them first "
                               "(ipyparallel.Cluster(n=...).start_and_connect_sync())")
    address = _coordinator_address(client, ids, port)
    pending = [client[engine].apply_async(_join, address, len(ids), rank, local_devices,
                                          timeouts)
               for rank, engine in enumerate(ids)]
    for engine, reply in zip(ids, pending, strict=True):
        _engine_reply(engine, reply, settings.initialization_timeout + ENGINE_REPLY_SECONDS)
    return {engine: rank for rank, engine in enumerate(ids)}


def _coordinator_address(client, ids: list[int], port: int | None) -> str:
    hosts = [_engine_reply(engine, client[engine].apply_async(_host_name), ENGINE_REPLY_SECONDS)
             for engine in ids]
    host = "127.0.0.1" if len(set(hosts)) == 1 else hosts[0]
    if port is None:
        port = _engine_reply(ids[0], client[ids[0]].apply_async(_free_port),
                             ENGINE_REPLY_SECONDS)
    return f"{host}:{port}"


def _engine_reply(engine: int, reply, seconds: float):
    """An engine's answer within `seconds`; its error, or the wait's end, named by engine."""
    try:
        return reply.get(timeout=seconds)
    except Exception as err:    # ipyparallel's TimeoutError, RemoteError, EngineError
        raise DistributedError(f"engine {engine}: {type(err).__name__}: {err}") from err


# The functions below run on the engines: ipyparallel sends their code, so they import there.

def _host_name() -> str:
    import socket
    return socket.gethostname()


def _free_port() -> int:
    import socket
    with socket.socket() as probe:
        probe.bind(("", 0))
        return probe.getsockname()[1]


def _join(address: str, num_processes: int, rank: int, local_devices, timeouts: dict) -> int:
    import psc_jit.distributed
    psc_jit.distributed.initialize(address, num_processes, rank, local_devices=local_devices,
                                   **timeouts)
    return rank

