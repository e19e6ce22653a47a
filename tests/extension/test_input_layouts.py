"""Every memory layout of an input array through every way of running code: a `%%psc_jit`
cell's first run (timed), its re-run, `--compare`, `--no-compare` and `--grad`, and `jit(f)`
calls. A view with steps, a reversal, a transpose, Fortran order, a broadcast (read-only), zero
strides, a view at an offset: each ends as plain Python ends (values, dtypes, the input
updated in place through its own layout, the same exception with NumPy's text), and a timed
run adds no cache entry of its own."""
import collections
import functools

import numpy as np
import psc_jit
import pytest
from numpy.lib.stride_tricks import as_strided
from psc_jit.core import UnsupportedError

pytestmark = [pytest.mark.ipython, pytest.mark.xla]

LAYOUTS = {
    "steps": lambda: np.arange(20.0)[::2],
    "reversed": lambda: np.arange(10.0)[::-1],
    "transposed": lambda: np.arange(12.0).reshape(3, 4).T,
    "fortran": lambda: np.asfortranarray(np.arange(12.0).reshape(3, 4)),
    "broadcast": lambda: np.broadcast_to(np.arange(4.0), (3, 4)),
    "zero strides": lambda: as_strided(np.array([2.5]), (3, 4), (0, 0)),
    "offset": lambda: np.arange(12.0)[3:],
    "2-D steps": lambda: np.arange(48.0).reshape(6, 8)[::2, 1::3],
    "2-D reversed": lambda: np.arange(12.0).reshape(3, 4)[::-1, ::-1],
    "int steps": lambda: np.arange(20)[::3],
    "float32 transposed": lambda: np.arange(6, dtype=np.float32).reshape(2, 3).T,
    "column": lambda: np.arange(12.0).reshape(4, 3)[:, 1],
}


def affine(x):
    y = x * 2.0 + 1.0
    return y


def column_sums(x):
    s = x.sum(axis=0)
    return s


def scale_in_place(x):
    x *= 2.0


def bump_first(x):
    x[0] += 1.0


def reversed_view(x):
    v = x[::-1]
    return v


def centre(x):
    m = x.mean()
    x -= m
    return m


# (the cell, the names it binds, the same code as a function of x returning them)
CELLS = {
    "affine": ("y = x * 2.0 + 1.0", ("y",), affine),
    "column sums": ("s = x.sum(axis=0)", ("s",), column_sums),
    "scale in place": ("x *= 2.0", (), scale_in_place),
    "bump first": ("x[0] += 1.0", (), bump_first),
    "reversed view": ("v = x[::-1]", ("v",), reversed_view),
    "centre": ("m = x.mean()\nx -= m", ("m",), centre),
}

# a first run (missed, timed), a re-run, a timed re-run, an untimed one
MAGIC_RUNS = ("", "", "--compare", "--no-compare")


@pytest.fixture
def shell(brief_timing_shell):
    return brief_timing_shell


def state(namespace: dict, names) -> dict:
    """What a user sees of these names: type, dtype, shape, values, and whether the value
    shares memory with x (a view of it)."""
    x = namespace.get("x")
    seen = {}
    for name in names:
        if name not in namespace:
            seen[name] = "unbound"
            continue
        value = namespace[name]
        array = np.asarray(value)
        seen[name] = (type(value), array.dtype, array.shape, array.tolist(),
                      isinstance(value, np.ndarray) and name != "x"
                      and np.shares_memory(value, x))
    return seen


def outcome(run, namespace: dict, names) -> tuple:
    """(the exception's type and text or None, the state of x and the names) after run()."""
    try:
        run()
        error = None
    except Exception as err:
        error = (type(err), str(err))
    return error, state(namespace, ("x",) + names)


def plain_outcomes(source: str, names, layout: str, runs: int) -> list:
    namespace = {"np": np, "x": LAYOUTS[layout]()}
    code = compile(source, "<plain cell>", "exec")
    return [outcome(lambda: exec(code, namespace), namespace, names) for _ in range(runs)]


@pytest.mark.parametrize("cell", CELLS)
@pytest.mark.parametrize("layout", LAYOUTS)
def test_a_cell_ends_as_plain_python_for_every_input_layout(shell, layout, cell):
    source, names, _ = CELLS[cell]
    shell.user_ns["x"] = LAYOUTS[layout]()
    label = f"--name layout-{layout.replace(' ', '-')}-{cell.replace(' ', '-')}"
    got = []
    for flags in MAGIC_RUNS:
        run = functools.partial(shell.run_cell_magic, "psc_jit", f"--quiet {label} {flags}",
                                source)
        got.append(outcome(run, shell.user_ns, names))
        report = psc_jit.last_report()
        assert len(report.cache_entries) <= 1      # a timed run is the same call as the cell's
    assert got == plain_outcomes(source, names, layout, len(MAGIC_RUNS))


