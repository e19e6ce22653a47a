"""np.linalg, np.fft and the statistics functions under jit, against NumPy: dtypes (float32
stays float32, integers become float64, float16 is NumPy's TypeError), stacks of matrices,
1x1 and empty matrices, NumPy's LinAlgError raised by the run (singular, not positive
definite), eigenvalue order and the sign conventions NumPy fixes; a result whose shape NumPy
decides from the values (lstsq's residuals, bincount's length) makes the magic fall back.
Eigenvectors and singular vectors are unique up to sign (or phase): compared as |v|."""
from __future__ import annotations

import numpy as np
import pytest
from numpy_compare import compare, raises_like
from psc_jit.core import DataDependentShapeError, UnsupportedError, jit

pytestmark = pytest.mark.xla

RNG = np.random.default_rng(11)
FLOATS = [np.float32, np.float64, np.complex64, np.complex128]


def matrix(shape, dtype):
    x = RNG.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * RNG.standard_normal(shape)
    return x.astype(dtype)


def positive_definite(shape, dtype):
    m = matrix(shape, dtype)
    return (m @ np.conj(np.swapaxes(m, -1, -2)) + shape[-1] * np.eye(shape[-1])).astype(dtype)


# -- factorizations and solvers over dtypes and stacks ----------------------------------------

@pytest.mark.parametrize("dtype", FLOATS + [np.int64])
@pytest.mark.parametrize("shape", [(4, 4), (2, 3, 3), (1, 1)])
def test_solvers_like_numpy(dtype, shape):
    a = positive_definite(shape, dtype) if dtype != np.int64 else (
        RNG.integers(-3, 4, shape) + 10 * np.eye(shape[-1], dtype=np.int64))
    b = matrix(shape[:-1] + (2,), dtype if dtype != np.int64 else np.float64)

    def f(a, b):
        return (np.linalg.solve(a, b), np.linalg.inv(a), np.linalg.det(a),
                tuple(np.linalg.slogdet(a)), np.linalg.cholesky(a),
                np.linalg.cholesky(a, upper=True), np.linalg.eigvalsh(a),
                np.linalg.matrix_power(a, 5), np.linalg.pinv(a), np.linalg.cond(a))
    compare(f, a, b, close=True)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (2, 4, 4), (1, 1)])
def test_decompositions_like_numpy(dtype, shape):
    a = matrix(shape, dtype)

    def f(a):
        u, s, vh = np.linalg.svd(a)
        gram = a @ np.conj(np.swapaxes(a, -1, -2))      # + diag(1..n): distinct eigenvalues
        w, v = np.linalg.eigh(gram + np.diag(np.arange(1, gram.shape[-1] + 1)).astype(a.dtype))
        return (s, np.abs(u), np.abs(vh), np.linalg.svd(a, compute_uv=False), w, np.abs(v),
                np.linalg.qr(a).Q, np.linalg.qr(a).R, np.linalg.qr(a, mode="r"),
                tuple(np.linalg.qr(a, mode="complete")), np.linalg.matrix_rank(a),
                np.linalg.norm(a, 2, axis=(-2, -1)), np.linalg.norm(a, "nuc", axis=(-2, -1)))
    compare(f, a, close=True)


def test_named_tuples_and_scalars_are_numpys():
    a = positive_definite((3, 3), np.float64)
    got = jit(lambda a: (np.linalg.eigh(a), np.linalg.slogdet(a), np.linalg.svd(a),
                         np.linalg.qr(a), np.linalg.det(a)))(a)
    want = (np.linalg.eigh(a), np.linalg.slogdet(a), np.linalg.svd(a), np.linalg.qr(a),
            np.linalg.det(a))
    assert [type(x) for x in got] == [type(x) for x in want]
    assert isinstance(got[4], np.float64)


