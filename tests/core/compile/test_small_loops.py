"""A rolled loop whose pass touches under a MiB runs as one compiled function (XLA:CPU's
"small call", backend_options.py) instead of one runtime thunk per kernel per pass, and gives
plain Python's values for every loop bound (no pass, one, many) and dtype, nested loops that
read their outer index and the row written by the pass before included. A pass over a large
matrix keeps its thunks (XLA's threads, Eigen's products)."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from psc_jit import jit
from psc_jit.core.compile.backend_options import BACKEND_OPTIONS, with_backend_options

pytestmark = [pytest.mark.xla, pytest.mark.usefixtures("xla_loops")]   # XLA's loops

DTYPES = [np.float64, np.float32, np.int64, np.complex128]


def forward_substitution(L, b, stop):
    x = np.zeros_like(b)
    for i in range(stop):
        x[i] = (b[i] - L[i, :i] @ x[:i]) / L[i, i]
    return x


def cholesky_rows(A, stop):
    A = A.copy()
    for i in range(1, stop):
        for j in range(i):
            A[i, j] -= np.dot(A[i, :j], A[j, :j])
            A[i, j] /= A[j, j]
    return A


def triangle_max(T, stop):
    """A DP recurrence over a triangle: an inner loop reads its outer index and the row the
    outer pass before wrote."""
    T = T.copy()
    n = T.shape[0]
    for i in range(n - 1, n - 1 - stop, -1):
        for j in range(i + 1, n):
            T[i, j] = max(T[i, j], T[i + 1, j] + T[i, j - 1])
            for k in range(i + 1, j):
                T[i, j] = max(T[i, j], T[i, k] + T[k, j])
    return T


def _matrix(n, dtype, seed):
    rng = np.random.default_rng(seed)
    values = rng.integers(1, 6, (n, n))
    if np.dtype(dtype).kind == "c":
        values = values + 1j * rng.integers(-3, 4, (n, n))
    return (values + 4 * n * np.eye(n, dtype=int)).astype(dtype)


def _loop_kinds(compiled_text: str) -> list[str]:
    """For each while loop of an optimized module: `small call` when XLA emitted it as one
    function, else `thunks`."""
    calls = [line for line in compiled_text.splitlines() if " call(" in line]
    small = sum("xla_cpu_small_call" in line for line in calls)
    loops = compiled_text.count(" while(")
    return ["small call"] * small + ["thunks"] * (loops - small)


def test_the_serialized_options_carry_the_small_loop_threshold():
    from jaxlib import xla_client
    serialized = with_backend_options(xla_client.CompileOptions().SerializeAsString())
    parsed = xla_client.CompileOptions.ParseFromString(serialized).SerializeAsString()
    for key, value in BACKEND_OPTIONS:
        assert key.encode() in parsed and value.encode() in parsed


def test_a_loop_over_matrix_rows_runs_as_one_compiled_function():
    L, b = _matrix(300, np.float64, 1), np.arange(300.0)
    text = jit(forward_substitution).lower(L, b, 300).compile().as_text()
    kinds = _loop_kinds(text)       # the rows' loop, and window_dot's loop over chunks in it
    assert kinds and set(kinds) == {"small call"}


def test_a_pass_over_a_large_matrix_keeps_its_thunks():
    def power(A, x, passes):
        for _ in range(passes):
            x = A @ x
            x = x / np.abs(x).max()
        return x
    A, x = _matrix(600, np.float64, 2), np.ones(600)
    assert _loop_kinds(jit(power).lower(A, x, 5).compile().as_text()) == ["thunks"]
    np.testing.assert_allclose(jit(power)(A, x, 5), power(A, x, 5), rtol=1e-12)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@settings(max_examples=4, deadline=None)
@given(stop=st.sampled_from([0, 1, 2, 9]))
def test_forward_substitution_gives_numpys_values(dtype, stop):
    L, b = np.tril(_matrix(9, dtype, 3)), _matrix(9, dtype, 4)[0]
    got, want = jit(forward_substitution)(L, b, stop), forward_substitution(L, b, stop)
    assert got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=1e-5 if dtype == np.float32 else 1e-12)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@settings(max_examples=4, deadline=None)
@given(stop=st.sampled_from([0, 1, 2, 8]))
def test_a_nest_with_prefix_products_gives_numpys_values(dtype, stop):
    A = _matrix(8, dtype, 5)
    got, want = jit(cholesky_rows)(A, stop), cholesky_rows(A, stop)
    assert got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=1e-5 if dtype == np.float32 else 1e-12)


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.float64], ids=lambda d: np.dtype(d).name)
@settings(max_examples=4, deadline=None)
@given(stop=st.sampled_from([0, 1, 2, 7]))
def test_a_three_deep_dp_nest_gives_plain_pythons_values(dtype, stop):
    T = _matrix(8, dtype, 6) % 7
    got, want = jit(triangle_max)(T, stop), triangle_max(T, stop)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)
