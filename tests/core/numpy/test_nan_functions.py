"""NumPy's NaN-ignoring functions (core/numpy/nan_functions.py) against NumPy: NaN anywhere,
slices of NaN only, infinities, every axis form, keepdims, dtype=, out=, ddof, every dtype kind,
0-d and empty operands; NumPy's errors (the all-NaN ValueError of nanargmax raised by the run);
and the arguments psc_jit refuses."""
import warnings

import numpy as np
import pytest
from psc_jit.core import DataDependentShapeError, UnsupportedError, jit

from numpy_compare import compare, raises_like

pytestmark = [pytest.mark.xla,
              pytest.mark.filterwarnings("ignore::RuntimeWarning")]   # NumPy's all-NaN warnings

NAN, INF = np.nan, np.inf
DTYPES = ["bool", "int8", "int64", "uint8", "float16", "float32", "float64", "complex64",
          "complex128"]
QUANTILE_METHODS = ("inverted_cdf", "averaged_inverted_cdf", "closest_observation",
                    "interpolated_inverted_cdf", "hazen", "weibull", "linear", "median_unbiased",
                    "normal_unbiased", "lower", "higher", "midpoint", "nearest")


def _operand(dtype) -> np.ndarray:
    """f[2,3,4] of small halves (exact sums in float16), NaN in places, the slice [1, 1, :]
    NaN only, ±inf once each; integers and bools from the finite values."""
    dtype = np.dtype(dtype)
    x = np.arange(24.0).reshape(2, 3, 4) % 7 / 2 - 1
    x[0, 0, 1] = x[0, 2, 3] = x[1, 0, 0] = x[1, 2, 2] = NAN
    x[1, 1, :] = NAN
    x[0, 1, 2], x[1, 2, 0] = INF, -INF
    if dtype.kind in "fc":
        values = x.astype(dtype)
        if dtype.kind == "c":    # NaN in the imaginary part only counts as NaN too
            values = values + 1j * (np.arange(4.0) / 2).astype(dtype)
            values[0, 1, 3] = complex(1, NAN)
        return values
    finite = np.nan_to_num(x, nan=3, posinf=5, neginf=-2) * 2
    return (finite > 1) if dtype == np.bool_ else finite.astype(dtype)


def reductions(x):
    return (np.nansum(x), np.nansum(x, axis=0), np.nansum(x, axis=(0, 2), keepdims=True),
            np.nanprod(x, axis=-1), np.nanprod(x, axis=(1,)),
            np.nancumsum(x), np.nancumsum(x, axis=1), np.nancumprod(x, axis=-1),
            np.nanmax(x), np.nanmax(x, axis=2), np.nanmin(x, axis=(0, 1)),
            np.nanmin(x, axis=-2, keepdims=True),
            np.nanmean(x), np.nanmean(x, axis=-1), np.nanmean(x, axis=(0, 2), keepdims=True),
            np.nanvar(x), np.nanvar(x, axis=2), np.nanstd(x, axis=(0, 1)),
            np.nanstd(x, axis=0, ddof=1, keepdims=True), np.nanvar(x, axis=-1, ddof=3))


def order_statistics(x):
    return (np.nanmedian(x), np.nanmedian(x, axis=-1), np.nanmedian(x, axis=(0, 2)),
            np.nanmedian(x, axis=1, keepdims=True), np.nanmedian(x[0, 0]))


def quantiles(x):
    return (np.nanquantile(x, 0.3), np.nanquantile(x, 0.25, axis=-1),
            np.nanpercentile(x, [10, 50, 95], axis=(0, 2)),
            np.nanquantile(x, np.array([0.0, 0.6, 1.0]), axis=1, keepdims=True),
            np.nanpercentile(x[0], 40, axis=0),
            *[np.nanquantile(x, 0.4, axis=2, method=m) for m in QUANTILE_METHODS])


def positions(x):
    """nanargmax/nanargmin where no slice is NaN only."""
    y = x[0]
    return (np.nanargmax(x), np.nanargmin(x), np.nanargmax(y, axis=1), np.nanargmin(y, axis=-1),
            np.nanargmax(y, axis=0, keepdims=True), np.nanargmin(x[:, 0], axis=1))


@pytest.mark.parametrize("dtype", DTYPES)
def test_reductions_are_numpys(dtype):
    compare(reductions, _operand(dtype), close=True)


@pytest.mark.parametrize("dtype", DTYPES)
def test_positions_are_numpys(dtype):
    compare(positions, _operand(dtype))


@pytest.mark.parametrize("dtype", DTYPES)
def test_medians_are_numpys(dtype):
    compare(order_statistics, _operand(dtype), close=True)


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int64", "float16", "float32", "float64"])
def test_quantiles_are_numpys(dtype):
    compare(quantiles, _operand(dtype), close=True)


