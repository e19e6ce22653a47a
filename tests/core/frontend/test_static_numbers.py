"""Numbers a function reads from outside (a global float, an attribute) are inputs of the
compiled program; where the code needs one as a Python value (text, a length, a comparison
Python itself makes), the trace reads it as a value guarded by value instead, and a change of
it is a cache miss that names it. A value that also depends on an argument is not made
static: the code's need is refused as before, at its line."""
import numpy as np
import pytest
from psc_jit.core import ConcretizationError, jit

pytestmark = pytest.mark.xla

X = np.arange(6.0)
weights = [3.0, 1.0, 2.0]
lr = 0.5


class Settings:
    dt = 0.25


settings = Settings()


def by_weight(x):
    return x[sorted(range(3), key=lambda i: weights[i])]


def labelled(x):
    return x * lr, f"lr={lr}"


def steps(x):
    return x[:int(1 / settings.dt)]


@pytest.mark.parametrize("f", [by_weight, labelled, steps])
def test_a_number_needed_as_a_python_value_is_guarded_by_value(f):
    global lr
    jitted = jit(f)
    first = jitted(X)
    assert _same(first, f(X))
    assert _same(jitted(X), first) and jitted.last_call.cache_hit
    old = (list(weights), lr, settings.dt)
    weights[0], lr, settings.dt = 0.5, 0.25, 0.5
    try:
        assert _same(jitted(X), f(X))
        assert not jitted.last_call.cache_hit
        assert "→" in jitted.last_call.miss_reason
    finally:
        weights[:], lr, settings.dt = old


def test_a_value_that_depends_on_an_argument_too_is_refused_at_its_line():
    def f(x):
        return f"{x.sum() * lr:.2f}"
    with pytest.raises(ConcretizationError, match="the text of a traced value") as err:
        jit(f)(X)
    assert "return f\"{x.sum() * lr:.2f}\"" in str(err.value)


def _same(got, want) -> bool:
    if isinstance(want, tuple):
        return type(got) is tuple and all(_same(g, w) for g, w in zip(got, want, strict=True))
    if isinstance(want, np.ndarray):
        return got.dtype == want.dtype and np.array_equal(got, want)
    return type(got) is type(want) and got == want
