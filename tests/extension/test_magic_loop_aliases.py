"""A rolled loop that ends its pass with `x = x_new` leaves both names bound to one array,
as plain Python does (it was refused when the bound is an input: the loop may make no pass,
where the names stay two), through a real IPython shell: later in-place updates through
either name reach both, and a run that makes no pass runs the cell as plain Python."""
import numpy as np
import psc_jit
import pytest

pytestmark = [pytest.mark.ipython, pytest.mark.xla]

CELL = """
x = np.zeros_like(b)
for _ in range(iters):
    x_new = (b - R @ x) / D
    x = x_new
x_new += 1.0
same = x is x_new
"""


def _inputs(iters):
    rng = np.random.default_rng(0)
    return {"b": rng.random(5), "R": rng.random((5, 5)) * 0.1, "D": 1.0 + rng.random(5),
            "iters": iters}


def _plain(inputs):
    namespace = {"np": np, **{k: np.copy(v) for k, v in inputs.items()}}
    exec(CELL, namespace)
    return namespace


@pytest.mark.parametrize("iters", [np.int64(1), np.int64(7)])
def test_x_new_ending_a_pass_binds_both_names_to_one_array(magic_shell, iters):
    inputs = _inputs(iters)
    magic_shell.user_ns.update(inputs)
    magic_shell.run_cell(f"%%psc_jit --quiet\n{CELL}")
    report = psc_jit.last_report()
    assert report.compiled, report.fallback_reason
    want = _plain(inputs)
    np.testing.assert_allclose(magic_shell.user_ns["x"], want["x"], rtol=1e-13)
    assert magic_shell.user_ns["x"] is magic_shell.user_ns["x_new"]
    assert magic_shell.user_ns["same"] is True


def test_a_run_of_no_pass_runs_the_cell_as_plain_python(magic_shell):
    magic_shell.user_ns.update(_inputs(np.int64(3)))
    magic_shell.run_cell(f"%%psc_jit --quiet\n{CELL}")
    magic_shell.user_ns.update(_inputs(np.int64(0)), x_new=np.ones(5))
    magic_shell.run_cell(f"%%psc_jit --quiet\n{CELL}")
    report = psc_jit.last_report()
    assert not report.compiled and "makes no pass" in report.fallback_reason
    np.testing.assert_array_equal(magic_shell.user_ns["x"], np.zeros(5))
    np.testing.assert_array_equal(magic_shell.user_ns["x_new"], np.full(5, 2.0))
    assert magic_shell.user_ns["same"] is False


@pytest.mark.parametrize("alias", ["w", "w[:]", "w[::-1]", "w.reshape(2, 2).ravel()"])
@pytest.mark.parametrize("update", ["w += b", "w *= 2\n    w -= b", "w[:] += b"])
def test_a_loop_updating_an_array_in_place_reads_it_through_its_aliases(magic_shell, alias,
                                                                        update):
    """Found by `make fuzz`: with `b = w` before the cell, `for i in range(3): w += b` gave
    [0, 0, 0, 4] compiled, [0, 0, 0, 8] plain: the loop read `b` as it was on entry, not as
    the pass before left it through `w`."""
    cell = f"for i in range(3):\n    {update}\n"
    for run in ("first run", "re-run"):
        w = np.array([0, 2, 0, 1], dtype=np.int32)
        plain = {"np": np, "w": w.copy()}
        exec(f"b = {alias}\n{cell}", plain)
        magic_shell.user_ns["w"] = w
        magic_shell.run_cell(f"b = {alias}")
        assert magic_shell.run_cell(f"%%psc_jit --quiet --no-compare\n{cell}").success
        for name in ("w", "b"):
            np.testing.assert_array_equal(magic_shell.user_ns[name], plain[name],
                                          err_msg=f"{run}: {name}")
            assert magic_shell.user_ns[name].dtype == plain[name].dtype
        assert np.shares_memory(magic_shell.user_ns["w"], magic_shell.user_ns["b"])
