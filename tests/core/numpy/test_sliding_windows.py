"""np.lib.stride_tricks.sliding_window_view: NumPy's windows over any axes (repeated ones
too), a read-only view that follows later writes to its array and is returned as a view of
the caller's array, NumPy's errors, and a refusal that names the fix for long windows."""
import numpy as np
import pytest
from numpy.lib.stride_tricks import sliding_window_view as windows
from psc_jit.core import UnsupportedError, jit
from psc_jit.core.numpy.rearrange import WINDOW_ELEMENTS

from numpy_compare import compare, raises_like

pytestmark = pytest.mark.xla

X = np.arange(12.0).reshape(3, 4)


@pytest.mark.parametrize("call", [
    lambda x: windows(x, (2, 2)),
    lambda x: windows(x, (2, 2)).sum(axis=(-1, -2)),
    lambda x: windows(x, 2, axis=1).mean(-1),
    lambda x: windows(x, (2, 2), axis=(1, 1)),
    lambda x: windows(x, (3, 1), axis=(-1, 0)),
    lambda x: windows(x[0], 4),
    lambda x: windows(x.astype(np.int16), 2, axis=0).max(-1),
], ids=["2-d", "2-d-sums", "rows-means", "one-axis-twice", "negative-axis", "whole-row",
        "int16-maxima"])
def test_windows_are_numpys(call):
    compare(call, X)


def test_a_moving_maximum_of_a_long_signal():
    compare(lambda v: windows(v, 5).max(axis=1), np.random.default_rng(0).random(500))


def test_the_view_follows_later_writes_and_aliases_the_callers_array():
    def later(x):
        w = windows(x, 2, axis=1)
        x[0, 0] = -5.0
        return w
    compare(later, X.copy())


@pytest.mark.parametrize("call", [
    lambda x: windows(x, 5, axis=1), lambda x: windows(x, 2), lambda x: windows(x, -1, axis=1),
    lambda x: windows(x, (2, 2), axis=1), lambda x: windows(x, 2, axis=2),
], ids=["too-long", "too-few-windows", "negative", "more-windows-than-axes", "no-such-axis"])
def test_errors_are_numpys(call):
    raises_like(call, X)


def test_writing_into_the_windows_raises_numpys_error():
    def write(x):
        windows(x, 2, axis=1)[0, 0, 0] = 1.0
    raises_like(write, X.copy())


def test_a_long_window_is_refused_with_the_fix():
    with pytest.raises(UnsupportedError, match="np.cumsum"):
        jit(lambda v: windows(v, WINDOW_ELEMENTS + 1).mean(-1))(np.ones(200))
