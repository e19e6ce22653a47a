"""float(x), int(x), max(a, b), min(a, b) and math's functions on traced scalars compile with
Python's semantics: Python numbers out (type included), Python's order for max and min (NaN and
signed zeros), Python's errors raised by the run, and a plain run where the type of max's
result depends on the values. In functions (jit) and in a %%psc_jit cell."""
import math
import sys

import numpy as np
import pytest
from IPython.core.interactiveshell import InteractiveShell
from psc_jit.core import DataDependentShapeError, UnsupportedError, jit
from psc_jit.core.frontend.python_scalars import MATH

sys.path.insert(0, __file__.rsplit("/frontend/", 1)[0] + "/numpy")
from numpy_compare import compare, raises_like  # noqa: E402

pytestmark = pytest.mark.xla

X = np.array([0.25, -1.5, 2.0, 0.75])


def conversions(x):
    return (float(x.sum()), int(x[1] * 3), int(x.max()), float(x.size), int(x.argmax()),
            float(x[0] > 0), x.sum() / float(len(x)))


def test_float_and_int_give_python_numbers():
    compare(conversions, X)


@pytest.mark.parametrize("value", [np.nan, np.inf, -np.inf, 1e19])
def test_int_of_what_python_refuses_raises_pythons_error(value):
    if value == 1e19:       # a Python int past int64: the cell must run as plain Python
        with pytest.raises(DataDependentShapeError):
            jit(lambda x: int(x[0]))(np.array([value]))
    else:
        raises_like(lambda x: int(x[0]), np.array([value]))


@pytest.mark.parametrize("a, b", [(1.0, 2.0), (2.0, 1.0), (np.nan, 1.0), (1.0, np.nan),
                                  (0.0, -0.0), (-0.0, 0.0), (3.0, 3.0)])
def test_max_and_min_follow_pythons_order(a, b):
    def extremes(x):
        return max(x[0], x[1]), min(x[0], x[1]), max(x[1], x[0], x[0] * 2), min(x[0] + 0, x[1])
    got, _ = compare(extremes, np.array([a, b]))
    want = extremes(np.array([a, b]))
    assert [np.signbit(g) for g in got] == [np.signbit(w) for w in want]


@pytest.mark.parametrize("a, b", [(1.0, 2.0), (np.nan, 1.0), (1.0, np.nan), (0.0, -0.0),
                                  (-0.0, 0.0)])
def test_max_and_min_of_one_list_tuple_or_generator_follow_pythons_order(a, b):
    def extremes(x):
        return (max([x[0], x[1]]), min((x[1], x[0], x[0] * 2)), max(v + 1 for v in x),
                min([float(x[0]), float(x[1])]), max([x[1]]))
    got, _ = compare(extremes, np.array([a, b]))
    want = extremes(np.array([a, b]))
    assert [np.signbit(g) for g in got] == [np.signbit(w) for w in want]


def test_max_of_two_types_compiles_where_the_assumed_type_wins_and_runs_plain_otherwise():
    def clipped(x):
        return max(x.max(), 0.5)
    got = jit(clipped)(np.array([0.25, 0.75]))
    assert type(got) is np.float64 and got == 0.75
    with pytest.raises(DataDependentShapeError, match="another type"):
        jit(clipped)(np.array([0.25, 0.125]))


def _inside(fn) -> tuple:
    """Arguments inside fn's domain, and one outside (None: every float is inside)."""
    name = fn.__name__
    if name in ("asin", "acos", "atanh"):
        return (0.5,), (2.0 if name != "atanh" else 1.0,)
    if name in ("sqrt", "log", "log10", "log2"):
        return (2.5,), (-1.0 if name == "sqrt" else 0.0,)
    if name == "log1p":
        return (0.5,), (-1.0,)
    if name == "acosh":
        return (2.5,), (0.5,)
    if name in ("exp", "expm1", "sinh", "cosh"):
        return (1.5,), (1000.0,)
    if name in ("atan2", "copysign", "hypot"):
        return (-1.5, 2.0), None
    if name in ("sin", "cos", "tan"):
        return (0.75,), (math.inf,)
    if name in ("floor", "ceil", "trunc"):
        return (-2.5,), (math.nan,)
    return (-0.75,), None


# each as user code calls it: by its name in math (the rolling pass routes those calls)
CALLS = {
    "sqrt": lambda x: math.sqrt(x[0]),
    "exp": lambda x: math.exp(x[0]),
    "expm1": lambda x: math.expm1(x[0]),
    "log": lambda x: math.log(x[0]),
    "log10": lambda x: math.log10(x[0]),
    "log2": lambda x: math.log2(x[0]),
    "log1p": lambda x: math.log1p(x[0]),
    "sin": lambda x: math.sin(x[0]),
    "cos": lambda x: math.cos(x[0]),
    "tan": lambda x: math.tan(x[0]),
    "asin": lambda x: math.asin(x[0]),
    "acos": lambda x: math.acos(x[0]),
    "atan": lambda x: math.atan(x[0]),
    "sinh": lambda x: math.sinh(x[0]),
    "cosh": lambda x: math.cosh(x[0]),
    "tanh": lambda x: math.tanh(x[0]),
    "asinh": lambda x: math.asinh(x[0]),
    "acosh": lambda x: math.acosh(x[0]),
    "atanh": lambda x: math.atanh(x[0]),
    "fabs": lambda x: math.fabs(x[0]),
    "degrees": lambda x: math.degrees(x[0]),
    "radians": lambda x: math.radians(x[0]),
    "floor": lambda x: math.floor(x[0]),
    "ceil": lambda x: math.ceil(x[0]),
    "trunc": lambda x: math.trunc(x[0]),
    "isnan": lambda x: math.isnan(x[0]),
    "isinf": lambda x: math.isinf(x[0]),
    "isfinite": lambda x: math.isfinite(x[0]),
    "atan2": lambda x: math.atan2(x[0], x[1]),
    "hypot": lambda x: math.hypot(x[0], x[1]),
    "copysign": lambda x: math.copysign(x[0], x[1]),
}


