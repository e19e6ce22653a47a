"""A notebook helper's writes to a global it only writes to (`losses.append(loss)` in a
`train_step` the cell calls): through a real IPython shell, the cell compiles, and after every
run the global holds what plain Python would have left, once per run (also with the default
timing comparison, whose plain runs call the helper too). Where the writes cannot be made
after the run as plain Python makes them, the cell runs as plain Python and says why."""
import numpy as np
import psc_jit
import pytest

pytestmark = [pytest.mark.ipython, pytest.mark.xla]

TRAINING = """
import numpy as np
x = np.arange(8.0)
w0 = np.zeros(8)
losses = []
stats = {}
class Log:
    pass
log = Log()
def step(w, x):
    g = (w - x) / 2
    losses.append(float(((w - x) ** 2).sum()))
    stats['last'] = g
    log.calls = 1
    return w - g
def snapshot(v):
    for k in range(3):
        v = v / 2
        losses.append(v.sum())
    return v
"""


def _same(a, b) -> bool:
    if isinstance(a, (list, tuple)):
        return type(a) is type(b) and len(a) == len(b) and all(map(_same, a, b))
    if isinstance(a, dict):
        return type(b) is dict and list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, np.ndarray):
        return type(b) is np.ndarray and a.dtype == b.dtype and np.array_equal(a, b)
    if hasattr(a, "__dict__") and not isinstance(a, type):
        return type(a).__name__ == type(b).__name__ and _same(vars(a), vars(b))
    return type(a) is type(b) and a == b


def _check_runs(shell, cell, line, compiled=True, runs=3, names=("w", "losses", "stats", "log")):
    shell.run_cell(TRAINING)
    oracle = {}
    exec(TRAINING, oracle)
    for n in range(runs):
        result = shell.run_cell(f"%%psc_jit {line}\n{cell}")
        report = psc_jit.last_report()
        exec(cell, oracle)
        assert result.success, result.error_in_exec
        assert (report.compiled and not report.split) == compiled, report.plain_reasons
        for name in names:
            assert _same(shell.user_ns[name], oracle[name]), (n, name, shell.user_ns[name])
    return report


@pytest.mark.parametrize("line", ["--quiet --no-compare", "--quiet"])
def test_a_helpers_writes_are_made_once_per_run(magic_shell, line):
    _check_runs(magic_shell, "w = step(w0, x)", line)
    assert len(magic_shell.user_ns["losses"]) == 3


def test_a_helper_called_in_a_rolled_loop_writes_once_per_pass(magic_shell):
    _check_runs(magic_shell, "w = w0.copy()\nfor i in range(6):\n    w = step(w, x)",
                "--quiet --no-compare")
    assert len(magic_shell.user_ns["losses"]) == 18


def test_a_helpers_own_loop_writes_once_per_pass(magic_shell):
    _check_runs(magic_shell, "w = snapshot(x)", "--quiet --no-compare")
    assert [type(v) for v in magic_shell.user_ns["losses"]] == [np.float64] * 9


def test_a_new_list_bound_between_runs_takes_the_writes(magic_shell):
    _check_runs(magic_shell, "w = step(w0, x)", "--quiet --no-compare", runs=1)
    magic_shell.run_cell("losses = []")
    result = magic_shell.run_cell("%%psc_jit --quiet --no-compare\nw = step(w0, x)")
    assert result.success and psc_jit.last_report().compiled
    assert magic_shell.user_ns["losses"] == [140.0]


@pytest.mark.parametrize("cell, reason", [
    ("w = step(w0, x)\nn = len(losses)", "losses is written by step and read by the traced"),
    ("n = len(losses)\nw = step(w0, x)", "losses is written by step and read by the traced"),
    ("w = step(w0, x) if x.sum() > 1 else w0",
     "losses is written inside a branch that psc_jit turns into XLA's")])
def test_writes_that_cannot_be_made_after_the_run_run_as_plain_python(magic_shell, cell,
                                                                      reason):
    report = _check_runs(magic_shell, cell, "--quiet --no-compare", compiled=False, runs=2)
    assert reason in report.plain_reasons     # at its line (the rest of the cell compiles)
