"""Loops whose passes are independent run as one batched computation, with plain Python's
results bit for bit (a float sum still adds in pass order); loops whose passes depend on each
other stay sequential, and the report says which is which and why, at the loop's line."""
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from psc_jit.core import jit
from psc_jit.core.primitives import while_loop_p

sys.path.insert(0, __file__.rsplit("/control/", 1)[0] + "/numpy")
from numpy_compare import compare  # noqa: E402

pytestmark = pytest.mark.xla

DTYPES = [np.float64, np.float32, np.int64, np.int32, np.uint8, np.complex128]


# -- loops whose passes are independent --------------------------------------------------------

def rows_written(x):
    out = np.zeros_like(x)
    for i in range(x.shape[0]):
        out[i] = (x[i] + 3) * x[i]
    return out


def scalar_sum(x):
    acc = 0.0
    for i in range(x.shape[0]):
        acc += x[i] - 1     # (a product would do: XLA:CPU may fuse it into the add, even in
    return acc              # a sequential loop: a * b + c rounded once, not twice)


def integer_sum(x):
    acc = 0
    for i in range(x.shape[0]):
        acc += x[i]
    return acc


def largest(x):
    best = x[0]
    for i in range(1, x.shape[0]):
        best = np.maximum(best, x[i] * 2)
    return best


def vector_sum(X):
    total = np.zeros(X.shape[1], X.dtype)
    for i in range(X.shape[0]):
        total = total + np.sqrt(X[i])
    return total


def rows_of_a_matrix(X):
    out = np.empty_like(X)
    for i in range(X.shape[0]):
        row = X[i]
        out[i] = (row + row.max()) * row
    return out


def columns_written(X):
    out = np.zeros(X.shape[::-1], X.dtype)
    for j in range(X.shape[0]):
        out[:, j] = X[j] + 1
    return out


def reversed_rows(x):
    out = np.zeros_like(x)
    for i in range(x.shape[0] - 1, -1, -1):
        out[i] = x[i] * x[i]
    return out


def own_row_updated(A):
    for i in range(A.shape[0]):
        A[i] = A[i] * 2
    return A


def shifted_rows(x):
    out = np.zeros(x.shape[0] + 1, x.dtype)
    for i in range(x.shape[0]):
        out[i + 1] = x[i] * 2
    return out


def read_before_written(x):
    for i in range(x.shape[0] - 1):
        x[i] = x[i + 1] * 0.5         # x[i + 1] is written by a later pass: read before it
    return x


def last_row_read(A):
    for i in range(A.shape[0]):
        A[i] = A[i] + A[-1]           # A[-1] is written by the last pass
    return A


def read_before_written_backwards(x):
    for i in range(x.shape[0] - 1, 0, -1):
        x[i] = x[i - 1] - 2           # x[i - 1] is written by a later pass of this loop
    return x


def transposed(X):
    out = np.zeros(X.shape[::-1], X.dtype)
    for i in range(X.shape[1]):
        out[i] = X[:, i] * 2
    return out


INDEPENDENT = [read_before_written_backwards, transposed, rows_written, scalar_sum, integer_sum, vector_sum, rows_of_a_matrix,
               columns_written, reversed_rows, shifted_rows, read_before_written,
               last_row_read]


def notes(f, *args) -> list[str]:
    return list(jit(f).lower(*args).compile().notes)


def vectorised(f, *args) -> bool:
    found = notes(f, *args)
    return any("vectorised" in n for n in found)


def arrays(dtype, shape, seed=0):
    values = np.random.default_rng(seed).integers(1, 9, shape)
    return values.astype(dtype) / (3 if np.dtype(dtype).kind in "fc" else 1)


@settings(max_examples=80, deadline=None)
@given(passes=st.sampled_from([0, 1, 2, 17, 40]), dtype=st.sampled_from(DTYPES),
       f=st.sampled_from(INDEPENDENT))
def test_independent_passes_give_plain_pythons_results_bit_for_bit(passes, dtype, f):
    matrices = (vector_sum, rows_of_a_matrix, columns_written, last_row_read, transposed)
    shape = (passes, 3) if f in matrices else (passes,)
    if f is rows_of_a_matrix and passes == 0:
        return                                   # row.max() of no rows: NumPy raises too
    compare(f, arrays(dtype, shape))


@pytest.mark.parametrize("f, shape", [(rows_written, (50,)), (scalar_sum, (50,)),
                                      (integer_sum, (50,)), (vector_sum, (50, 3)),
                                      (rows_of_a_matrix, (50, 4)), (columns_written, (50, 3)),
                                      (reversed_rows, (50,)), (shifted_rows, (50,)),
                                      (own_row_updated, (50, 3)), (largest, (50,)),
                                      (read_before_written, (50,)), (last_row_read, (50, 3)),
                                      (read_before_written_backwards, (50,)),
                                      (transposed, (4, 50))])
