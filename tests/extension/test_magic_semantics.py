"""A compiled cell ends as the plain cell does, through a real IPython shell (issue 14, items
3-6): NumPy's errors raised before anything is written, effects on Python objects and
warnings happening exactly as often as in plain Python, aliased inputs updated once, and a
run-time error's traceback about as short as plain Python's."""
import contextlib
import io
import itertools
import re
import warnings

import numpy as np
import psc_jit
import pytest

pytestmark = [pytest.mark.ipython, pytest.mark.xla]


@pytest.fixture
def shell(magic_shell):
    return magic_shell


def run(shell, cell, line="--quiet"):
    """Run the cell through the magic as a user would (errors shown, not raised): the result
    and the report."""
    result = shell.run_cell(f"%%psc_jit {line}\n{cell}")
    return result, psc_jit.last_report()


def plain(shell, cell, names):
    """The plain cell on copies of `names` (arrays copied): (namespace, error)."""
    namespace = dict(shell.user_ns)
    namespace.update({n: np.copy(namespace[n]) for n in names})
    try:
        exec(cell, namespace)
    except Exception as err:  # noqa: BLE001 (the plain cell's own error, compared below)
        return namespace, err
    return namespace, None


# -- item 3: NumPy's errors, before anything is written ------------------------------------------

@pytest.mark.parametrize("exponent", [np.int64(-1), np.array([1, -1, 2, 3]), -1,
                                      np.array([[2], [-3]], np.int32)])
def test_integer_to_negative_power_raises_valueerror_and_writes_nothing(shell, exponent):
    shell.user_ns.update(b=np.arange(1, 5), p=exponent)
    shell.user_ns.pop("y", None)
    for _ in range(2):                                     # first run and re-run
        result, _ = run(shell, "y = b ** p", "--quiet --name negpow")
        assert type(result.error_in_exec) is ValueError
        assert str(result.error_in_exec) == "Integers to negative integer powers are not allowed."
        assert "y" not in shell.user_ns


def test_integer_power_with_nonnegative_exponents_compiles_and_rechecks(shell):
    shell.user_ns.update(b=np.arange(1, 5), p=np.array([0, 1, 2, 3]))
    result, report = run(shell, "y = b ** p", "--quiet --name pospow")
    assert result.success and report.compiled
    np.testing.assert_array_equal(shell.user_ns["y"], np.arange(1, 5) ** np.array([0, 1, 2, 3]))
    shell.user_ns["p"] = np.array([0, 1, -2, 3])           # the same program, now failing
    shell.user_ns["y"] = before = np.zeros(4, int)
    result, report = run(shell, "y = b ** p", "--quiet --name pospow")
    assert report.cache_hit and type(result.error_in_exec) is ValueError
    assert shell.user_ns["y"] is before


def test_errstate_raise_inside_the_cell_raises_floatingpointerror(shell):
    shell.user_ns.update(x=np.array([0.0, 1.0, -1.0]), y="before")
    cell = "with np.errstate(invalid='raise'):\n    y = np.sqrt(x)"
    for _ in range(2):
        result, report = run(shell, cell, "--quiet --name errstate")
        assert type(result.error_in_exec) is FloatingPointError
        assert str(result.error_in_exec) == "invalid value encountered in sqrt"
        assert not report.compiled and "np.errstate(invalid='raise')" in report.fallback_reason
        assert shell.user_ns["y"] == "before"


def test_seterr_raise_before_a_rerun_raises_then_compiles_again_after_reset(shell):
    shell.user_ns.update(x=np.array([0.0, 1.0, -1.0]))
    result, report = run(shell, "y = 1.0 / x", "--quiet --name seterr")
    assert result.success and report.compiled
    shell.user_ns["y"] = "before"
    old = np.seterr(divide="raise")
    try:
        result, report = run(shell, "y = 1.0 / x", "--quiet --name seterr")
    finally:
        np.seterr(**old)
    assert type(result.error_in_exec) is FloatingPointError
    assert "np.seterr(divide='raise')" in report.fallback_reason
    assert shell.user_ns["y"] == "before"
    result, report = run(shell, "y = 1.0 / x", "--quiet --name seterr")
    assert result.success and report.compiled
    with np.errstate(divide="ignore"):
        np.testing.assert_array_equal(shell.user_ns["y"], 1.0 / shell.user_ns["x"])


@pytest.mark.parametrize("dtype", ["int64", "int32", "int16", "int8", "uint64", "uint32",
                                   "uint16", "uint8"])
