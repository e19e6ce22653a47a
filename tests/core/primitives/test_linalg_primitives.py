"""The linear-algebra and FFT primitives, compiled by XLA (LAPACK kernels, stablehlo.fft),
against their NumPy reference implementations, on random (stacks of) matrices of every dtype
they take. Results agree within a few rounding errors per matrix dimension; eigenvectors and
singular vectors, unique up to sign (or phase) only, are compared as |v|; an SVD's columns
beyond min(m, n) (a basis of a null space, any basis) are not compared; a factorization that
fails (not positive definite) is NaN on both sides."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from psc_jit.core.primitives import PRIMITIVES
from test_primitives import run

pytestmark = pytest.mark.xla

SETTINGS = settings(max_examples=15, deadline=None)
DTYPES = tuple(np.dtype(t) for t in ("float32", "float64", "complex64", "complex128"))
EPS = {np.dtype("float32"): 1e-6, np.dtype("float64"): 1e-15}


def close(got, want, dims: int, what: str) -> None:
    assert got.dtype == want.dtype and got.shape == want.shape, what
    real = np.real(np.zeros((), want.dtype)).dtype
    if want.dtype.kind in "biu":
        np.testing.assert_array_equal(got, want, err_msg=what)
        return
    tol = 50 * max(dims, 1) * EPS[real]
    scale = np.nanmax(np.abs(want)) if want.size and not np.all(np.isnan(want)) else 1.0
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol * max(scale, 1.0), equal_nan=True,
                               err_msg=what)


@st.composite
def matrices(draw, square=False, batch=True):
    dtype = draw(st.sampled_from(DTYPES))
    m = draw(st.integers(1, 5))
    n = m if square else draw(st.integers(1, 5))
    lead = draw(st.sampled_from([(), (2,), (2, 1)] if batch else [()]))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    x = rng.standard_normal(lead + (m, n))
    if dtype.kind == "c":
        x = x + 1j * rng.standard_normal(lead + (m, n))
    return x.astype(dtype)


def hermitian(x, shift):
    n = x.shape[-1]
    return (x @ np.conj(np.swapaxes(x, -1, -2)) + shift * np.eye(n)).astype(x.dtype)


@SETTINGS
@given(matrices(square=True), st.booleans())
def test_cholesky(compile_cached, x, definite):
    a = hermitian(x, x.shape[-1]) if definite else -hermitian(x, 1.0)
    (got,), (want,) = run(compile_cached, "cholesky", [a])
    close(got, want, a.shape[-1], "cholesky")
    assert np.isnan(got).all() != definite


@SETTINGS
@given(matrices(square=True), st.booleans(), st.booleans(),
       st.sampled_from(["NO_TRANSPOSE", "TRANSPOSE", "ADJOINT"]), st.booleans())
def test_triangular_solve(compile_cached, a, left_side, lower, transpose_a, unit_diagonal):
    n = a.shape[-1]
    a = a + 2 * n * np.eye(n, dtype=a.dtype)           # well conditioned
    rng = np.random.default_rng(n)
    b = rng.standard_normal(a.shape[:-2] + ((n, 3) if left_side else (3, n))).astype(a.dtype)
    params = dict(left_side=left_side, lower=lower, transpose_a=transpose_a,
                  unit_diagonal=unit_diagonal)
    (got,), (want,) = run(compile_cached, "triangular_solve", [a, b], **params)
    close(got, want, n, "triangular_solve")


@SETTINGS
@given(matrices())
def test_lu(compile_cached, a):
    got, want = run(compile_cached, "lu", [a])
    close(got[0], want[0], a.shape[-1], "lu")
    for g, w, what in zip(got[1:], want[1:], ("pivots", "permutation"), strict=True):
        np.testing.assert_array_equal(g, w, err_msg=what)
    flat = a.reshape((-1,) + a.shape[-2:])
    perm = got[2].reshape(flat.shape[0], -1)
    lu = got[0].reshape(flat.shape)
    m, n = a.shape[-2:]
    k = min(m, n)
    lower = np.tril(lu, -1)[..., :, :k] + np.eye(m, k, dtype=a.dtype)
    upper = np.triu(lu)[..., :k, :]
    rebuilt = lower @ upper
    close(rebuilt, np.take_along_axis(flat, perm[..., None].astype(np.int64), 1), m, "P A = L U")


@SETTINGS
@given(matrices(square=True), st.booleans(), st.booleans())
def test_eigh(compile_cached, x, lower, compute_v):
    a = hermitian(x, np.arange(1, x.shape[-1] + 1))      # distinct eigenvalues
    got, want = run(compile_cached, "eigh", [a], lower=lower, compute_v=compute_v)
    close(got[0], want[0], a.shape[-1], "eigenvalues")
    if compute_v:
        close(np.abs(got[1]), np.abs(want[1]), a.shape[-1], "|eigenvectors|")
    np.testing.assert_array_equal(got[-1], 0)


@SETTINGS
@given(matrices(), st.booleans(), st.booleans())
def test_svd(compile_cached, a, full_matrices, compute_uv):
    got, want = run(compile_cached, "svd", [a], full_matrices=full_matrices,
                    compute_uv=compute_uv)
    k = min(a.shape[-2:])
    close(got[0], want[0], max(a.shape[-2:]), "singular values")
    if compute_uv:
        close(np.abs(got[1][..., :k]), np.abs(want[1][..., :k]), k, "|u|")
        close(np.abs(got[2][..., :k, :]), np.abs(want[2][..., :k, :]), k, "|vt|")
    np.testing.assert_array_equal(got[-1], 0)


@SETTINGS
@given(matrices())
def test_geqrf_and_the_householder_products(compile_cached, a):
    got, want = run(compile_cached, "geqrf", [a])
    for g, w, what in zip(got, want, ("geqrf", "taus"), strict=True):
        close(g, w, max(a.shape[-2:]), what)
    if a.shape[-2] >= a.shape[-1]:
        (q,), (q_want,) = run(compile_cached, "householder_product", [want[0], want[1]])
        close(q, q_want, a.shape[-2], "householder_product")
    c = np.arange(a.shape[-2] * 2, dtype=a.dtype).reshape(a.shape[-2], 2)
    c = np.ascontiguousarray(np.broadcast_to(c, a.shape[:-2] + c.shape))
    (applied,), (applied_want,) = run(compile_cached, "householder_apply", [want[0], want[1], c])
    close(applied, applied_want, a.shape[-2], "householder_apply")


@st.composite
def fft_inputs(draw):
    kind = draw(st.sampled_from(["FFT", "IFFT", "RFFT", "IRFFT"]))
    k = draw(st.integers(1, 3))
    lengths = tuple(draw(st.integers(1, 6)) for _ in range(k))
    lead = draw(st.sampled_from([(), (2,)]))
    shape = lead + (lengths[:-1] + (lengths[-1] // 2 + 1,) if kind == "IRFFT" else lengths)
    double = draw(st.booleans())
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    x = rng.standard_normal(shape)
    if kind != "RFFT":
        x = (x + 1j * rng.standard_normal(shape)).astype(np.complex128 if double else
                                                         np.complex64)
    else:
        x = x.astype(np.float64 if double else np.float32)
    return x, {"fft_type": kind, "fft_lengths": lengths}


@SETTINGS
@given(fft_inputs())
def test_fft(compile_cached, case):
    x, params = case
    (got,), (want,) = run(compile_cached, "fft", [x], **params)
    close(got, want, int(np.prod(params["fft_lengths"])), params["fft_type"])


LINALG_PRIMITIVES = ("cholesky", "triangular_solve", "lu", "eigh", "svd", "geqrf",
                     "householder_product", "householder_apply", "fft")


def test_the_linalg_and_fft_primitives_are_these():
    assert set(LINALG_PRIMITIVES) <= set(PRIMITIVES)
