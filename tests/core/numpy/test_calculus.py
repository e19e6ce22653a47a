"""Polynomials and calculus (core/numpy/calculus.py), np.geomspace, np.digitize and the
np.heaviside ufunc against NumPy: every dtype kind NumPy accepts, 0-d and empty inputs, each
argument variant, and NumPy's errors (at trace time for static facts, from the run for values).

Each test batches several calls into one compiled program per dtype."""
import numpy as np
import pytest
from psc_jit.core import TraceError, jit

from numpy_compare import compare, raises_like

pytestmark = [pytest.mark.xla, pytest.mark.filterwarnings("ignore::RuntimeWarning"),
              pytest.mark.filterwarnings("ignore::numpy.exceptions.ComplexWarning")]

DTYPES = ["bool", "int8", "int64", "uint8", "float16", "float32", "float64", "complex64",
          "complex128"]
REAL = [d for d in DTYPES if not d.startswith("complex")]


def values(dtype, shape, seed=0):
    """Small values of this dtype (halves and negatives where the dtype has them; distinct
    enough that differences are not all zero)."""
    rng = np.random.default_rng(seed)
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.random(shape) < 0.5
    if dtype.kind in "iu":
        return rng.integers(0 if dtype.kind == "u" else -5, 6, shape).astype(dtype)
    real = rng.integers(-6, 7, shape) / 2
    if dtype.kind == "c":
        return (real + 1j * rng.integers(-4, 5, shape) / 4).astype(dtype)
    return real.astype(dtype)


def same_error_class(f, *args):
    """NumPy and jit(f) raise the same exception class (psc_jit's messages for a ufunc's
    missing loop name the ufunc and the operand types first)."""
    with pytest.raises(Exception) as numpy_error:
        f(*args)
    with pytest.raises(type(numpy_error.value)):
        jit(f)(*args)


# -- polynomials ------------------------------------------------------------------------------

def polynomials(p, x):
    return (np.polyval(p, x), np.polyval(p, x[0]), np.polyval(p[:0], x), np.polyval(p, 1.5),
            np.polyder(p), np.polyder(p, 2), np.polyder(p, 0), np.polyder(p, 9),
            np.polyint(p), np.polyint(p, 2, k=[1, -2]), np.polyint(p, 3, k=2), np.polyint(p, 0),
            np.vander(x), np.vander(x, 4, increasing=True), np.vander(x, 0), np.vander(x[:0]))


@pytest.mark.parametrize("dtype", DTYPES)
def test_polynomials_are_numpys(dtype):
    compare(polynomials, values(dtype, 5, 1), values(dtype, (3,), 2), close=True)


def test_polynomials_of_mixed_and_traced_operands():
    def mixed(p, x, k, coeffs2d):
        return (np.polyval([1, 2, 3], x), np.polyval(p, [0.5, 2.0]), np.polyval(coeffs2d, x[:2]),
                np.polyint(p, 2, k=k), np.polyint(p, 3, k=k[:1]), np.polyint(p, k=k[0]),
                np.polyval(p, np.float32(2)), np.vander([1, 2, 3], 3) * x[0])
    compare(mixed, np.array([1.0, -2.0, 0.5], np.float32), np.arange(4, dtype=np.int16),
            np.array([3.0, -1.0]), np.arange(6.0).reshape(3, 2), close=True)


@pytest.mark.parametrize("call", [
    lambda p: np.polyval(p[0], p), lambda p: np.polyder(p[0]), lambda p: np.polyder(p, -1),
    lambda p: np.polyint(p, -1), lambda p: np.polyint(p, 3, k=p[:2]),
    lambda p: np.polyint(p[0]), lambda p: np.vander(p.reshape(2, 2)),
    lambda p: np.vander(p, -1), lambda p: np.vander(p[0]),
], ids=["polyval-0d", "polyder-0d", "polyder-negative", "polyint-negative", "polyint-short-k",
        "polyint-0d", "vander-2d", "vander-negative-N", "vander-0d"])
def test_polynomial_errors_are_numpys(call):
    raises_like(call, np.arange(4.0))


def test_a_poly1d_is_refused_with_a_clear_message():
    with pytest.raises(TraceError, match=r"np\.polyval of a np\.poly1d"):
        jit(lambda p: np.polyval(p, np.poly1d([1.0, 2.0])))(np.arange(3.0))


