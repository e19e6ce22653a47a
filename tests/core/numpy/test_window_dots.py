"""Dot products over slices whose length is the loop index (`L[i, :i] @ x[:i]`, forward and
back substitution, products of rows and columns): NumPy's values and dtypes for every
loop bound and dtype; and a pass that multiplies the slice alone, read in place out of the
matrix (it multiplied the whole row behind a mask, a copy of the row first: forward
substitution over 2000 rows ran at 0.7x NumPy)."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from psc_jit import jit

pytestmark = pytest.mark.xla

DTYPES = [np.float64, np.float32, np.int64, np.complex128]
SIZES = [0, 1, 5, 150]          # 150: longer than two of window_dot's chunks


def forward(L, x, b):
    for i in range(x.shape[0]):
        x[i] = (b[i] - L[i, :i] @ x[:i]) / L[i, i]


def backward(U, b):
    x = np.zeros_like(b)
    for i in range(b.shape[0] - 1, -1, -1):
        x[i] = (b[i] - np.dot(U[i, i + 1:], x[i + 1:])) / U[i, i]
    return x


def transposed_backward(L, b):
    """Solves L.T x = b: a pass reads a column of L."""
    x = np.zeros_like(b)
    for i in range(b.shape[0] - 1, -1, -1):
        x[i] = (b[i] - L[i + 1:, i] @ x[i + 1:]) / L[i, i]
    return x


def row_times_column(A):
    out = np.zeros_like(A)
    for i in range(A.shape[0]):
        for j in range(A.shape[0]):
            out[i, j] = A[i, :j] @ A[:j, i]
    return out


def prefix_products(u, v):
    out = np.zeros(u.shape[0] + 1, dtype=np.result_type(u, v))
    for i in range(u.shape[0] + 1):
        out[i] = u[:i] @ v[:i] + v[i // 2:] @ u[i // 2:]
    return out


def _matrix(n, dtype, seed):
    """Diagonally dominant, of small integers: divisions stay tame in every dtype."""
    rng = np.random.default_rng(seed)
    values = rng.integers(-3, 4, (n, n)) + 8 * n * np.eye(n, dtype=np.int64)
    if np.dtype(dtype).kind == "c":
        values = values + 1j * rng.integers(-3, 4, (n, n))
    return values.astype(dtype)


def _vector(n, dtype, seed):
    return _matrix(n + 1, dtype, seed)[0, 1:].copy()


def _assert_close(got, want):
    assert got.dtype == want.dtype and got.shape == want.shape
    rtol = 1e-4 if want.dtype in (np.float32, np.complex64) else 1e-11
    np.testing.assert_allclose(got, want, rtol=rtol)


@settings(max_examples=16, deadline=None)
@given(n=st.sampled_from(SIZES), dtype=st.sampled_from([np.float64, np.float32, np.complex128]),
       seed=st.integers(0, 3))
def test_substitutions_forward_and_backward_are_numpys(n, dtype, seed):
    L, b = _matrix(n, dtype, seed), _vector(n, dtype, seed + 1)
    x_want, x_got = np.zeros_like(b), np.zeros_like(b)
    forward(np.tril(L), x_want, b)
    jit(forward)(np.tril(L), x_got, b)
    _assert_close(x_got, x_want)
    _assert_close(jit(backward)(np.triu(L), b), backward(np.triu(L), b))


@settings(max_examples=12, deadline=None)
@given(n=st.sampled_from([0, 1, 5, 40]), dtype=st.sampled_from(DTYPES), seed=st.integers(0, 3))
def test_products_of_rows_and_columns_of_matrices_are_numpys(n, dtype, seed):
    A, b = _matrix(n, dtype, seed), _vector(n, dtype, seed + 1)
    _assert_close(jit(transposed_backward)(A, b), transposed_backward(A, b))
    _assert_close(jit(row_times_column)(A), row_times_column(A))


@settings(max_examples=16, deadline=None)
@given(n=st.sampled_from(SIZES), dtype=st.sampled_from(DTYPES), seed=st.integers(0, 3))
def test_products_of_prefixes_and_suffixes_of_vectors_are_numpys(n, dtype, seed):
    u, v = _vector(n, dtype, seed), _vector(n, dtype, seed + 1)
    _assert_close(jit(prefix_products)(u, v), prefix_products(u, v))


def test_a_pass_multiplies_its_slice_alone_read_in_place():
    """No kernel of the compiled substitution multiplies or masks a whole row (the one of
    the row's length writes x[i]): each pass reads chunks of the row out of the matrix."""
    n = 300
    L, b = _matrix(n, np.float64, 0), _vector(n, np.float64, 1)
    compiled = jit(forward).lower(np.tril(L), np.zeros(n), b).compile()
    whole_rows = [k.name for k in compiled.kernels.all_kernels() if k.shape == f"f64[{n}]"
                  and {"multiply", "select"} & set(k.fused_ops)]
    assert whole_rows == []
