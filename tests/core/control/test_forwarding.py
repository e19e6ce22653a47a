"""A rolled loop that reads what the pass before wrote (`cp[i - 1]` after `cp[i] = ...`) takes
that value from a carried copy of the write, not from the array: the results are NumPy's, for
every loop bound (no pass, one, many) and dtype, and XLA no longer copies the whole array on
every pass to keep the read right (the Thomas algorithm ran 19 s on 100,000 elements; the
copies are checked in tests/core/frontend/test_rolling.py)."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from psc_jit import jit

pytestmark = pytest.mark.xla

DTYPES = [np.float64, np.float32, np.int32, np.int64, np.complex128]


def recurrence(x, start, stop):
    y = x.copy()
    for i in range(start, stop):
        y[i] = y[i - 1] + x[i]
    return y


def backward(x, start, stop):
    y = x.copy()
    for i in range(stop, start, -1):
        y[i - 1] = y[i] - x[i - 1]
    return y


def two_arrays(a, b, start, stop):
    cp = a.copy()
    dp = b.copy()
    for i in range(start, stop):
        m = b[i] - cp[i - 1]
        cp[i] = a[i] + m
        dp[i] = dp[i - 1] - m
    return cp, dp


def by_two(x, start, stop):
    y = x.copy()
    for i in range(start, stop, 2):
        y[i] = y[i - 2] + x[i]
    return y


def not_the_last_write(x, start, stop):
    """Reads two passes back and at its own index: neither is what the pass before wrote."""
    y = x.copy()
    for i in range(start, stop):
        y[i] = y[i - 2] + y[i] + x[i]
    return y


def rows(A, start, stop):
    A = A.copy()
    for i in range(start, stop):
        A[i] = A[i - 1] * 2 + A[i]
    return A


def two_writes(x, start, stop):
    y = x.copy()
    for i in range(start, stop):
        y[i] = y[i - 1] + x[i]
        y[i + 1] = y[i] - 1
    return y


KERNELS = [recurrence, backward, by_two, not_the_last_write, two_writes]


def _values(n, dtype, seed=0):
    rng = np.random.default_rng(seed)
    values = rng.integers(-5, 6, n)
    if np.dtype(dtype).kind == "c":
        return (values + 1j * rng.integers(-5, 6, n)).astype(dtype)
    return values.astype(dtype)


def _bounds(n, passes):
    start = np.int64(2)
    return start, np.int64(min(n - 1, start + passes))


@pytest.mark.parametrize("fn", KERNELS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@settings(max_examples=6, deadline=None)
@given(passes=st.sampled_from([0, 1, 2, 7]))
def test_reads_of_the_pass_before_give_numpys_values(fn, dtype, passes):
    x = _values(12, dtype)
    start, stop = _bounds(12, passes)
    got, want = jit(fn)(x, start, stop), fn(x, start, stop)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@settings(max_examples=4, deadline=None)
@given(passes=st.sampled_from([0, 1, 6]))
def test_two_arrays_read_at_the_index_before(dtype, passes):
    a, b = _values(10, dtype, 1), _values(10, dtype, 2)
    start, stop = _bounds(10, passes)
    for got, want in zip(jit(two_arrays)(a, b, start, stop), two_arrays(a, b, start, stop),
                         strict=True):
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("passes", [0, 1, 5])
def test_rows_read_from_the_row_before(passes):
    A = _values(24, np.float64).reshape(8, 3)
    start, stop = _bounds(8, passes)
    np.testing.assert_array_equal(jit(rows)(A, start, stop), rows(A, start, stop))


def test_an_inner_recurrence_reads_the_row_of_its_own_outer_pass():
    def table(M):
        for i in range(1, M.shape[0]):
            for j in range(1, M.shape[1]):
                M[i, j] = M[i, j - 1] + M[i - 1, j] + i
        return M
    want = table(np.ones((5, 4)))
    np.testing.assert_array_equal(jit(table)(np.ones((5, 4))), want)


# -- reads after a write of the same pass ------------------------------------------------------

def lower_rows(A, stop):
    """Cholesky's inner loop: A[i, j] written, read again, A[j, j] (j < i) read beside it."""
    A = A.copy()
    for i in range(1, stop):
        for j in range(i):
            A[i, j] -= A[i, :j] @ A[j, :j]
            A[i, j] /= A[j, j]
    return A


def maybe_the_same(x, k, stop):
    """x[k] may or may not be the element just written: read as it is."""
    y = x.copy()
    for i in range(stop):
        y[i] = y[i] * 2 + 1
        y[i] = y[k] + y[i]
    return y


def rows_apart(A, stop):
    A = A.copy()
    for i in range(1, stop):
        A[i] = A[i] + 1
        A[0] = A[0] + A[i]
        A[i] = A[i] - A[i - 1]
    return A


@pytest.mark.parametrize("dtype", [np.float64, np.int64, np.complex128],
                         ids=lambda d: np.dtype(d).name)
@settings(max_examples=4, deadline=None)
@given(stop=st.sampled_from([0, 1, 2, 6]))
def test_reads_after_a_write_of_the_pass_give_numpys_values(dtype, stop):
    A = _values(36, dtype, 3).reshape(6, 6) + 20 * np.eye(6, dtype=dtype)
    for fn in (lower_rows, rows_apart):
        got, want = jit(fn)(A, np.int64(stop)), fn(A, np.int64(stop))
        assert got.dtype == want.dtype
        np.testing.assert_allclose(got, want, rtol=1e-12)


@settings(max_examples=8, deadline=None)
@given(k=st.integers(0, 5), stop=st.sampled_from([0, 1, 3, 6]))
def test_a_read_that_may_be_the_element_written_reads_it(k, stop):
    x = _values(6, np.int64, 4)
    np.testing.assert_array_equal(jit(maybe_the_same)(x, np.int64(k), np.int64(stop)),
                                  maybe_the_same(x, k, stop))


def test_cholesky_row_by_row_reads_its_matrix_before_its_one_write():
    """The inner loop's body reads the array it carries and then writes it once: XLA writes
    it in place (the 200 x 200 Cholesky ran 1.3 s, copying the matrix twice a pass)."""
    def cholesky(A):
        A[0, 0] = np.sqrt(A[0, 0])
        for i in range(1, A.shape[0]):
            for j in range(i):
                A[i, j] -= np.dot(A[i, :j], A[j, :j])
                A[i, j] /= A[j, j]
            A[i, i] -= np.dot(A[i, :i], A[i, :i])
            A[i, i] = np.sqrt(A[i, i])
    g = np.random.default_rng(5).random((12, 12))
    spd = g @ g.T + 12 * np.eye(12)
    got, want = spd.copy(), spd.copy()
    jit(cholesky)(got)
    cholesky(want)
    np.testing.assert_allclose(got, want, rtol=1e-12)
    inner = _innermost_body(jit(cholesky).trace(spd.copy()).graph)
    writes = [e for e in inner.eqns if e.prim.name == "dynamic_update_slice"]
    assert len(writes) == 1
    written = writes[0].inputs[0]
    assert all(e.inputs[0] is written for e in inner.eqns if e.prim.name == "dynamic_slice"
               and e.inputs[0].aval.shape == (12, 12))


def _innermost_body(graph):
    for eqn in graph.eqns:
        if eqn.prim.name == "while_loop":
            return _innermost_body(eqn.params["body_graph"])
    return graph
