"""An integer slice of traced bounds used as an index (issue 30 §4): a CSR row's columns
`x[A_col[A_row[i]:A_row[i + 1]]]` (bench/loops.py's spmv was refused), against NumPy, for
matrices of no row, one row and many (empty rows among them), each dtype, negative columns
(wrapped as NumPy wraps them), and NumPy's IndexError for a column out of range inside the
row only."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy_compare import compare, raises_like, small_integers
from psc_jit.core import UnsupportedError, jit

pytestmark = pytest.mark.xla

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "bench"))
from loops import spmv  # noqa: E402  (the kernel as bench/loops.py runs it)


def row_maxima(A_row, A_col, x):
    out = np.zeros(A_row.size - 1, x.dtype)
    for i in range(A_row.size - 1):
        out[i] = (x[A_col[A_row[i]:A_row[i + 1]]] * 2).sum()
    return out


def _csr(rows, n, seed, col_dtype=np.int64):
    rng = np.random.default_rng(seed)
    counts = rng.integers(0, 4, rows)                     # empty rows among them
    A_row = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    A_col = rng.integers(-n, n, int(A_row[-1])).astype(col_dtype)
    return A_row, A_col


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64, np.complex128],
                         ids=lambda d: np.dtype(d).name)
@settings(max_examples=4, deadline=None)
@given(rows=st.sampled_from([0, 1, 2, 9]), seed=st.integers(0, 100))
def test_a_csr_product_row_by_row_gives_numpyssmall_integers(dtype, rows, seed):
    A_row, A_col = _csr(rows, 7, seed)
    compare(spmv, A_row, A_col, small_integers(A_col.size, dtype, seed), small_integers(7, dtype, seed + 1))


@pytest.mark.parametrize("col_dtype", [np.int32, np.int64, np.uint16])
@settings(max_examples=3, deadline=None)
@given(rows=st.sampled_from([0, 1, 8]))
def test_gathered_rows_reduce_like_numpy(col_dtype, rows):
    A_row, A_col = _csr(rows, 6, rows)
    if np.dtype(col_dtype).kind == "u":
        A_col = np.abs(A_col) % 6
    compare(row_maxima, A_row, A_col.astype(col_dtype), small_integers(6, np.int64, 3))


def test_the_row_loop_stays_one_xla_loop():
    A_row, A_col = _csr(50, 7, 1)
    graph = jit(spmv).trace(A_row, A_col, np.ones(A_col.size), np.ones(7)).graph
    assert [e.prim.name for e in graph.eqns].count("while_loop") == 1


def test_a_column_out_of_range_inside_the_row_raises_numpys_index_error():
    A_row, A_col = np.array([0, 2, 3]), np.array([0, 1, 9])
    raises_like(spmv, A_row, A_col, np.ones(3), np.ones(4))


def test_a_column_out_of_range_outside_every_row_raises_nothing():
    A_row, A_col = np.array([0, 1, 2]), np.array([0, 1, 99])       # 99 lies past the rows
    compare(spmv, A_row, A_col, np.ones(3), np.arange(4.0))


def test_indexing_by_a_window_of_floats_is_refused_with_numpys_error():
    def f(x, w, k):
        out = 0.0
        for i in range(k):
            out += x[w[:i]].sum()
        return out
    with pytest.raises(UnsupportedError, match="arrays used as indices must be of integer"):
        jit(f)(np.ones(4), np.ones(8), np.int64(2))


def test_indexing_along_another_axis_by_a_window_is_refused_with_the_line():
    def f(A, cols, k):
        out = 0.0
        for i in range(k):
            out += A[0, cols[:i]].sum()
        return out
    with pytest.raises(UnsupportedError, match="indexing an array"):
        jit(f)(np.ones((3, 4)), np.arange(4), np.int64(3))