def test_every_math_function_compiled_has_a_call_here():
    assert sorted(CALLS) == sorted(f.__name__ for f in MATH)


@pytest.mark.parametrize("fn", list(MATH), ids=[f.__name__ for f in MATH])
def test_each_math_function_is_pythons_with_pythons_errors(fn):
    inside, outside = _inside(fn)
    call = CALLS[fn.__name__]
    got, want = jit(call)(np.array(inside)), call(np.array(inside))
    # (XLA's transcendental functions are not the C library's: a few ulps apart)
    assert type(got) is type(want) and math.isclose(got, want, rel_tol=1e-14), (got, want)
    if outside is not None:
        raises_like(call, np.array(outside))


def test_math_in_a_rolled_loop_and_with_python_numbers_mixed_in():
    def decay(x):
        total = 0.0
        for i in range(x.shape[0]):
            total += math.exp(-abs(x[i])) * math.sqrt(2) + max(x[i], 0.0 * x[i])
        return total, math.floor(total), math.isnan(total)
    compare(decay, X, close=True)


def test_a_cell_ends_as_the_plain_cell_whichever_type_max_returns():
    shell = InteractiveShell.instance()
    shell.run_line_magic("load_ext", "psc_jit")
    cell = "import math\nm = max(x.max(), 0.5)\nd = math.sqrt(float(x @ x))\nn = int(x.sum())\n"
    for x in (np.array([0.75, 2.5]), np.array([0.25, 0.125])):
        plain = {"np": np, "x": x.copy()}
        exec(cell, plain)
        shell.user_ns.update(np=np, x=x.copy())
        shell.run_cell_magic("psc_jit", "--quiet --no-compare", cell)
        for name in ("m", "d", "n"):
            got, want = shell.user_ns[name], plain[name]
            assert type(got) is type(want) and got == want, name


def items_and_rounds(x, i):
    return (x.mean().item(), x.item(2), x.reshape(2, 2).item(1, 0), (x > 0).item(0),
            x.astype(np.int8).item(1), x.astype(np.complex64).item(3), x.item(i),
            round(x[0] * 10), round(x[1]), round(float(x[2]) + 0.5), round(x[3], 1),
            round(np.int16(7) + x.astype(np.int16)[2]))


def test_item_and_round_give_pythons_numbers():
    compare(items_and_rounds, np.array([0.25, -1.5, 2.5, 0.75]), np.int64(-1))


def item_of_all(x):
    return x.item()


def item_past_the_end(x):
    return x.item(7)


def round_first(x):
    return round(x[0])


@pytest.mark.parametrize("call", [item_of_all, item_past_the_end, round_first])
@pytest.mark.parametrize("first", [np.nan, np.inf])
def test_item_and_round_errors_are_numpys(call, first):
    raises_like(call, np.array([first, 1.0, 2.0, 3.0]))


def test_a_uint64_past_int64_runs_the_cell_as_plain_python():
    with pytest.raises(DataDependentShapeError):
        jit(lambda x: x.item(0))(np.array([2 ** 63 + 5], np.uint64))


def test_round_of_a_python_float_to_digits_is_refused_with_the_fix():
    with pytest.raises(UnsupportedError, match="np.round"):
        jit(lambda x: round(float(x[0]), 2))(X)


def test_tolist_gives_nested_python_numbers():
    compare(lambda x, k: (x.reshape(2, 2).tolist(), (x > 0).tolist(), k.tolist(),
                          x[0].tolist(), x[:0].tolist()),
            np.array([0.25, -1.5, 2.5, 0.75]), np.arange(3, dtype=np.int8))


def test_tolist_of_a_large_array_is_refused_with_the_fix():
    with pytest.raises(UnsupportedError, match="keep it an array"):
        jit(lambda x: x.tolist())(np.zeros(1000))


def grown(x):
    k = int(x.argmax())
    return 3 ** (k * 10), 1 << (k * 13), k * 2 ** 61 + k * 2 ** 61, (k - 1) * 10 ** 18


@pytest.mark.parametrize("peak", [0, 1, 2, 3])
def test_python_ints_past_int64_run_as_plain_python_never_wrap(peak):
    x = np.zeros(4)
    x[peak] = 1.0
    want = grown(x)
    if all(-2 ** 62 < v < 2 ** 62 for v in want):
        got, _ = compare(grown, x)
        assert all(type(g) is int for g in got)
    else:                                         # (the magic then runs the cell plainly)
        with pytest.raises(DataDependentShapeError, match="Python int past int64"):
            jit(grown)(x)


def test_a_negative_shift_count_raises_pythons_error():
    raises_like(lambda x: 1 << (int(x.argmax()) - 2), np.array([0.0, 1.0]))