@pytest.mark.parametrize("shape, rhs", [((6, 3), (6,)), ((6, 3), (6, 2)), ((3, 5), (3,)),
                                        ((4, 4), (4, 1)), ((3, 0), (3,)), ((0, 3), (0,))])
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.complex128])
def test_lstsq_all_four_outputs_like_numpy(shape, rhs, dtype):
    a, b = matrix(shape, dtype), matrix(rhs, dtype)
    compare(lambda a, b: np.linalg.lstsq(a, b, rcond=None), a, b, close=True)
    compare(lambda a, b: np.linalg.lstsq(a, b, rcond=-1), a, b, close=True)


def test_lstsq_of_a_rank_deficient_matrix_raises_before_anything_is_written():
    def f(a, b, out):
        out[0] = 1.0
        return np.linalg.lstsq(a, b, rcond=None)
    compiled = jit(f)
    out = np.zeros(2)
    compiled(matrix((6, 3), np.float64), matrix((6,), np.float64), out)
    out[:] = 0
    with pytest.raises(DataDependentShapeError, match=r"rank 1 < 3.*shape \(1,\)"):
        compiled(np.ones((6, 3)), matrix((6,), np.float64), out)
    assert out[0] == 0.0


# -- NumPy's errors -----------------------------------------------------------------------------

@pytest.mark.parametrize("f", [np.linalg.inv, lambda a: np.linalg.solve(a, a[0]),
                               np.linalg.cholesky, lambda a: np.linalg.cholesky(a, upper=True)])
def test_linalg_errors_are_raised_by_the_run(f):
    raises_like(f, np.array([[1.0, 2.0], [2.0, 4.0]]))          # singular, not definite
    raises_like(f, np.zeros((2, 3, 3)))
    compiled = jit(f)
    compiled(positive_definite((2, 2), np.float64))             # the same program, then:
    with pytest.raises(np.linalg.LinAlgError):
        compiled(np.ones((2, 2)))


@pytest.mark.parametrize("f", [np.linalg.inv, np.linalg.det, np.linalg.cholesky, np.linalg.svd,
                               np.linalg.eigh, np.linalg.qr])
def test_static_errors_like_numpy(f):
    raises_like(f, np.ones((2, 2), np.float16))                 # TypeError: float16
    raises_like(f, np.ones(3))                                  # LinAlgError: 1-d
    if f not in (np.linalg.svd, np.linalg.qr):
        raises_like(f, np.ones((2, 3)))                         # LinAlgError: not square


def test_determinants_of_singular_and_empty_matrices():
    compare(lambda a: (np.linalg.det(a), tuple(np.linalg.slogdet(a))), np.ones((3, 3)))
    compare(lambda a: (np.linalg.det(a), tuple(np.linalg.slogdet(a)), np.linalg.inv(a)),
            np.zeros((0, 0)))
    compare(lambda a: (np.linalg.det(a), np.linalg.inv(a)), np.zeros((2, 0, 0)))


def test_eig_is_refused_with_the_reason_and_the_name_as_written():
    with pytest.raises(UnsupportedError, match=r"np.linalg.eig .*dtype depends on the data"):
        jit(np.linalg.eig)(np.eye(2))


def test_an_unsupported_function_is_named_by_its_module():
    with pytest.raises(UnsupportedError, match=r"np\.lib\.scimath\.sqrt is not supported"):
        jit(lambda x: np.emath.sqrt(x))(np.ones(3))


# -- the Array API's linalg names, multi_dot, tensors ------------------------------------------

def test_array_api_names_like_numpy():
    a, b, v = matrix((2, 3, 3), np.float64), matrix((3, 4), np.float64), matrix((3,), np.float64)
    compare(lambda a, b, v: (
        np.linalg.matrix_transpose(a), np.linalg.vecdot(a, a), np.vecdot(a, a, axis=1),
        np.linalg.matmul(a, b), np.linalg.tensordot(a, b, axes=1), np.linalg.outer(v, v),
        np.linalg.cross(a, v), np.linalg.diagonal(a, offset=1) * 1, np.linalg.trace(a),
        np.linalg.vector_norm(a, ord=3, axis=(0, 2)), np.linalg.matrix_norm(a, ord=np.inf),
        np.linalg.svdvals(a), np.matvec(a, v), np.vecmat(v, a)), a, b, v, close=True)
    raises_like(lambda v: np.linalg.outer(v[None], v), v)
    raises_like(lambda b: np.linalg.cross(b, b), b)


