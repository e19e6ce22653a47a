"""np.convolve and np.correlate: NumPy's results in every mode and dtype, for kernels summed as
shifted slices and kernels long enough for XLA's convolution; NumPy's errors; and their
gradients and vmap, by the primitive's rules."""
import re

import numpy as np
import pytest
from psc_jit.core import grad, jit, vmap
from psc_jit.core.primitives.correlation import UNROLLED_TAPS

from numpy_compare import compare, raises_like

pytestmark = pytest.mark.xla

MODES = ("valid", "same", "full")
RTOL = {np.dtype(np.float16): 1e-2, np.dtype(np.float32): 1e-5, np.dtype(np.complex64): 1e-5}
# (len(a), len(v)): v shorter, longer (NumPy swaps them), one element, equal, long kernels
LENGTHS = [(9, 4), (4, 9), (6, 1), (1, 6), (5, 5), (50, 40), (40, 50), (120, 64)]


def every_mode(a, v):
    return tuple(f(a, v, mode) for f in (np.convolve, np.correlate) for mode in MODES)


def _values(dtype, n, rng):
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.random(n) < 0.4
    if dtype.kind in "iu":
        info = np.iinfo(dtype)   # full range: products and sums wrap as NumPy's do
        return rng.integers(info.min, info.max, n, dtype=dtype, endpoint=True)
    if dtype.kind == "c":
        return (rng.standard_normal(n) + 1j * rng.standard_normal(n)).astype(dtype)
    return rng.standard_normal(n).astype(dtype)


@pytest.mark.parametrize("dtype", ["float64", "float32", "float16", "complex128", "complex64",
                                   "int64", "int8", "uint16", "bool"])
@pytest.mark.parametrize("n, m", LENGTHS, ids=[f"{n}x{m}" for n, m in LENGTHS])
def test_every_mode_is_numpys(dtype, n, m):
    rng = np.random.default_rng(n * 100 + m)
    a, v = _values(dtype, n, rng), _values(dtype, m, rng)
    compare(every_mode, a, v, rtol=RTOL.get(np.dtype(dtype), 0.0),
            close=np.dtype(dtype).kind in "fc")


def test_mixed_operands_promote_as_numpy_does():
    def mixed(a, v, w):
        return (np.convolve(a, 2.0), np.convolve(a, v), np.correlate(w, a, "full"),
                np.convolve(3, v), np.correlate(a, [1, 2j]))
    compare(mixed, np.arange(5, dtype=np.float32), np.arange(3, dtype=np.int16),
            np.array([True, False, True]), close=True)


@pytest.mark.parametrize("call", [
    lambda a, v: np.convolve(a[:0], v), lambda a, v: np.convolve(a, v[:0]),
    lambda a, v: np.correlate(a[:0], v), lambda a, v: np.correlate(a, v[:0]),
    lambda a, v: np.convolve(a, v, "middle"), lambda a, v: np.correlate(a, v, "Same"),
    lambda a, v: np.convolve(a, v, 3), lambda a, v: np.correlate(a, v, 1.0),
    lambda a, v: np.convolve(a.reshape(2, 3), v), lambda a, v: np.correlate(a, v.reshape(1, 2)),
    lambda a, v: np.correlate(a, v[0]),
], ids=["convolve-empty-a", "convolve-empty-v", "correlate-empty-a", "correlate-empty-v",
        "unknown-mode", "capitalised-mode", "mode-3", "float-mode", "convolve-2d",
        "correlate-2d", "correlate-0d"])
def test_errors_are_numpys(call):
    raises_like(call, np.arange(6.0), np.arange(2.0))


def test_a_long_float_kernel_is_one_convolution_and_a_short_one_a_fusion():
    def ops(a, v):
        return re.findall(r'"stablehlo\.(\w+)"', jit(np.convolve).lower(a, v).as_text())
    long_ops = ops(np.ones(200), np.ones(UNROLLED_TAPS + 1))
    short_ops = ops(np.ones(200), np.ones(UNROLLED_TAPS))
    integer_ops = ops(np.ones(200, np.int32), np.ones(UNROLLED_TAPS + 1, np.int32))
    assert long_ops.count("convolution") == 1 and "multiply" not in long_ops
    assert "convolution" not in short_ops and short_ops.count("multiply") == UNROLLED_TAPS
    assert "convolution" not in integer_ops


@pytest.mark.parametrize("m", [3, UNROLLED_TAPS + 5])
def test_gradients_of_a_smoothing_loss_are_numpys_by_hand(m):
    """d/da and d/dv of sum(np.convolve(a, v, 'same') ** 2): the chain rule written out with
    NumPy (the convolution's transposes are correlations of the cotangent)."""
    rng = np.random.default_rng(m)
    a, v = rng.standard_normal(60), rng.standard_normal(m)

    def loss(a, v):
        return np.sum(np.convolve(a, v, "same") ** 2)
    full = np.convolve(a, v)
    start = (len(full) - len(a)) // 2       # 'same' is full[start:start + len(a)]
    ct = np.zeros_like(full)
    ct[start:start + len(a)] = 2 * full[start:start + len(a)]
    d_a = np.correlate(ct, v, "valid")
    d_v = np.correlate(ct, a, "valid")
    got_a, got_v = grad(loss, argnums=(0, 1))(a, v)
    np.testing.assert_allclose(got_a, d_a, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(got_v, d_v, rtol=1e-10, atol=1e-10)


def test_vmap_over_signals_and_over_kernels_is_numpy_per_member():
    rng = np.random.default_rng(3)
    signals, kernels = rng.standard_normal((4, 30)), rng.standard_normal((4, 5))
    by_signal = vmap(lambda a: np.convolve(a, kernels[0], "same"))(signals)
    by_both = vmap(lambda a, v: np.correlate(a, v, "full"))(signals, kernels)
    np.testing.assert_allclose(by_signal, [np.convolve(s, kernels[0], "same") for s in signals],
                               rtol=1e-12)
    np.testing.assert_allclose(by_both, [np.correlate(s, k, "full")
                                         for s, k in zip(signals, kernels, strict=True)],
                               rtol=1e-12)
