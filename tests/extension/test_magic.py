"""%%psc_jit through a real IPython shell: namespace write-back, cache hits and reasons,
fallback with the line, atomicity on error, --strict, the last expression."""
import numpy as np
import psc_jit
import pytest
from IPython.core.interactiveshell import InteractiveShell
from psc_jit.runner import PscJitError

pytestmark = [pytest.mark.ipython, pytest.mark.xla]

CELL = "h = np.tanh(x @ w + 1.0)\nloss = (h ** 2).mean()\n"


@pytest.fixture
def shell():
    ip = InteractiveShell.instance()
    ip.run_line_magic("load_ext", "psc_jit")
    ip.user_ns.update(np=np, x=np.random.default_rng(0).standard_normal((60, 50)),
                      w=np.ones(50))
    yield ip
    for name in ("h", "loss", "x", "w", "y", "u", "m", "z"):
        ip.user_ns.pop(name, None)


def run(shell, cell, line="--quiet"):
    return shell.run_cell_magic("psc_jit", line, cell)


def test_outputs_land_in_the_namespace_as_plain_numpy_would_leave_them(shell):
    run(shell, CELL)
    report = psc_jit.last_report()
    assert report.compiled and report.fallback_reason is None
    x, w = shell.user_ns["x"], shell.user_ns["w"]
    h0 = np.tanh(x @ w + 1.0)
    np.testing.assert_allclose(shell.user_ns["h"], h0, rtol=1e-12)
    assert type(shell.user_ns["loss"]) is np.float64
    assert shell.user_ns["loss"] == pytest.approx((h0 ** 2).mean(), rel=1e-12)
    assert report.n_kernels >= 1 and report.n_primitives > report.n_kernels


def test_rerun_hits_and_shape_change_misses_naming_x_and_both_shapes(shell):
    run(shell, CELL, "--quiet --name quick")
    run(shell, CELL, "--quiet --name quick")
    assert psc_jit.last_report().cache_hit
    shell.user_ns["x"] = shell.user_ns["x"][:20]
    run(shell, CELL, "--quiet --name quick")
    report = psc_jit.last_report()
    assert not report.cache_hit
    assert report.miss_reason == "x: f64[60,50] → f64[20,50]"
    assert shell.user_ns["h"].shape == (20,)


@pytest.mark.parametrize("cell", [
    "for i in range(3):\n    a = x * i\nb = a + 1\n",
    "for scale in (0.5, 2.0):\n    a = x * scale\n    c = a.sum()\nb = a + c\n",
    "for i in range(2, 8, 3):\n    if i > 4:\n        a = x * i\n    else:\n        a = x - i\n"
    "b = a + 1\n",
])
def test_a_name_the_cell_always_assigns_before_reading_is_not_an_input(shell, cell):
    """Issue 32's cell: after the first run `a` is in the namespace; the second run must hit
    (not recompile with "first run of this cell" because `a` became an input)."""
    for name in ("a", "b", "c", "i", "scale"):
        shell.user_ns.pop(name, None)
    run(shell, cell, "--quiet --force --name always-assigned")
    first = psc_jit.last_report()
    assert first.compiled and "a" not in first.inputs
    expected = dict(shell.user_ns)
    run(shell, cell, "--quiet --force --name always-assigned")
    second = psc_jit.last_report()
    assert second.compiled and second.cache_hit, second.miss_reason
    for name in ("a", "b"):
        np.testing.assert_array_equal(shell.user_ns[name], expected[name])
    plain = {"x": shell.user_ns["x"], "np": np}
    exec(cell, plain)
    np.testing.assert_allclose(shell.user_ns["b"], plain["b"], rtol=1e-12)
    for name in ("a", "b", "c", "i", "scale"):
        shell.user_ns.pop(name, None)


@pytest.mark.parametrize("cell", [
    "for i in range(n):\n    a = x * i\nb = a + 1\n",
    "for i in range(3):\n    if i == 1:\n        break\n    a = x * i\nb = a + 1\n",
    "for i in range(0):\n    a = x * i\nb = a + 1\n",
])
def test_a_name_a_loop_may_not_assign_is_still_read_from_the_notebook(shell, cell):
    """A loop that may not run (or may leave before the assignment) reads the notebook's
    `a` after it, as plain Python does."""
    shell.user_ns.update(a=np.full(50, 7.0), n=0)
    run(shell, cell)
    report = psc_jit.last_report()
    assert "a" in report.inputs
    plain = {"x": shell.user_ns["x"], "np": np, "a": np.full(50, 7.0), "n": 0}
    exec(cell, plain)
    np.testing.assert_allclose(shell.user_ns["b"], plain["b"], rtol=1e-12)
    for name in ("a", "b", "i", "n"):
        shell.user_ns.pop(name, None)