# -- gradient ---------------------------------------------------------------------------------

def gradients(f, g):
    return (np.gradient(f), np.gradient(f, 2.0), np.gradient(f, edge_order=2),
            np.gradient(f, np.array([0.0, 1.0, 1.5, 3.0, 7.0, 7.5])),
            np.gradient(f, np.array([0, 2, 3, 5, 6, 9]), edge_order=2),
            np.gradient(f[:2]), np.gradient(g), np.gradient(g, axis=1),
            np.gradient(g, 0.5, [1.0, 2.0, 4.0, 8.0], edge_order=2),
            np.gradient(g, 3, axis=(-1,)), np.gradient(g[:, :0], axis=0), np.gradient(g[0, 0]))


@pytest.mark.parametrize("dtype", [d for d in DTYPES if d != "bool"])
def test_gradient_is_numpys(dtype):
    compare(gradients, values(dtype, 6, 3), values(dtype, (3, 4), 4), close=True)


def traced_spacing(f, x, h):
    """Coordinates and spacings passed in: NumPy decides on the values whether coordinates
    are evenly spaced; the program computes both and the run picks."""
    return (np.gradient(f, x), np.gradient(f, x, edge_order=2), np.gradient(f, h),
            np.gradient(np.stack([f, f * 2, -f]), h, x, edge_order=2),
            np.gradient(f, (x * 2).astype(np.int64)))


@pytest.mark.parametrize("dtype", ["int8", "float16", "float32", "complex128"])
def test_gradient_of_traced_coordinates_even_or_not(dtype):
    jitted = jit(traced_spacing)
    f = values(dtype, 5, 5)
    for x in ([0.0, 1.0, 2.0, 3.0, 4.0], [0.0, 1.0, 3.0, 4.0, 7.0], [3.0, 2.5, 2.0, 1.5, 1.0],
              [0.0, 0.0, 1.0, 2.0, 5.0]):
        compare(traced_spacing, f, np.array(x), np.float32(0.5), jitted=jitted, close=True)


def test_gradient_of_bool_values_on_uneven_coordinates():
    """No subtraction of f on uneven coordinates at second order: NumPy accepts bool there,
    and refuses it (TypeError) when the coordinates turn out evenly spaced."""
    def bool_gradient(f, x):
        return np.gradient(f, x, edge_order=2)
    jitted = jit(bool_gradient)
    f = np.array([True, False, True, True])
    compare(bool_gradient, f, np.array([0.0, 1.0, 3.0, 4.0]), jitted=jitted, close=True)
    with pytest.raises(TypeError, match="boolean subtract"):
        jitted(f, np.array([0.0, 1.0, 2.0, 3.0]))
    same_error_class(np.gradient, f)


@pytest.mark.parametrize("call", [
    lambda f: np.gradient(f, np.ones((2, 6))), lambda f: np.gradient(f, np.arange(5.0)),
    lambda f: np.gradient(f, 1.0, 2.0), lambda f: np.gradient(f, edge_order=3),
    lambda f: np.gradient(f[:2], edge_order=2), lambda f: np.gradient(f[:0]),
    lambda f: np.gradient(f.reshape(2, 3), axis=(0, 0)), lambda f: np.gradient(f, axis=1),
    lambda f: np.gradient(f[:1], f[:1], edge_order=0),
], ids=["2d-distances", "short-distances", "too-many-spacings", "edge-order-3",
        "too-short-for-order-2", "empty", "repeated-axis", "axis-out-of-range",
        "one-coordinate"])
def test_gradient_errors_are_numpys(call):
    raises_like(call, np.arange(6.0) ** 2)


def test_gradient_spacing_of_zero_divides_as_python_does():
    """np.gradient(f, 0.0, edge_order=2) computes -1.5 / 0.0 in Python: ZeroDivisionError."""
    raises_like(lambda f: np.gradient(f, 0.0, edge_order=2), np.arange(4.0))
    compare(lambda f: np.gradient(f, 0.0), np.arange(4.0))


# -- trapezoid, ediff1d, unwrap, sinc ---------------------------------------------------------

