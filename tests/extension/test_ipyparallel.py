"""ipyparallel engines as the processes of psc_jit's distributed runtime: two engines on
localhost, started here with ipyparallel's Python API and stopped after, joined by
`psc_jit.distributed.initialize_from_ipyparallel`, run one program over both (from `%%px`
cells of a real IPython shell, as a user would), and a killed engine is an error on the other.
Every wait has a timeout; each cluster is stopped whatever happens."""
import contextlib
import logging
import pathlib

import ipyparallel as ipp      # (in the test extra: CI must not skip these)
import numpy as np
import pytest

from psc_jit import distributed

CHILD_FOLDER = str(pathlib.Path(__file__).resolve().parents[1] / "core" / "compile")
REPLY_SECONDS = 60      # the longest an engine may take to answer
SETTINGS = dict(initialization_timeout=20, heartbeat_timeout=3, shutdown_timeout=3,
                sync_timeout=20)


@contextlib.contextmanager
def two_engines():
    """A client of a fresh cluster of two engines on localhost, stopped on the way out."""
    cluster = ipp.Cluster(n=2, log_level=logging.ERROR)
    try:
        client = cluster.start_and_connect_sync(activate=False)
        client.wait_for_engines(2, timeout=REPLY_SECONDS)
        yield client
    finally:
        cluster.stop_cluster_sync()


@pytest.fixture(scope="module")
def joined_engines():
    """Two engines that joined one distributed runtime (once per engine process)."""
    with two_engines() as client:
        ranks = distributed.initialize_from_ipyparallel(client, **SETTINGS)
        import_child(client)
        yield client, ranks


def import_child(client):
    """The program the core tests run (distributed_child.py), importable on each engine."""
    on_both(client, f"import sys; sys.path.insert(0, {CHILD_FOLDER!r}); import distributed_child")


@pytest.mark.xla
def test_the_engines_become_the_ranks_of_one_runtime(joined_engines):
    client, ranks = joined_engines
    assert ranks == {engine: rank for rank, engine in enumerate(sorted(client.ids))}

    on_both(client, "import psc_jit.distributed as d\n"
                    "where = (d.process_index(), d.process_count(), d.device_count(), "
                    "d.local_device_count())")
    assert client[:].pull("where", block=False).get(REPLY_SECONDS) == [(0, 2, 2, 1), (1, 2, 2, 1)]


def on_both(client, code: str) -> None:
    client[:].execute(code, block=False).get(REPLY_SECONDS)

@pytest.mark.xla
@pytest.mark.ipython
def test_a_px_cell_runs_one_program_over_both_engines(joined_engines, magic_shell):
    client, _ = joined_engines
    client.activate(suffix="_psc")      # %%px_psc in this shell: the engines run the cell
    magic_shell.run_cell_magic("px_psc", "--block", (
        "import distributed_child, psc_jit.distributed\n"
        "result = distributed_child.run(psc_jit.distributed.process_index(), 'run')\n"))
    results = client[:].pull("result", block=False).get(REPLY_SECONDS)
    for r in results:
        np.testing.assert_allclose(r["total"], r["expected_total"], rtol=1e-15)
        np.testing.assert_allclose(r["cols"], r["expected_cols"], rtol=1e-15)
        assert r["y"] == r["expected_y"]
    assert results[0]["total"] == results[1]["total"]   # one all-reduce, one value everywhere
    assert results[0]["y"] + results[1]["y"] == (np.arange(12).reshape(4, 3) / 7 * 2).tolist()
    magic_shell.run_cell_magic("px_psc", "--block", "%load_ext psc_jit\nimport numpy as np")
    magic_shell.run_cell_magic("px_psc", "--block", (       # a plain cell on each engine
        "%%psc_jit --quiet\nrow_squares = (np.arange(6.0).reshape(2, 3) ** 2).sum(axis=1)\n"))
    squares = client[:].pull("row_squares", block=False).get(REPLY_SECONDS)
    assert [s.tolist() for s in squares] == [[5.0, 50.0]] * 2


@pytest.mark.xla
def test_a_killed_engine_is_an_error_on_the_other():
    with two_engines() as client:
        distributed.initialize_from_ipyparallel(client, **SETTINGS)
        import_child(client)

        code = ("import psc_jit.distributed\n"
                "result = distributed_child.run(psc_jit.distributed.process_index(), 'die_after')")
        survivor, killed = (client[e].execute(code, block=False) for e in sorted(client.ids))
        with pytest.raises(ipp.error.RemoteError) as raised:
            survivor.get(REPLY_SECONDS)
        assert raised.value.ename == "ProcessLost"
        assert "process 1 of 2 stopped" in raised.value.evalue
        with pytest.raises(ipp.error.RemoteError, match="EngineError: Engine 1 died"):
            killed.get(REPLY_SECONDS)


@pytest.mark.xla
@pytest.mark.ipython
def test_a_sharded_magic_cell_runs_over_both_engines_as_one_process_would(joined_engines,
                                                                         magic_shell):
    client, _ = joined_engines
    client.activate(suffix="_mesh")
    magic_shell.run_cell_magic("px_mesh", "--block", (
        "%load_ext psc_jit\nimport numpy as np, psc_jit\n"
        "x = np.arange(48.0).reshape(8, 6) / 7\nw = np.linspace(-1, 1, 18).reshape(6, 3)\n"))
    cell = "h = np.tanh(x @ w)\nrows = (h * h).sum(axis=1)\ntotal = h.sum()\n"
    magic_shell.run_cell_magic("px_mesh", "--block",
                               f"%%psc_jit --quiet --mesh data=2 --shard x=data\n{cell}")
    on_both(client, "report = psc_jit.last_report()\n"
                    "facts = (report.compiled, report.signature, "
                    "[n.split(' of ')[0] for n in report.notes if ' of ' in n])")
    facts = client[:].pull("facts", block=False).get(REPLY_SECONDS)
    for compiled, signature, collectives in facts:
        assert compiled and signature == "x: sharded data=2, w: replicated"
        assert "all-reduce" in collectives      # the total: one partial sum per engine
    namespace = {"np": np, "x": np.arange(48.0).reshape(8, 6) / 7,
                 "w": np.linspace(-1, 1, 18).reshape(6, 3)}
    exec(cell, namespace)       # one process, plain NumPy
    for name in ("h", "rows", "total"):
        values = client[:].pull(name, block=False).get(REPLY_SECONDS)
        assert type(values[0]) is type(namespace[name])
        np.testing.assert_array_equal(values[0], values[1])      # one result everywhere
        np.testing.assert_allclose(values[0], namespace[name], rtol=1e-13)


@pytest.mark.xla
@pytest.mark.ipython
def test_an_engine_killed_before_a_sharded_cell_is_an_error_on_the_other(magic_shell):
    with two_engines() as client:
        distributed.initialize_from_ipyparallel(client, **SETTINGS)
        first, second = sorted(client.ids)
        on_both(client, "%load_ext psc_jit\nimport numpy as np\nx = np.ones((4, 2))")
        client[second].execute("import os; os._exit(3)", block=False)    # dies, no cell
        reply = client[first].execute(
            "%%psc_jit --quiet --mesh data=2 --shard x=data\ns = (x * 2.0).sum()", block=False)
        with pytest.raises(ipp.error.RemoteError) as raised:
            reply.get(REPLY_SECONDS)
        assert raised.value.ename == "ProcessLost"
        assert "process 1 of 2 stopped" in raised.value.evalue
