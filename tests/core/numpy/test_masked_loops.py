"""Statistics of a boolean-mask selection made anew in every pass of a rolled loop
(`data[(r1 <= radius) & (radius < r2)].mean()`, bench/loops.py's azimint_naive): NumPy's
values and dtypes for every loop bound and dtype, an empty selection's mean a NaN as NumPy's;
and the mean computed in one pass over the data, its sum and its count together, the
selection never written to memory (it was, twice, and the kernel ran at 0.6x NumPy)."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from psc_jit import jit

pytestmark = pytest.mark.xla

DTYPES = [np.float64, np.float32, np.float16, np.int32, np.uint8, np.bool_, np.complex128]


def binned_means(data, radius, edges):
    res = np.zeros(edges.size - 1, dtype=np.float64)
    for i in range(edges.size - 1):
        res[i] = data[(edges[i] <= radius) & (radius < edges[i + 1])].mean()
    return res


def binned_spread(data, radius, npt):
    out = np.zeros((npt, 3))
    for i in range(npt):
        inside = (radius >= i) & (radius < i + 1)
        out[i, 0] = data[inside].var()
        out[i, 1] = np.std(data[inside], ddof=1)
        out[i, 2] = data[inside].mean(dtype=np.float64)
    return out


def _data(n, dtype, seed):
    """Small integers: every sum of them is exact, so the mean is NumPy's bit for bit."""
    rng = np.random.default_rng(seed)
    values = rng.integers(0 if dtype in (np.uint8, np.bool_) else -4, 5, n)
    if np.dtype(dtype).kind == "c":
        values = values + 1j * rng.integers(-4, 5, n)
    return values.astype(dtype)


def _quietly(f, *args):
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)
        return f(*args)


@settings(max_examples=12, deadline=None)
@given(npt=st.sampled_from([0, 1, 7]), dtype=st.sampled_from(DTYPES),
       n=st.sampled_from([1, 5, 300]), seed=st.integers(0, 3))
def test_a_mean_per_pass_of_a_selection_made_per_pass_is_numpys(npt, dtype, n, seed):
    data = _data(n, dtype, seed)
    radius = np.random.default_rng(seed + 10).random(n) * 3
    edges = np.linspace(0.0, 3.0, npt + 1)
    want = _quietly(binned_means, data, radius, edges)
    got = _quietly(jit(binned_means), data, radius, edges)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)         # an empty bin: NaN in both


@settings(max_examples=12, deadline=None)
@given(npt=st.sampled_from([0, 1, 4]), dtype=st.sampled_from(DTYPES),
       seed=st.integers(0, 3))
def test_var_std_and_mean_per_pass_are_numpys(npt, dtype, seed):
    data = _data(40, dtype, seed)
    radius = np.random.default_rng(seed + 20).random(40) * 5     # bin 4 is empty
    want = _quietly(binned_spread, data, radius, npt)
    got = _quietly(jit(binned_spread), data, radius, npt)
    assert got.dtype == want.dtype and got.shape == want.shape
    # (float16: psc_jit's std rounds its variance to float16 before the root, NumPy's not)
    rtol = 2e-3 if dtype == np.float16 else 1e-12
    np.testing.assert_allclose(got, want, rtol=rtol, equal_nan=True)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64])
def test_a_masked_mean_is_one_pass_that_writes_nothing_of_the_data_size(dtype):
    """XLA:CPU writes a lone sum's computed operand to memory before summing it: the masked
    sum and the count of one mean are one reduction, which computes both on the fly."""
    n = 4096
    data, radius = _data(n, dtype, 1), np.random.default_rng(2).random(n)

    def masked_mean(data, radius):
        return data[(radius >= 0.25) & (radius < 0.5)].mean()
    compiled = jit(masked_mean).lower(data, radius).compile()
    written = [k.name for k in compiled.kernels.all_kernels() if f"[{n}]" in k.shape]
    assert written == []
    want = masked_mean(data, radius)
    got = jit(masked_mean)(data, radius)
    assert got.dtype == want.dtype and got == want
