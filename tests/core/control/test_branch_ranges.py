"""A branch inside a rolled loop knows what the loop's index takes, as the loop's own body
does: `x[i + 1]` under `if` in `for i in range(n - 1)` needs no run-time index check (every
check is a pair of values carried through every loop and branch around it: nussinov's loop
nest carried 34 such pairs, 0.75 ms of its 1.2 ms), while an index that may leave the array
still raises NumPy's IndexError when the branch runs it, and not when it does not."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from psc_jit import jit

pytestmark = pytest.mark.xla


def next_where_positive(x):
    y = np.zeros_like(x)
    for i in range(x.shape[0] - 1):
        if x[i] > 0:
            y[i] = x[i + 1] * 2
    return y


def next_in_a_nest(T):
    T = T.copy()
    for i in range(T.shape[0] - 1):
        for j in range(i + 1, T.shape[1]):
            if T[i, j] > T[i + 1, j]:
                T[i, j] = T[i + 1, j - 1] + T[i, j]
    return T


def past_the_end_where_positive(x):
    y = np.zeros_like(x)
    for i in range(x.shape[0]):
        if x[i] > 0:
            y[i] = x[i + 1]
    return y


def _outputs(fn, *args) -> int:
    return len(jit(fn).trace(*args).graph.out_atoms)


@pytest.mark.parametrize("dtype", [np.float64, np.int32, np.int64], ids=lambda d: np.dtype(d).name)
@settings(max_examples=6, deadline=None)
@given(n=st.sampled_from([1, 2, 3, 8]), seed=st.integers(0, 3))
def test_branches_in_loops_give_numpys_values(dtype, n, seed):
    x = np.random.default_rng(seed).integers(-3, 4, n).astype(dtype)
    np.testing.assert_array_equal(jit(next_where_positive)(x), next_where_positive(x))
    T = np.random.default_rng(seed).integers(-3, 4, (n, n + 1)).astype(dtype)
    np.testing.assert_array_equal(jit(next_in_a_nest)(T), next_in_a_nest(T))


def test_an_index_the_loop_keeps_inside_needs_no_check_in_a_branch():
    assert _outputs(next_where_positive, np.ones(6)) == 1
    assert _outputs(next_in_a_nest, np.ones((5, 6))) == 1


def test_an_index_past_the_end_in_a_branch_raises_only_when_the_branch_runs_it():
    x = np.array([1.0, -1.0, 2.0, -3.0])
    np.testing.assert_array_equal(jit(past_the_end_where_positive)(x),
                                  past_the_end_where_positive(x))
    x[-1] = 3.0
    with pytest.raises(IndexError, match="index 4 is out of bounds for axis 0 with size 4"):
        past_the_end_where_positive(x)
    with pytest.raises(IndexError, match="index 4 is out of bounds for axis 0 with size 4"):
        jit(past_the_end_where_positive)(x)
