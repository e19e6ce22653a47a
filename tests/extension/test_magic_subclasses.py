"""Subclasses of ndarray (and of NumPy's scalar types, float and complex) are never compiled
as their base type (issue 28, item 2), through a real IPython shell: a masked array keeps its
mask, a subclass its own `__add__`, `__setitem__` and attributes, whether it is an input of
the cell, a value a helper reads from outside, or a value the cell makes. Each such cell runs
as plain Python, the reason naming the value and what to write instead, and ends exactly as
the plain cell does (values, types, masks, attributes), on the first run and the re-run."""
import textwrap

import numpy as np
import psc_jit
import pytest

pytestmark = [pytest.mark.ipython, pytest.mark.xla]

CLASSES = """
import types
import numpy as np
class Sym(np.ndarray):
    def __setitem__(self, key, value):
        super().__setitem__(key, value)
        super().__setitem__(key[::-1], value)      # the mirror element too
class Loud(np.ndarray):
    def __add__(self, other):
        return np.asarray(self) + other + 100.0
class Tagged(np.ndarray):
    def __array_finalize__(self, obj):
        self.tag = getattr(obj, "tag", "untagged")
class F64(np.float64):
    def __mul__(self, other):
        return ("F64", float(self) * other)
class Money(float):
    def __mul__(self, other):
        return Money(float(self) * other * 10.0)
def tagged(values, tag):
    t = np.asarray(values, float).view(Tagged)
    t.tag = tag
    return t
"""


@pytest.fixture
def shell(magic_shell):
    define(magic_shell, CLASSES)
    return magic_shell


def define(namespace_owner, code: str):
    result = namespace_owner.run_cell(textwrap.dedent(code))
    assert result.success, result.error_in_exec


def same(a, b) -> bool:
    """Whether two values end alike as a user sees them: type, values, dtype, mask and
    attributes (the classes are the same definitions, made once per namespace)."""
    if type(a).__qualname__ != type(b).__qualname__ or type(a).__module__ != type(b).__module__:
        return False
    if isinstance(a, np.ndarray):
        return a.dtype == b.dtype and a.shape == b.shape and \
            np.array_equal(np.ma.getmaskarray(a), np.ma.getmaskarray(b)) and \
            np.array_equal(np.ma.getdata(a), np.ma.getdata(b), equal_nan=a.dtype.kind in "fc") \
            and getattr(a, "tag", None) == getattr(b, "tag", None)
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    return a == b


def plain_run(setup: str, cell: str, names) -> dict:
    """The cell run as plain Python after the same setup, in a namespace of its own."""
    namespace: dict = {"__name__": "__main__"}    # (classes of __main__, as in the shell)
    exec(textwrap.dedent(CLASSES), namespace)
    exec(textwrap.dedent(setup), namespace)
    exec(textwrap.dedent(cell), namespace)
    return {n: namespace[n] for n in names}


def check_falls_back_as_plain(shell, setup: str, cell: str, names, mentions: str):
    """Two runs of the cell through the magic, each after a fresh setup, end as plain
    Python ends, and neither is compiled; the reason names `mentions` and says why."""
    for _ in range(2):
        define(shell, setup)
        result = shell.run_cell(f"%%psc_jit --quiet --no-compare\n{textwrap.dedent(cell)}")
        assert result.success, result.error_in_exec
        report = psc_jit.last_report()
        reasons = report.plain_reasons      # (the whole cell, or the lines that hold it)
        assert reasons and mentions in reasons and "subclass of" in reasons, reasons
        expected = plain_run(setup, cell, names)
        for name in names:
            assert same(shell.user_ns[name], expected[name]), (name, shell.user_ns[name],
                                                                expected[name])


MASKED = "np.ma.masked_array([1.0, 2.0, 3.0], mask=[0, 1, 0])"

INPUTS = {
    "masked array: sum and product": (f"m = {MASKED}", "s = m.sum()\ny = m * 2", ["s", "y", "m"],
                                      "m is a np.ma.MaskedArray"),
    "own __setitem__ (symmetric)": ("A = np.zeros((3, 3)).view(Sym)",
                                    "A[0, 1] = 5.0\nB = A + 1", ["A", "B"], "A is a Sym"),
    "own __add__": ("a = np.ones(3).view(Loud)", "y = a + 1.0", ["y"], "a is a Loud"),
    "tagged by __array_finalize__": ("t = tagged([1, 2, 3], 'kept')", "y = t * 2.0\nz = t[1:]",
                                     ["y", "z"], "t is a Tagged"),
    "np.matrix": ("mm = np.matrix([[1.0, 2.0], [3.0, 4.0]])", "y = mm * mm\nr = mm[0]",
                  ["y", "r"], "mm is a np.matrix"),
    "np.recarray": ("r = np.ones(3).view(np.recarray)", "y = r * 2", ["y"],
                    "r is a np.recarray"),
    "NumPy scalar subclass": ("f = F64(2.0)", "y = f * 3.0", ["y"], "f is a F64"),
    "float subclass": ("c = Money(2.0)", "y = c * 3.0", ["y"], "c is a Money"),
    "masked array in a dict": (f"p = {{'w': {MASKED}}}", "s = p['w'].sum()", ["s"],
                               "p['w'] is a np.ma.MaskedArray"),
    "masked array in a list": (f"L = [{MASKED}, np.ones(3)]", "s = (L[0] + L[1]).sum()", ["s"],
                               "L[0] is a np.ma.MaskedArray"),
}


