"""Statistics of a boolean-mask selection made anew in every pass of a rolled loop
(`data[(r1 <= radius) & (radius < r2)].mean()`, bench/loops.py's azimint_naive): NumPy's
values and dtypes for every loop bound and dtype, an empty selection's mean a NaN as NumPy's;
and each masked sum computed in one pass over the data with its count, the selection never
written to memory (it was, twice for a mean, and the kernel ran at 0.6x NumPy)."""
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
    totals = np.zeros(npt, dtype=np.sum(data[:0]).dtype)
    for i in range(npt):
        inside = (radius >= i) & (radius < i + 1)
        out[i, 0] = data[inside].var()
        out[i, 1] = np.std(data[inside], ddof=1)
        out[i, 2] = data[inside].mean(dtype=np.float64)
        totals[i] = data[inside].sum()
    return out, totals


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
def test_var_std_mean_and_sum_per_pass_are_numpys(npt, dtype, seed):
    data = _data(40, dtype, seed)
    radius = np.random.default_rng(seed + 20).random(40) * 5     # bin 4 is empty
    (want, want_totals) = _quietly(binned_spread, data, radius, npt)
    (got, got_totals) = _quietly(jit(binned_spread), data, radius, npt)
    assert got.dtype == want.dtype and got.shape == want.shape
    # (float16: psc_jit's std rounds its variance to float16 before the root, NumPy's not)
    rtol = 2e-3 if dtype == np.float16 else 1e-12
    np.testing.assert_allclose(got, want, rtol=rtol, equal_nan=True)
    assert got_totals.dtype == want_totals.dtype
    np.testing.assert_array_equal(got_totals, want_totals)     # sums of small integers


STATISTICS = {"mean": lambda s: s.mean(), "sum": lambda s: s.sum(),
              "var": lambda s: np.var(s, ddof=1)}


@pytest.mark.parametrize("statistic", sorted(STATISTICS))
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64])
def test_a_masked_statistic_writes_no_array_of_the_data_size(statistic, dtype):
    """XLA:CPU writes a lone sum's computed operand to memory before summing it: each masked
    sum is one reduction with its count, which computes both on the fly (the mask, used by
    the variance's two sums, is the one array of the data's length it may write)."""
    n = 4096
    data, radius = _data(n, dtype, 1), np.random.default_rng(2).random(n)
    reduce = STATISTICS[statistic]

    def masked(data, radius):
        return reduce(data[(radius >= 0.25) & (radius < 0.5)])
    compiled = jit(masked).lower(data, radius).compile()
    written = [k.shape for k in compiled.kernels.all_kernels()
               if f"[{n}]" in k.shape and not k.shape.startswith("pred")]
    assert written == []
    want = masked(data, radius)
    got = jit(masked)(data, radius)
    assert got.dtype == want.dtype and got == pytest.approx(want, rel=1e-12)
