"""What a compiled cell leaves behind is what the plain cell leaves, object for object, through
a real IPython shell: names bound to one list or dict are bound to one object (a later
`a.append` shows in `b`), an object the cell makes to hold its results (a SimpleNamespace,
an instance of a class of the notebook's) comes back as such an object, and `L.extend(...)`
on a list the cell only writes to extends it once per run."""
import types

import numpy as np
import psc_jit
import pytest

pytestmark = [pytest.mark.ipython, pytest.mark.xla]


def _run(shell, cell, line="--quiet --no-compare"):
    result = shell.run_cell(f"%%psc_jit {line}\n{cell}")
    assert result.success, result.error_in_exec
    report = psc_jit.last_report()
    assert report.compiled, report.fallback_reason
    return report


def test_names_bound_to_one_container_stay_bound_to_one(magic_shell):
    magic_shell.user_ns["x"] = np.arange(4.0)
    for _ in range(2):
        _run(magic_shell, "a = [x * 2, x.sum()]\nb = a\nd = {'h': a, 'e': {}}\ne = d['e']\n"
                          "t = (x, x)\nu = t")
        ns = magic_shell.user_ns
        assert ns["a"] is ns["b"] and ns["d"]["h"] is ns["a"] and ns["e"] is ns["d"]["e"]
        assert ns["u"] is ns["t"] and ns["t"][0] is ns["x"]
        ns["a"].append(1)
        assert len(ns["b"]) == 3 and len(ns["d"]["h"]) == 3


SETUP = """
import numpy as np
from types import SimpleNamespace
x = np.arange(4.0)
class Result:
    def __init__(self, values, total):
        self.values = values
        self.total = total
        self.parts = [values[:2], {'max': values.max()}]
"""

CELLS = {
    "SimpleNamespace": "r = SimpleNamespace(scaled=x * 2, mean=x.mean(), n=len(x))",
    "class of the notebook": "r = Result(x * 3, float(x.sum()))",
    "class of the cell": ("class Pair:\n    def __init__(self, a, b):\n        self.a = a\n"
                          "        self.b = b\nr = Pair(x + 1, Pair(x - 1, 2))"),
    "objects in a list": "r = [Result(x, 1.0), SimpleNamespace(y=x.cumsum())]",
}


def _state(value, depth=4):
    """value as plain data (objects as their class name and attributes), to compare."""
    if isinstance(value, np.ndarray):
        return ("array", value.dtype.str, value.tolist())
    if isinstance(value, (list, tuple)):
        return (type(value).__name__, [_state(v, depth) for v in value])
    if isinstance(value, dict):
        return ("dict", [(k, _state(v, depth)) for k, v in value.items()])
    if hasattr(value, "__dict__") and depth:
        return (type(value).__name__, [(k, _state(v, depth - 1)) for k, v in vars(value).items()])
    return (type(value).__name__, value)


@pytest.mark.parametrize("case", sorted(CELLS))
def test_an_object_made_to_hold_results_comes_back_as_that_object(magic_shell, case):
    magic_shell.run_cell(SETUP)
    oracle = {}
    exec(SETUP, oracle)
    exec(CELLS[case], oracle)
    for _ in range(2):
        _run(magic_shell, CELLS[case])
        assert _state(magic_shell.user_ns["r"]) == _state(oracle["r"])
    r = magic_shell.user_ns["r"]
    if case == "SimpleNamespace":
        assert type(r) is types.SimpleNamespace and type(r.mean) is np.float64
    if case == "class of the notebook":
        assert type(r) is magic_shell.user_ns["Result"]
        r.values[0] = 7.0
        assert r.parts[0][0] == 7.0       # (a view of values, as NumPy's slice is)


def test_extend_on_a_list_the_cell_only_writes_to_happens_once_per_run(magic_shell):
    magic_shell.user_ns.update(x=np.arange(5.0), acc=[0.5])
    oracle = {"np": np, "x": np.arange(5.0), "acc": [0.5]}
    cell = "acc.extend([float(x.sum()), x.max()])\nacc.extend(x[:2] * 2)\ny = x + 1"
    for _ in range(3):
        _run(magic_shell, cell, "--quiet")               # (the timing comparison too)
        exec(cell, oracle)
        got, want = magic_shell.user_ns["acc"], oracle["acc"]
        assert [(type(g), g) for g in got] == [(type(w), w) for w in want]
    assert len(magic_shell.user_ns["acc"]) == 13


def test_extend_with_a_long_array_runs_as_plain_python_and_says_why(magic_shell):
    magic_shell.user_ns.update(x=np.arange(1000.0), acc=[])
    result = magic_shell.run_cell("%%psc_jit --quiet --no-compare\nacc.extend(x * 2)")
    report = psc_jit.last_report()
    assert result.success and not report.compiled
    assert "acc.extend() of 1000 values" in report.fallback_reason
    assert len(magic_shell.user_ns["acc"]) == 1000