def integrals(y, g):
    return (np.trapezoid(y), np.trapezoid(y, dx=0.5), np.trapezoid(y, y[::-1]),
            np.trapezoid(g), np.trapezoid(g, axis=0), np.trapezoid(g, [0.0, 1.0, 3.0, 4.0]),
            np.trapezoid(g, g, axis=0), np.trapezoid(y[:0]), np.trapezoid(y[:1], dx=3),
            np.trapezoid(g[:, :0], axis=0))


@pytest.mark.parametrize("dtype", DTYPES)
def test_trapezoid_is_numpys(dtype):
    compare(integrals, values(dtype, 6, 6), values(dtype, (3, 4), 7), close=True)


def test_trapezoid_errors_are_numpys():
    raises_like(lambda y: np.trapezoid(y[0]), np.arange(3.0))
    raises_like(lambda y: np.trapezoid(y, axis=2), np.ones((2, 3)))
    raises_like(lambda y: np.trapezoid(y, np.arange(4.0)), np.ones((3, 3)))


def differences(a, g):
    return (np.ediff1d(a), np.ediff1d(g), np.ediff1d(a, to_begin=a[:2]),
            np.ediff1d(a, to_end=a[-1]), np.ediff1d(g, to_end=g[:1], to_begin=a[0]),
            np.ediff1d(a[:0]), np.ediff1d(a[:0], to_begin=a[:1]), np.ediff1d(a[0], to_end=a))


@pytest.mark.parametrize("dtype", [d for d in DTYPES if d != "bool"])
def test_ediff1d_is_numpys(dtype):
    compare(differences, values(dtype, 6, 8), values(dtype, (2, 3), 9), close=True)


def test_ediff1d_errors_are_numpys():
    raises_like(lambda a: np.ediff1d(a, to_begin=0.5), np.arange(4, dtype=np.int8))
    raises_like(lambda a: np.ediff1d(a, to_end=a * 1.0), np.arange(4, dtype=np.int8))
    raises_like(lambda a: np.ediff1d(a, to_begin=1j), np.arange(4.0))
    raises_like(lambda a: np.ediff1d(a, to_end=1), np.arange(4, dtype=np.uint8))
    compare(lambda a: (np.ediff1d(a, to_end=1), np.ediff1d(a, [[1, 2]], -1)),
            np.arange(4, dtype=np.int8))
    same_error_class(np.ediff1d, np.array([True, False]))
    same_error_class(lambda a: np.ediff1d(a, to_end=a), np.array([True, False]))


def unwrapped(p, g):
    return (np.unwrap(p), np.unwrap(p, discont=4.0), np.unwrap(p, period=2.5),
            np.unwrap(g, axis=0), np.unwrap(g, period=7.0, discont=2), np.unwrap(p[:0]),
            np.unwrap(g[:, :1]))


def integer_periods(p, g):
    return (np.unwrap(p, period=6), np.unwrap(p, period=7, discont=2), np.unwrap(g, period=100),
            np.unwrap(g, axis=0, period=5))


@pytest.mark.parametrize("dtype", REAL)
def test_unwrap_is_numpys(dtype):
    p = values(dtype, 7, 10) * (3 if dtype != "bool" else 1)
    g = values(dtype, (3, 5), 11) * (7 if dtype != "bool" else 1)
    compare(unwrapped, p, g, close=True)
    if dtype == "uint8":    # (NumPy: -3, the low end of the interval, is out of uint8's range)
        same_error_class(integer_periods, p, g)
    else:
        compare(integer_periods, p, g, close=True)


def test_unwrap_jumps_of_exactly_half_a_period():
    p = np.array([0.0, np.pi, 0.0, -np.pi, 2.0, 5.0, 0.0, np.nan, 1.0, np.inf])
    compare(lambda p, i: (np.unwrap(p), np.unwrap(p * 2 / np.pi, period=4),
                          np.unwrap(i, period=4), np.unwrap(i, period=5)), p,
            np.array([0, 2, 0, -2, 1, 3, -1, -3, 5, 0]))
    compare(lambda p, d, q: (np.unwrap(p, discont=d), np.unwrap(p, period=q)), p,
            np.float32(2.0), 5.0)


def test_unwrap_errors_are_numpys():
    raises_like(lambda p: np.unwrap(p[0]), np.arange(3.0))
    raises_like(lambda p: np.unwrap(p, axis=1), np.arange(3.0))
    same_error_class(np.unwrap, np.arange(3.0) * 1j)


