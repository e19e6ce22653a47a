"""np.flip of a slice whose length is the loop index (`np.flip(r[:k])`, the Levinson-Durbin
recursion): the loop rolls, with NumPy's values for every bound and dtype; writing into the
flipped slice, which NumPy makes through a view, is refused rather than lost."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from psc_jit import jit

pytestmark = pytest.mark.xla


def durbin(r):
    y = np.empty_like(r)
    alpha = -r[0]
    beta = 1.0
    y[0] = -r[0]
    for k in range(1, r.shape[0]):
        beta *= 1.0 - alpha * alpha
        alpha = -(r[k] + np.dot(np.flip(r[:k]), y[:k])) / beta
        y[:k] += alpha * np.flip(y[:k])
        y[k] = alpha
    return y


def flipped_pieces(x, lo):
    out = np.zeros((x.shape[0], x.shape[0]), dtype=x.dtype)
    for k in range(x.shape[0]):
        out[k, lo:k] = np.flip(x[lo:k]) * 2
        out[k, k:] += np.flip(x[k:])
    return out


def test_durbin_rolls_and_matches_numpy():
    r = np.random.default_rng(0).random(40) * 0.1
    jitted = jit(durbin)
    np.testing.assert_allclose(jitted(r), durbin(r), rtol=1e-12)
    assert any(e.prim.name == "while_loop" for e in jitted.trace(r).graph.eqns)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64, np.complex128],
                         ids=lambda d: np.dtype(d).name)
@settings(max_examples=5, deadline=None)
@given(lo=st.sampled_from([0, 1, 3, 6, 7]))
def test_flipped_slices_of_traced_bounds_are_numpys(dtype, lo):
    x = (np.arange(7) * 3 - 5).astype(dtype)
    got, want = jit(flipped_pieces)(x, np.int64(lo)), flipped_pieces(x, lo)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


def test_writing_into_a_flipped_slice_writes_the_array_as_numpy_does():
    """The flipped slice is no view here: the loop is not rolled with it (it is unrolled,
    where a flip is NumPy's view), and the array is written as NumPy writes it."""
    def write_flipped(x):
        for k in range(1, x.shape[0]):
            np.flip(x[:k])[...] = x[k] * 10 + k
        return x
    x = np.arange(5.0)
    np.testing.assert_array_equal(jit(write_flipped)(x.copy()), write_flipped(x.copy()))