def test_edited_cell_is_a_miss_for_new_source(shell):
    run(shell, CELL, "--quiet --name edited")
    run(shell, CELL + "y = h * 2\n", "--quiet --name edited")
    assert psc_jit.last_report().miss_reason == "new cell source"


def test_static_int_change_is_explained(shell):
    shell.user_ns["n"] = 3
    run(shell, "y = x[:n] * 2", "--quiet --name static")
    shell.user_ns["n"] = 4
    run(shell, "y = x[:n] * 2", "--quiet --name static")
    assert psc_jit.last_report().miss_reason == "n: 3 → 4 (static)"
    assert shell.user_ns["y"].shape == (4, 50)


def test_a_side_effect_runs_on_the_host_at_its_line_and_the_rest_compiles(shell, capsys):
    run(shell, "m = np.abs(x).max() * 2\nprint('twice the largest is', m)\n")
    report = psc_jit.last_report()
    assert report.compiled and report.split and report.regions[0].compiled
    assert report.plain_reasons.startswith("line 3: 'print('twice the largest is', m)': print()")
    m = np.abs(shell.user_ns["x"]).max() * 2
    assert capsys.readouterr().out == f"twice the largest is {m}\n"
    assert shell.user_ns["m"] == m


def test_a_value_a_print_shows_is_computed_as_plain_python_where_xla_would_round_it(shell):
    """The mean's last digits are XLA's order of adding: the print shows them all, so the
    statement runs as plain Python and the report names the print and the sum."""
    run(shell, "m = x.mean()\nprint('mean is', m)\n")
    report = psc_jit.last_report()
    assert not report.compiled
    assert "`m` is printed later" in report.plain_reasons
    assert "a sum of floats" in report.plain_reasons
    assert shell.user_ns["m"] == shell.user_ns["x"].mean()


def test_branch_on_traced_value_falls_back_naming_the_construct(shell):
    run(shell, "if x.sum() > 0:\n    y = x * 2.0\nelse:\n    y = -x\n")
    report = psc_jit.last_report()
    assert report.compiled or "line 2: 'if x.sum() > 0:'" in report.fallback_reason
    x = shell.user_ns["x"]
    np.testing.assert_array_equal(shell.user_ns["y"], x * 2.0 if x.sum() > 0 else -x)


def test_strict_raises_instead_of_falling_back(shell):
    with pytest.raises(PscJitError, match="print"):
        run(shell, "m = x.mean()\nprint(m)\n", "--strict --quiet")


def test_failed_run_leaves_the_namespace_unchanged(shell):
    shell.user_ns["u"] = np.zeros(3)
    before = shell.user_ns["u"].copy()
    with pytest.raises(ValueError):
        run(shell, "u[0] = 7.0\nz = u @ np.ones(5)\n", "--quiet")
    assert "z" not in shell.user_ns
    # plain Python ran the cell (it raised before z): its u[0] = 7.0 stands, as in NumPy
    assert shell.user_ns["u"][0] == 7.0 and before[0] == 0.0


def test_compiled_in_place_update_of_an_input_reaches_the_same_array(shell):
    u = np.zeros((5, 5))
    shell.user_ns["u"] = u
    run(shell, "u[1:-1, 1:-1] = u[1:-1, 1:-1] + 1.0\ntotal = u.sum()\n")
    assert psc_jit.last_report().compiled
    assert shell.user_ns["u"] is u and u.sum() == 9.0
    assert shell.user_ns["total"] == 9.0


def test_last_expression_is_the_cells_value(shell):
    value = run(shell, "y = x * 2\ny.shape")
    assert value == (60, 50)


def test_timing_compares_plain_and_compiled_on_copies(shell):
    u = np.ones(4)
    shell.user_ns["u"] = u
    run(shell, "u *= 2.0\ny = u + 1\n", "--quiet --compare --name timed")
    report = psc_jit.last_report()
    assert report.timings is not None
    assert report.timings.largest_difference == 0.0
    assert len(report.timings.plain_seconds) >= 1 and len(report.timings.compiled_seconds) >= 1
    assert u.tolist() == [2.0] * 4          # timing ran on copies: u doubled once, by the run


def test_cache_and_timings_line_magics_show_tables(shell, capsys):
    run(shell, CELL, "--quiet --compare --name shown")
    shell.run_line_magic("psc_cache", "")
    shell.run_line_magic("psc_timings", "")
    shell.run_line_magic("psc_cache", "--clear")
    assert "psc_jit caches cleared" in capsys.readouterr().out
    run(shell, CELL, "--quiet --name shown")
    assert not psc_jit.last_report().cache_hit


