"""Loops over arrays: `for v in x`, `for i, row in enumerate(A)`, `for a, b in zip(x, y)` over
traced arrays roll into one XLA loop (a loop over range of the length, binding the target to
the rows), with NumPy's results; rows are views, as NumPy's are; anything that is not a
traced array (a list, a Python range) iterates as written."""
import sys

import numpy as np
import pytest
from psc_jit.core import jit
from psc_jit.core.primitives import while_loop_p

sys.path.insert(0, __file__.rsplit("/frontend/", 1)[0] + "/numpy")
from numpy_compare import compare  # noqa: E402

pytestmark = pytest.mark.xla


def sum_of_squares(x):
    acc = np.float64(0.0)
    for v in x:
        acc = acc + v * v
    return acc


def weighted_rows(A):
    total = np.zeros(A.shape[1])
    for i, row in enumerate(A):
        total += row * i
    return total


def paired(x, y):
    acc = np.float64(0.0)
    for a, b in zip(x, y):      # noqa: B905 (the shorter one ends it, as in Python)
        acc = acc + a * b
    return acc


def pairs_unpacked(P):
    s = np.float64(0.0)
    for a, b in P:
        s = s + a / b
    return s


def doubled_in_place(A):
    for row in A:
        row *= 2.0
    return A.sum()


def over_a_list(x):
    out = []
    for part in [x, x * 2.0]:
        out.append(part.sum())
    return out


def loops(f, *args) -> int:
    return sum(e.prim is while_loop_p for e in jit(f).trace(*args).graph.eqns)


def test_a_loop_over_a_long_array_is_one_xla_loop():
    x = np.random.default_rng(0).random(20_000)
    compare(sum_of_squares, x, close=True)
    assert loops(sum_of_squares, x) == 1


@pytest.mark.parametrize("f, args", [
    (weighted_rows, (np.arange(12.0).reshape(4, 3),)),
    (paired, (np.arange(5.0), np.arange(3.0) + 1)),
    (pairs_unpacked, (np.arange(1.0, 9.0).reshape(4, 2),)),
], ids=["enumerate-rows", "zip-shortest", "unpacked-rows"])
def test_rows_enumerate_and_zip_are_numpys_in_one_loop(f, args):
    compare(f, *args)
    assert loops(f, *args) == 1


def test_rows_are_views_that_write_into_their_array():
    compare(doubled_in_place, np.arange(12.0).reshape(4, 3))


def test_a_list_of_arrays_iterates_as_written():
    compare(over_a_list, np.arange(3.0))
    assert loops(over_a_list, np.arange(3.0)) == 0


def test_the_target_after_the_loop_is_the_last_row_as_in_python():
    def last(x):
        for v in x:     # noqa: B007 (the loop only binds v)
            pass
        return v * 1.0      # noqa: B023 (Python leaves v bound to the last row)
    compare(last, np.arange(4.0))
