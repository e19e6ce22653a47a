"""Calls whose result or effect can change between runs with equal inputs are never frozen at
trace time (issue 28, item 4), through a real IPython shell: a file read, the clock, the
process environment, a global setting set or read. The line that makes such a call runs as
plain Python on every run (a host step, the rest of the cell compiled around it; or the whole
cell), the reason naming the line and the call, so that a second run after the file, the
clock or the setting changed ends as the plain cell does; the call is found in the cell, in
its helpers, under other names, and inside libraries."""
import datetime
import textwrap
import time

import numpy as np
import psc_jit
import pytest
from psc_jit.core import UnsupportedError, jit
from psc_jit.core.frontend import refusals
from psc_jit.core.frontend.host_calls import host_call_reason

pytestmark = [pytest.mark.ipython, pytest.mark.xla]


@pytest.fixture
def shell(magic_shell, tmp_path):
    """The shell with `path` a text file of numbers, `npy` a .npy file, and NumPy's print
    options and error state given back after the test."""
    options, errors = np.get_printoptions(), np.geterr()
    magic_shell.user_ns.update(path=str(tmp_path / "data.txt"), npy=str(tmp_path / "data.npy"),
                               raw=str(tmp_path / "data.bin"), ini=str(tmp_path / "c.ini"))
    write_files(magic_shell, 1.0)
    yield magic_shell
    np.set_printoptions(**options)
    np.seterr(**errors)


def write_files(shell, scale: float):
    """The files' contents: the numbers 1 2 / 3 4, times scale."""
    data = np.array([[1.0, 2.0], [3.0, 4.0]]) * scale
    np.savetxt(shell.user_ns["path"], data)
    np.save(shell.user_ns["npy"], data)
    data.tofile(shell.user_ns["raw"])
    with open(shell.user_ns["ini"], "w") as f:
        f.write(f"[a]\nk = {scale}\n")


def define(shell, code: str):
    result = shell.run_cell(textwrap.dedent(code))
    assert result.success, result.error_in_exec


def magic(shell, cell: str):
    result = shell.run_cell(f"%%psc_jit --quiet --no-compare\n{textwrap.dedent(cell)}")
    assert result.success, result.error_in_exec
    return psc_jit.last_report()


def plain(shell, cell: str, names) -> dict:
    namespace = dict(shell.user_ns)
    exec(textwrap.dedent(cell), namespace)
    return {n: namespace[n] for n in names}


def runs_as_python(report, mentions: str) -> bool:
    """Whether the call `mentions` names ran as plain Python (the whole cell, or the host
    step or region that holds it: the rest of the cell may compile around it), saying why."""
    reasons = report.plain_reasons
    assert reasons is not None and mentions in reasons, reasons
    return True


def check_each_run_is_plain(shell, cell, names, change, mentions):
    """Two runs, `change()` between them: each falls back, naming `mentions`, and ends as
    the plain cell run right after it does (so the second sees the change)."""
    seen = []
    for run in range(2):
        if run:
            change()
        report = magic(shell, cell)
        assert runs_as_python(report, mentions)
        expected = plain(shell, cell, names)
        for name in names:
            np.testing.assert_array_equal(shell.user_ns[name], expected[name])
            assert type(shell.user_ns[name]) is type(expected[name])
        seen.append(np.copy(shell.user_ns[names[0]]))
    return seen


HELPERS = """
import configparser, pathlib
from numpy import genfromtxt as g
from numpy import loadtxt as lt
def load(p):
    return np.genfromtxt(p)
def load_other_name(p):
    return lt(p)
def read_open(p):
    with open(p) as f:
        return np.array([float(v) for v in f.read().split()])
def read_path(p):
    return np.array([float(v) for v in pathlib.Path(p).read_text().split()])
def read_config(p):
    c = configparser.ConfigParser()
    c.read(p)
    return np.full(2, float(c["a"]["k"]))
def read_quietly(p):
    try:
        return np.genfromtxt(p)
    except Exception:
        return np.zeros((2, 2))
"""

