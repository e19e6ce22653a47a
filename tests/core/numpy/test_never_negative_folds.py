"""What XLA's algebraic simplifier takes as never negative, compiled code computes as NumPy
does. The simplifier treats x * x, abs(x) and exp(x) as never negative: written as plain
StableHLO, `x * x >= 0` folds to true, `abs(x) < 0` to false and abs(x * x) to x * x. For
signed integers that forgets wrap-around (NumPy's int32 677**4 and abs(int32 min) are
negative); for floats it forgets NaN (NumPy's NaN >= 0 is False)."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from psc_jit.core import jit

pytestmark = pytest.mark.xla

SIGNED = [np.int8, np.int16, np.int32, np.int64]

EXPRESSIONS = {
    "square is negative where it wraps": lambda w: (w * w) >= 0,
    "square below zero": lambda w: (w * w) < 0,
    "abs of a wrapped square": lambda w: np.abs(w * w),
    "abs of the minimum stays negative": lambda w: np.abs(w) >= 0,
    "abs below zero": lambda w: np.abs(w) < 0,
    "floor division of abs": lambda w: np.abs(w) // 2,
    "floor division of a square": lambda w: (w * w) // 4,
    "fourth power's sign": lambda w: w ** 4 >= 0,
    "square through np.square": lambda w: np.square(w) < 0,
    "select of square and abs": lambda w: np.where(w > 0, w * w, np.abs(w)) >= 0,
    "maximum of abs and a square": lambda w: np.maximum(np.abs(w), w * w) < 0,
    "a product of all": lambda w: np.prod(w * w) >= 0,
}


def compiled_matches_numpy(f, x):
    with np.errstate(all="ignore"):
        want = np.asarray(f(x))
    got = jit(f)(x)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


def wide(dtype):
    info = np.iinfo(dtype)
    edges = st.sampled_from([info.min, info.min + 1, -1, 0, 1, info.max, int(np.sqrt(info.max)) + 1])
    return hnp.arrays(dtype, st.integers(1, 6), elements=st.one_of(edges, hnp.from_dtype(np.dtype(dtype))))


@pytest.mark.parametrize("name", list(EXPRESSIONS))
@pytest.mark.parametrize("dtype", SIGNED, ids=lambda d: np.dtype(d).name)
@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_a_signed_integer_expression_wraps_as_numpy_does(name, dtype, data):
    f = EXPRESSIONS[name]
    compiled_matches_numpy(f, data.draw(wide(dtype)))


def test_the_cases_that_wrap_are_found_by_the_minimum_and_a_large_square():
    """The cases above are not vacuous: these inputs make each differ from the no-overflow
    answer."""
    w = np.array([677, 84101, np.iinfo(np.int32).min, 1, -5], dtype=np.int32)
    assert not jit(lambda w: (w * w) >= 0)(w).all()
    assert jit(lambda w: np.abs(w) < 0)(w)[2]
    assert jit(lambda w: np.abs(w) // 2)(w)[2] == np.iinfo(np.int32).min // 2
    assert not jit(lambda w: w ** 4 >= 0)(w)[0]


def test_a_negative_power_check_sees_a_wrapped_square():
    """`2 ** (w * w)` with a square that wrapped below zero raises NumPy's ValueError (the
    run-time check is `w * w >= 0`)."""
    w = np.array([84101, 2], dtype=np.int32)
    with pytest.raises(ValueError, match="negative integer powers"):
        jit(lambda w: 2 ** (w * w))(w)


FLOAT_EXPRESSIONS = {
    "square at least zero": lambda x: (x * x) >= 0,
    "abs at least zero": lambda x: np.abs(x) >= 0,
    "zero at most abs": lambda x: 0 <= np.abs(x),
    "zero at most a square": lambda x: 0.0 <= x * x,
    "exp at least zero": lambda x: np.exp(x) >= 0,
    "select of square and abs": lambda x: np.where(x > 0, x * x, np.abs(x)) >= 0,
    "plain comparisons": lambda x: (x >= 0) ^ (0 <= x) ^ (np.abs(x) <= 0),
}


@pytest.mark.parametrize("name", list(FLOAT_EXPRESSIONS))
@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64],
                         ids=lambda d: np.dtype(d).name)
@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_a_comparison_of_a_never_negative_float_is_false_for_nan(name, dtype, data):
    f = FLOAT_EXPRESSIONS[name]
    x = data.draw(hnp.arrays(dtype, st.integers(1, 6), elements=st.sampled_from(
        [np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, 1.5, -2.0, 1e4])))
    compiled_matches_numpy(f, x)


def test_nan_is_found_by_each_float_comparison():
    x = np.array([np.nan, 2.0])
    for name, f in FLOAT_EXPRESSIONS.items():
        if name != "plain comparisons":
            assert not jit(f)(x)[0], name
