"""Every failure `make fuzz` found, minimised: the scenario (setup, cell, changes between
re-runs) must end as plain Python does, compared by the fuzzer's own oracle."""
import itertools

import pytest

from cellgen import Scenario
from cell_worker import fresh_shell, run_scenario

pytestmark = [pytest.mark.ipython, pytest.mark.xla]

_labels = itertools.count()


@pytest.fixture(scope="module")
def shell():
    return fresh_shell()


def ends_as_plain(shell, setup, cell, changes=(), flags=""):
    outcome = run_scenario(shell, Scenario(setup, cell, tuple(changes), flags),
                           f"regression{next(_labels)}")
    assert outcome.failure is None, outcome.failure
    return outcome


@pytest.mark.parametrize("flags", ["", "--traced n"])
def test_a_loop_of_no_pass_leaves_its_variable_unbound(shell, flags):
    ends_as_plain(shell, "a = np.zeros(4)\nn = 0", "for i in range(n):\n    a[i % 4] += 1",
                  ["n = 2", "n = 0"], flags)


@pytest.mark.parametrize("flags", ["", "--traced n"])
def test_a_loop_of_no_pass_keeps_its_variables_old_value(shell, flags):
    ends_as_plain(shell, "a = np.zeros(4)\nn = 3\ni = 7",
                  "for i in range(n):\n    a[i % 4] += 1\ny = a.sum()", ["n = 0", "i = 9"], flags)


TRIANGLE = "s = 0.0\nfor i in range(n):\n    for j in range(i):\n        s = s + x[i] * x[j]"


def test_a_traced_triangular_loop_still_compiles(shell):
    outcome = ends_as_plain(shell, "x = np.arange(5.0)\nn = 5", TRIANGLE, ["n = 4"], "--traced n")
    assert not outcome.fallbacks


def test_an_inner_loop_of_no_pass_keeps_the_namespaces_value(shell):
    """n = 1: the inner loop makes no pass, so `j` keeps its value from the run before (and
    is unbound on a first run): the run falls back; n = 3 runs compiled again."""
    outcome = ends_as_plain(shell, "x = np.arange(5.0)\nn = 5", TRIANGLE, ["n = 1", "n = 3"],
                            "--traced n")
    assert len(outcome.fallbacks) == 1
    ends_as_plain(shell, "x = np.arange(5.0)\nn = 1", TRIANGLE, ["n = 2"], "--traced n")


@pytest.mark.parametrize("flags", ["", "--traced n"])
def test_a_name_a_loop_of_no_pass_assigns_keeps_the_namespaces_value(shell, flags):
    ends_as_plain(shell, "a = np.arange(4.0)\nn = 2",
                  "i = 0\nfor i in range(n):\n    x0 = a[i] * 2\n    x1 = a[:i + 1].sum()",
                  ["n = 0", "n = 3", "x0 = 7.0", "n = 0"], flags)


@pytest.mark.parametrize("body", ["x0 = a[k] + 1", "for j in range(k):\n        a[j] += 1"])
def test_a_while_loop_of_no_pass_keeps_the_namespaces_values(shell, body):
    ends_as_plain(shell, "a = np.arange(4.0)\nt = 1.0",
                  f"k = 0\nwhile a[k] < t:\n    {body}\n    k = k + 1",
                  ["t = -1.0", "t = 2.5", "t = -1.0", "a = np.arange(4.0)"])


@pytest.mark.parametrize("setup", ["a = np.arange(4.0)\nx0 = 5.0", "a = np.arange(4.0)"])
def test_a_name_one_branch_assigns_keeps_the_namespaces_value(shell, setup):
    ends_as_plain(shell, setup, "if a.sum() > 3:\n    x0 = a.max()", ["a = -a", "x0 = 9.0", "a = -a"])


@pytest.mark.parametrize("flags", ["", "--traced n"])
def test_a_name_of_a_loop_of_no_pass_keeps_the_value_the_cell_gave_it(shell, flags):
    """A name bound earlier in the cell, assigned (not read) in a loop that makes no pass."""
    ends_as_plain(shell, "a = np.arange(4.0)\nn = 2", "x0 = 1.5\nfor i in range(n):\n    x0 = a[i]",
                  ["n = 0", "n = 3"], flags)


def test_python_bools_in_python_arithmetic_give_python_scalars(shell):
    ends_as_plain(shell, "K = 2.0", "x0 = True + K\nx1 = (K > 1) + True\nx2 = (K > 1) - True\n"
                  "x3 = (K > 1) & True\nTrue * K", ["K = -1.0"])