def test_error_inside_the_compiled_run_changes_nothing(shell, monkeypatch):
    from psc_jit.core.compile import xla
    u = np.zeros(3)
    shell.user_ns.update(u=u)
    shell.user_ns.pop("y", None)

    def broken(self, arrays):
        raise KeyboardInterrupt

    monkeypatch.setattr(xla.Executable, "execute", broken)
    with pytest.raises(KeyboardInterrupt):
        run(shell, "u += 1.0\ny = u * 2\n", "--quiet --no-compare --name atomic")
    assert "y" not in shell.user_ns and u.tolist() == [0.0, 0.0, 0.0]
    monkeypatch.undo()
    run(shell, "u += 1.0\ny = u * 2\n", "--quiet --no-compare --name atomic")
    assert psc_jit.last_report().cache_hit          # the compiled entry survived the interrupt
    assert u.tolist() == [1.0] * 3 and shell.user_ns["y"].tolist() == [2.0] * 3


def test_time_loop_of_in_place_updates_compiles_to_one_loop(shell):
    u = np.zeros((16, 16))
    u[4:8, 4:8] = 1.0
    plain = u.copy()
    shell.user_ns.update(u=u, steps=30, alpha=0.1)
    cell = ("for t in range(steps):\n"
            "    u[1:-1, 1:-1] = u[1:-1, 1:-1] + alpha * (\n"
            "        u[2:, 1:-1] + u[:-2, 1:-1] + u[1:-1, 2:] + u[1:-1, :-2] - 4 * u[1:-1, 1:-1])\n"
            "total = u.sum()\n")
    run(shell, cell, "--quiet --no-compare")
    report = psc_jit.last_report()
    assert report.compiled
    assert [e.prim.name for e in report.graph.eqns].count("while_loop") == 1
    ns = {"u": plain, "steps": 30, "alpha": 0.1}
    exec(cell, ns)
    np.testing.assert_allclose(u, plain, rtol=1e-12)
    assert shell.user_ns["u"] is u and shell.user_ns["t"] == 29 == ns["t"]
    assert shell.user_ns["total"] == pytest.approx(ns["total"], rel=1e-12)


def test_branch_on_a_traced_value_compiles(shell):
    run(shell, "if x.sum() > 0:\n    y = x * 2.0\nelse:\n    y = -x\n", "--quiet")
    report = psc_jit.last_report()
    assert report.compiled, report.fallback_reason
    x = shell.user_ns["x"]
    np.testing.assert_array_equal(shell.user_ns["y"], x * 2.0 if x.sum() > 0 else -x)


def test_a_result_numpy_would_shape_from_the_values_falls_back_for_that_run(shell):
    """lstsq's residuals are empty for a rank-deficient matrix, bincount grows past minlength:
    the compiled program (residuals of full rank, minlength counts) runs when the values fit,
    and a run whose values do not fit runs as plain Python, before anything is written."""
    cell = ("x[0] = x[0]\ncoef, res, rank, sv = np.linalg.lstsq(u, y, rcond=None)\n"
            "counts = np.bincount(m, minlength=4)\n")
    rng = np.random.default_rng(3)
    shell.user_ns.update(u=rng.standard_normal((6, 3)), y=rng.standard_normal(6),
                         m=np.array([0, 3, 3, 1]))
    run(shell, cell, "--quiet --name shapes")
    assert psc_jit.last_report().compiled
    assert shell.user_ns["res"].shape == (1,) and shell.user_ns["counts"].tolist() == [1, 1, 0, 2]
    shell.user_ns.update(u=np.ones((6, 3)), m=np.array([0, 5]))
    run(shell, cell, "--quiet --name shapes")
    report = psc_jit.last_report()
    assert not report.compiled and "rank 1 < 3" in report.fallback_reason
    assert shell.user_ns["res"].shape == (0,) and shell.user_ns["rank"] == 1
    assert shell.user_ns["counts"].tolist() == [1, 0, 0, 0, 0, 1]


def test_masked_updates_and_statistics_compile(shell):
    shell.user_ns["z"] = np.random.default_rng(4).standard_normal(50)
    z = shell.user_ns["z"].copy()
    run(shell, "z[z > 1.0] = 1.0\nz[z < 0] -= 1\nm = z[z > 0].mean()\n")
    assert psc_jit.last_report().compiled
    z[z > 1.0] = 1.0
    z[z < 0] -= 1
    np.testing.assert_array_equal(shell.user_ns["z"], z)
    assert shell.user_ns["m"] == pytest.approx(z[z > 0].mean(), rel=1e-12)