def test_multi_dot_tensorsolve_tensorinv_like_numpy():
    a, b, c = matrix((5, 2), np.float64), matrix((2, 7), np.float64), matrix((7, 3), np.float64)
    compare(lambda a, b, c: (np.linalg.multi_dot([a, b, c]), np.linalg.multi_dot([a[0], b, c]),
                             np.linalg.multi_dot([a, b, c, c.T, b.T])), a, b, c, close=True)
    t = positive_definite((6, 6), np.float64).reshape(6, 2, 3)
    compare(lambda t, y: (np.linalg.tensorsolve(t, y), np.linalg.tensorinv(t, ind=1)), t,
            matrix((6,), np.float64), close=True)


# -- FFT ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("norm", [None, "backward", "ortho", "forward"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int16, np.complex64, np.complex128,
                                   np.float16])
def test_fft_like_numpy(norm, dtype):
    x = (matrix((4, 6), dtype) * 3).astype(dtype) if dtype != np.int16 else \
        RNG.integers(-9, 9, (4, 6)).astype(dtype)
    real = np.dtype(dtype).kind != "c"

    def f(x):
        out = [np.fft.fft(x, norm=norm), np.fft.ifft(x, n=8, axis=0, norm=norm),
               np.fft.fft2(x, norm=norm), np.fft.ifftn(x, s=(3, 4), axes=(0, 1), norm=norm),
               np.fft.irfft(x, norm=norm), np.fft.irfftn(x, norm=norm),
               np.fft.hfft(x, n=7, norm=norm), np.fft.fftshift(x), np.fft.ifftshift(x, axes=0)]
        if real:
            out += [np.fft.rfft(x, n=5, norm=norm), np.fft.rfftn(x, norm=norm),
                    np.fft.rfft2(x, s=(5, 3), norm=norm), np.fft.ihfft(x, norm=norm)]
        return tuple(out)
    if dtype == np.float16:        # NumPy computes in float32 and rounds its factors to float16
        want, got = f(x.copy()), jit(f)(x.copy())
        for g, w in zip(got, want, strict=True):
            assert g.dtype == w.dtype and g.shape == w.shape
            np.testing.assert_allclose(g, w, rtol=2e-3, atol=2e-3)
        return
    compare(f, x, close=True)


def test_fft_errors_and_frequencies_like_numpy():
    x = matrix((4,), np.float64)
    raises_like(lambda x: np.fft.fft(x, n=0), x)
    raises_like(lambda x: np.fft.fft(x[:0]), x)
    raises_like(lambda x: np.fft.rfft(x * 1j), x)
    raises_like(lambda x: np.fft.fft(x, norm="other"), x)
    compare(lambda d: (np.fft.fftfreq(7, d), np.fft.rfftfreq(8, d)), np.float64(0.25))


# -- statistics ---------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int32, np.complex128])
def test_cov_and_corrcoef_like_numpy(dtype):
    x, y = matrix((3, 8), dtype), matrix((8,), dtype)
    fw, aw = RNG.integers(0, 4, 8), RNG.random(8)
    compare(lambda x, y, fw, aw: (
        np.cov(x), np.cov(x, rowvar=False), np.cov(x, y), np.cov(y), np.cov(x, ddof=0),
        np.cov(x, fweights=fw, aweights=aw), np.cov(x, aweights=aw, ddof=2),
        np.cov(x, dtype=np.float32), np.corrcoef(x), np.corrcoef(x, y), np.corrcoef(y)),
        x, y, fw, aw, close=True)
    raises_like(lambda x, fw: np.cov(x, fweights=-fw - 1), x, fw)