@pytest.mark.parametrize("setup, cell, names, mentions", INPUTS.values(), ids=INPUTS.keys())
def test_an_input_of_a_subclass_runs_as_plain_python(shell, setup, cell, names, mentions):
    check_falls_back_as_plain(shell, setup, cell, names, mentions)


READ_BY_HELPERS = {
    "global of a helper": (f"M = {MASKED}\ndef h(v):\n    return (v * M).sum()",
                           "M (read by h)"),
    "closure of a helper": (f"def make():\n    MM = {MASKED}\n    def h(v):\n"
                            "        return (v * MM).sum()\n    return h\nh = make()",
                            "MM (read by h)"),
    "attribute": (f"cfg = types.SimpleNamespace(m={MASKED})\ndef h(v):\n"
                  "    return (v * cfg.m).sum()", "cfg.m"),
    "tagged global": ("T = tagged([1, 2, 3], 'w')\ndef h(v):\n    return v + T", "T (read by h)"),
    "matrix global": ("W = np.matrix(np.eye(3))\ndef h(v):\n    return W * 2.0 + v.sum()",
                      "W (read by h)"),
}


@pytest.mark.parametrize("setup, mentions", READ_BY_HELPERS.values(), ids=READ_BY_HELPERS.keys())
def test_a_subclass_a_helper_reads_from_outside_runs_as_plain_python(shell, setup, mentions):
    check_falls_back_as_plain(shell, "x = np.arange(1.0, 4.0)\n" + setup, "y = h(x)", ["y"],
                              mentions)


MADE = {
    "np.ma.array": ("y = np.ma.array(x, mask=x > 1)\ns = y.sum()", ["y", "s"], "np.ma.array"),
    "np.ma under another name": ("from numpy.ma import masked_array as ma_\n"
                                 "y = ma_(x, mask=[0, 1, 0])\ns = y.sum()", ["y", "s"],
                                 "np.ma.MaskedArray"),
    "masked_invalid in a helper": ("def mk(v):\n    return np.ma.masked_invalid(v / (v - 2))\n"
                                   "y = mk(x)\ns = y.sum()", ["y", "s"], "np.ma.masked_invalid"),
    "np.ma.masked constant": ("y = x * np.ma.masked", ["y"], "np.ma.MaskedConstant"),
    "view as a subclass": ("y = x.view(Tagged)", ["y"], "Tagged"),
    "a helper's view": ("def tag(v):\n    return np.asarray([1.0, 2.0]).view(Tagged)\n"
                        "y = tag(x) + x[:2]", ["y"], "Tagged"),
    "np.asmatrix": ("z = np.asmatrix(np.eye(2))\nw = z * z", ["z", "w"], "np.matrix"),
    "np.rec.array": ("r = np.rec.array(np.zeros(2, dtype=[('a', float)]))", ["r"],
                     "np.recarray"),
    "np.char.array": ("r = np.char.array(['a', 'b'])\ny = x * 2", ["r", "y"],
                      "np.char.chararray"),
}


@pytest.mark.parametrize("cell, names, mentions", MADE.values(), ids=MADE.keys())
def test_a_subclass_made_in_the_cell_runs_as_plain_python(shell, cell, names, mentions):
    check_falls_back_as_plain(shell, "x = np.arange(1.0, 4.0)", cell, names, mentions)


def test_a_rerun_with_a_subclass_where_a_plain_array_was_misses_the_compiled_entry(shell):
    """The signature tells a masked array from the plain array it was compiled for: the
    re-run is not a hit of the old entry, and a plain array again is."""
    cell = "s = x.sum()\ny = x * 2"
    define(shell, "x = np.arange(1.0, 4.0)")
    for _ in range(2):
        shell.run_cell_magic("psc_jit", "--quiet --no-compare --name sub_rerun", cell)
    assert psc_jit.last_report().compiled and psc_jit.last_report().cache_hit
    define(shell, f"x = {MASKED}")
    shell.run_cell_magic("psc_jit", "--quiet --no-compare --name sub_rerun", cell)
    report = psc_jit.last_report()
    assert not report.compiled and not report.cache_hit
    assert shell.user_ns["s"] == 4.0 and same(shell.user_ns["y"], np.ma.masked_array([1.0, 2.0, 3.0], mask=[0, 1, 0]) * 2)
    define(shell, "x = np.arange(1.0, 4.0)")
    shell.run_cell_magic("psc_jit", "--quiet --no-compare --name sub_rerun", cell)
    assert psc_jit.last_report().compiled and psc_jit.last_report().cache_hit
    assert shell.user_ns["s"] == 6.0 and type(shell.user_ns["y"]) is np.ndarray


def test_a_subclass_is_refused_as_a_static_input_too(shell):
    """--static would key the program on the data alone (not the mask): refused as well."""
    define(shell, f"m = {MASKED}")
    shell.run_cell_magic("psc_jit", "--quiet --no-compare --static m", "s = m.sum()")
    report = psc_jit.last_report()
    assert not report.compiled and "m is a np.ma.MaskedArray" in report.fallback_reason
    assert shell.user_ns["s"] == 4.0


def test_plain_arrays_next_to_the_classes_still_compile(shell):
    define(shell, "x = np.arange(1.0, 4.0)\nf = np.float64(2.0)\nc = 2.0")
    shell.run_cell_magic("psc_jit", "--quiet --no-compare", "y = x * f * c")
    report = psc_jit.last_report()
    assert report.compiled, report.fallback_reason
    np.testing.assert_array_equal(shell.user_ns["y"], np.arange(1.0, 4.0) * 4.0)