def test_a_loop_of_independent_passes_is_vectorised(f, shape):
    x = arrays(np.float64, shape)
    compare(f, x)
    assert vectorised(f, x), notes(f, x)


def test_a_float_sum_adds_in_pass_order():
    """Only the order of the passes gives plain Python's 0.0 + 1e16 + 1.0 - 1e16 + 1.0 ...
    (each 1.0 after a 1e16 is lost, each one after a 0.0 kept); pairs or halves summed first
    give another total."""
    x = np.array([1e16, 1.0, -1e16, 1.0, 1.0, 1e16, -1e16, 1.0] * 25)
    assert np.sum(x) != integer_sum(x)
    compare(integer_sum, x)
    assert vectorised(integer_sum, x)


@pytest.mark.filterwarnings("ignore:overflow encountered")     # plain NumPy's, on int8
def test_integer_sums_wrap_around_as_numpy_does():
    x = np.full(300, 100, np.int8)
    compare(integer_sum, x)


# -- loops whose passes depend on each other ---------------------------------------------------

def prefix(x):
    y = np.zeros_like(x)
    y[0] = x[0]
    for i in range(1, x.shape[0]):
        y[i] = y[i - 1] + x[i]
    return y


def backwards(x):
    for i in range(x.shape[0] - 2, -1, -1):
        x[i] = x[i + 1] * 0.5
    return x


def running_total(x):
    s = 0.0
    out = np.zeros_like(x)
    for i in range(x.shape[0]):
        s += x[i]
        out[i] = s
    return out


def whole_array_read(x):
    out = np.zeros_like(x)
    for i in range(x.shape[0]):
        out[i] = out.max() + x[i]
    return out


def every_second(x):
    out = np.zeros_like(x)
    for i in range(0, x.shape[0], 2):
        out[i] = x[i] * 2
    return out


def first_row_read(A):
    for i in range(A.shape[0]):
        A[i] = A[i] + A[0]
    return A


@pytest.mark.parametrize("f, shape, reason", [
    (prefix, (30,), "pass i reads `y[i - 1]`, written by pass i - 1"),
    (backwards, (30,), "pass i reads `x[i + 1]`, written by pass i + 1"),
    (running_total, (30,), "pass i uses `s` as the pass before left it"),
    (whole_array_read, (30,), "pass i reads `out` beyond its own row"),
    (every_second, (30,), "more than one row a pass or rows apart"),
    (first_row_read, (5, 3), "pass i reads `A[0]`, written by pass 0"),
])
def test_dependent_passes_stay_sequential_and_say_why(f, shape, reason):
    x = arrays(np.float64, shape)
    compare(f, x)
    found = notes(f, x)
    assert any(reason in n and "sequential loop" in n for n in found), found
    assert any(e.prim is while_loop_p for e in jit(f).trace(x).graph.eqns)


@settings(max_examples=15, deadline=None)
@given(passes=st.sampled_from([0, 1, 2, 20]), dtype=st.sampled_from(DTYPES),
       f=st.sampled_from([prefix, backwards, running_total, first_row_read]))
def test_dependent_passes_give_plain_pythons_results(passes, dtype, f):
    shape = (passes, 2) if f is first_row_read else (max(passes, 1),)
    compare(f, arrays(dtype, shape))


# -- nests -------------------------------------------------------------------------------------

def rows_from_the_row_before(A):
    for i in range(1, A.shape[0]):
        for j in range(A.shape[1]):
            A[i, j] = A[i - 1, j] * 0.5 + j
    return A


def test_a_nest_vectorises_its_inner_loop_and_keeps_the_outer_sequential():
    A = arrays(np.float64, (6, 5))
    compare(rows_from_the_row_before, A)
    found = notes(rows_from_the_row_before, A)
    assert any("vectorised" in n and n.startswith("line ") for n in found), found
    assert any("sequential loop" in n for n in found), found
    graph = jit(rows_from_the_row_before).trace(A).graph
    outer = [e for e in graph.eqns if e.prim is while_loop_p]
    assert len(outer) == 1
    assert not any(e.prim is while_loop_p for e in outer[0].params["body_graph"].eqns)


@settings(max_examples=10, deadline=None)
@given(rows=st.sampled_from([0, 1, 2, 5]), cols=st.sampled_from([0, 1, 4]),
       dtype=st.sampled_from([np.float64, np.float32, np.int64]))
def test_a_nest_gives_plain_pythons_results(rows, cols, dtype):
    compare(rows_from_the_row_before, arrays(dtype, (rows, cols)))


def wide_rows(X):
    out = np.empty_like(X)
    for i in range(X.shape[0]):
        out[i] = np.sqrt(X[i])
    return out


def test_a_loop_whose_passes_are_already_large_stays_sequential():
    X = arrays(np.float64, (6, 2000))
    compare(wide_rows, X)
    assert any("a pass already works on 2,000 elements" in n for n in notes(wide_rows, X))
    assert vectorised(wide_rows, X[:, :100])
