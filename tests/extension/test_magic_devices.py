"""`%%psc_jit` on devices: `--mesh`/`--shard` partition a cell's program over the process's
devices (4 CPU devices in the suite, tests/conftest.py), `--device-arrays` and Array inputs
bind Arrays; results equal the one-device cell's, the report shows the partitioned program."""
import numpy as np
import psc_jit
import pytest

pytestmark = [pytest.mark.ipython, pytest.mark.xla]

CELL = "h = np.tanh(x @ w + 1.0)\nrow_norms = np.sqrt((h * h).sum(axis=1))\ntotal = h.sum()\n"


@pytest.fixture
def shell(magic_shell):
    rng = np.random.default_rng(0)
    magic_shell.user_ns.update(x=rng.standard_normal((16, 8)), w=rng.standard_normal((8, 4)))
    return magic_shell


def run(shell, line: str, cell: str):
    result = shell.run_cell(f"%%psc_jit --quiet {line}\n{cell}")
    assert result.success, result.error_in_exec
    return psc_jit.last_report()


def test_a_sharded_cell_equals_the_one_device_cell_and_binds_numpy(shell):
    run(shell, "--name one", CELL)
    one = {n: shell.user_ns[n] for n in ("h", "row_norms", "total")}
    report = run(shell, "--name sharded --mesh data=4 --shard x=data", CELL)
    assert report.compiled and report.signature == "x: sharded data=4, w: replicated"
    for name in ("h", "row_norms"):
        value = shell.user_ns[name]
        assert type(value) is np.ndarray and value.dtype == one[name].dtype
        # one device multiplies by BLAS (psc_jit's own kernel), the partitioned program by
        # XLA's dot, which the partitioner can split: the same sums, added in another order
        np.testing.assert_allclose(value, one[name], rtol=1e-13)
    # the total adds four partial sums: the last bits may differ from one device's order
    np.testing.assert_allclose(shell.user_ns["total"], one["total"], rtol=1e-13)
    assert type(shell.user_ns["total"]) is type(one["total"])
    assert any(note.startswith("all-reduce of f64[]") for note in report.notes)
    per_device = next(note for note in report.notes if note.startswith("per device: "))
    assert [part.split()[0] for part in per_device[12:].split("; ")] == \
        ["cpu:0", "cpu:1", "cpu:2", "cpu:3"]
    assert "in collectives" in per_device
    from psc_jit import _report_html        # what the notebook shows of it
    html = _report_html(report)
    assert "all-reduce" in html and "per device" in html and "f64[4,8]" in html
    assert "f64[4,8]" in report.optimized_hlo.split("ENTRY")[1].splitlines()[0]


def test_a_rerun_hits_and_a_changed_mesh_misses_with_the_reason(shell):
    run(shell, "--name m --mesh data=4 --shard x=data", CELL)
    assert run(shell, "--name m --mesh data=4 --shard x=data", CELL).cache_hit
    again = run(shell, "--name m --mesh data=4", CELL)
    assert not again.cache_hit
    assert again.miss_reason.startswith("x: sharded data=4 ({devices=[4,1]") and \
        "→ replicated" in again.miss_reason


def test_device_arrays_stay_on_the_devices_from_cell_to_cell(shell):
    run(shell, "--name d1 --mesh data=4 --shard x=data --device-arrays", "y = x * 2.0\n")
    y = shell.user_ns["y"]
    assert isinstance(y, psc_jit.Array) and y.sharding.describe(2) == "sharded data=4"
    report = run(shell, "--name d2", "z = np.sin(y) + 1.0\n")     # an Array input: Arrays out
    z = shell.user_ns["z"]
    assert report.compiled and isinstance(z, psc_jit.Array)
    np.testing.assert_array_equal(np.asarray(z), psc_jit.jit(lambda v: np.sin(v * 2.0) + 1.0)(
        shell.user_ns["x"]))


def test_mesh_usage_errors_say_what_to_write(shell):
    for line, message in [("--mesh data", "give axis sizes as NAME=SIZE"),
                          ("--shard x=data", "give --mesh too"),
                          ("--mesh data=4 --shard x", "give NAME=AXIS"),
                          ("--mesh data=4 --grad total --wrt x", "--grad runs on one device")]:
        result = shell.run_cell(f"%%psc_jit --quiet {line}\n{CELL}")
        assert not result.success and message in str(result.error_in_exec), line
    result = shell.run_cell(f"%%psc_jit --quiet --mesh data=64\n{CELL}")
    assert "needs 64 devices; this process has 4" in str(result.error_in_exec)
    assert "%config PscJit.cpu_devices = 64" in str(result.error_in_exec)
    result = shell.run_cell(f"%%psc_jit --quiet --mesh data=4 --shard q=data\n{CELL}")
    assert "--shard q: not an input of the cell" in str(result.error_in_exec)


def test_the_device_count_setting_is_fixed_once_devices_exist(shell, caplog):
    assert len(psc_jit.devices()) == 4      # (the client exists from here on)
    shell.run_cell("%config PscJit.cpu_devices = 2")
    assert "already has 4 CPU device(s)" in caplog.text and "restart the kernel" in caplog.text
    settings = next(c for c in shell.configurables if type(c).__name__ == "PscJit")
    assert settings.cpu_devices == 4        # what the process has, not what was refused
    assert shell.run_cell("%config PscJit.cpu_devices = 4").success


def test_a_cell_that_cannot_compile_on_devices_runs_plain(shell):
    report = run(shell, "--name p --mesh data=4 --shard x=data",
                 "v = x.T\n")      # a view of an input: device arrays have none
    assert not report.compiled and "view" in report.fallback_reason
    np.testing.assert_array_equal(shell.user_ns["v"], shell.user_ns["x"].T)
    assert shell.user_ns["v"].base is shell.user_ns["x"]     # plain Python's own view
