"""`obj.a op= v` and `c[k] op= v` in jitted code: an array reached through an argument's
attribute or item is updated in place on every call, as plain Python updates it; an update
that stores a new object is still refused with its reason."""
import types

import numpy as np
import psc_jit
import pytest
from psc_jit.core.tracing import UnsupportedError

pytestmark = pytest.mark.xla


class Params:
    def __init__(self):
        self.w = np.ones(3)
        self.layers = [np.zeros(3), np.full(3, 2.0)]


def step(p, g, lr):
    p.w -= lr * g
    p.layers[1] *= 0.5
    p.layers[0][1:] += g[:2]
    return p.w.sum()


def namespace_step(s, g):
    s.w += g
    s.state["m"] **= 2
    return s.w @ s.state["m"]


@pytest.mark.parametrize("make, fn, extra", [
    (Params, step, (0.1,)),
    (lambda: types.SimpleNamespace(w=np.arange(3.0), state={"m": np.full(3, 1.5)}),
     namespace_step, ()),
])
def test_updates_through_attributes_and_items_land_once_per_call(make, fn, extra):
    plain_obj, traced_obj = make(), make()
    jitted = psc_jit.jit(fn)
    g = np.array([1.0, -2.0, 0.5])
    for _ in range(3):                          # a compile, then cache hits
        want = fn(plain_obj, g, *extra)
        got = jitted(traced_obj, g, *extra)
        assert type(got) is type(want) and got == want
        for name, value in vars(plain_obj).items():
            held = getattr(traced_obj, name)
            if isinstance(value, np.ndarray):
                np.testing.assert_array_equal(held, value)
            elif isinstance(value, list):
                for a, b in zip(held, value, strict=True):
                    np.testing.assert_array_equal(a, b)
            else:
                assert held.keys() == value.keys()
                for key in value:
                    np.testing.assert_array_equal(held[key], value[key])


def test_the_updated_array_stays_the_same_object():
    p = Params()
    w, second = p.w, p.layers[1]
    psc_jit.jit(step)(p, np.ones(3), 0.5)
    assert p.w is w and p.layers[1] is second
    np.testing.assert_array_equal(w, [0.5, 0.5, 0.5])


def test_an_update_that_stores_a_new_object_is_refused_with_its_reason():
    def count(s, x):
        s.n += 1
        return x * 2

    s = types.SimpleNamespace(n=0)
    with pytest.raises(UnsupportedError, match="sets s.n"):
        psc_jit.jit(count).trace(s, np.ones(2))
    assert s.n == 0                             # left as it was
