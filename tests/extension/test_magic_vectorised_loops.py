"""A cell's loop whose passes are independent runs as one batched computation, and the cell
ends as plain Python ends it: every name the loop binds (its variable, a row it took, a sum)
holds the last pass's value, its arrays the rows each pass wrote; the report says the loop was
vectorised, or why not, at its line. Through a real IPython shell."""
import numpy as np
import psc_jit
import pytest

pytestmark = [pytest.mark.ipython, pytest.mark.xla]

INDEPENDENT = """
out = np.zeros_like(X)
total = 0.0
for i in range(X.shape[0]):
    row = X[i] * 2.0
    out[i] = (row + 1.0) * row
    total += row[0]
"""

DEPENDENT = """
y = np.zeros_like(x)
for i in range(1, x.shape[0]):
    y[i] = y[i - 1] + x[i]
"""


def _plain(cell, inputs):
    namespace = {"np": np, **{k: np.copy(v) for k, v in inputs.items()}}
    exec(cell, namespace)
    return namespace


@pytest.mark.parametrize("rows", [0, 1, 200])
def test_the_names_a_vectorised_loop_binds_are_plain_pythons(magic_shell, rows):
    inputs = {"X": np.random.default_rng(rows).random((rows, 4))}
    magic_shell.user_ns.update({k: np.copy(v) for k, v in inputs.items()})
    magic_shell.run_cell(f"%%psc_jit --quiet\n{INDEPENDENT}")
    report = psc_jit.last_report()
    assert report.compiled, report.fallback_reason
    want = _plain(INDEPENDENT, inputs)
    for name in ("out", "total", "i", "row"):
        if name not in want:                    # no pass: the loop binds neither
            assert name not in magic_shell.user_ns or rows == 0
            continue
        got = magic_shell.user_ns[name]
        assert type(got) is type(want[name]), name
        np.testing.assert_array_equal(got, want[name], err_msg=name)
    if rows > 1:
        assert any("line 5: vectorised" in note for note in report.notes), report.notes


def test_the_report_says_why_a_loop_stays_sequential(magic_shell):
    x = np.arange(10.0)
    magic_shell.user_ns.update(x=x.copy())
    magic_shell.run_cell(f"%%psc_jit --quiet\n{DEPENDENT}")
    report = psc_jit.last_report()
    assert report.compiled, report.fallback_reason
    np.testing.assert_array_equal(magic_shell.user_ns["y"], _plain(DEPENDENT, {"x": x})["y"])
    assert any("line 4: sequential loop: line 5: pass i reads `y[i - 1]`, written by pass "
               "i - 1" in note for note in report.notes), report.notes
