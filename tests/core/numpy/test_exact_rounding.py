"""Results that NumPy fixes to the last bit stay so compiled, where XLA's simplifier would
change them: signs of zero (False * -0.5, a sum of -0.0), a division by a constant (XLA
multiplies by the reciprocal), NumPy's power loop for one-number exponents, and the NumPy
scalar a NumPy function gives for Python scalars."""
import numpy as np
import pytest
from psc_jit.core import jit

pytestmark = pytest.mark.xla

SPECIALS = np.array([-0.0, 0.0, -0.5, 2.0, 3.0, np.inf, -np.inf, np.nan, 1e-300, -7.0])


def assert_bit_exact(fn, *args):
    """The compiled result is NumPy's: type, dtype, value, NaN positions and zeros' signs."""
    with np.errstate(all="ignore"):
        want = fn(*args)
        got = jit(fn)(*args)
    assert type(got) is type(want) and np.asarray(got).dtype == np.asarray(want).dtype
    assert np.array_equal(got, want, equal_nan=True), f"{got!r} != {want!r}"
    for part in (np.real, np.imag):
        assert np.array_equal(np.signbit(part(got)), np.signbit(part(want))) or \
            np.isnan(want).any(), f"signs: {got!r} != {want!r}"


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_a_bool_times_a_float_is_numpys_product(dtype):
    mask = np.arange(SPECIALS.size) % 3 == 0
    x = SPECIALS.astype(dtype)
    assert_bit_exact(lambda m, x: m * x, mask, x)
    assert_bit_exact(lambda m, x: x * m, mask, x)
    assert_bit_exact(lambda m: m * dtype(-0.5), mask)


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64, np.complex64])
@pytest.mark.parametrize("n", [0, 1, 2, 9])
def test_a_sum_of_negative_zeros_is_positive_zero(dtype, n):
    x = np.full(n, -0.0, dtype)
    assert_bit_exact(lambda x: x.sum(), x)
    assert_bit_exact(lambda x: np.sum(x.reshape(n, 1), axis=-1), x)
    assert_bit_exact(lambda x: np.cumsum(x), x)
    assert_bit_exact(lambda x: np.sum(x[:1].reshape(())), x[:1] if n else np.zeros(1, dtype))


@pytest.mark.parametrize("divisor", [3.0, 24, 0.3, 1.5, 10, 7.0])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_a_division_by_a_constant_is_correctly_rounded(divisor, dtype):
    x = np.linspace(-57.5, 31.0, 40).astype(dtype)
    assert_bit_exact(lambda x: x / divisor, x)
    assert_bit_exact(lambda x: x // divisor, x)
    assert_bit_exact(lambda x, d: x / d, x, divisor)                  # read at run time
    assert_bit_exact(lambda x: x.reshape(8, 5) / x.reshape(8, 5)[:, 1:2], x)   # softmax's form
    assert_bit_exact(lambda x, d: np.reciprocal(x * 0 + d), x, divisor)
    quarters = (np.arange(-20, 20) * 0.75 - 0.25).astype(dtype)   # sums exact in any order
    assert_bit_exact(lambda x: x.mean(), quarters)
    assert_bit_exact(lambda x: x.reshape(8, 5).mean(axis=1), quarters)


@pytest.mark.parametrize("exponent", [0.5, 2.0, 1.0, -1.0, 0.0, 2, True, np.float32(0.5)])
@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_an_array_to_one_number_is_numpys_fast_power(exponent, dtype):
    x = SPECIALS.astype(dtype)
    assert_bit_exact(lambda x: x ** exponent, x)
    assert_bit_exact(lambda x, e: x ** e, x, exponent)
    assert_bit_exact(lambda x, e: np.power(x, e), x, np.array(exponent))
    assert_bit_exact(lambda x: np.positive(x), x)


@pytest.mark.parametrize("fn", [np.sum, np.prod, np.max, np.min, np.mean, np.argmax,
                                lambda k: np.sum(k, axis=-1), lambda k: np.dot(k, k)])
@pytest.mark.parametrize("value", [2.0, 3, True])
def test_numpy_functions_of_python_scalars_give_numpy_scalars(fn, value):
    assert_bit_exact(fn, value)


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
@pytest.mark.parametrize("fn", [np.maximum, np.minimum])
def test_maximum_and_minimum_of_equal_zeros_are_numpys(fn, dtype):
    """Of -0.0 and +0.0 NumPy's loops give the second for float32 and float64 and the first
    for float16 (XLA's maximum orders -0.0 below +0.0); a NaN wins either way."""
    x = np.array([-0.0, 0.0, np.nan, 1.0, -0.0, np.nan, 0.0], dtype)
    y = np.array([0.0, -0.0, 1.0, np.nan, -0.0, np.nan, 0.0], dtype)
    assert_bit_exact(fn, x, y)
    assert_bit_exact(lambda x: fn(x, 0), x)
    assert_bit_exact(lambda x: fn(-0.0, x), x)


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
@pytest.mark.parametrize("bound", [-1.0, 2.5, np.nan, np.inf, np.array([1.0, -1.0, 0.5, 3.0,
                                                                        -2.0, 7.0, -0.5])])
def test_a_bound_without_zero_clips_as_numpy_does(bound, dtype):
    """With a constant bound that holds no zero no two zeros can tie, and XLA's own maximum
    and minimum (a NaN wins) give NumPy's results: clip, maximum and minimum, bit for bit."""
    x = np.array([-0.0, 0.0, np.nan, 1.0, -1.0, 2.5, -np.inf], dtype)
    for fn in (np.maximum, np.minimum):
        assert_bit_exact(lambda x, fn=fn: fn(x, bound), x)
        assert_bit_exact(lambda x, fn=fn: fn(bound, x), x)
    assert_bit_exact(lambda x: np.clip(x, -1.0, 1.0), x)
