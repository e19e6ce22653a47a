"""Which draws are taken out of their statement (the draw a host step, the rest compiled):
only where nothing the statement evaluates before a draw can act or fail."""
import ast

import pytest
from psc_jit.core.frontend.hoist import hoist_of
from psc_jit.core.frontend.regions import computes

pytestmark = pytest.mark.pure


def _hoist(source):
    return hoist_of(ast.parse(source).body[0], "", computes)


@pytest.mark.parametrize("source, draws, reads", [
    ("b = a + np.random.normal(size=3)", ("np.random.normal(size=3)",), ("a",)),
    ("two = rng.integers(1, 7, size=(10, 2)).sum(axis=1)", ("rng.integers(1, 7, size=(10, 2))",),
     ()),
    ("c = X[rng.choice(len(X), size=k, replace=False)]",
     ("rng.choice(len(X), size=k, replace=False)",), ("X",)),
    ("x += rng.random(3)", ("rng.random(3)",), ("x",)),
    ("y = cfg.scale * rng.random(3) + rng.random(3)", None, None),   # `*` before the second
    ("y = np.random.rand(2) + np.random.rand(2)",
     ("np.random.rand(2)", "np.random.rand(2)"), ()),
])
def test_the_draws_taken_out_and_the_reads_checked_before_them(source, draws, reads):
    hoist = _hoist(source)
    if draws is None:
        assert hoist is None
    else:
        assert hoist.draws == draws and hoist.reads == reads


@pytest.mark.parametrize("source", [
    "x = rng.normal(size=3)",                   # nothing else to compile
    "y = f(x) + rng.normal(size=3)",            # a call before the draw
    "y = x[0] + rng.normal(size=3)",            # an item before the draw
    "z = a if c else rng.random(3) * 2",        # evaluated only sometimes
    "z = [rng.random() for _ in range(3)]",
    "w[i] += rng.random(3)",                    # the item is read before the draw
    "print(rng.random(3) * 2)",                 # another host step in it
    "np.random.seed(0)",
])
def test_a_statement_that_could_act_or_fail_before_its_draw_keeps_it(source):
    assert _hoist(source) is None