def test_a_python_float_has_no_numpy_methods(shell):
    ends_as_plain(shell, "K = 2.0\na = np.ones(3)", "x0 = a * 2\nx1 = K.sum()")
    ends_as_plain(shell, "K = 2.0", "x0 = (K > 1).max()")


@pytest.mark.parametrize("op", ["/", "//", "%"])
def test_python_division_by_zero_raises_as_python_does(shell, op):
    ends_as_plain(shell, "K = 2.0\nZ = 0.0", f"x0 = K {op} Z", ["Z = 4.0", "Z = 0.0"])


def test_python_powers_that_are_complex_or_raise(shell):
    ends_as_plain(shell, "s = -0.5", "x0 = s ** 1.5", ["s = 0.5", "s = -2.0"])
    ends_as_plain(shell, "s = 0.0", "x0 = s ** -1", ["s = 2.0"])


def test_a_bool_array_squared_is_int8_as_numpys_square(shell):
    ends_as_plain(shell, "a = np.array([True, False, True])", "x0 = a ** 2\nx1 = a ** 3\n"
                  "x2 = np.power(a, 2)\nx3 = a ** 2.0")


@pytest.mark.parametrize("branches", [("1.5", "2"), ("np.abs(2)", "2"), ("a.sum() > 1", "True"),
                                      ("a.max()", "0.0")])
def test_a_name_of_an_if_has_the_type_of_the_branch_taken(shell, branches):
    ends_as_plain(shell, "a = np.arange(3.0)",
                  f"if a.sum() > 0:\n    x0 = {branches[0]}\nelse:\n    x0 = {branches[1]}",
                  ["a = -a", "a = a * 0"])


@pytest.mark.parametrize("cell", [
    "acc = 0.0\nfor i in range(n):\n    if x[i] < 0.5:\n        continue\n    acc = acc + x[i]",
    "if (x).sum() > 0:\n    x = 1.5\nelse:\n    x = np.abs(1.5)"])
def test_a_python_float_or_numpy_float64_by_the_data_runs_as_plain_python(shell, cell):
    """Plain Python leaves a Python float where no pass added to the accumulator (x = x * 0)
    and a NumPy float64 otherwise; the fuzzer found a branch giving 1.5 or np.abs(1.5), then
    `x.sum()` on the next run (AttributeError on a float, none on the compiled float64).
    Such a name is refused, with the fix named, and the cell ends as plain Python does."""
    outcome = ends_as_plain(shell, "x = np.linspace(0, 1, 9)\nn = 9", cell,
                            ["x = x * 0", "x = x + 1"])
    assert outcome.fallbacks
    assert "in one branch and a" in outcome.fallbacks[0]
    assert "np.float64(...)" in outcome.fallbacks[0]


def test_names_assigned_before_a_run_time_error_are_bound(shell):
    ends_as_plain(shell, "K = 2.0\nZ = 0.0", "x0 = K * 2\nx1 = 1 / Z")


def test_a_dict_item_set_in_the_cell(shell):
    ends_as_plain(shell, "a = np.arange(3.0)\nd = {}", "d['k'] = a.sum()", ["a = a + 1"])


def test_a_list_appended_in_the_cell(shell):
    ends_as_plain(shell, "a = np.arange(3.0)\nL = []", "L.append(a.max())", ["a = a + 1"])


@pytest.mark.parametrize("value", ["a.sum()", "a > 1", "K"])
def test_an_attribute_set_in_the_cell_gets_the_value_not_a_tracer(shell, value):
    ends_as_plain(shell, "a = np.arange(3.0)\nK = 2.0\nclass Cfg:\n    pass\ncfg = Cfg()",
                  f"cfg.out = {value}", ["a = a + 1"])


def test_a_bool_array_times_a_negative_float_keeps_the_sign_of_zero(shell):
    ends_as_plain(shell, "a = np.array([False, True])\ns = -0.5", "x0 = a * s")


BOOL_TIMES = ["x0 = a * w", "x0 = w * a", "w *= a", "x0 = (2 >= w) * w", "w *= (2 >= w)",
              "x0 = a * -0.5", "x0 = np.multiply(w, a)", "x0 = a * w.astype(np.float32)",
              "x0 = np.where(a, 1.0, 0.0) * w", "x0 = (a * w).sum()"]