def test_unwrap_refuses_a_traced_integer_period():
    with pytest.raises(TraceError, match="traced integer period"):
        jit(lambda p, q: np.unwrap(p, period=q))(np.arange(4), np.int64(4))


@pytest.mark.parametrize("dtype", DTYPES)
def test_sinc_is_numpys(dtype):
    x = values(dtype, (2, 5), 12)
    compare(lambda x: (np.sinc(x), np.sinc(x[0, 0]), np.sinc(x[:0]), np.sinc(x.sum())), x,
            close=True)


def test_sinc_at_edge_values():
    x = np.array([0.0, -0.0, 1.0, -2.0, 0.5, 1e-30, np.inf, -np.inf, np.nan, 1e300])
    compare(lambda x: (np.sinc(x), np.sinc(x.astype(np.float16)), np.sinc(x.astype(np.float32)),
                       np.sinc(0.25), np.sinc(True)), x, close=True)


# -- geomspace --------------------------------------------------------------------------------

def geometric(a, b):
    return (np.geomspace(a[0], b[0], 5), np.geomspace(a, b, 4), np.geomspace(a, 1000, 3, axis=1),
            np.geomspace(b[0], a[0], 6, endpoint=False), np.geomspace(1, b, 1),
            np.geomspace(a[1], b[1], 0), np.geomspace(a, b, 3, dtype=np.float32),
            np.geomspace(2, a.real * 3 + 2, 4, dtype=int, axis=-1), np.geomspace(-2, -a * 3, 3))


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int64", "float16", "float32", "float64",
                                   "complex64", "complex128"])
def test_geomspace_is_numpys(dtype):
    a = np.array([1, 2, 5], dtype)
    b = np.array([100, 3, 7 if dtype == "uint8" else -7], dtype)
    compare(geometric, a, b, close=True)


def test_geomspace_of_complex_and_bool_ends():
    compare(lambda a: (np.geomspace(1j * a, 1000j, 4), np.geomspace(-1 + 1j * a, 4, 5),
                       np.geomspace(a > 0, 8, 4)), np.array([1.0, 2.0]), close=True)


def test_geomspace_refuses_zero_ends_as_numpy_does():
    raises_like(lambda a: np.geomspace(0, a, 3), np.array(4.0))
    jitted = jit(lambda a, b: np.geomspace(a, b, 3))
    raises_like(lambda a, b: np.geomspace(a, b, 3), np.array([1.0, 0.0]), np.array(4.0),
                jitted=jitted)
    raises_like(lambda a, b: np.geomspace(a, b, 3), np.array(1.0), np.array([2.0, -0.0]),
                jitted=jitted)
    compare(lambda a, b: np.geomspace(a, b, 3), np.array(1.0), np.array(8.0), jitted=jitted,
            close=True)


# -- digitize ---------------------------------------------------------------------------------

def digitized(x, bins):
    return (np.digitize(x, bins), np.digitize(x, bins, right=True),
            np.digitize(x, bins[::-1]), np.digitize(x, bins[::-1], True),
            np.digitize(x[0], bins), np.digitize(x, [-1, 0.5, 2]),
            np.digitize(x, [3, 3, 0, -2], right=True), np.digitize(x, bins[:0]),
            np.digitize(x, bins[:1]), np.digitize(x[:0], bins))


@pytest.mark.parametrize("dtype", REAL)
def test_digitize_is_numpys(dtype):
    x = values(dtype, 8, 13)
    bins = np.sort(values(dtype, 4, 14))
    compare(digitized, x, bins)


def test_digitize_of_traced_bins_with_ties_and_nan():
    """The direction is set by the first neighbours that differ (NaN differs from all).
    (Bins with NaN between numbers pass NumPy's test but are not sorted for searchsorted,
    whose answer on them is its binary search's accident: not compared.)"""
    jitted = jit(digitized)
    x = np.array([-3.0, -1.0, 0.0, 0.5, 1.0, 2.0, np.nan, np.inf])
    for bins in ([1.0, 1.0, 2.0, 3.0], [2.0, 2.0, 2.0, 2.0], [0.0, 1.0, 2.0, np.nan],
                 [np.nan, 3.0, 2.0, 1.0], [np.nan, np.nan, np.nan, np.nan],
                 [-np.inf, 0.0, 0.0, np.inf], [3.0, 3.0, np.nan, 1.0],
                 [np.nan, np.nan, 1.0, 0.0]):
        compare(digitized, x, np.array(bins), jitted=jitted)