def test_slices_of_nan_only_give_nan():
    x = np.array([[NAN, NAN, NAN], [1.0, NAN, 2.0], [NAN, -INF, NAN]])

    def all_nan_rows(x):
        return (np.nanmax(x, axis=1), np.nanmin(x, axis=1), np.nanmean(x, axis=1),
                np.nanvar(x, axis=1), np.nanstd(x, axis=1, ddof=1), np.nansum(x, axis=1),
                np.nanprod(x, axis=1), np.nanmedian(x, axis=1), np.nanquantile(x, 0.5, axis=1),
                np.nanmax(x[0]), np.nanmedian(x[0]), np.nanpercentile(x[0], [5, 50]),
                np.nanmean(x[0]), np.nanargmax(x[1:], axis=1))
    got, _ = compare(all_nan_rows, x)
    assert np.isnan(got[0][0]) and got[0][2] == -INF and got[5][0] == 0 and np.isnan(got[-2])


def test_infinities_stay_where_numpy_keeps_them():
    def with_infinities(x):
        return (np.nanmax(x, axis=0), np.nanmin(x, axis=0), np.nansum(x, axis=0),
                np.nanmean(x, axis=0), np.nanmedian(x, axis=0), np.nanargmax(x, axis=0),
                np.nanargmin(x, axis=0), np.nanquantile(x, [0.0, 1.0], axis=0))
    x = np.array([[INF, -INF, NAN, 1.0], [NAN, -INF, -INF, INF], [2.0, NAN, NAN, -INF]])
    compare(with_infinities, x)


def test_complex_values_order_as_numpys():
    def complex_extrema(z):
        return (np.nanmax(z), np.nanmin(z, axis=0), np.nanargmax(z, axis=1), np.nanargmin(z),
                np.nanvar(z), np.nanstd(z, axis=1), np.nanmean(z, axis=0), np.nanmedian(z[0]))
    z = np.array([[1 + 2j, 1 + 3j, complex(NAN, 0), 0j], [complex(0, NAN), -1j, 2 - 1j, 2 + 0j]])
    compare(complex_extrema, z, close=True)


def test_nanargmax_of_a_nan_only_slice_raises_before_writing_back():
    def argmax_and_write(x, log):
        log[0] = 1.0
        return np.nanargmax(x, axis=1), np.nanargmin(x)

    rows = np.array([[1.0, NAN], [NAN, NAN]])
    raises_like(argmax_and_write, rows, np.zeros(2))
    raises_like(argmax_and_write, np.full((2, 2), NAN), np.zeros(2))
    jitted = jit(argmax_and_write)
    compare(argmax_and_write, rows[[0, 0]], np.zeros(2), jitted=jitted)   # same program
    raises_like(argmax_and_write, rows, np.zeros(2), jitted=jitted)


def test_empty_and_0d_operands():
    def empty(x):
        return (np.nansum(x), np.nansum(x, axis=1), np.nanprod(x, axis=0), np.nanmean(x),
                np.nanmean(x, axis=0), np.nanvar(x, axis=1), np.nanstd(x), np.nancumsum(x),
                np.nanmax(x, axis=1), np.nanargmin(x, axis=1), np.nanmedian(x),
                np.nanmedian(x, axis=0, keepdims=True))

    def empty_quantiles(x):
        return np.nanquantile(x, [0.2, 0.5], axis=0), np.nanpercentile(x, 30, keepdims=True)
    for dtype in ("float32", "int64", "complex64"):
        compare(empty, np.zeros((0, 3), dtype))
    for dtype in ("float16", "uint8"):
        compare(empty_quantiles, np.zeros((0, 3), dtype))

    def zero_d(x):
        return (np.nansum(x), np.nanmax(x), np.nanargmax(x), np.nanargmin(x, axis=0),
                np.nanmean(x), np.nanvar(x), np.nancumprod(x), np.nanmedian(x),
                np.nanmedian(x, keepdims=True), np.nanquantile(x, 0.3),
                np.nanmax(x, keepdims=True), np.nanstd(x[()]), np.nanmin(x[()]))
    compare(zero_d, np.array(2.5))
    compare(zero_d, np.array(7, np.int16))
    compare(lambda x: (np.nanmax(x), np.nansum(x), np.nanmean(x), np.nanmedian(x)),
            np.array(NAN, np.float32))


