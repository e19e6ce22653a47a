"""Selections by one traced mask used together (issue 30 §4), against NumPy: a mask computed
twice is one mask (`a[a > 0] = a[a > 0] ** -1.5`), and index arrays selected by a mask scatter
(`N[Xi[I], Yi[I]] = i + 1`): positions that repeat take NumPy's last value, unselected
indices out of range raise nothing, selected ones raise NumPy's IndexError; in rolled loops
of no pass, one and many, for each dtype."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy_compare import compare, raises_like, small_integers
from psc_jit.core import UnsupportedError, jit

pytestmark = pytest.mark.xla

DTYPES = [np.float64, np.float32, np.int64, np.int32, np.complex128]


# -- one mask computed twice --------------------------------------------------------------------

def power_of_positives(a):
    a[a > 0] = a[a > 0] ** -1.5
    return a


def mixed_of_one_mask(a, b):
    b[a != 0] = (a[a != 0] * 3 + b[a != 0]) // 2
    return a, b


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_a_mask_computed_twice_selects_like_numpy(dtype):
    compare(power_of_positives, small_integers(40, dtype, 1), close=True)


@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.float64])
def test_several_selections_of_one_recomputed_mask(dtype):
    compare(mixed_of_one_mask, small_integers(30, dtype, 2), small_integers(30, dtype, 3))


def test_two_different_masks_are_still_refused():
    def f(a):
        a[a > 0] = a[a < 0] * 2
        return a
    with pytest.raises(UnsupportedError, match="another mask"):
        jit(f)(small_integers(9, np.float64, 4))


# -- index arrays selected by a mask ------------------------------------------------------------

def label_cells(N, Xi, Yi, data, passes):
    for i in range(passes):
        I = data > i
        N[Xi[I], Yi[I]] = i + 1
    return N


def write_selected_values(x, idx, vals, m):
    x[idx[m]] = vals[m]
    return x


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@settings(max_examples=4, deadline=None)
@given(passes=st.sampled_from([0, 1, 2, 5]), seed=st.integers(0, 50))
def test_a_scatter_through_masked_index_arrays_labels_like_numpy(dtype, passes, seed):
    rng = np.random.default_rng(seed)
    Xi, Yi = rng.integers(-6, 6, 25), rng.integers(0, 5, 25)      # negative indices wrap
    compare(label_cells, np.zeros((6, 5), dtype), Xi, Yi, rng.random(25) * 5, passes)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@settings(max_examples=6, deadline=None)
@given(seed=st.integers(0, 100))
def test_repeated_positions_take_numpys_last_selected_value(dtype, seed):
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, 4, 12)                   # many repeats among 4 positions
    compare(write_selected_values, small_integers(4, dtype, seed), idx,
            small_integers(12, dtype, seed + 1), rng.random(12) > 0.5)


def test_an_unselected_index_out_of_range_raises_nothing():
    idx = np.array([0, 99, 2, -50])
    compare(write_selected_values, np.zeros(3), idx, np.arange(4.0),
            np.array([True, False, True, False]))


def test_a_selected_index_out_of_range_raises_numpys_index_error():
    raises_like(write_selected_values, np.zeros(3), np.array([0, 7, 1]), np.arange(3.0),
                np.array([True, True, False]))


@pytest.mark.parametrize("use, words", [
    (lambda x, i, m: x.__setitem__((i[m], 0), 1.0), "beside other indices"),
    (lambda x, i, m: x.__setitem__((i[m], i[~m]), 1.0), "beside other indices"),
    (lambda x, i, m: x.__setitem__((i[m], i[m]), np.ones(5)), "assigning an array"),
])
def test_other_mixes_are_refused_with_the_line(use, words):
    with pytest.raises(UnsupportedError, match=words):
        jit(use)(np.zeros((4, 4)), np.array([0, 1, 2, 3, 1]), np.array([1, 0, 1, 1, 0], bool))
