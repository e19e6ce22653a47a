"""Control-flow primitives (`while_loop`, `cond`) and the API over them (fori_loop,
while_loop, cond, switch, scan): each compiled result equals its NumPy reference (the graph
interpreter running each primitive's impl) and plain Python running the same functions."""
from __future__ import annotations

import numpy as np
import pytest
from psc_jit.core import UnsupportedError, check_graph, jit
from psc_jit.core.control import api as cf
from psc_jit.core.control import selects
from psc_jit.core.interpreter import eval_graph
from psc_jit.core.primitives import PRIMITIVES, cond_p, while_loop_p

pytestmark = pytest.mark.xla

rng = np.random.default_rng(1)


def compare(f, *args):
    """jit(f) vs plain f vs the interpreter on f's graph: same values and dtypes."""
    want = f(*args)
    traced = jit(f).trace(*args)
    check_graph(traced.graph)
    got = jit(f)(*args)
    traced_args = [a for a in args if isinstance(a, (np.ndarray, np.generic))]
    interpreted = eval_graph(traced.graph, *traced_args)
    for g, w, r in zip(_leaves(got), _leaves(want), interpreted, strict=False):
        assert np.asarray(g).dtype == np.asarray(w).dtype
        assert np.allclose(g, w, rtol=1e-12, atol=1e-12)
        assert np.allclose(r, w, rtol=1e-12, atol=1e-12)
    return traced.graph


def _leaves(tree):
    if isinstance(tree, tuple):
        return [leaf for item in tree for leaf in _leaves(item)]
    return [tree]


def count(graph, name) -> int:
    return sum(e.prim.name == name for e in graph.all_eqns())


def test_control_primitives_are_registered_with_every_rule():
    table = PRIMITIVES
    for prim in (while_loop_p, cond_p):
        assert table[prim.name] is prim and prim.multiple_results
        for rule in ("shape_rule", "dtype_rule", "impl", "lowering", "weak_type_rule"):
            assert callable(getattr(prim, rule))


# -- while_loop -------------------------------------------------------------------------------

def test_fori_loop_against_numpy_and_python():
    def f(x):
        return cf.fori_loop(0, 10, lambda i, v: v * 0.9 + x[i % 4], x[0])
    graph = compare(f, rng.random(4))
    assert count(graph, "while_loop") == 1


def test_fori_loop_with_a_tuple_carry_and_traced_bounds():
    def f(x, n):
        def body(i, val):
            total, prod = val
            return total + x[i], prod * x[i]
        return cf.fori_loop(1, n, body, (0.0, np.float64(1.0)))
    compare(f, rng.random(6) + 0.5, np.int64(5))


def test_fori_loop_on_concrete_values_runs_as_python():
    assert cf.fori_loop(0, 4, lambda i, v: v + i, 0) == 6


def test_while_loop_newton_sqrt():
    def f(a):
        def body(val):
            x, k = val
            return 0.5 * (x + a / x), k + 1
        return cf.while_loop(lambda val: np.abs(val[0] ** 2 - a) > 1e-12, body, (a, 0))
    graph = compare(f, np.float64(10.0))
    assert count(graph, "while_loop") == 1
    (x, k) = jit(f)(np.float64(10.0))
    assert type(k) is int and k == f(np.float64(10.0))[1]


def test_while_loop_with_an_array_state():
    def f(x):
        return cf.while_loop(lambda v: v.sum() < 100.0, lambda v: v * 2.0, x)
    compare(f, rng.random(5) + 0.1)


def test_a_carry_that_changes_shape_is_refused():
    def f(x):
        return cf.fori_loop(0, 3, lambda i, v: np.concatenate([v, v]), x)
    with pytest.raises(UnsupportedError, match="changes shape"):
        jit(f)(np.ones(2))


# -- cond and switch --------------------------------------------------------------------------

@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_cond_against_numpy_and_python(sign, monkeypatch):
    monkeypatch.setattr(selects, "SELECT_MAX_EQNS", 0)

    def f(x):
        return cf.cond(x.sum() > 0, lambda a: (a * 2.0, a.max()), lambda a: (-a, a.min()), x)
    graph = compare(f, sign * (rng.random(5) + 0.1))
    assert count(graph, "cond") == 1


def test_small_branches_become_a_select():
    def f(x):
        return cf.cond(x[0] > 0, lambda a: a + 1.0, lambda a: a - 1.0, x)
    graph = compare(f, rng.random(3))
    assert count(graph, "cond") == 0 and count(graph, "select") == 1


def test_cond_joins_a_python_scalar_with_an_array_scalar():
    def f(x):
        return cf.cond(x[0] > 0.5, lambda a: a.sum(), lambda a: 0.0, x)
    for x in (np.array([0.9, 1.0]), np.array([0.1, 1.0])):
        compare(f, x)


@pytest.mark.parametrize("index", [-3, 0, 1, 2, 7])
def test_switch_clamps_its_index(index, monkeypatch):
    monkeypatch.setattr(selects, "SELECT_MAX_EQNS", 0)
    branches = [lambda a: a + 1.0, lambda a: a * 3.0, lambda a: np.sin(a)]

    def f(x, i):
        return cf.switch(i, branches, x)
    graph = compare(f, rng.random(4), np.int64(index))
    assert count(graph, "cond") == 1
    assert len(next(e for e in graph.eqns if e.prim.name == "cond").params["branches"]) == 3


def test_cond_on_a_concrete_predicate_runs_one_function():
    assert cf.cond(True, lambda: "yes", lambda: 1 / 0) == "yes"


def test_branches_updating_an_array_in_place():
    def f(x):
        def grow(a):
            a[0] = 100.0
            return a.sum()
        return cf.cond(x[1] > 0.5, grow, lambda a: a.sum(), x), x
    for x in (np.array([1.0, 0.9, 2.0]), np.array([1.0, 0.1, 2.0])):
        want = f(x.copy())
        got = jit(f)(x.copy())
        assert np.allclose(got[0], want[0]) and np.allclose(got[1], want[1])


# -- scan -------------------------------------------------------------------------------------

def test_scan_cumulative_sum_against_numpy():
    def f(xs):
        return cf.scan(lambda c, x: (c + x, c * x), 0.0, xs)
    graph = compare(f, rng.random(7))
    assert count(graph, "while_loop") == 1


def test_scan_over_rows_with_a_tuple_of_xs():
    def f(a, b):
        return cf.scan(lambda c, xy: (c + xy[0] @ xy[1], (xy[0] * c).sum()), np.float64(0.0),
                       (a, b))
    compare(f, rng.random((5, 3)), rng.random((5, 3)))


# -- lowering and the interpreter -------------------------------------------------------------

@pytest.mark.usefixtures("xla_loops")     # of XLA's own loop
def test_lowering_names_regions_and_keeps_locations():
    def f(x):
        return cf.fori_loop(0, 3, lambda i, v: v + 1.0, x)
    text = jit(f).lower(np.ones(2)).as_text()
    assert '"stablehlo.while"' in text and "^bb0(" in text
    assert 'loc("e' in text and ":while_loop" in text


def test_interpreter_runs_nested_graphs():
    def f(x):
        def outer(i, v):
            return cf.fori_loop(0, 3, lambda j, w: w + x[j] * i, v)
        return cf.fori_loop(0, 4, outer, np.float64(0.0))
    x = rng.random(3)
    graph = jit(f).trace(x).graph
    assert count(graph, "while_loop") == 2
    assert np.isclose(eval_graph(graph, x)[0], f(x))