FILE_READS = {
    "np.genfromtxt in the cell": ("d = np.genfromtxt(path) * 2", "np.genfromtxt"),
    "np.loadtxt in the cell": ("d = np.loadtxt(path) + 1", "np.loadtxt"),
    "np.load in the cell": ("d = np.load(npy) * 2", "np.load"),
    "np.fromfile in the cell": ("d = np.fromfile(raw) * 2", "np.fromfile"),
    "genfromtxt under another name": ("d = g(path) * 2", "np.genfromtxt"),
    "imported in the cell under another name": (
        "from numpy import genfromtxt as gg\nd = gg(path) * 2", "np.genfromtxt"),
    "a helper": ("d = load(path) * 2", "np.genfromtxt"),
    "a helper, loadtxt under another name": ("d = load_other_name(path) * 2", "np.loadtxt"),
    "a helper's open()": ("d = read_open(path) * 2", "open()"),
    "a helper's pathlib": ("d = read_path(path) * 2", "read_text"),
    "a library the helper calls": pytest.param(
        "d = read_config(ini) * 2", "opens the file", marks=pytest.mark.skipif(
            refusals._audit_events is None, reason="core/frontend/_audit_events.c not built")),
    "a helper that catches the refusal": ("d = read_quietly(path) * 2", "np.genfromtxt"),
}


@pytest.mark.parametrize("cell, mentions", FILE_READS.values(), ids=FILE_READS.keys())
def test_a_file_read_is_made_again_on_every_run(shell, cell, mentions):
    define(shell, HELPERS)
    first, second = check_each_run_is_plain(shell, cell, ["d"], lambda: write_files(shell, 10.0),
                                            mentions)
    assert not np.array_equal(first, second)         # the second run read the new contents


def test_the_clock_is_read_on_every_run(shell):
    define(shell, "import datetime\ndef stamp():\n    return datetime.datetime.now().second")
    cell = "t = np.datetime64('now')\nu = np.datetime64('today')\ns = stamp()\nn = x * 2"
    shell.user_ns["x"] = np.arange(3.0)
    times = []
    for run in range(2):
        if run:
            time.sleep(1.1)
        before = np.datetime64("now")
        report = magic(shell, cell)
        assert runs_as_python(report, "np.datetime64")
        assert before <= shell.user_ns["t"] <= np.datetime64("now")    # read during the run
        assert shell.user_ns["u"] == np.datetime64("today")
        times.append(shell.user_ns["t"])
    assert times[1] > times[0]                      # not the first run's time again


@pytest.mark.parametrize("cell, mentions", [
    ("s = stamp()", "datetime.now() reads the clock"),
    ("t = np.array(['now', 'today'], dtype='datetime64[s]')", "np.array reads the clock"),
    ("from numpy import datetime64 as dt\nt = dt('NOW')", "reads the clock")])
def test_the_clock_read_by_a_helper_or_under_another_name_is_found(shell, cell, mentions):
    define(shell, "import datetime\ndef stamp():\n    return datetime.datetime.now()")
    report = magic(shell, cell)
    assert runs_as_python(report, mentions)


def test_print_options_set_in_the_cell_are_set_on_every_run(shell):
    shell.user_ns["x"] = np.arange(3.0)
    cell = "np.set_printoptions(precision=3)\ny = x * 2"
    check_each_run_is_plain(shell, cell, ["y"], lambda: np.set_printoptions(precision=8),
                            "np.set_printoptions")
    assert np.get_printoptions()["precision"] == 3  # the second run set it again


def test_the_error_state_set_in_the_cell_is_set_on_every_run(shell):
    shell.user_ns["x"] = np.arange(3.0)
    cell = "np.seterr(divide='ignore')\ny = x * 2"
    check_each_run_is_plain(shell, cell, ["y"], lambda: np.seterr(divide="warn"), "np.seterr")
    assert np.geterr()["divide"] == "ignore"


@pytest.mark.parametrize("cell, change, mentions", [
    ("p = np.get_printoptions()['precision']", lambda: np.set_printoptions(precision=5),
     "np.get_printoptions"),
    ("e = np.geterr()['under']", lambda: np.seterr(under="warn"), "np.geterr"),
    ("r = repr(np.float64(0.5))", lambda: np.set_printoptions(legacy="1.25"), "repr()"),
    ("r = str(np.arange(3.0) / 3)", lambda: np.set_printoptions(precision=2), "str() formats"),
])
def test_a_global_setting_read_in_the_cell_is_read_on_every_run(shell, cell, change, mentions):
    name = cell.split(" =")[0]
    first, second = check_each_run_is_plain(shell, cell, [name], change, mentions)
    assert first != second


def test_a_helper_setting_warnings_filters_runs_as_plain_python(shell):
    define(shell, "import warnings\ndef quiet(v):\n    warnings.simplefilter('ignore')\n"
                  "    return v * 2")
    shell.user_ns["x"] = np.arange(3.0)
    report = magic(shell, "y = quiet(x)")
    assert runs_as_python(report, "warnings.simplefilter")