@pytest.mark.parametrize("cell", BOOL_TIMES)
def test_false_times_a_float_is_numpys_signed_zero_or_nan(shell, cell):
    """False * x is 0.0 * x: -0.0 for a negative x, NaN for inf and NaN (XLA's simplifier
    would make it select(bool, x, 0))."""
    ends_as_plain(shell, "a = np.array([False, True, False, False, False])\n"
                  "w = np.array([-2.5, -0.5, np.inf, np.nan, 3.0])", cell, ["w = -w"])


def test_a_sum_of_one_negative_zero_is_positive_zero(shell):
    ends_as_plain(shell, "w = np.array([-2.5, 0.0], dtype=np.float32)", "x0 = w.prod().sum()")


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "complex128"])
@pytest.mark.parametrize("cell", ["x0 = w.sum()", "x0 = w[:1].sum()", "x0 = w[:0].sum()",
                                  "x0 = np.sum(w[:, None], axis=-1)", "x0 = w.mean()",
                                  "x0 = np.sum(w[0])", "x0 = w.reshape(2, 2).sum(axis=0)"])
def test_numpys_sums_start_from_positive_zero(shell, cell, dtype):
    """NumPy's add.reduce starts from +0.0: no sum is -0.0, over one element or none either
    (a cumulative sum starts from the first element and keeps it)."""
    ends_as_plain(shell, f"w = np.full(4, -0.0, dtype=np.{dtype})", cell, ["w = -w"])


def test_a_cumulative_sum_keeps_a_negative_zero(shell):
    ends_as_plain(shell, "w = np.full(4, -0.0)", "x0 = np.cumsum(w)\nx1 = np.cumsum(w[:1])")


@pytest.mark.parametrize("cell", ["a += a.mean()", "x0 = a / 3.0", "x0 = a / np.float32(1.5)",
                                  "x0 = a // 0.3", "x0 = a % 0.3", "x0 = a.astype(np.float64) / 10",
                                  "x0 = np.divide(a, 7)"])
def test_a_division_by_a_constant_is_correctly_rounded(shell, cell):
    """XLA rewrites x / c into x * (1 / c), off by an ulp (float32 -57.5 / 24): the compiled
    division stays a division, as exact as NumPy's."""
    ends_as_plain(shell, "a = np.full((2, 3, 4), -2.5, dtype=np.float32)\na[1, 2, 3] = 0",
                  cell, ["a = a * 1.1"])


@pytest.mark.parametrize("cell", ["x0 = np.sum(K, axis=-1)", "x0 = np.sum(K)", "x0 = np.max(K)",
                                  "x0 = np.prod(s) + 1", "x0 = np.dot(K, K)", "x0 = np.argmax(K)",
                                  "x0 = np.sum(True)"])
def test_numpy_functions_of_python_scalars_give_numpy_scalars(shell, cell):
    """np.sum(2.0) is np.float64(2.0), not the Python float 2.0."""
    ends_as_plain(shell, "K = 2.0\ns = 3", cell, ["K = 4.0", "s = -1"])


@pytest.mark.parametrize("cell", ["x0 = g(2)", "x0 = np.abs(g(2))", "x0 = g(a)", "x0 = g(2) + s",
                                  "x0 = h(2)", "x0 = h2(a)"])
@pytest.mark.parametrize("change", ["cfg.scale = 0.25", "cfg.scale = np.float32(3)",
                                    "cfg.inner.k = 5", "D['k'] = 7.0", "L2[0] = 9.0"])
def test_what_a_helper_without_source_reads_through_a_global_object_is_guarded(
        shell, cell, change):
    """Helpers defined where Python keeps no source (exec'd code, as the fuzzer's setup) run
    as they are, and the trace bakes in what they read: the attributes and items of the
    globals they name are guarded, so a changed one re-traces."""
    ends_as_plain(shell, "a = np.arange(3.0)\ns = 2.0\nclass Cfg:\n    pass\ncfg = Cfg()\n"
                  "cfg.scale = 0.5\ncfg.inner = Cfg()\ncfg.inner.k = 2\nD = {'k': 1.0}\n"
                  "L2 = [1.0]\ndef g(v):\n    return v - cfg.scale\n"
                  "def h(v):\n    return v * cfg.inner.k + D['k']\n"
                  "def h2(v):\n    return v + L2[0]", cell, [change])


def test_a_name_bound_to_an_output_aliases_it(shell):
    ends_as_plain(shell, "a = np.arange(3.0)", "x0 = a + 1\nx1 = x0\nx1 += 1", ["a = a * 2"])


