"""Float-to-int casts where C leaves the value undefined (NaN, infinities, out of range)
give NumPy's values on this platform (x86-64), not XLA's saturation, from every float dtype
to every integer dtype, compiled by jit."""
import warnings

import numpy as np
import psc_jit
import pytest

pytestmark = pytest.mark.xla

EDGES = [np.nan, np.inf, -np.inf, 1e300, -1e300, 3.7, -3.7, -0.9, -0.0, 2.0 ** 31, 2.0 ** 63,
         -2.0 ** 63 - 5000, 2.0 ** 64, 300.0, -5.0, 70000.0, -70000.0, 3e9, -3e9, 5e9, -1e10,
         2.0 ** 32 + 7, 1.5e19, -1.5e19, 1.9e19, 255.9, -128.5, 65504.0]


@pytest.mark.skipif(__import__("platform").machine() not in ("x86_64", "AMD64"),
                    reason="NumPy's values for these casts are the x86-64 ones")
@pytest.mark.parametrize("source", ["float64", "float32", "float16"])
@pytest.mark.parametrize("target", ["int64", "int32", "int16", "int8", "uint64", "uint32",
                                    "uint16", "uint8"])
def test_cast_of_edge_values_matches_numpy(source, target):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        values = np.array(EDGES).astype(source)
        want = values.astype(target)
    got = psc_jit.jit(lambda a: a.astype(target))(values)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)
