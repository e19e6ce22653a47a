"""np.median, np.quantile and their NaN-ignoring forms: keepdims on a 0-d array gives NumPy's
0-d array (not a scalar), and a repeated axis NumPy's own error."""
import numpy as np
import pytest

from numpy_compare import compare, raises_like

pytestmark = pytest.mark.xla


@pytest.mark.parametrize("reduce", [
    lambda x: np.median(x, keepdims=True), lambda x: np.quantile(x, 0.5, keepdims=True),
    lambda x: np.percentile(x, [10, 50], keepdims=True),
    lambda x: np.nanmedian(x, keepdims=True), lambda x: np.nanquantile(x, 0.5, keepdims=True),
    lambda x: np.median(x),
], ids=["median", "quantile", "percentile", "nanmedian", "nanquantile", "median-no-keepdims"])
def test_a_0d_array_keeps_numpys_kind(reduce):
    compare(reduce, np.array(3.0))


@pytest.mark.parametrize("reduce", [
    lambda x: np.median(x, axis=(0, 0)), lambda x: np.quantile(x, 0.5, axis=(1, -1)),
    lambda x: np.nanmedian(x, axis=(0, 0)), lambda x: np.median(x, axis=2),
], ids=["median", "quantile", "nanmedian", "out-of-range"])
def test_axis_errors_are_numpys(reduce):
    raises_like(reduce, np.arange(6.0).reshape(2, 3))