def test_a_name_bound_to_a_constant_output_aliases_it(shell):
    ends_as_plain(shell, "a = np.arange(3.0)", "x0 = np.cumsum(2)\nx1 = x0")


@pytest.mark.parametrize("view", ["x0[1:]", "x0[::-1]", "x0.T", "x0[0]", "x0.reshape(-1)"])
def test_a_view_of_a_constant_output_aliases_it(shell, view):
    outcome = ends_as_plain(shell, "a = np.arange(3.0)",
                            f"x0 = np.cumsum([[1, 2], [3, 4]])\nx1 = {view}\nx2 = x0\ny = a + 1",
                            ["a = a * 2"])
    assert not outcome.fallbacks


def test_constant_outputs_are_fresh_on_every_run(shell):
    shell.run_cell("a = np.arange(3.0)")
    shell.run_cell_magic("psc_jit", "--quiet --no-compare", "x0 = np.cumsum(2)\nx1 = x0\ny = a + 1")
    first = shell.user_ns["x0"]
    first += 5
    shell.run_cell_magic("psc_jit", "--quiet --no-compare", "x0 = np.cumsum(2)\nx1 = x0\ny = a + 1")
    assert shell.user_ns["x0"] is shell.user_ns["x1"] and shell.user_ns["x0"] is not first
    assert shell.user_ns["x0"].tolist() == [2]


@pytest.mark.parametrize("value", ["2.0", "3"])
def test_astype_of_a_python_scalar_is_pythons_attribute_error(shell, value):
    ends_as_plain(shell, f"K = {value}", "x0 = K * 2\nx1 = K.astype(np.float32)")


ALIAS_SETUP = "a = np.arange(4.0)\nw = np.ones(4)\nb = a\nn = 3"


@pytest.mark.parametrize("cell", [
    "if a.sum() > 0:\n    x0 = a\nelse:\n    x0 = w",
    "x0 = a + 1\nif a.sum() > 0:\n    x1 = x0\nelse:\n    x1 = w * 2",
    "if a.sum() > 0:\n    b = a[1:]\nelse:\n    b = w[1:]",
    "if a.sum() > 0:\n    x0 = a + 1\n    x1 = x0\nelse:\n    x0 = w * 2\n    x1 = w * 3",
    "if a.sum() > 0:\n    x0 = a + 1\n    x1 = x0[1:]\nelse:\n    x0 = w * 2\n    x1 = x0[1:]",
    "if a.sum() > 0:\n    x0 = a\nelse:\n    x0 = w\nx0 += 1",
])
def test_a_name_a_branch_binds_to_an_array_aliases_it(shell, cell):
    ends_as_plain(shell, ALIAS_SETUP, cell, ["a = -a", "b = w"])


def test_names_bound_to_one_array_in_every_branch_stay_one_and_compile(shell):
    outcome = ends_as_plain(shell, ALIAS_SETUP, "if a.sum() > 0:\n    x0 = a + 1\n    x1 = x0\n"
                            "else:\n    x0 = w * 2\n    x1 = x0\nx1 += 1", ["a = -a"])
    assert not outcome.fallbacks


@pytest.mark.parametrize("flags", ["", "--traced n"])
@pytest.mark.parametrize("cell", [
    "for i in range(n):\n    x0 = a",
    "for i in range(n):\n    x0 = a[1:]",
    "x0 = w\nfor i in range(n):\n    x0 = x0 + a[i]\n    x1 = x0",
    "x0 = w * 1\nfor i in range(n):\n    x0 = x0 * a[i]\n    x1 = x0[1:]",
    "x0 = w\nx1 = w\nfor i in range(n):\n    x0 = x0 + a[i]\n    x1 = x0\nx1 += 1",
    "x0 = a\nfor i in range(n):\n    if a[i] > 10:\n        x0 = x0 + 1",
    "x0 = a\nwhile x0.sum() > 100:\n    x0 = x0 / 2",
    "x0 = a\nfor i in range(n):\n    x0 = x0 * 2",
    "b = a\nfor i in range(n):\n    a = a * 2\nx1 = a",
])
def test_a_name_a_loop_binds_to_an_array_aliases_it(shell, cell, flags):
    """Bound in the body to an array from outside, to another name's, or left (by a pass, or
    by no pass) the array it held before the loop: one array, as in plain Python."""
    ends_as_plain(shell, ALIAS_SETUP, cell, ["n = 1", "n = 0", "a = a * 100", "n = 2"], flags)


