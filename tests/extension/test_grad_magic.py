"""%%psc_jit --grad OUT --wrt NAME ... through a real IPython shell: gradients bound as
dOUT_dNAME beside the cell's outputs, equal to NumPy finite differences; the report's graph is
the forward and backward program, each backward equation on a line of the cell."""
import numpy as np
import psc_jit
import pytest
from IPython.core.error import UsageError
from IPython.core.interactiveshell import InteractiveShell
from psc_jit.runner import PscJitError

pytestmark = [pytest.mark.ipython, pytest.mark.xla]

MLP = """\
h = np.tanh(x @ w1 + b1)
out = h @ w2
loss = ((out - y) ** 2).mean()
"""

NAMES = ("x", "y", "w1", "b1", "w2", "h", "out", "loss", "dloss_dw1", "dloss_db1", "dloss_dw2",
         "u", "energy", "denergy_du", "steps")


@pytest.fixture
def shell():
    ip = InteractiveShell.instance()
    ip.run_line_magic("load_ext", "psc_jit")
    rng = np.random.default_rng(3)
    ip.user_ns.update(np=np, x=rng.standard_normal((8, 3)), y=rng.standard_normal((8, 1)),
                      w1=rng.standard_normal((3, 5)), b1=np.zeros(5),
                      w2=rng.standard_normal((5, 1)))
    yield ip
    for name in NAMES:
        ip.user_ns.pop(name, None)


def mlp_loss(ns, **changes):
    v = {**ns, **changes}
    h = np.tanh(v["x"] @ v["w1"] + v["b1"])
    return (((h @ v["w2"]) - v["y"]) ** 2).mean()


def finite_difference(ns, name, step=1e-6):
    value = ns[name]
    out = np.zeros(value.shape)
    for index in np.ndindex(value.shape):
        up, down = value.copy(), value.copy()
        up[index] += step
        down[index] -= step
        out[index] = (mlp_loss(ns, **{name: up}) - mlp_loss(ns, **{name: down})) / (2 * step)
    return out


def test_gradients_are_bound_beside_the_outputs(shell):
    shell.run_cell_magic("psc_jit", "--quiet --grad loss --wrt w1 b1 w2", MLP)
    ns = shell.user_ns
    report = psc_jit.last_report()
    assert report.compiled and report.fallback_reason is None
    assert ns["loss"] == pytest.approx(mlp_loss(ns), rel=1e-12)
    for name in ("w1", "b1", "w2"):
        grad = ns[f"dloss_d{name}"]
        assert grad.shape == ns[name].shape and grad.dtype == np.float64
        np.testing.assert_allclose(grad, finite_difference(ns, name), rtol=1e-6, atol=1e-9)
    assert report.outputs[-3:] == ("dloss_dw1", "dloss_db1", "dloss_dw2")


def test_the_report_shows_the_backward_program_on_the_cell_lines(shell):
    shell.run_cell_magic("psc_jit", "--quiet --grad loss --wrt w1", MLP)
    report = psc_jit.last_report()
    eqns = list(report.graph.all_eqns())
    assert {e.source.file for e in eqns if e.source} == {report.filename}
    lines = [e.source.line for e in eqns if e.source]
    assert set(lines) == {2, 3, 4}             # the magic line is line 1
    # the backward pass: the transposed matmuls of lines 2 and 3, and tanh's derivative
    dots = [e for e in eqns if e.prim.name == "dot_general"]
    assert len(dots) >= 4
    assert report.n_kernels >= 1 and "fusion" in report.optimized_hlo
    # after fusion, XLA's kernels still map to the cell's lines (the backward's included)
    labels = report.graph.labels()
    backward = {labels[e.id] for e in dots[2:]}
    kernels = [k for k in report.kernels.all_kernels() if set(k.eqn_labels) & backward]
    assert kernels and all({s.line for s in k.source_lines} <= {2, 3, 4} for k in kernels)


def test_a_rerun_hits_the_cache(shell):
    for _ in range(2):
        shell.run_cell_magic("psc_jit", "--quiet --grad loss --wrt w2", MLP)
    assert psc_jit.last_report().cache_hit


def test_a_rolled_loop_with_in_place_updates(shell):
    shell.user_ns.update(u=np.linspace(0.0, 1.0, 9) ** 2, steps=25)
    shell.run_cell_magic("psc_jit", "--quiet --grad energy --wrt u", """\
v = u.copy()
for t in range(steps):
    v[1:-1] = v[1:-1] + 0.2 * (v[2:] - 2 * v[1:-1] + v[:-2])
energy = (v * v).sum()
""")
    ns = shell.user_ns
    u = ns["u"]

    def energy(u):
        v = u.copy()
        for _ in range(25):
            v[1:-1] = v[1:-1] + 0.2 * (v[2:] - 2 * v[1:-1] + v[:-2])
        return (v * v).sum()
    fd = np.array([(energy(u + 1e-6 * e) - energy(u - 1e-6 * e)) / 2e-6 for e in np.eye(9)])
    np.testing.assert_allclose(ns["denergy_du"], fd, rtol=1e-6, atol=1e-9)
    loops = [e for e in psc_jit.last_report().graph.eqns if e.prim.name == "while_loop"]
    assert len(loops) == 2


def test_mistakes_are_explained(shell):
    with pytest.raises(PscJitError, match="does not assign `lost`"):
        shell.run_cell_magic("psc_jit", "--quiet --grad lost --wrt w1", MLP)
    with pytest.raises(PscJitError, match="`h` is not an input"):
        shell.run_cell_magic("psc_jit", "--quiet --grad loss --wrt h", MLP)
    with pytest.raises(PscJitError, match="needs --wrt"):
        shell.run_cell_magic("psc_jit", "--quiet --grad loss", MLP)
    with pytest.raises(UsageError, match="give --grad"):
        shell.run_cell_magic("psc_jit", "--quiet --wrt w1", MLP)
    assert "dloss_dw1" not in shell.user_ns


def test_a_cell_that_cannot_compile_raises_instead_of_running_without_gradients(shell):
    with pytest.raises(PscJitError, match="--grad needs the cell compiled.*print"):
        shell.run_cell_magic("psc_jit", "--quiet --grad loss --wrt w1", MLP + "print(loss)\n")
