"""A reduction given out= and no dtype computes as NumPy's ufunc reduction does: in out's
dtype where the data casts to it safely (float32 summed into a float64 out is summed in
float64; int8 into int16 does not wrap at int8), else in its own and cast into out."""
import numpy as np
import pytest

from numpy_compare import compare

pytestmark = pytest.mark.xla


def sum_into(a, o):
    np.sum(a, out=o)


def sum_axis_into(a, o):
    np.sum(a, 0, out=o)


def prod_into(a, o):
    np.prod(a, out=o)


def mean_into(a, o):
    np.mean(a, out=o)


def cumsum_into(a, o):
    np.cumsum(a, out=o)


@pytest.mark.parametrize("reduce, a, out", [
    (sum_into, np.array([1e8, 1, -1e8], np.float32), np.zeros((), np.float64)),
    (sum_axis_into, np.array([[1e8], [1], [-1e8]], np.float32), np.zeros(1, np.float64)),
    (sum_into, np.array([100, 100], np.int8), np.zeros((), np.int16)),
    (sum_into, np.array([1.5, 2.5]), np.zeros((), np.int64)),
    (prod_into, np.array([1.5, 2.5]), np.zeros((), np.int64)),
    (prod_into, np.array([1e8, 1e8], np.float32), np.zeros((), np.complex128)),
    (mean_into, np.array([1e8, 1, -1e8], np.float32), np.zeros((), np.float64)),
    (mean_into, np.array([1, 2, 4], np.int8), np.zeros((), np.float32)),
    (cumsum_into, np.array([100, 100], np.int8), np.zeros(2, np.int16)),
], ids=["f32-into-f64", "axis-positional", "i8-into-i16", "f64-into-int", "prod-f64-into-int",
        "prod-f32-into-c128", "mean-f32-into-f64", "mean-int-into-f32", "cumsum-i8-into-i16"])
def test_the_reduction_runs_in_the_dtype_numpy_picks(reduce, a, out):
    compare(reduce, a, out)