@pytest.mark.parametrize("update", ["a += 1", "a[0] = 5.0", "a[1:] *= 2"])
def test_an_update_of_a_read_only_array_raises_after_binding_the_lines_before(shell, update):
    ends_as_plain(shell, "a = np.arange(4.0)\na.flags.writeable = False\nw = np.ones(4)",
                  f"x0 = a * 2\nw += 1\n{update}\nx1 = a + 1")


@pytest.mark.parametrize("cell", [
    "if a.sum() > 0:\n    x0 = a\nelse:\n    x0 = w",
    "a = f(a)\nif a.sum() > 0:\n    x0 = a\nelse:\n    x0 = w * 2\nx1 = x0",
    "if a.sum() > 0:\n    x0 = b\nelse:\n    x0 = w\ny = x0 * 2",
])
def test_a_branch_binding_an_array_from_before_compiles_and_picks_that_array(shell, cell):
    outcome = ends_as_plain(shell, ALIAS_SETUP + "\nK = 2.0\ndef f(v):\n    return v * K + 1",
                            cell, ["a = -a", "b = w", "a = -a"])
    assert not outcome.fallbacks


@pytest.mark.parametrize("after", ["x0 += 1", "a += 1\ny = x0.sum()", "x1 = x0[1:]",
                                   "w[0] = 9.0\ny = x0 * 2"])
def test_an_update_or_view_after_a_branch_bound_an_array_falls_back(shell, after):
    ends_as_plain(shell, ALIAS_SETUP, f"if a.sum() > 0:\n    x0 = a\nelse:\n    x0 = w\n{after}",
                  ["a = -a"])


def test_a_traced_loop_of_no_pass_leaves_the_input_array_itself_and_compiles(shell):
    outcome = ends_as_plain(shell, ALIAS_SETUP, "i = 0\nx0 = a\nfor i in range(n):\n    x0 = x0 * 2",
                            ["n = 0", "n = 2", "n = 0"], "--traced n")
    assert outcome.fallbacks == []
    assert shell.user_ns["x0"] is shell.user_ns["a"]


@pytest.mark.parametrize("after", ["x0[0] = 5.0", "a += 1\ny = x0.sum()"])
def test_an_update_after_a_traced_loop_compiles_when_the_loop_ran(shell, after):
    """The loop may leave x0 the array a itself (no pass); updated in place after it, the
    compiled program cannot follow that: such a run falls back, the others stay compiled."""
    outcome = ends_as_plain(shell, ALIAS_SETUP, f"i = 0\nx0 = a\nfor i in range(n):\n"
                            f"    x0 = x0 * 2\n{after}", ["n = 2", "n = 0", "n = 1"], "--traced n")
    assert len(outcome.fallbacks) == 1 and "no pass" in outcome.fallbacks[0]


@pytest.mark.parametrize("cell", ["x0 = w ** K", "x0 = np.power(w, K)", "x0 = w ** 0.5",
                                  "x0 = w ** 1", "x0 = w ** -1.0", "x0 = w ** 0",
                                  "x0 = w.astype(np.float32) ** K", "x0 = np.positive(w)",
                                  "x0 = (a * s) ** K"])
def test_an_array_to_one_number_is_numpys_fast_power(shell, cell):
    """NumPy's power loop computes x ** 0.5 as sqrt(x) (so (-0.0) ** 0.5 is -0.0), x ** 1 as
    x, x ** -1 as 1 / x, x ** 0 as 1 and x ** 2 as x * x, for an exponent known at trace
    time or one read at run time."""
    ends_as_plain(shell, "w = np.array([-0.0, 2.0, np.inf, np.nan, -2.0, 9.0])\nK = 0.5\n"
                  "a = np.array([False, True])\ns = -0.5",
                  cell, ["K = 1.0", "K = 2.0", "K = -1.0", "K = 0.0", "K = 0.5"])


def test_a_rounded_power_amplified_by_a_remainder_ends_as_plain(shell):
    """float32 `3.0 ** 3.5` is one ulp apart in XLA's pow and NumPy's (46.765369 vs
    46.765373), and `% 2` turns that ulp into 5e-6 relative of 0.77: what plain gives when its
    power rounds down, which the oracle's replay with rounded inexact operations finds."""
    ends_as_plain(shell, "a = np.array([0.5, -2.5, -2.5, -2.5], dtype=np.float32)\nK = 2.0",
                  "a[0] += 1.5\nx0 = a\nx1 = ((K ** a) % 2)", ["K = 3.0"])


