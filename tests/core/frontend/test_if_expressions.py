"""`a if test else b` on a traced test: both branches traced into one conditional, NumPy's
results either way (inside comprehensions and nested too), the branch not taken never raising
at run time, and a clear refusal, with the line, when the branches give different things."""
import sys

import numpy as np
import pytest
from psc_jit.core import UnsupportedError, jit

sys.path.insert(0, __file__.rsplit("/frontend/", 1)[0] + "/numpy")
from numpy_compare import compare  # noqa: E402

pytestmark = pytest.mark.xla


def signed(x):
    return x * 2.0 if x.sum() > 0 else -x


def nested(x):
    return x.max() if x[0] > 1 else (x.min() if x[0] < -1 else x.mean())


def centroids(X, labels, C):
    return np.stack([X[labels == k].mean(0) if np.any(labels == k) else C[k]
                     for k in range(C.shape[0])])


@pytest.mark.parametrize("x", [np.array([1.0, 2.0]), np.array([-1.0, -2.0])],
                         ids=["then", "else"])
def test_either_branch_is_numpys(x):
    compare(signed, x)


@pytest.mark.parametrize("first", [2.0, -2.0, 0.5])
def test_nested_expressions(first):
    compare(nested, np.array([first, 3.0, -4.0]))


def test_an_empty_cluster_keeps_its_centroid_as_in_numpy():
    rng = np.random.default_rng(0)
    X, C = rng.random((20, 2)), rng.random((4, 2))
    labels = np.array([0, 1, 3] * 6 + [0, 1])        # cluster 2 is empty
    compare(centroids, X, labels, C, close=True)


def test_a_static_test_runs_only_its_branch():
    def first_or_zero(x, n):
        return x[n] if n < x.shape[0] else 0.0
    assert jit(first_or_zero, static_argnames="n")(np.arange(3.0), 7) == 0.0


def test_the_branch_not_taken_does_not_raise_at_run_time():
    def guarded(x, i):
        return x[i] if i < x.shape[0] else np.float64(-1.0)
    jitted = jit(guarded)
    assert jitted(np.arange(3.0), np.int64(10)) == -1.0
    assert jitted(np.arange(3.0), np.int64(2)) == 2.0


def test_branches_of_different_structure_are_refused_with_the_line():
    def mismatched(x):
        return (x, x) if x.sum() > 0 else x
    with pytest.raises(UnsupportedError, match="if test else b") as info:
        jit(mismatched)(np.ones(2))
    assert "return (x, x) if x.sum() > 0 else x" in str(info.value)


def test_branches_of_two_types_compile_for_the_first_and_run_plain_for_the_other():
    """`x.mean() if ... else 0.0` is a NumPy float64 or a Python float by the data."""
    from psc_jit.core import DataDependentShapeError

    def mean_or_zero(x):
        return x.mean() if x.sum() > 0 else 0.0
    got = jit(mean_or_zero)(np.array([1.0, 2.0]))
    assert type(got) is np.float64 and got == 1.5
    with pytest.raises(DataDependentShapeError, match="another type"):
        jit(mean_or_zero)(np.array([-1.0, -2.0]))


def test_a_cell_ends_as_the_plain_cell_whichever_branch_runs():
    from IPython.core.interactiveshell import InteractiveShell
    shell = InteractiveShell.instance()
    shell.run_line_magic("load_ext", "psc_jit")
    cell = "y = x.mean() if x.sum() > 0 else 0.0\n"
    for x in (np.array([1.0, 2.0]), np.array([-1.0, -2.0]), np.array([3.0, 1.0])):
        plain = {"np": np, "x": x.copy()}
        exec(cell, plain)
        shell.user_ns.update(np=np, x=x.copy())
        shell.run_cell_magic("psc_jit", "--quiet --no-compare", cell)
        assert type(shell.user_ns["y"]) is type(plain["y"]) and shell.user_ns["y"] == plain["y"]


# -- `and`, `or`, chained comparisons and bool() where a value is wanted ------------------------

def both_positive(x):
    ok = x.sum() > 0 and x.max() < 10
    either = x.min() > 0 or x.max() < 0
    within = 0.1 < x.mean() < 0.9
    return ok, either, within, bool(x.any()), not x.all()


@pytest.mark.parametrize("x", [np.array([0.5, 0.2]), np.array([-1.0, 0.0]), np.zeros(2),
                               np.array([20.0, 1.0]), np.array([-2.0, -3.0])])
def test_and_or_and_chained_comparisons_give_pythons_values(x):
    compare(both_positive, x)


def test_and_or_give_an_operand_of_its_own_type():
    def pick(x, w):
        return (x.sum() and w.sum()), (w.min() or x.max())

    for x, w in ((np.ones(2), np.arange(3.0)), (np.zeros(2), np.arange(3.0)),
                 (np.ones(2), np.arange(1.0, 4.0))):
        compare(pick, x, w)


def test_a_static_operand_short_circuits_as_in_python():
    def guarded(x, n):
        return n > 0 and x[n - 1] > 0.5

    assert jit(guarded)(np.ones(3), 0) is False          # x[-1] is never read
    assert jit(guarded)(np.ones(3), 2) == np.True_


def test_each_operand_of_a_chain_is_made_once():
    def chained(x):
        return 0.0 < x.mean() < 1.0

    assert jit(chained)(np.array([0.5, 0.25])) == np.True_
    graph = jit(chained).trace(np.array([0.5, 0.25])).graph
    assert sum("reduce" in e.prim.name for e in graph.all_eqns()) == 1