def test_float_to_int_cast_of_nan_inf_and_out_of_range_gives_numpys_values(shell, dtype):
    values = np.array([np.nan, np.inf, -np.inf, 1e300, -1e300, 3.7, -5.0, 2.0 ** 31, 3e9,
                       -3e9, 2.0 ** 63, 1.5e19, 70000.0, -0.9])
    shell.user_ns["x"] = values
    result, report = run(shell, f"y = x.astype(np.{dtype})")
    assert result.success and report.compiled
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = values.astype(dtype)
    assert shell.user_ns["y"].dtype == want.dtype
    np.testing.assert_array_equal(shell.user_ns["y"], want)


# -- item 4: effects on Python objects -------------------------------------------------------------

# a cell's writes to an object it only writes to are made again after each compiled run (where
# is None); any other change makes the cell run as plain Python, and the report says where
EFFECT_CELLS = {
    "dict item": ("d['total'] = x.sum()", None),
    "list append": ("L.append(x.sum())", None),
    "list +=": ("L += [x.sum()]", "line 2: 'L += [x.sum()]'"),
    "dict update": ("d.update(total=x.max())", None),
    "after a result": ("y = x * 2\nL.append(y.sum())", None),
    "attribute": ("obj.total = x.sum()", None),
    "several, in order": ("d['a'] = x[0]\nL.append(x)\nobj.m = x.max()\nL.append('end')\n"
                          "d['a'] = x[1]", None),
    "read after written": ("L.append(x.sum())\ny = len(L)", "line 2: 'L.append(x.sum())'"),
    "written in a loop": ("for i in range(2):\n    L.append(x[i])", None),
    "a loop's several writes": ("for i in range(3):\n    L.append(float(x[i]))\n"
                                "    d[i] = x[:i + 1].sum()\n    obj.last = i\n"
                                "    L.append(x * i)", None),
    "nested loops": ("for i in range(2):\n    for j in range(3):\n"
                     "        L.append((i, j, x[i] * j, x[j:j + 1]))", None),
    "before, in and after a loop": ("L.append('start')\nfor i in range(3):\n"
                                    "    L.append(x[i])\nL.append(x.sum())", None),
    "written in a branch in a loop": ("for i in range(3):\n    if x[i] > 1:\n"
                                      "        L.append(x[i])", "'L.append(x[i])'"),
    "a loop of data-decided length": ("for i in range(int(x[2])):\n    L.append(x[i])",
                                      "number of passes the data decides"),
    "attribute read too": ("obj.total = x.sum()\ny = obj.total * 2", "sets obj.total"),
    "read by a helper": ("G.append(x.sum())\ny = sized(x)", "G (read by sized) is read"),
    "helper appends to a global": ("y = h(x)", None),         # (test_magic_helper_writes)
    "helper sets a global's attribute": ("y = k(x)", None),
    "helper rebinds a global": ("y = count(x)", "sets the global counter"),
    "helper binds a new global": ("y = keep(x)", "sets the global last"),
}

SETUP = """
class C:
    pass
obj = C()
G = []
def h(v):
    G.append(v.sum())
    return v * 2
def k(v):
    obj.n = v.sum()
    return v * 2
counter = 0
def count(v):
    global counter
    counter += 1
    return v * 2
def keep(v):
    global last
    last = v.sum()
    return v * 2
def sized(v):
    return v * len(G)
"""


def _effects(ns):
    return (dict(ns["d"]), list(ns["L"]), dict(vars(ns["obj"])), list(ns["G"]),
            ns["counter"], ns.get("last"))


def _same(a, b) -> bool:
    """Equal values of the same types (arrays: dtype and elements)."""
    if isinstance(a, (list, tuple)):
        return type(a) is type(b) and len(a) == len(b) and all(map(_same, a, b))
    if isinstance(a, dict):
        return type(b) is dict and a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, np.ndarray):
        return type(b) is np.ndarray and a.dtype == b.dtype and np.array_equal(a, b)
    return type(a) is type(b) and a == b


@pytest.mark.parametrize("case", EFFECT_CELLS)
def test_effects_on_python_objects_happen_once_per_run_as_in_plain_python(shell, case):
    cell, where = EFFECT_CELLS[case]
    shell.run_cell(SETUP)
    shell.user_ns.update(x=np.arange(4.0), d={}, L=[])
    oracle = {"np": np, "x": np.arange(4.0), "d": {}, "L": []}
    exec(SETUP, oracle)
    for n in range(1, 4):                       # first run and re-runs
        result, report = run(shell, cell, "--name effects")   # the timing comparison too
        exec(cell, oracle)
        whole = report.compiled and not report.split
        assert result.success and whole == (where is None), report.plain_reasons
        if where is not None:       # that statement ran as plain Python (the rest may compile)
            assert where in report.plain_reasons and "cannot replay" in report.plain_reasons
        elif n > 1:
            assert report.cache_hit
        got = _effects(shell.user_ns)
        assert _same(got, _effects(oracle)), n
        assert not any("Tracer" in type(v).__name__ for v in
                       list(got[0].values()) + got[1] + list(got[2].values()) + got[3] + [got[5]])
    assert all(a is b or not isinstance(b, np.ndarray) or not np.shares_memory(a, b)
               for a, b in itertools.pairwise(shell.user_ns["L"]))


