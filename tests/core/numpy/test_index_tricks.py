"""np.unravel_index, np.ravel_multi_index and np.isin, and np.rot90, np.dstack and
np.fill_diagonal: NumPy's results, NumPy's errors (an index outside the array raised by the
run, with NumPy's message), views that write through, and in-place fills of the caller's
array."""
import re

import numpy as np
import pytest
from psc_jit.core import jit
from psc_jit.core.numpy.index_tricks import COMPARED_AT_ONCE

from numpy_compare import compare, raises_like

pytestmark = pytest.mark.xla


@pytest.mark.parametrize("call, index", [
    (lambda i: np.unravel_index(i, (3, 4)), np.array([0, 5, 11])),
    (lambda i: np.unravel_index(i, (3, 4), order="F"), np.array([[0, 5], [11, 3]])),
    (lambda i: np.unravel_index(i, (2, 3, 4)), np.int64(23)),
    (lambda i: np.unravel_index(i, 12), np.int8(7)),
    (lambda i: np.unravel_index(i, (3, 4)), np.uint16(7)),
    (lambda i: np.unravel_index(i, ()), np.int64(0)),
    (lambda i: np.unravel_index(i, (3, 4)), np.array([], np.int64)),
], ids=["C", "F", "3-d-scalar", "int-shape", "uint16", "0-d-shape", "empty"])
def test_unravel_index_is_numpys(call, index):
    compare(call, index)


@pytest.mark.parametrize("index, shape", [
    (np.array([0, 12, 3]), (3, 4)), (np.array([0, -1, 3]), (3, 4)), (np.int64(12), (3, 4)),
    (np.array([1]), (3, 0)), (np.array([0.0, 1.0]), (3, 4)),
], ids=["past-the-end", "negative", "scalar", "empty-shape", "float-indices"])
def test_unravel_index_errors_are_numpys(index, shape):
    raises_like(lambda i: np.unravel_index(i, shape), index)


def test_an_index_out_of_bounds_is_named_and_nothing_is_written():
    def convert(i, out):
        out += 1
        return np.unravel_index(i, (3, 4))
    out = np.zeros(2)
    with pytest.raises(ValueError, match="index 15 is out of bounds for array with size 12"):
        jit(convert)(np.array([3, 15, -2]), out)
    assert not out.any()


@pytest.mark.parametrize("call", [
    lambda a, b: np.ravel_multi_index((a, b), (3, 4)),
    lambda a, b: np.ravel_multi_index((a, b), (3, 4), order="F"),
    lambda a, b: np.ravel_multi_index((a, b + 2), (3, 4), mode="wrap"),
    lambda a, b: np.ravel_multi_index((a - 2, b[:, None] + 3), (3, 4), mode=("clip", "wrap")),
    lambda a, b: np.ravel_multi_index(np.stack([a, b]), (3, 4)),
    lambda a, b: np.ravel_multi_index((a[0], b[1]), (3, 4)),
], ids=["C", "F", "wrap", "clip-wrap-broadcast", "array", "scalars"])
def test_ravel_multi_index_is_numpys(call):
    compare(call, np.array([0, 2, 1]), np.array([1, 3, 0]))


@pytest.mark.parametrize("call", [
    lambda a, b: np.ravel_multi_index((a, b + 1), (3, 4)),
    lambda a, b: np.ravel_multi_index((a,), (3, 4)),
    lambda a, b: np.ravel_multi_index((a, b), (3, 4), mode="bounce"),
    lambda a, b: np.ravel_multi_index((a * 1.0, b), (3, 4)),
], ids=["out-of-bounds", "too-few", "unknown-mode", "float"])
def test_ravel_multi_index_errors_are_numpys(call):
    raises_like(call, np.array([0, 2, 1]), np.array([1, 3, 0]))


X = np.array([1.0, np.nan, 3.0, -0.0, 7.0, 2.5])


@pytest.mark.parametrize("test_values", [
    np.array([[0.0, 3.0], [np.nan, 9.0]]),                  # compared with each
    np.r_[np.nan, np.arange(COMPARED_AT_ONCE + 40.0)],      # sorted and searched
    np.array([], np.float64),
], ids=["few", "many", "none"])
def test_isin_is_numpys_with_nan_and_signed_zero(test_values):
    compare(lambda x, t: (np.isin(x, t), np.isin(x, t, invert=True), np.isin(x[0], t),
                          np.isin(x.reshape(2, 3), t, kind="sort")), X, test_values)