def test_dtype_out_ddof_correction_and_mean():
    x = _operand("float32")

    def with_arguments(x, o1, o2, o3, o4):
        return (np.nansum(x, axis=0, dtype=np.float64), np.nanprod(x, dtype=np.complex64),
                np.nancumsum(x, axis=2, dtype=np.float16), np.nanmean(x, axis=1, dtype=np.float64),
                np.nanvar(x, axis=(0, 2), dtype=np.float64, ddof=1.5),
                np.nanstd(x, axis=-1, correction=1), np.nanvar(x, axis=-1, mean=np.nanmean(
                    x, axis=-1, keepdims=True)),
                np.nansum(x, axis=2, out=o1), np.nanmax(x, axis=2, out=o2),
                np.nanmean(x, axis=1, out=o3), np.nanstd(x, axis=2, out=o1),
                np.nanmedian(x, axis=(0, 2), out=o1[0]), np.nanquantile(x, 0.7, axis=1, out=o3),
                np.nancumprod(x[0], axis=0, out=o4), np.nanvar(x, axis=1, out=o3))
    compare(with_arguments, x, np.zeros((2, 3), np.float64), np.zeros((2, 3), np.int32),
            np.zeros((2, 4), np.float16), np.zeros((3, 4), np.int64), close=True)


def test_integers_go_to_numpys_plain_functions():
    def plain(x):
        return (np.nanmean(x, dtype=np.int16), np.nanvar(x, dtype=np.float32),
                np.nansum(x, dtype=np.uint8), np.nanmedian(x, axis=0),
                np.nanquantile(x, 1, axis=1), np.nanpercentile(x, 50, method="lower"))
    compare(plain, np.arange(12, dtype=np.int8).reshape(3, 4) - 5, close=True)


def test_long_slices_take_numpys_one_slice_median():
    """NumPy's nanmedian takes another path for slices of 600 values or more."""
    x = np.random.default_rng(0).standard_normal((2, 601)).astype(np.float32)
    x[0, ::3] = NAN
    x[1, 1::2] = NAN
    compare(lambda x: (np.nanmedian(x, axis=1), np.nanmedian(x.T, axis=0)), x)


@pytest.mark.parametrize("call", [
    lambda x: np.nanmax(x[:0]), lambda x: np.nanmin(x[:, :0], axis=1),
    lambda x: np.nanargmax(x[:0]), lambda x: np.nanargmin(x[:0], axis=0),
    lambda x: np.nanmean(x, dtype=np.int64), lambda x: np.nanvar(x, dtype=bool),
    lambda x: np.nanmean(x, out=np.zeros(3, np.int64)),
    lambda x: np.nanvar(x, ddof=1, correction=1), lambda x: np.nanquantile(x, 1.5),
    lambda x: np.nanpercentile(x, -1), lambda x: np.nanquantile(x, 0.5, method="mean"),
    lambda x: np.nanquantile(x + 1j, 0.5),
    lambda x: np.nanquantile(x, [[[0.5]]]), lambda x: np.nansum(x, axis=2),
    lambda x: np.nanmedian(x, axis=(0, 0)), lambda x: np.nanmax(x, out=np.zeros(2)),
])
def test_numpys_errors(call):
    raises_like(call, np.array([[1.0, NAN, 3.0], [NAN, 5.0, 6.0]]))


@pytest.mark.parametrize("call, what", [
    (lambda x: np.nansum(x, where=x > 0), r"np.nansum\(\.\.\., where=\.\.\.\)"),
    (lambda x: np.nanmax(x, initial=0.0), r"np.nanmax\(\.\.\., initial=\.\.\.\)"),
    (lambda x: np.nanmean(x, where=x > 0), "where="),
    (lambda x: np.nanargmax(x, out=np.zeros((), np.int64)), r"np.nanargmax\(\.\.\., out="),
    (lambda x: np.nanquantile(x, x[0, 0] / 10), "traced q"),
    (lambda x: np.nanpercentile(x, 50, weights=np.ones(3), method="inverted_cdf"),
     "weights="),
])
def test_refusals_say_what(call, what):
    with pytest.raises(UnsupportedError, match=what):
        jit(call)(np.array([[1.0, NAN, 3.0], [NAN, 5.0, 6.0]]))


def test_quantile_dtype_hanging_on_the_first_slice_is_refused_by_the_run():
    """NumPy's nanquantile of float32 with an array q is float64, unless its first slice is
    NaN only: then float32 (its dtype comes from the first slice's result)."""
    def quartiles(x):
        return np.nanquantile(x, np.array([0.25, 0.75]), axis=1)
    jitted = jit(quartiles)
    rows = np.array([[1.0, NAN, 3.0], [NAN, NAN, NAN]], np.float32)
    compare(quartiles, rows, jitted=jitted)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert quartiles(rows[::-1]).dtype == np.float32
    with pytest.raises(DataDependentShapeError, match="first slice is all NaN.*float32"):
        jitted(rows[::-1])
    compare(lambda x: np.nanquantile(x, 0.25, axis=1), rows[::-1])   # (a Python q: float32)