def test_a_warning_of_the_cell_shows_once_per_run(shell):
    shell.run_cell("import warnings\ndef w(v):\n    warnings.warn('careful')\n    return v * 2")
    shell.user_ns["x"] = np.arange(4.0)
    with warnings.catch_warnings(record=True) as shown:
        warnings.simplefilter("always")
        for n in range(1, 4):
            result, report = run(shell, "y = w(x)", "--name warns")   # with timing
            assert result.success and len(shown) == n
    assert "cannot replay a warning" in report.fallback_reason
    np.testing.assert_array_equal(shell.user_ns["y"], np.arange(4.0) * 2)


def test_cells_without_effects_still_compile_reading_containers(shell):
    shell.user_ns.update(x=np.arange(4.0), L=[np.ones(4), np.arange(4.0)], d={"s": 2.0})
    result, report = run(shell, "y = x * d['s'] + L[0] + sum(L)", "--quiet --name reads")
    assert result.success and report.compiled, report.fallback_reason
    np.testing.assert_array_equal(shell.user_ns["y"], np.arange(4.0) * 2 + 1 + 1 + np.arange(4.0))


# -- item 5: aliases -------------------------------------------------------------------------------

def test_an_update_through_one_name_is_seen_through_its_alias_once_per_run(shell):
    shell.run_cell("a = np.arange(3.0)\nb = a")
    for n in range(1, 4):                                   # with the timing comparison
        result, report = run(shell, "a += 1\nc = b.sum()", "--name alias")
        assert result.success and report.compiled, report.fallback_reason
        assert shell.user_ns["a"] is shell.user_ns["b"]
        np.testing.assert_array_equal(shell.user_ns["a"], np.arange(3.0) + n)
        assert shell.user_ns["c"] == (np.arange(3.0) + n).sum()


@pytest.mark.parametrize("view", ["a[1:4]", "a[::2]", "a.reshape(2, 3)", "a[::-1]"])
def test_overlapping_views_update_once_as_numpy_does(shell, view):
    shell.run_cell(f"a = np.arange(6.0)\nb = {view}")
    for n in range(1, 3):
        result, _ = run(shell, "a += 1\nc = b.sum()", "--name views")
        assert result.success
        np.testing.assert_array_equal(shell.user_ns["a"], np.arange(6.0) + n)
        assert np.shares_memory(shell.user_ns["a"], shell.user_ns["b"])
        assert shell.user_ns["c"] == shell.user_ns["b"].sum()


# -- item 6: errors a user can read ------------------------------------------------------------------

def _traceback(shell, cell) -> list[str]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        shell.run_cell(cell)
    text = re.sub(r"\x1b\[[0-9;]*m", "", out.getvalue())
    return [line for line in text.strip().splitlines() if line.strip()]


@pytest.mark.parametrize("cell", ["y = b ** p", "y = x[j]", "y = x[i:i+1] + x[[i]]",
                                  "z = x * 2\ny = z[j]"])
def test_a_failing_cells_traceback_is_about_as_short_as_plain_pythons(shell, cell):
    shell.user_ns.update(x=np.arange(4.0), i=10, j=np.int64(7), b=np.arange(1, 5),
                         p=np.int64(-1))
    plain_lines = _traceback(shell, cell)
    magic_lines = _traceback(shell, "%%psc_jit --quiet\n" + cell)
    assert len(magic_lines) <= 2 * len(plain_lines) + 3, "\n".join(magic_lines)
    assert magic_lines[-1] == plain_lines[-1]
    assert any(cell.splitlines()[-1] in line for line in magic_lines[-4:])
    assert not any("runner.py" in line or "magic.py" in line for line in magic_lines)