def test_a_subnormal_result_is_flushed_as_xla_flushes_it(shell):
    """XLA's CPU client flushes subnormal float results to zero (as jax.jit does; README):
    the fourth run reaches 0.5 ** 128 = 2.9e-39 in float32 plain and 0 compiled, which is
    what NumPy gives with the processor's flush-to-zero mode set: the oracle replays it so."""
    ends_as_plain(shell, "a = np.array([[-2.5, -0.5], [-2.5, -1.0]], dtype=np.float32)\nK = 2.0",
                  "a[:] *= a[::-1]\na[:] *= a[0]", ["K = 3.0", "K = 3.0", "K = 3.0"])


@pytest.mark.parametrize("cell", ["a[0] = np.abs(w.prod())", "a[0:1] = w.prod()",
                                  "a[...] = w.prod()", "a[0] += w.prod()", "a[[0]] = w.prod()",
                                  "a[a == 0] = w.prod()", "u[0] = -w.prod()",
                                  "a[1] = w.sum() / 0", "a[[0]] = np.float64(1e30)"])
def test_a_float_scalar_into_integers_converts_as_numpy_setitem_does(shell, cell):
    """NumPy writes a NumPy float scalar into signed integers through a basic index with
    int(): NaN, infinity and values out of range raise (OverflowError: Python int too large
    to convert to C long); through an integer-array index or a mask, and into unsigned
    integers, it casts as astype does. The fuzzer found `a[0] = np.abs(b.prod())`."""
    ends_as_plain(shell, "a = np.zeros(4, dtype=np.int64)\nu = np.zeros(4, dtype=np.uint8)\n"
                  "w = np.full(24, 1.5, dtype=np.float32)", cell,
                  ["w = w + 8", "a = np.zeros(4, dtype=np.int64)"])


@pytest.mark.parametrize("cell", ["x0 = ((n * a)).max()", "x0 = (n * a).min(axis=0)",
                                  "x0 = np.maximum(n * a, -0.0)", "x0 = np.minimum(a * n, b)"])
def test_zeros_of_both_signs_in_max_and_min_end_as_plain(shell, cell):
    """The fuzzer found `(0 * a).max()` over -0.0 and +0.0: NumPy's zero, -0.0, depends on
    its SIMD lanes (the oracle accepts either from a reduction); np.maximum and np.minimum
    give NumPy's zero exactly (the second of two equal ones for float32 and float64)."""
    ends_as_plain(shell, "a = np.array([[-2.5, -2.5, 0.0, -2.5], [-2.5, -0.0, 0.0, -2.5]], "
                  "dtype=np.float32)\nb = np.zeros(4, dtype=np.float32)\nn = 0", cell,
                  ["a = a[::-1]"])


@pytest.mark.parametrize("cell", ["L.append(f((a / 1.5)))", "x0 = (a / 1.5) * 3 + 1",
                                  "x0 = f(a / 1.5) - (a / 1.5) * K"])
def test_a_product_contracted_into_a_fused_multiply_add_ends_as_plain(shell, cell):
    """XLA:CPU computes `x * y + z` as one fused multiply-add: -1 / 1.5 * 3 + 1 is
    -0.9999999999999999 compiled, -1.0 plain (the product rounded first). The oracle replays
    plain with each product, the helper's `v * K` included, one ulp up and down."""
    ends_as_plain(shell, "a = np.array([0, 0, 0, -1], dtype=np.int32)\nK = 3\n"
                  "def f(v):\n    return v * K + 1\nL = []", cell, ["K = 2"])


@pytest.mark.parametrize("cell", ["L.append(((2 ** w) + 2))\nw *= w",
                                  "w *= w\nx0 = 2 ** w\nfor i in range(n):\n    w[i % 4] += 1",
                                  "x0 = np.abs(w) < 0\nw *= w"])
def test_a_square_that_wraps_below_zero_is_negative_as_in_numpy(shell, cell):
    """The fuzzer found `w *= w` on int32 wrapping below zero on the fourth run while the
    compiled `2 ** w` raised nothing: XLA's simplifier took `w * w >= 0` (the negative-power
    check) as always true. Signed squares and abs now wrap as NumPy's do."""
    ends_as_plain(shell, "w = np.array([-2, 4, -2, 1], dtype=np.int32)\nL = []\nn = 2", cell,
                  ["w[1] = 84101", "w[0] = -2**31", "n = 1"])
