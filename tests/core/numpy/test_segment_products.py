"""Products over segments whose bounds are read from an array (issue 30 §4, numpy/segments.py):
a CSR row `A_val[A_row[i]:A_row[i + 1]] @ x[A_col[A_row[i]:A_row[i + 1]]]` runs as a loop
over the row alone, not as masked work over every nonzero on every row. Against NumPy for
0, 1 and many rows (empty rows among them), operand dtypes, segments that overlap or leave
gaps, np.dot, and NumPy's own errors."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy_compare import compare, raises_like, small_integers
from psc_jit.core import jit

pytestmark = pytest.mark.xla

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "bench"))
from loops import spmv  # noqa: E402  (the kernel as bench/loops.py runs it)


def spmv_dot(A_row, A_col, A_val, x):
    y = np.zeros(A_row.size - 1, np.result_type(A_val, x))
    for i in range(A_row.size - 1):
        y[i] = np.dot(A_val[A_row[i]:A_row[i + 1]], x[A_col[A_row[i]:A_row[i + 1]]])
    return y


def segment_dots(starts, stops, a, b):
    """a[lo:hi] @ b[lo:hi] for arbitrary (overlapping, empty, reversed) segments."""
    out = np.zeros(starts.size, np.result_type(a, b))
    for i in range(starts.size):
        out[i] = a[starts[i]:stops[i]] @ b[starts[i]:stops[i]]
    return out


def shifted_rows(A_row, A_col, A_val, x):
    """Each row's values against the next row's columns: lengths differ somewhere."""
    y = np.zeros(A_row.size - 2)
    for i in range(A_row.size - 2):
        y[i] = A_val[A_row[i]:A_row[i + 1]] @ x[A_col[A_row[i + 1]:A_row[i + 2]]]
    return y


def _csr(rows, n, seed):
    rng = np.random.default_rng(seed)
    counts = rng.integers(0, 5, rows)                     # empty rows among them
    A_row = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    return A_row, rng.integers(-n, n, int(A_row[-1])).astype(np.int64)


def _loop_body_sizes(graph) -> list[int]:
    """The element counts of every value the program's loops compute on a pass."""
    loops = [e for e in graph.all_eqns() if e.prim.name == "while_loop"]
    return [v.aval.size for loop in loops for e in loop.params["body_graph"].all_eqns()
            for v in e.outs]


@pytest.mark.parametrize("dtypes", [(np.float64, np.float64), (np.float32, np.float32),
                                    (np.int32, np.float64), (np.int64, np.int64),
                                    (np.complex128, np.float64), (np.bool_, np.bool_)],
                         ids=lambda d: "-".join(np.dtype(t).name for t in d))
@settings(max_examples=4, deadline=None)
@given(rows=st.sampled_from([0, 1, 2, 12]), seed=st.integers(0, 100))
def test_csr_rows_by_dot_and_matmul_give_numpys(dtypes, rows, seed):
    A_row, A_col = _csr(rows, 7, seed)
    A_val, x = (small_integers(A_col.size, dtypes[0], seed) % 2 if dtypes[0] is np.bool_ else
                small_integers(A_col.size, dtypes[0], seed)), small_integers(7, dtypes[1], seed)
    compare(spmv_dot, A_row, A_col, A_val.astype(dtypes[0]), x.astype(dtypes[1]))


@settings(max_examples=25, deadline=None)
@given(bounds=st.lists(st.tuples(st.integers(-12, 12), st.integers(-12, 12)), max_size=6),
       seed=st.integers(0, 100))
def test_segments_that_overlap_are_empty_or_count_from_the_end_give_numpys(bounds, seed):
    starts = np.array([b[0] for b in bounds], np.int64)
    stops = np.array([b[1] for b in bounds], np.int64)
    compare(segment_dots, starts, stops, small_integers(10, np.float64, seed),
            small_integers(10, np.int64, seed + 1))


def test_float_rows_are_summed_in_row_order():
    """The product of a row is the sum of its products in the row's order (as a sequential
    loop sums it); NumPy's BLAS may differ from it in the last bits only."""
    A_row, A_col = np.array([0, 3]), np.array([0, 1, 2])
    A_val, x = np.array([1e16, 1.0, -1e16]), np.ones(3)
    assert jit(spmv)(A_row, A_col, A_val, x)[0] == (1e16 + 1.0) - 1e16


def test_a_pass_works_on_its_row_not_on_every_nonzero():
    A_row, A_col = _csr(50, 7, 1)
    nnz = A_col.size
    graph = jit(spmv).trace(A_row, A_col, np.ones(nnz), np.ones(7)).graph
    assert nnz > 50 and max(_loop_body_sizes(graph)) <= 50      # y's row write, at most


def test_rows_of_different_lengths_raise_a_value_error():
    """NumPy's ValueError (its text names both lengths; the check carries one of them)."""
    A_row, A_col = np.array([0, 1, 3]), np.array([0, 1, 2])
    with pytest.raises(ValueError, match="matmul: Input operand 1 has a mismatch in its core"):
        shifted_rows(A_row, A_col, np.ones(3), np.ones(4))
    with pytest.raises(ValueError, match="matmul: Input operand 1 has a mismatch in its core"):
        jit(shifted_rows)(A_row, A_col, np.ones(3), np.ones(4))


def test_rows_of_one_length_multiply_across_rows():
    A_row, A_col = np.array([0, 2, 4]), np.array([0, 1, 2, 3])
    compare(shifted_rows, A_row, A_col, np.arange(4.0), np.arange(4.0))


def test_a_column_out_of_range_in_a_later_row_raises_numpys_index_error():
    A_row, A_col = np.array([0, 1, 2, 4]), np.array([0, 1, 2, -9])
    raises_like(spmv_dot, A_row, A_col, np.ones(4), np.ones(3))