@pytest.mark.parametrize("cell", [
    "s = x.sum()\nassert (x > 0).all(), 'x must be positive'\ny = np.log(x)",
    "s = x.sum()\nif s < 10:\n    raise ValueError(f'sum {s} too small')\ny = np.log(x)",
])
def test_assert_and_raise_on_data_compile_and_fail_as_plain_python(shell, cell):
    shell.user_ns.update(np=np, x=np.arange(1.0, 6.0))
    shell.user_ns.pop("y", None)
    for _ in range(2):
        result, report = run(shell, cell, "--quiet --name checked")
        assert result.success and report.compiled, report.fallback_reason
    np.testing.assert_array_equal(shell.user_ns["y"], np.log(np.arange(1.0, 6.0)))
    shell.user_ns.update(x=np.arange(-1.0, 4.0))
    shell.user_ns.pop("y", None)
    expected, error = plain(shell, cell, ["x"])
    plain_lines = _traceback(shell, cell)
    shell.user_ns.pop("s", None)
    magic_lines = _traceback(shell, "%%psc_jit --quiet --name checked\n" + cell)
    assert magic_lines[-1] == plain_lines[-1]            # the same error, message included
    assert "y" not in shell.user_ns and shell.user_ns["s"] == expected["s"]   # lines before ran
    assert error is not None


IMPURE_HELPERS = """
import random, datetime, itertools
from time import perf_counter as clock
rng_py = random.Random(3)
counter = itertools.count()
def jitter(v):
    return v + random.random()
def own_rng(v):
    return v * rng_py.uniform(1, 2)
def stamp(v):
    return v * datetime.datetime.now().microsecond
def ticket(v):
    return v * next(counter)
def timed(v):
    return v * clock()
gen = np.random.default_rng(5)
def noisy(v):
    return v + gen.normal(size=v.shape)
def legacy(v):
    return v + np.random.rand(*v.shape)
"""


@pytest.mark.parametrize("helper, reason", [
    ("jitter", "Python's random module"), ("own_rng", "Python's random module"),
    ("stamp", "datetime.now() reads the clock"), ("ticket", "next() advances an iterator"),
    ("timed", "time.* reads the clock"),
    ("noisy", "a NumPy random generator's state advances"),
    ("legacy", "a NumPy random generator's state advances")])
def test_a_helper_drawing_a_new_value_each_call_runs_as_plain_python_each_run(shell, helper,
                                                                               reason):
    shell.run_cell(IMPURE_HELPERS)
    shell.user_ns.update(x=np.arange(3.0))
    values = []
    for _ in range(3):
        result, report = run(shell, f"y = {helper}(x)", "--quiet --no-compare")
        assert result.success and not report.compiled
        assert reason in report.fallback_reason
        values.append(shell.user_ns["y"].copy())
    assert not np.array_equal(values[0], values[1]) or not np.array_equal(values[1], values[2])
    # (each run made its own value, as plain Python does; traced, the first would be frozen)


@pytest.mark.parametrize("setup, cell, change", [
    ("K = 2.0\ndef f(v):\n    return v * globals()['K']", "y = f(x)", "K = 3.0"),
    ("K = 2.0\ndef f(v):\n    return v * globals().get('K', 1.0)", "y = f(x)", "K = 3.0"),
    ("def f(v):\n    globals()['K'] = float(v.sum())\n    return v", "y = f(x)", "x[0] = 9.0"),
    ("", "globals()['K'] = x * 2\ny = x + 1", "x[0] = 9.0"),
])
def test_code_using_globals_runs_as_plain_python_on_every_run(shell, setup, cell, change):
    """globals() hands the code the namespace: a read through it is seen by no guard, and a
    write to it is not replayed (at the top of a cell, the trace's own value leaked)."""
    shell.run_cell("import numpy as np\nx = np.arange(4.0)\n" + setup)
    for _ in range(2):
        for _ in range(2):
            result, report = run(shell, cell, "--quiet --no-compare")
            assert result.success and not (report.compiled and not report.split)
            assert "globals() hands the code the namespace" in report.plain_reasons
            oracle = dict(shell.user_ns)
            exec(cell, oracle)
            np.testing.assert_array_equal(shell.user_ns["y"], oracle["y"])
            assert type(shell.user_ns.get("K")) is type(oracle.get("K"))
            if "K" in oracle:
                np.testing.assert_array_equal(shell.user_ns["K"], oracle["K"])
        shell.run_cell(change)


