"""psc_jit.array_api: the Array API namespace of compiled NumPy functions that the conformance
suite runs against (tests/conformance/array_api_suite.py, `make conformance`)."""
import numpy as np
import psc_jit.array_api as xp
import pytest
from psc_jit.core import UnsupportedError

pytestmark = pytest.mark.xla


@pytest.fixture
def strict():
    with xp.strict_mode(True):
        yield


@pytest.fixture
def lenient():
    with xp.strict_mode(False):
        yield


def test_every_function_of_the_standard_is_a_compiled_numpy_function():
    for name in xp.FUNCTIONS:
        numpy_form = xp.TRACEABLE_FORMS.get(name, getattr(np, name))
        assert getattr(xp, name).jitted.fun.args == (numpy_form,), name
    for name in xp.LINALG_FUNCTIONS:
        assert getattr(xp.linalg, name).jitted.fun.args == (getattr(np.linalg, name),), name
    for name in xp.FFT_FUNCTIONS:
        assert getattr(xp.fft, name).jitted.fun.args == (getattr(np.fft, name),), name


def test_constants_dtypes_and_dtype_questions_are_numpys():
    for name in xp.UNCHANGED:
        assert getattr(xp, name) is getattr(np, name), name
    assert xp.__array_api_version__ == np.__array_api_version__


def test_a_call_traces_arrays_and_keeps_python_scalars_static():
    x = np.array([-0.0, 1.5, -2.0], np.float32)
    for scalar in (0.0, 2.0, 2):
        got = xp.add(x, scalar)
        want = np.add(x, scalar)
        assert got.dtype == want.dtype and np.array_equal(np.signbit(got), np.signbit(want))
        np.testing.assert_array_equal(got, want)
    signature = xp.add.jitted.last_call.signature
    assert [leaf.path for leaf in signature.leaves if not hasattr(leaf, "value")] == ["arrays[0]"]


def test_arrays_in_lists_are_traced_and_results_keep_numpys_types():
    a, b = np.arange(3.0), np.ones(3)
    np.testing.assert_array_equal(xp.concat([a, b]), np.concatenate([a, b]))
    assert xp.sum.jitted is not None
    total = xp.sum(a)
    assert type(total) is np.float64 and total == 3.0
    mean, var = xp.mean(a, axis=0), xp.var(a, correction=1)
    assert (mean, var) == (np.mean(a, axis=0), np.var(a, ddof=1))
    assert all(isinstance(u, np.ndarray) for u in xp.unstack(np.eye(2)))


def test_a_call_without_arrays_is_numpys_own():
    np.testing.assert_array_equal(xp.zeros((2, 3)), np.zeros((2, 3)))
    assert xp.asarray([1, 2]).dtype == np.asarray([1, 2]).dtype
    assert xp.zeros.jitted.last_call is None


def test_a_refused_call_is_computed_by_numpy_unless_strict(lenient):
    x = np.array([3, 1, 3, 2])
    np.testing.assert_array_equal(xp.unique_values(x), np.unique_values(x))
    np.testing.assert_array_equal(xp.nonzero(x)[0], np.nonzero(x)[0])
    matrix = np.array([[2.0, 1.0], [1.0, 3.0]])
    assert xp.linalg.det(matrix) == pytest.approx(np.linalg.det(matrix))


def test_strict_raises_the_refusal_with_its_reason(strict):
    with pytest.raises(UnsupportedError, match="np.unique_values .*data-dependent shape"):
        xp.unique_values(np.array([3, 1, 3]))
    with pytest.raises(UnsupportedError, match="np.nonzero .*data-dependent shape"):
        xp.nonzero(np.array([3, 0, 3]))
    with pytest.raises(UnsupportedError, match="np.repeat with traced repeats"):
        xp.repeat(np.arange(3), np.array([1, 2, 0]))
    np.testing.assert_array_equal(xp.repeat(np.arange(3), 2), np.repeat(np.arange(3), 2))


def test_numpys_errors_are_raised_in_both_modes(strict):
    with pytest.raises(ValueError, match="at least 2-dimensional"):
        xp.matrix_transpose(np.arange(3))
    with pytest.raises(ValueError, match="axis"):
        xp.cumulative_sum(np.ones((2, 2)))


def test_asarray_of_arrays_is_compiled_with_numpys_copies(strict):
    x = np.arange(3.0)
    assert xp.asarray(x) is x
    copied = xp.asarray(x, copy=True)
    assert copied is not x and np.array_equal(copied, x)
    assert xp.asarray(x, dtype=np.float32).dtype == np.float32
    with pytest.raises(ValueError, match="Unable to avoid copy"):
        xp.asarray(x, dtype=np.float32, copy=False)
    items = [np.bool_(True), np.bool_(False)]
    np.testing.assert_array_equal(xp.asarray([items], dtype=np.bool_), np.asarray([items]))


def test_vecdot_is_numpys_gufunc(strict):
    a, b = np.arange(6.0).reshape(2, 3), np.array([1.0, -1.0, 2.0])
    np.testing.assert_array_equal(xp.vecdot(a, b), np.vecdot(a, b))
    z = np.array([1 + 1j, 2 - 1j])
    assert xp.vecdot(z, z) == np.vecdot(z, z)
    assert xp.vecdot(np.array([True, False]), np.array([True, True])) is np.True_


def test_astype_without_a_copy_returns_the_array_itself():
    x = np.arange(3.0)
    assert xp.astype(x, np.float64, copy=False) is x
    copied = xp.astype(x, np.float64)
    assert copied is not x and np.array_equal(copied, x)


@pytest.mark.parametrize("name", ["exp", "cosh", "sinh", "tanh", "log", "sqrt", "acos", "acosh",
                                  "asinh", "atanh"])
def test_complex_special_values_are_numpys(name):
    parts = [0.0, -0.0, 1.0, 1e300, np.inf, -np.inf, np.nan]
    z = np.array([complex(re, im) for re in parts for im in parts])
    with np.errstate(all="ignore"):
        got, want = getattr(xp, name)(z), getattr(np, name)(z)
    for g, w in ((got.real, want.real), (got.imag, want.imag)):
        np.testing.assert_array_equal(np.isnan(g), np.isnan(w))
        np.testing.assert_allclose(g[~np.isnan(w)], w[~np.isnan(w)], rtol=1e-12)
        np.testing.assert_array_equal(np.signbit(g[w == 0]), np.signbit(w[w == 0]))
