"""`obj.a += v` and `d[k] += v` on arrays held by the user's objects compile and end as the
plain cell does: the array is updated in place once per run (other names for it see the
change; the runs that time the cell against plain Python leave it as the cell's run left it),
the attribute or item still holds the very same array, and a store Python would make visible
(a new object, a property's setter) still falls back with its reason."""
import numpy as np
import psc_jit
import pytest

pytestmark = [pytest.mark.ipython, pytest.mark.xla]

SETUP = """
import numpy as np
class Model:
    def __init__(self):
        self.w = np.ones(4)
        self.lr = 0.5
    def step(self, g):
        self.w -= self.lr * g
        return self.w.sum()
class Scaled:
    def __init__(self):
        self._w = np.ones(4)
        self.sets = 0
    @property
    def w(self):
        return self._w
    @w.setter
    def w(self, value):
        self.sets += 1
        self._w = value
"""

CELLS = {
    "attribute": ("model.w += x\n", lambda ns: ns["model"].w),
    "a_name_for_an_attribute": ("w = model.w\nw += x\n", lambda ns: ns["model"].w),
    "helper_updating_an_attribute": ("def bump():\n    model.w[1] += 1\nbump()\n",
                                     lambda ns: ns["model"].w),
    "attribute_of_self_in_a_method": ("s = model.step(x)\n", lambda ns: ns["model"].w),
    "dict_item": ("params['w'] *= x\n", lambda ns: ns["params"]["w"]),
    "list_item": ("layers[1] -= x\n", lambda ns: ns["layers"][1]),
    "nested": ("opt.state['m'] += 0.1 * x\n", lambda ns: ns["opt"].state["m"]),
    "array_item_of_an_attribute": ("model.w[1:3] += x[:2]\n", lambda ns: ns["model"].w),
}


OBJECTS = """
import types
model = Model()
params = {'w': np.arange(4.0)}
layers = [np.zeros(4), np.full(4, 3.0)]
opt = types.SimpleNamespace(state={'m': np.ones(4)})
x = np.array([1.0, 2.0, 3.0, 4.0])
"""


def fresh(shell):
    shell.run_cell(SETUP + OBJECTS)


@pytest.mark.parametrize("name", sorted(CELLS))
def test_an_in_place_update_of_an_objects_array_compiles_and_lands_once_per_run(magic_shell,
                                                                               name):
    cell, held = CELLS[name]
    fresh(magic_shell)
    plain = dict(magic_shell.user_ns)
    exec(SETUP + OBJECTS, plain)
    before = held(magic_shell.user_ns)
    alias = before[:]                                   # another name for the same memory
    for _ in range(3):                                  # a first run and re-runs
        exec(cell, plain)
        result = magic_shell.run_cell("%%psc_jit --quiet\n" + cell)
        assert result.success, result.error_in_exec
        report = psc_jit.last_report()
        assert report.compiled, report.fallback_reason
        assert held(magic_shell.user_ns) is before      # the same array, updated in place
        np.testing.assert_array_equal(before, held(plain))
        np.testing.assert_array_equal(alias, held(plain))
    if "s" in plain:
        assert type(magic_shell.user_ns["s"]) is type(plain["s"])
        assert magic_shell.user_ns["s"] == plain["s"]


def test_a_property_setter_still_runs_in_plain_python(magic_shell):
    fresh(magic_shell)
    magic_shell.run_cell("scaled = Scaled()")
    for _ in range(2):
        result = magic_shell.run_cell("%%psc_jit --quiet\nscaled.w += x\n")
        assert result.success, result.error_in_exec
        assert not psc_jit.last_report().compiled
    assert magic_shell.user_ns["scaled"].sets == 2      # the setter ran once per run
    np.testing.assert_array_equal(magic_shell.user_ns["scaled"].w, [3.0, 5.0, 7.0, 9.0])


def test_an_update_that_makes_a_new_object_still_falls_back_with_its_reason(magic_shell):
    fresh(magic_shell)
    magic_shell.run_cell("model.count = 0")
    result = magic_shell.run_cell("%%psc_jit --quiet\nmodel.count += 1\ny = x * 2\n")
    assert result.success
    report = psc_jit.last_report()
    assert not report.compiled and "model.count" in report.fallback_reason
    assert magic_shell.user_ns["model"].count == 1