def test_appends_to_the_lists_of_a_history_dict_are_made_once_per_run(shell):
    cell = ("for step in range(3):\n    loss = (x * step).sum()\n"
            "    history['loss'].append(float(loss))\n    history['step'].append(step)\n"
            "history['last'].append(x * 2)\n")
    shell.user_ns.update(x=np.arange(4.0), history={"loss": [], "step": [], "last": []})
    oracle = {"np": np, "x": np.arange(4.0), "history": {"loss": [], "step": [], "last": []}}
    for n in range(1, 4):
        result, report = run(shell, cell, "--name history")      # the timing comparison too
        exec(cell, oracle)
        assert result.success and report.compiled, report.fallback_reason
        assert _same(shell.user_ns["history"], oracle["history"]), n
    assert len(shell.user_ns["history"]["loss"]) == 9
    shell.user_ns["history"] = {"loss": []}                     # a key gone: plain Python's
    result, report = run(shell, cell, "--name history")          # KeyError, at its line
    assert isinstance(result.error_in_exec, KeyError) and "line 5" in report.plain_reasons
    assert shell.user_ns["history"] == {"loss": [0.0]}           # (the pass before it ran)


def test_a_timed_run_starts_from_the_inputs_the_cell_started_from(shell):
    """The timing comparison re-runs the cell plain and compiled; on the arrays the cell had
    already updated in place, a branch on them took the other way and raised an error the
    cell's own run never met."""
    shell.user_ns.update(a=np.array([False, True]), b=np.full(3, -2.5))
    cell = "if b.sum() > 0:\n    x0 = a - (2 < 2)\nelse:\n    x0 = 2\nb *= -1\n"
    result, report = run(shell, cell, "--quiet --compare")
    assert result.success and report.compiled and report.timings is not None
    assert shell.user_ns["x0"] == 2 and shell.user_ns["b"].tolist() == [2.5, 2.5, 2.5]


OBJECT_SETUP = """
class Cfg:
    pass
cfg = Cfg()
cfg.scale = 0.5
def g(v):
    return v - cfg.scale
"""


@pytest.mark.parametrize("cell", [
    "cfg.scale += 1\nx0 = g(2)\n",
    "cfg.scale = cfg.scale + 1\nx0 = g(2)\n",
    "cfg.scale *= 2.0\ny = g(np.ones(2))\n",
])
def test_an_attribute_the_cell_sets_before_a_helper_reads_it_ends_as_plain(shell, cell):
    """Found by `make fuzz`: the cell sets cfg.scale to a traced value, then a helper reads
    cfg; the trace is refused (its change cannot be replayed), and the cell ran as plain
    Python on an object still holding the trace's value: RuntimeError "add was bound outside
    of a trace", and a Tracer left in cfg.scale."""
    plain = {"np": np}
    exec(OBJECT_SETUP + cell, plain)
    for run_ in ("first run", "re-run"):
        assert shell.run_cell(OBJECT_SETUP).success
        result, report = run(shell, cell)
        assert result.success, (run_, result.error_in_exec)
        assert type(shell.user_ns["cfg"].scale) is type(plain["cfg"].scale)
        assert shell.user_ns["cfg"].scale == plain["cfg"].scale
        name = "x0" if "x0" in cell else "y"
        np.testing.assert_array_equal(shell.user_ns[name], plain[name])
        assert type(shell.user_ns[name]) is type(plain[name])


@pytest.mark.parametrize("start", [4, 4.0])      # (a float m is traced)
@pytest.mark.parametrize("cell", [
    # found by `make fuzz`: the first run's capture binds m to an int, the re-run's loop
    # makes it a float, and `m.shape` of a float raises (compiled, the traced float had one)
    "for i in range(3):\n    m = m * 0.5 + i\nprint(a)\nmatch m.shape:\n    case (m,):\n"
    "        x1 = m * m\n    case _:\n        x1 = 0\n",
    "s = (m * 0.5 + 1).shape\n",
    "s = getattr(m * 0.5 + 1, 'ndim', -1)\n",
    "s = hasattr(m * 0.5 + 1, 'dtype')\n",
    "s = (m * 0.5 + 1).real + (m > 1).imag\n",
])
def test_a_traced_python_number_has_only_its_types_attributes(shell, cell, start):
    def plain_run(namespace):
        try:
            exec(cell, namespace)
        except AttributeError as err:
            return str(err)
        return None
    plain = {"np": np, "m": start, "a": np.zeros(2)}
    shell.user_ns.update(m=start, a=np.zeros(2))
    shell.user_ns.pop("s", None)
    for run_ in ("first run", "re-run"):
        want = plain_run(plain)
        with contextlib.redirect_stdout(io.StringIO()):
            result, report = run(shell, cell)
        got = result.error_in_exec
        assert (str(got) if got is not None else None) == want, (run_, got, want)
        assert type(got) is (AttributeError if want is not None else type(None))
        for name in ("m", "s", "x1"):
            assert (name in shell.user_ns) == (name in plain), (run_, name)
            if name in plain:
                assert type(shell.user_ns[name]) is type(plain[name]), (run_, name)
                assert shell.user_ns[name] == plain[name], (run_, name)
