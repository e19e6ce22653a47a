"""What traced code makes and keeps must be made again on every run as plain Python does; a
function made while tracing cannot, and jit says so instead of returning a closure that
holds a traced value (issue 28, item 3)."""
import numpy as np
import pytest
from psc_jit.core import TraceError, jit

pytestmark = pytest.mark.xla


def returns_a_closure(x):
    total = x.sum()

    def scaled(v):
        return v * total
    return scaled


def test_a_closure_made_while_tracing_is_refused_not_returned():
    with pytest.raises(TraceError, match="the function `returns_a_closure.<locals>.scaled`"):
        jit(returns_a_closure)(np.arange(3.0))


def calls_badly(x):
    def inner(v, w):
        return v + w
    try:
        inner(x)
    except TypeError as err:
        return str(err)
    return ""


def test_functions_made_by_converted_code_have_their_plain_names():
    assert jit(calls_badly)(np.arange(3.0)) == calls_badly(np.arange(3.0))
