"""What a traced value says it is: `isinstance`, `type` and `np.isscalar` answer, in compiled
code, as they do for the value it stands for (an ndarray, a NumPy scalar, a Python number),
so code that branches on them takes the branch plain Python takes."""
import numbers

import numpy as np
import pytest
from psc_jit.core import jit

pytestmark = pytest.mark.xla

X = np.linspace(0.0, 3.0, 6)


def scaled(v):
    return v * 2 if isinstance(v, np.ndarray) else v + 1


def by_kind(x):
    return (scaled(x), scaled(x.sum()), scaled(float(x.max())), scaled(x[1] > 1),
            isinstance(x.sum(), numbers.Number), isinstance(x, numbers.Number),
            isinstance(x.sum(), np.floating), isinstance(int(x.argmax()), int),
            isinstance(x[0] > 1, np.bool_), isinstance(x.tolist(), list))


def by_type(x):
    return (type(x) is np.ndarray, type(x.sum()).__name__, type(float(x[2])) is float,
            type(x)(3).shape, np.isscalar(x), np.isscalar(x.sum()), np.isscalar(x[1] * 2.0))


@pytest.mark.parametrize("f", [by_kind, by_type])
def test_traced_values_answer_as_the_values_they_stand_for(f):
    got, want = jit(f)(X), f(X)
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        assert type(g) is type(w) and np.array_equal(g, w), (g, w)