def test_digitize_errors_are_numpys():
    jitted = jit(lambda x, b: np.digitize(x, b))
    for bins in ([1.0, 0.0, 2.0], [np.nan, 1.0, 2.0], [0.0, 0.0, 1.0, 0.0],
                 [np.nan, np.nan, 1.0, 2.0]):
        raises_like(lambda x, b: np.digitize(x, b), np.arange(3.0), np.array(bins),
                    jitted=jitted)
    raises_like(lambda x: np.digitize(x, [2.0, 3.0, 1.0]), np.arange(3.0))
    for x, bins in ((np.arange(3.0) * 1j, np.arange(3.0)), (np.arange(3.0), np.eye(2)),
                    (np.arange(3.0), np.array(1.0)), (np.arange(3.0), np.arange(3.0) * 1j)):
        raises_like(np.digitize, x, bins)
        raises_like(lambda x, b=bins: np.digitize(x, b), x)


# -- heaviside --------------------------------------------------------------------------------

EDGES = np.array([-np.inf, -2.5, -0.0, 0.0, 1e-300, 0.5, 3.0, np.inf, np.nan])


def stepped(x, h0):
    out = np.empty_like(x, dtype=np.float64)
    np.heaviside(x, h0[0], out=out)
    return (np.heaviside(x, h0), np.heaviside(x, 0.5), np.heaviside(x[0], h0[0]),
            np.heaviside(2, h0), np.heaviside(x, 1), out, np.heaviside(x[:0], h0[0]))


@pytest.mark.parametrize("dtype", REAL)
def test_heaviside_is_numpys(dtype):
    if dtype[0] in "fc":
        x = EDGES.astype(dtype)
    else:
        x = values(dtype, 9, 15)
    h0 = values(dtype, 9, 16)
    compare(stepped, x, h0)


def test_heaviside_of_python_scalars_and_promotion():
    compare(lambda x, i: (np.heaviside(x, np.nan), np.heaviside(0.0, x),
                          np.heaviside(np.float16(1e-8), x.astype(np.float16)),
                          np.heaviside(i, x.astype(np.float32)), np.heaviside(i, 2),
                          np.heaviside(i.astype(np.int8), i.astype(np.uint8))),
            EDGES, np.arange(-4, 5, dtype=np.int16))


def test_heaviside_refuses_what_numpy_refuses():
    same_error_class(np.heaviside, np.ones(3, np.complex64), 0.5)
    same_error_class(lambda x: np.heaviside(x, 0.5, out=np.empty(3, np.int64)), np.ones(3))
    with pytest.raises(TraceError, match=r"np\.heaviside\(\.\.\., where=\.\.\.\)"):
        jit(lambda x: np.heaviside(x, 0.5, where=x > 0))(np.ones(3))


T = np.linspace(0.0, 1.0, 20)
Y = np.random.default_rng(0).random(20)


@pytest.mark.parametrize("fit", [
    lambda t, y: np.polyfit(t, y, 2),
    lambda t, y: np.polyfit(t, np.stack([y, y * 2], 1), 3),
    lambda t, y: np.polyfit(t, y, 1, w=t + 1),
    lambda t, y: np.polyfit(t, y, 2, full=True)[:3],
    lambda t, y: np.polyfit(t.astype(np.float32), y, 1),
    lambda t, y: np.polyval(np.polyfit(t, y, 4), t),
], ids=["quadratic", "two-columns", "weighted", "full", "float32-x", "fit-and-evaluate"])
def test_polyfit_is_numpys(fit):
    compare(fit, T, Y, close=True)


@pytest.mark.parametrize("fit", [
    lambda t, y: np.polyfit(t, y[:5], 1), lambda t, y: np.polyfit(t, y, -1),
    lambda t, y: np.polyfit(t[:, None], y, 1), lambda t, y: np.polyfit(t, y, 1, w=t[:3]),
], ids=["lengths", "negative-degree", "2-d-x", "weights-length"])
def test_polyfit_errors_are_numpys(fit):
    raises_like(fit, T, Y)


def test_polyfit_covariance_is_refused_with_the_fix():
    with pytest.raises(TraceError, match="cov=False"):
        jit(lambda t, y: np.polyfit(t, y, 1, cov=True))(T, Y)
