"""Several processes, one program over all their devices (psc_jit.distributed): real processes
on localhost joined by jaxlib's distributed runtime, each running distributed_child.py. Every
wait is bounded by a subprocess timeout, and every process is killed at the end."""
import json
import pathlib
import socket
import subprocess
import sys

import numpy as np
import pytest

import psc_jit
from psc_jit import distributed
from psc_jit.core.compile.sharding import assemble
from psc_jit.distributed import DistributedError, Tiling

CHILD = pathlib.Path(__file__).with_name("distributed_child.py")
RUN_SECONDS = 60    # the longest a group of processes may take (each wait inside is shorter)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def run_processes(num_processes: int, local_devices: int, scenario: str,
                  started: int | None = None) -> list[str]:
    """Each process's last line (RESULT or ERROR), process 0 first; `started`: how many of
    the processes to start (all by default)."""
    port = free_port()
    children = [subprocess.Popen([sys.executable, str(CHILD), str(rank), str(num_processes),
                                  str(port), str(local_devices), scenario],
                                 stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
                for rank in range(num_processes if started is None else started)]
    try:
        outputs = [child.communicate(timeout=RUN_SECONDS)[0] for child in children]
    finally:
        for child in children:
            child.kill()
            child.wait()
    return [next((line for line in reversed(out.splitlines())
                  if line.startswith(("RESULT", "ERROR"))), "(nothing)") for out in outputs]


def results(lines: list[str]) -> list[dict]:
    assert all(line.startswith("RESULT ") for line in lines), lines
    return [json.loads(line.removeprefix("RESULT ")) for line in lines]


@pytest.mark.xla
@pytest.mark.parametrize("local_devices", [1, 2])
def test_two_processes_give_what_one_process_gives(local_devices):
    two = results(run_processes(2, local_devices, "run"))
    (one,) = results(run_processes(1, 2 * local_devices, "run"))
    assert [r["devices"] for r in two] == [2 * local_devices] * 2
    for r in two:
        assert r["global_shape"] == one["global_shape"]
        assert r["total"] == one["total"] and r["cols"] == one["cols"]
        np.testing.assert_allclose(r["total"], r["expected_total"], rtol=1e-15)
        np.testing.assert_allclose(r["cols"], r["expected_cols"], rtol=1e-15)
        assert r["y"] == r["expected_y"]                # each process's rows of the tiled result
        assert r["one_type"]        # a Tiling's arrays and the module's results: psc_jit.Arrays
        np.testing.assert_allclose(r["y_total"], 2 * r["expected_total"], rtol=1e-15)  # jit of one
        np.testing.assert_allclose(r["jit_here"], r["expected_jit"], rtol=1e-15)   # plain jit
    assert two[0]["y"] + two[1]["y"] == one["y"]
    # psc_jit's own partitioned program over an Array of every process's rows: each process
    # reads the whole results, equal to one process's (its sum over all rows to the last bits
    # here: XLA adds the per-device partial sums in the same order)
    full = np.asarray(two[0]["sharded_doubled"])
    assert two[0]["sharded_shape"] == list(full.shape) == one["sharded_shape"]
    assert one["read_whole"] is True and one["local_rows"] == one["local_given"]
    for r in two:
        assert r["read_whole"].startswith(f"this process holds {local_devices} of the "
                                          f"{2 * local_devices} blocks"), r["read_whole"]
        assert r["local_rows"] == r["local_given"]      # its own rows, as it gave them
    for r in two + [one]:   # the hand-written module takes an Array laid out as its tiling says
        assert r["named_total"] == r["total"]
        assert "takes psc_jit.Arrays" in r["replicated_refused"], r["replicated_refused"]
        assert "not as its tiling says" in r["mislabeled_refused"], r["mislabeled_refused"]
        assert r["sharded_doubled"] == one["sharded_doubled"]
        np.testing.assert_allclose(r["sharded_total"], one["sharded_total"], rtol=1e-15)


@pytest.mark.xla
def test_processes_running_different_programs_are_told_which():
    lines = run_processes(2, 1, "other_program")
    for line in lines:
        assert line.startswith("ERROR DistributedError: the processes run different programs")
        assert "program multiply (process 0)" in line and "program add (process 1)" in line


@pytest.mark.xla
@pytest.mark.parametrize("scenario", ["die_before", "die_after"])
def test_a_process_that_dies_is_named_by_the_others(scenario):
    survivor, _ = run_processes(2, 1, scenario)
    assert survivor.startswith("ERROR ProcessLost: process 1 of 2 stopped"), survivor
    assert "restart all the processes" in survivor


@pytest.mark.xla
def test_an_unreachable_coordinator_is_an_error_naming_it():
    address = f"127.0.0.1:{free_port()}"    # (nothing listens there)
    with pytest.raises(DistributedError, match=f"no coordinator answered at {address} within 1 s"):
        distributed.initialize(address, 2, 1, initialization_timeout=1)
    assert not distributed.is_initialized()


@pytest.mark.xla
def test_a_coordinator_whose_peers_never_join_is_an_error_not_an_ended_process():
    (alone,) = run_processes(2, 1, "alone", started=1)
    assert alone.startswith("ERROR DistributedError: process 0 could not join the 2 processes"
                            ), alone
    assert "not all of them joined within" in alone


@pytest.mark.xla
def test_a_coordinator_port_in_use_is_an_error_naming_it():
    with socket.socket() as taken:      # (jaxlib's service would crash the process on it)
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with pytest.raises(DistributedError, match=f"cannot start the coordinator on port "
                                                   f"{port}: Address already in use"):
            distributed.initialize(f"127.0.0.1:{port}", 1, 0)
    assert not distributed.is_initialized()


@pytest.mark.pure
@pytest.mark.parametrize("address", ["localhost", "host:", ":123", "host:99999", "host:http"])
def test_a_malformed_coordinator_address_is_refused(address):
    with pytest.raises(DistributedError, match="must be 'host:port'"):
        distributed.initialize(address, 2, 0)


@pytest.mark.pure
@pytest.mark.parametrize("num_processes, process_id", [(2, 2), (2, -1), (0, 0), (2, 1.0)])
def test_ranks_out_of_range_are_refused(num_processes, process_id):
    with pytest.raises(DistributedError, match="process_id must be an int"):
        distributed.initialize("127.0.0.1:1234", num_processes, process_id)


@pytest.mark.xla
def test_a_tiling_deals_blocks_to_devices_in_order():
    tiling, shape = Tiling((2, 2)), (4, 6)
    sharding = tiling.sharding(psc_jit.devices()[:4])
    whole = np.arange(24).reshape(shape)
    blocks = [whole[s] for s in sharding.shard_slices(shape)]
    assert [b.tolist() for b in blocks[:2]] == [[[0, 1, 2], [6, 7, 8]], [[3, 4, 5], [9, 10, 11]]]
    assert tiling.hlo_text(4) == "{devices=[2,2]<=[4]}"
    assert sharding.hlo_text(2) == "{devices=[2,2]0,1,2,3}"     # (the same layout)
    assert Tiling().hlo_text(4) == "{replicated}"
    assert Tiling().sharding(psc_jit.devices()[:4]).hlo_text(2) == "{replicated}"
    # a process holding devices 2 and 3 holds the bottom rows; its data makes the global shape
    assert np.array_equal(assemble(sharding, shape, [2, 3], blocks[2:]), whole[2:])
    assert sharding.global_shape((2, 6), [2, 3]) == shape
    assert sharding.global_shape((1, 6), [0, 1]) == (2, 6) == sharding.global_shape((1, 3), [0])


@pytest.mark.xla
def test_a_tiling_whose_local_blocks_are_not_one_box_is_refused():
    sharding = Tiling((2, 2)).sharding(psc_jit.devices()[:4])
    with pytest.raises(ValueError, match=r"gives this process blocks that are not one box"):
        assemble(sharding, (4, 4), [0, 1, 2], [np.zeros((2, 2))] * 3, "this process")
    with pytest.raises(DistributedError, match=r"needs 4 devices; there are 3"):
        Tiling((2, 2)).sharding(psc_jit.devices()[:3])