@pytest.mark.parametrize("element, test_values", [
    (np.arange(12).reshape(3, 4), np.arange(0, 300, 3)),
    (np.array([True, False]), np.array([1, 2])),
    (np.array([1 + 1j, 2, 3j]), np.arange(COMPARED_AT_ONCE + 1) * 1j),
    (np.array([5, 300, -1], np.int16), np.array([44, 255, 5], np.uint8)),
], ids=["ints-many", "bool-in-ints", "complex-many", "mixed-dtypes"])
def test_isin_across_dtypes_is_numpys(element, test_values):
    compare(lambda x, t: np.isin(x, t), element, test_values)


def test_isin_refuses_a_table_of_floats_as_numpy_does():
    raises_like(lambda x, t: np.isin(x, t, kind="table"), X, X)


M = np.arange(24.0).reshape(2, 3, 4)


def test_rot90_is_numpys_for_every_turn_and_plane():
    compare(lambda m: (np.rot90(m), np.rot90(m, 2), np.rot90(m, -1, (1, 2)), np.rot90(m, 4),
                       np.rot90(m, 3, (2, 0)), np.rot90(m[0], 1)), M)


def test_rot90_is_a_view_that_writes_into_its_array():
    def write_through(m):
        r = np.rot90(m, 1, (1, 2))
        r[0, 0, 1] = -1.0
        return r
    compare(write_through, M.copy())


@pytest.mark.parametrize("axes", [(0, 0), (0, 3), (0, 1, 2), (0, -3)])
def test_rot90_errors_are_numpys(axes):
    raises_like(lambda m: np.rot90(m, 1, axes), M)


def test_dstack_is_numpys():
    compare(lambda a, b, c: (np.dstack([a, b]), np.dstack((c, c)), np.dstack([a[0], b[1]])),
            np.arange(3.0), np.arange(3, dtype=np.int32), np.ones((2, 3, 2), np.float32))


def _filled(a, value, wrap=False):
    np.fill_diagonal(a, value, wrap=wrap)


@pytest.mark.parametrize("a, value, wrap", [
    (np.zeros((4, 5)), np.float64(3.0), False),
    (np.zeros((5, 3)), np.array([1.0, 2.0]), False),
    (np.zeros((7, 3)), np.array([1.0, 2.0, 3.0]), True),
    (np.zeros((3, 3, 3), np.int32), np.array([7.9, 2.0]), False),
    (np.zeros((2, 2), np.complex64), np.array([[1j, 2.0], [3.0, 4.0]]), False),
], ids=["scalar", "repeated", "wrapped", "3-d-int", "matrix-of-values"])
def test_fill_diagonal_writes_the_callers_array_as_numpy_does(a, value, wrap):
    compare(lambda a, v: _filled(a, v, wrap), a, value)


@pytest.mark.parametrize("a", [np.zeros(4), np.zeros((3, 4, 3))], ids=["1-d", "unequal"])
def test_fill_diagonal_errors_are_numpys(a):
    raises_like(lambda a, v: _filled(a, v), a, np.float64(1.0))


@pytest.mark.parametrize("call, args", [
    (lambda a, b: np.lexsort((a, b)),
     (np.array([1.0, np.nan, 1.0, 0.0, -0.0, 0.0]), np.array([2, 1, 2, 1, 1, 1]))),
    (lambda a, b: np.lexsort(np.stack([a, b])), (np.array([3, 1, 2]), np.array([1, 1, 0]))),
    (lambda a, b: np.lexsort((a, b), axis=0), (np.array([[3, 1], [0, 2]]),
                                               np.array([[1, 1], [1, 0]]))),
    (lambda a, b: np.lexsort((a,)), (np.array([3, 1, 2]), None)),
    (lambda a, b: np.lexsort((a, b, a[::-1])),
     tuple(np.random.default_rng(0).integers(0, 3, (2, 50)))),
    (lambda a, b: np.lexsort((a, b)), (np.array([1j, 1, 1 + 1j]), np.array([0, 0, 0]))),
], ids=["nan-and-zeros", "2-d-keys", "axis-0", "one-key", "three-keys", "complex"])
def test_lexsort_is_numpys(call, args):
    compare(call, *args)


def test_lexsort_errors_are_numpys():
    raises_like(lambda a, b: np.lexsort((a, b)), np.zeros(3), np.zeros(4))
    raises_like(lambda a: np.lexsort(()), np.zeros(3))


@pytest.mark.parametrize("fn, fix", [(np.partition, "np.sort(a)"),
                                     (np.argpartition, "np.argsort(a)")])
def test_partitions_are_refused_with_the_sorted_alternative(fn, fix):
    from psc_jit.core import UnsupportedError
    with pytest.raises(UnsupportedError, match=f"selection algorithm.*use {re.escape(fix)}"):
        jit(lambda x: fn(x, 2))(np.arange(5.0))
