"""np.add.at and np.subtract.at: unbuffered updates of the caller's array (a position named
twice gets every update, in order), NumPy's index forms and errors, and a refusal that says
why where NumPy would round after every update."""
import numpy as np
import pytest
from psc_jit.core import UnsupportedError, jit

from numpy_compare import compare, raises_like

pytestmark = pytest.mark.xla


def add_at(a, i, b):
    np.add.at(a, i, b)


def subtract_at(a, i, b):
    np.subtract.at(a, i, b)


@pytest.mark.parametrize("update, a, i, b", [
    (add_at, np.zeros(5), np.array([0, 0, 2, 4, 0]), np.array([1.0, 2.0, 3.0, 4.0, 5.0])),
    (add_at, np.zeros(5, np.int64), np.array([0, 0, 2, -1]), np.int64(3)),
    (add_at, np.zeros(4, np.float32), np.array([1, 1, 1]), np.float32(0.1)),
    (add_at, np.zeros(3, np.complex128), np.array([2, 2]), np.array([1j, 2.0])),
    (subtract_at, np.zeros(3, np.uint8), np.array([0, 0]), np.uint8(1)),
    (subtract_at, np.ones(3), np.array([0, 0, 1]), np.array([0.1, 0.2, 0.3])),
    (add_at, np.zeros(3), np.array([], np.int64), np.float64(1.0)),
], ids=["float-repeats", "int-negative-index", "float32", "complex", "uint8-wraps",
        "subtract-repeats", "no-index"])
def test_every_update_lands_in_the_callers_array(update, a, i, b):
    compare(update, a, i, b)


@pytest.mark.parametrize("update", [
    lambda a: np.add.at(a, (slice(None), [0, 0]), 1.0),
    lambda a: np.add.at(a, ([0, 1, 1], [1, 1, 1]), [1.0, 2.0, 3.0]),
    lambda a: np.add.at(a, 1, 10.0),
    lambda a: np.add.at(a, (slice(1, 3), 0), 10),
    lambda a: np.subtract.at(a, np.array([[0, 2], [2, 2]]), np.ones((2, 2, 3))),
], ids=["slice-and-repeats", "two-index-arrays", "int", "slice-int", "index-array-2d"])
def test_numpys_index_forms(update):
    compare(update, np.arange(12.0).reshape(3, 4)[:, :3].copy())


def test_a_histogram_by_add_at_in_a_cell_function():
    def counts(idx, weights):
        c = np.zeros(10)
        np.add.at(c, idx, weights)
        return c
    rng = np.random.default_rng(0)
    compare(counts, rng.integers(0, 10, 1000), rng.random(1000), close=True)


def test_an_index_out_of_bounds_raises_numpys_error():
    raises_like(add_at, np.zeros(3), np.array([0, 3]), np.float64(1.0))


@pytest.mark.parametrize("update, reason", [
    (lambda a, i: np.add.at(a, i, 1.5), "NumPy rounds to int64 after every update"),
    (lambda a, i: np.add.at(a.astype(np.float32), i, np.float64(1.5)), "rounds to float32"),
    (lambda a, i: np.maximum.at(a, i, 3), "np.maximum.at"),
], ids=["int-with-floats", "float32-with-float64", "maximum"])
def test_updates_numpy_rounds_differently_are_refused_with_the_reason(update, reason):
    with pytest.raises(UnsupportedError, match=reason):
        jit(update)(np.zeros(3, np.int64), np.array([0, 0]))