def test_interp_like_numpy():
    x = np.array([-3.0, -1.0, -0.5, 0.0, 0.25, 1.0, 2.0, 5.0, np.nan, np.inf])
    xp, fp = np.array([-1.0, 0.0, 0.0, 1.0, 2.0]), np.array([1.0, 2.0, -1.0, 0.5, 4.0])
    compare(lambda x, xp, fp: (np.interp(x, xp, fp), np.interp(x, xp, fp, left=-7, right=7),
                               np.interp(x, xp, fp + 1j * fp), np.interp(0.5, xp, fp),
                               np.interp(x, xp[:1], fp[:1]),
                               np.interp(x, xp[[4, 0, 3]], fp[:3], period=2.5)),
            x, xp, fp, close=True)
    raises_like(lambda x, xp: np.interp(x, xp, xp[:2]), x, xp)


def test_searchsorted_like_numpy():
    a = np.sort(np.array([3.0, np.nan, -1.0, 2.0, 2.0, 7.0]))
    v = np.array([2.0, np.nan, -5.0, 8.0, 3.0])
    compare(lambda a, v: (np.searchsorted(a, v), np.searchsorted(a, v, side="right"),
                          np.searchsorted(a[::-1], v, sorter=np.arange(6)[::-1]),
                          np.searchsorted(a, 2.0)), a, v)


@pytest.mark.filterwarnings("ignore:Converting input from bool:RuntimeWarning")
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64, np.uint8, np.bool_])
def test_histogram_like_numpy(dtype):
    a = (RNG.standard_normal(200) * 4).astype(dtype) if dtype != np.bool_ else RNG.random(50) > .5
    weights = RNG.random(a.shape)
    with np.errstate(all="ignore"):
        compare(lambda a, w: (
            np.histogram(a, bins=7, range=(-3, 5)), np.histogram(a, bins=5),
            np.histogram(a, bins=np.array([-2.0, 0.0, 0.5, 4.0])), np.histogram(a, 4, weights=w),
            np.histogram(a, bins=3, range=(0, 1), density=True),
            np.histogram_bin_edges(a, bins=6)), a, weights, close=True)


def test_histogram_of_one_value_and_errors_like_numpy():
    compare(lambda a: np.histogram(a, bins=4), np.full(5, 2.5))
    raises_like(lambda a: np.histogram(a, bins=0), np.ones(3))
    raises_like(lambda a: np.histogram(a, bins=3, range=(2, 1)), np.ones(3))
    raises_like(lambda a: np.histogram(a, bins=[1, 0, 2]), np.ones(3))
    with pytest.raises(ValueError, match="not finite"):
        jit(lambda a: np.histogram(a, bins=3))(np.array([1.0, np.inf]))
    with pytest.raises(UnsupportedError, match="number of bins depends on the data"):
        jit(lambda a: np.histogram(a, bins="auto"))(np.ones(3))


def test_bincount_with_minlength_like_numpy():
    x = RNG.integers(0, 6, 40)
    compare(lambda x, w: (np.bincount(x, minlength=6), np.bincount(x, weights=w, minlength=9),
                          np.bincount(x[:0], minlength=3)), x, RNG.random(40))
    raises_like(lambda x: np.bincount(x - 3, minlength=9), x)      # negative: ValueError
    raises_like(lambda x: np.bincount(x * 0.5, minlength=9), x)    # floats: TypeError


def test_bincount_past_minlength_and_without_it():
    compiled = jit(lambda x: np.bincount(x, minlength=4))
    with pytest.raises(DataDependentShapeError, match="value 5 is not below minlength=4"):
        compiled(np.array([0, 5, 1]))
    with pytest.raises(UnsupportedError, match="minlength"):
        jit(np.bincount)(np.array([0, 1]))


def test_svd_values_of_a_tall_matrix_take_no_square_buffer():
    x = matrix((200_000, 3), np.float64)     # an (m, m) u would be 320 GB
    np.testing.assert_allclose(jit(lambda x: np.linalg.svd(x, compute_uv=False))(x),
                               np.linalg.svd(x, compute_uv=False), rtol=1e-10)


def test_a_run_that_xla_cannot_carry_out_raises_its_error():
    """(NumPy would raise MemoryError: u is 8 TB.) Never an object array holding the error."""
    from psc_jit.core import XlaError
    with pytest.raises(XlaError, match="RESOURCE_EXHAUSTED"):
        jit(lambda x: np.linalg.svd(x)[0][0, 0])(np.ones((1_000_000, 2)))