@pytest.mark.parametrize("cell", CELLS)
@pytest.mark.parametrize("layout", LAYOUTS)
def test_a_jit_function_ends_as_plain_python_for_every_input_layout(layout, cell):
    source, names, function = CELLS[cell]
    compiled = psc_jit.jit(function)
    x = LAYOUTS[layout]()
    got, entries = [], []
    for _ in range(3):
        got.append(function_outcome(compiled, x, names))
        entries.append(len(compiled.cache_records()))
    if updates_shared_elements(layout, cell):
        assert got == [refused(x, names)] * 3
    else:
        plain_x = LAYOUTS[layout]()
        assert got == [function_outcome(function, plain_x, names) for _ in range(3)]
    assert entries[0] == entries[-1]           # (re-runs hit the entry of the first call)


def function_outcome(function, x, names) -> tuple:
    """outcome() of a call of function(x), its result bound to the name it returns."""
    namespace = {"x": x}

    def call():
        result = function(x)
        if names:
            namespace[names[0]] = result
    return outcome(call, namespace, names)


def updates_shared_elements(layout: str, cell: str) -> bool:
    """The cell updates an input whose elements share memory: NumPy's answer depends on the
    order it writes them in, so compiled code refuses (a cell falls back)."""
    return layout == "zero strides" and cell in ("scale in place", "bump first", "centre")


def refused(x, names) -> tuple:
    message = ("x is updated in place, and its elements share memory (strides (0, 0): a zero "
               "stride, or windows that overlap), so that NumPy's result depends on the order "
               "it writes them in; update a copy (x.copy()), or make it with np.repeat or "
               "np.tile, which give each element its own memory")
    return (UnsupportedError, message), state({"x": x}, ("x",) + names)


def test_an_update_of_shared_elements_runs_as_plain_python_and_says_why(shell):
    shell.user_ns["x"] = x = LAYOUTS["zero strides"]()
    shell.run_cell_magic("psc_jit", "--quiet", "x[0] += 1.0")
    assert x.tolist() == [[3.5] * 4] * 3            # NumPy's answer, shown through every row
    assert "its elements share memory" in psc_jit.last_report().fallback_reason


@pytest.mark.parametrize("layout", [name for name in LAYOUTS if name != "int steps"])
def test_a_gradient_cell_takes_every_input_layout(shell, layout):
    x = LAYOUTS[layout]()
    shell.user_ns["x"] = x
    for flags in ("", "--compare"):
        shell.run_cell_magic("psc_jit", f"--quiet --grad loss --wrt x {flags}",
                             "loss = (x * x).sum()")
        gradient = shell.user_ns["dloss_dx"]
        assert psc_jit.last_report().compiled
        assert gradient.dtype == x.dtype and gradient.shape == x.shape
        assert np.array_equal(gradient, 2 * x)
        assert shell.user_ns["loss"] == (x * x).sum()


class Settings:
    def __init__(self):
        self.scale = 2.0


Pair = collections.namedtuple("Pair", "left right")

# inputs a cell reads beside x (its arrays in their own layouts), and a cell that reads them
HOLDERS = {
    "a list of views": (lambda x: [x, x[::-1]], "y = held[0] * 2.0 + held[1]"),
    "one array twice": (lambda x: [x, x], "held[0] *= 2.0\ny = held[1] + 1.0"),
    "a dict holding an object": (lambda x: {"w": x, "cfg": Settings()},
                                 "y = held['w'] * held['cfg'].scale"),
    "a tuple of transposes": (lambda x: (x.T, np.asfortranarray(x)), "y = held[0].T + held[1]"),
    "a named tuple": (lambda x: Pair(x, 3), "y = held.left * held.right"),
}


@pytest.mark.parametrize("holder", HOLDERS)
def test_a_timed_run_is_the_same_call_as_the_cells_own(shell, holder):
    """The copies a timed run takes are the same call as the cell's: it adds no cache entry,
    and the cell ends as plain Python does."""
    make, source = HOLDERS[holder]
    shell.user_ns["held"] = make(LAYOUTS["2-D steps"]())
    plain = {"np": np, "held": make(LAYOUTS["2-D steps"]())}
    for flags in ("", "--compare"):
        shell.run_cell_magic("psc_jit", f"--quiet {flags}", source)
        exec(source, plain)
        report = psc_jit.last_report()
        assert report.compiled and len(report.cache_entries) == 1
        assert report.timings is not None
        assert state(shell.user_ns, ("y",)) == state(plain, ("y",))
    assert arrays_in(shell.user_ns["held"]) == arrays_in(plain["held"])


def arrays_in(held) -> list:
    values = held.values() if isinstance(held, dict) else held
    return [(v.dtype, v.tolist()) for v in values if isinstance(v, np.ndarray)]