@pytest.mark.parametrize("cell", [
    "import os\nk = float(os.environ['PSC_TEST_K'])\ny = x * k",
    "import os\nk = float(os.environ.get('PSC_TEST_K', '1'))\ny = x * k",
    "from os import environ\nk = float(environ['PSC_TEST_K'])\ny = x * k",
    "y = scaled(x)", "y = scaled_getenv(x)"])
def test_the_environment_is_read_on_every_run(shell, monkeypatch, cell):
    define(shell, """
        import os
        def scaled(v):
            return v * float(os.environ['PSC_TEST_K'])
        def scaled_getenv(v):
            return v * float(os.getenv('PSC_TEST_K'))
        """)
    shell.user_ns["x"] = np.arange(3.0)
    monkeypatch.setenv("PSC_TEST_K", "2")
    first, second = check_each_run_is_plain(
        shell, cell, ["y"], lambda: monkeypatch.setenv("PSC_TEST_K", "5"), "environ")
    np.testing.assert_array_equal(second, np.arange(3.0) * 5)


def test_errstate_as_a_context_is_what_plain_does(shell):
    """`with np.errstate(...)` changes nothing after its block: ignoring compiles (the values
    are NumPy's, and compiled code shows no warnings anyway); raising runs as plain Python,
    which raises where NumPy would."""
    shell.user_ns["x"] = np.array([0.0, 1.0, 2.0])
    before = np.geterr()
    report = magic(shell, "with np.errstate(all='ignore'):\n    y = np.log(x)")
    assert report.compiled and np.geterr() == before
    np.testing.assert_array_equal(shell.user_ns["y"], np.log(np.array([0.0, 1.0, 2.0])))
    shell.user_ns["x"] = np.array([1.0, 2.0])
    report = magic(shell, "with np.errstate(divide='raise'):\n    y = 1.0 / x")
    assert runs_as_python(report, "np.errstate")
    shell.user_ns["x"] = np.array([0.0, 2.0])
    result = shell.run_cell("%%psc_jit --quiet --no-compare\nwith np.errstate(divide='raise'):\n"
                            "    y = 1.0 / x")
    assert type(result.error_in_exec) is FloatingPointError and np.geterr() == before


def test_pure_calls_next_to_host_calls_still_compile(shell):
    """os.path.join, a datetime64 of a date, str of an int: no host call."""
    shell.user_ns["x"] = np.arange(3.0)
    report = magic(shell, "import os\nname = os.path.join('a', 'b')\n"
                          "d = np.datetime64('2024-01-02')\nlabel = str(3)\ny = x * 2")
    assert report.compiled, report.fallback_reason
    assert shell.user_ns["name"] == "a/b" and shell.user_ns["label"] == "3"


K = 2.5


def text_of_a_float(x):
    return x * len(str(K))


def test_the_text_of_a_python_float_is_no_host_call():
    """str() of a Python float is Python's own text (no print options): it compiles, the
    float read as a guarded value."""
    f = jit(text_of_a_float)
    np.testing.assert_array_equal(f(np.ones(2)), text_of_a_float(np.ones(2)))
    global K
    K = 12.25
    np.testing.assert_array_equal(f(np.ones(2)), text_of_a_float(np.ones(2)))
    K = 2.5


def reads_a_file(p):
    return np.genfromtxt(p) * 2


def test_jit_refuses_a_host_call_with_its_line(tmp_path):
    path = tmp_path / "d.txt"
    np.savetxt(path, np.ones(2))
    with pytest.raises(UnsupportedError, match="np.genfromtxt reads or writes a file") as info:
        jit(reads_a_file)(str(path))
    assert info.value.source is not None and info.value.source.line > 0


@pytest.mark.parametrize("fn, args, host", [
    (np.genfromtxt, ("f",), True), (np.datetime64, ("now",), True),
    (np.datetime64, ("2024-01-01",), False), (np.set_printoptions, (), True),
    (np.seterr, (), True), (np.errstate, (), False), (print, (), True),
    (str, (np.ones(2),), True), (str, (2,), False), (datetime.date.today, (), True),
    (time.perf_counter, (), True), (np.sum, (), False), (np.random.rand, (), True)])
def test_host_call_reason_tells_each_call_once(fn, args, host):
    """The reusable finding: for one call, whether it is a host call (and why)."""
    reason = host_call_reason(fn, args, {})
    assert (reason is not None) is host
