"""`assert` and `raise` on traced values: the program checks them and the run raises the
user's own error (its type and message) where plain Python would, instead of refusing the
code at trace time."""
import numpy as np
import pytest
from psc_jit.core import Jitted

pytestmark = pytest.mark.xla


def validated_sqrt(x):
    assert (x >= 0).all(), "x has negative entries"
    y = np.sqrt(x)
    if y.sum() > 100:
        raise ValueError(f"too large for shape {x.shape}")
    elif y.sum() == 0:
        raise ZeroDivisionError("all zero")
    return y / y.sum()


@pytest.mark.parametrize("x", [np.arange(1.0, 5.0), np.arange(4.0) - 1, np.full(4, 1e4),
                               np.zeros(3)])
def test_assert_and_raise_on_traced_tests_end_as_plain_python(x):
    try:
        want = validated_sqrt(x)
    except Exception as err:            # noqa: BLE001 (the plain function's own error)
        with pytest.raises(type(err)) as info:
            Jitted(validated_sqrt)(x)
        assert str(info.value) == str(err).splitlines()[0]   # (pytest adds to its own asserts)
    else:
        np.testing.assert_allclose(Jitted(validated_sqrt)(x), want, rtol=1e-15)


def test_one_program_serves_every_outcome():
    f = Jitted(validated_sqrt)
    f(np.arange(1.0, 5.0))
    compiled = len(f.cache_records())
    for x, error in ((np.arange(4.0) - 1, AssertionError), (np.full(4, 1e4), ValueError)):
        with pytest.raises(error):
            f(x)
    assert len(f.cache_records()) == compiled


def test_an_assert_message_naming_traced_values_is_left_to_plain_python():
    def f(x):
        assert x.sum() > 0, f"sum is {x.sum()}"
        return x * 2

    np.testing.assert_array_equal(Jitted(f)(np.ones(2)), [2.0, 2.0])
    with pytest.raises(AssertionError):
        Jitted(f)(-np.ones(2))


def test_a_static_assert_is_plain_pythons():
    def f(x):
        assert x.ndim == 2, "want a matrix"
        return x.T

    with pytest.raises(AssertionError, match="want a matrix"):
        Jitted(f)(np.ones(3))


def test_a_raise_inside_a_loop_body_stops_the_loop_and_raises():
    def iterate(x, n):
        for _ in range(n):
            x = x * 3.0
            if np.abs(x).max() > 1e6:
                raise FloatingPointError("diverged")
        return x

    np.testing.assert_allclose(Jitted(iterate)(np.ones(2), 5), np.full(2, 243.0))
    with pytest.raises(FloatingPointError, match="diverged"):
        Jitted(iterate)(np.ones(2), 40)


def test_an_error_whose_message_formats_a_traced_value_is_raised_with_the_message_as_written():
    def f(x):
        s = x.sum()
        if s < 10:
            raise ValueError(f"sum {s} too small")
        return np.log(x)

    np.testing.assert_allclose(Jitted(f)(np.arange(1.0, 6.0)), np.log(np.arange(1.0, 6.0)))
    with pytest.raises(ValueError, match=r"f'sum \{s\} too small' \(a message made from traced"):
        Jitted(f)(np.arange(-1.0, 4.0))
