"""An array times a slice whose length depends on the loop index, the slice on the right
(`data[:, i] @ data[:, i:M]`, the covariance kernel's loop over column pairs): the loop rolls
(it used to be refused, then unrolled, and an 80-column covariance compiled for 36 s), with
NumPy's values and dtypes for every loop bound and dtype."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from psc_jit import jit

pytestmark = pytest.mark.xla

DTYPES = [np.float64, np.float32, np.int64, np.complex128]


def covariance(M, float_n, data):
    mean = np.mean(data, axis=0)
    data -= mean
    cov = np.zeros((M, M), dtype=data.dtype)
    for i in range(M):
        cov[i:M, i] = cov[i, i:M] = data[:, i] @ data[:, i:M] / (float_n - 1.0)
    return cov


def vector_times_window(x, A, start):
    out = np.zeros((A.shape[1], A.shape[1]), dtype=np.result_type(x, A))
    for i in range(start, A.shape[1]):
        out[i, i:] = x @ A[:, i:]
        out[:i, i] = A[:i, :i] @ x[:i] if A.shape[0] == A.shape[1] else out[:i, i]
    return out


def matrix_times_window(A, start):
    out = np.zeros(A.shape, dtype=A.dtype)
    for i in range(start, A.shape[1]):
        out[:, i:] += A @ A[:, i:]
        out[:i, i] = A[:i, :] @ A[:, i]
    return out


def _data(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    values = rng.integers(-4, 5, shape)
    if np.dtype(dtype).kind == "c":
        values = values + 1j * rng.integers(-4, 5, shape)
    return values.astype(dtype)


def _rolled(jitted, *args) -> bool:
    return any(e.prim.name == "while_loop" for e in jitted.trace(*args).graph.all_eqns())


def _assert_same(got, want):
    """Equal up to the rounding of the sums behind each element: relative to the largest
    element (an entry the sum cancels to near zero carries the error of its terms)."""
    assert got.dtype == want.dtype
    tol = 1e-6 if got.dtype == np.float32 else 1e-13
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol * float(np.abs(want).max(initial=0)))


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.complex128],
                         ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("M", [1, 2, 7])
def test_covariance_with_a_loop_over_column_pairs_rolls(M, dtype):
    data = _data((9, M), dtype)
    jitted = jit(covariance)
    _assert_same(jitted(M, 8.0, data.copy()), covariance(M, 8.0, data.copy()))
    assert _rolled(jitted, M, 8.0, data.copy()) or M == 1     # one pass runs as written


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@settings(max_examples=5, deadline=None)
@given(start=st.sampled_from([0, 3, 4, 5]))
def test_a_vector_times_a_window_on_its_right(dtype, start):
    x, A = _data(5, dtype, 1), _data((5, 5), dtype, 2)
    jitted = jit(vector_times_window)
    _assert_same(jitted(x, A, np.int64(start)), vector_times_window(x, A, start))
    assert _rolled(jitted, x, A, np.int64(start))


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("start", [0, 3, 4])
def test_a_matrix_times_a_window_either_side(dtype, start):
    A = _data((4, 4), dtype, 3)
    jitted = jit(matrix_times_window)
    _assert_same(jitted(A, np.int64(start)), matrix_times_window(A, start))


def test_the_compile_bound_holds_the_covariance_loop_rolled_and_refuses_it_unrolled():
    """No first call waits more than Budget.max_compile_seconds (10 s) for XLA: rolled, the
    80-column covariance is estimated well under it; unrolled (80 products of 80 shapes,
    which took 36 s), it is refused before XLA is asked, naming the line."""
    from psc_jit.core import budget
    from psc_jit.core.compile.estimate import estimate_compile_seconds
    from psc_jit.core.tracing import BudgetExceeded
    assert budget.current().max_compile_seconds == 10.0
    data = _data((100, 80), np.float64)
    rolled = jit(covariance).trace(80, 99.0, data.copy()).graph
    assert estimate_compile_seconds(rolled) < 2.0
    with pytest.raises(BudgetExceeded, match="Budget.max_compile_seconds") as info:
        jit(covariance, roll=False)(80, 99.0, data.copy())
    assert "cov[i:M, i] = cov[i, i:M]" in str(info.value)
