"""Scalar loop bodies that write single elements and read others after the write (`T[i, j] =
max(T[i, j], T[i, j - 1])` under one `if`, `T[i, j] = max(T[i, j], T[i + 1, j])` under the
next): each `if` is a select of the element it writes, not a conditional, and where a pass
writes one place only, a read that may be the element written picks it by comparing indices,
so the pass reads its array before its one write and XLA copies no array (nussinov's loop
nest copied its table three times a pass: 0.75 ms, now 0.23 ms). Values are NumPy's for every loop bound (no pass, one, many),
every index (negative ones, the element just written) and dtype."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from psc_jit import jit
from test_forwarding import _values
from test_sinking import _loop_copies

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "bench"))
from loops import nussinov  # noqa: E402  (the kernel as bench/loops.py runs it)

pytestmark = pytest.mark.xla

DTYPES = [np.float64, np.float32, np.int32, np.int64, np.complex128]


def two_places_in_a_nest(T):
    n = T.shape[0]
    for i in range(n - 1):
        for j in range(i + 1, n):
            if T[i, j] > 2:
                T[i, j - 1] = T[i, j] + T[i, j - 1]
            else:
                T[j, i] = T[i, j] * 2
    return T


def written_then_read(y, into, frm, stop):
    """Each pass writes y[into[k]] and reads y[frm[k]], which may be that element, or the
    one the pass before wrote; indices may be negative."""
    y = y.copy()
    for k in range(stop):
        y[into[k]] = y[into[k]] * 2 + 1
        y[k] = y[frm[k]] - y[k]
    return y


def two_places(x, stop):
    """Each branch writes an element of its own."""
    y = np.zeros_like(x)
    for i in range(stop):
        if x[i] > 0:
            y[i] = x[i] * 3
        else:
            y[i + 1] = y[i] - x[i]
    return y


def _same(got, want):
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.float64], ids=lambda d: np.dtype(d).name)
@settings(max_examples=5, deadline=None)
@given(n=st.sampled_from([0, 1, 2, 3, 7]), seed=st.integers(0, 5))
def test_branches_writing_elements_give_numpys_values(dtype, n, seed):
    T = np.random.default_rng(seed).integers(-3, 5, (n, n)).astype(dtype)
    _same(jit(two_places_in_a_nest)(T.copy()), two_places_in_a_nest(T.copy()))
    seq = (np.arange(n) % 4).astype(np.int32)
    _same(jit(nussinov)(n, seq), nussinov(n, seq))


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@settings(max_examples=8, deadline=None)
@given(stop=st.sampled_from([0, 1, 2, 6]),
       into=st.lists(st.integers(-6, 5), min_size=6, max_size=6),
       frm=st.lists(st.integers(-6, 5), min_size=6, max_size=6))
def test_a_read_of_what_the_pass_may_have_written_is_numpys(dtype, stop, into, frm):
    y = _values(6, dtype, 7)
    args = (y, np.array(into), np.array(frm), np.int64(stop))
    _same(jit(written_then_read)(*args), written_then_read(*args))


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@settings(max_examples=5, deadline=None)
@given(stop=st.sampled_from([0, 1, 2, 5]), seed=st.integers(0, 5))
def test_branches_writing_different_elements_give_numpys_values(dtype, stop, seed):
    x = _values(6, dtype, seed)
    _same(jit(two_places)(x, np.int64(stop)), two_places(x, np.int64(stop)))


@pytest.mark.usefixtures("xla_loops")     # of XLA's own loop
def test_ifs_writing_one_element_are_selects_and_copy_no_table():
    seq = (np.arange(9) % 4).astype(np.int32)
    graph = jit(nussinov).trace(9, seq).graph
    loop = next(e for e in graph.eqns if e.prim.name == "while_loop")
    pass_of_j = next(e for e in loop.params["body_graph"].eqns if e.prim.name == "while_loop")
    body = pass_of_j.params["body_graph"]
    assert not [e for e in body.eqns if e.prim.name == "cond"]
    # the `if`s' one write, and the inner loop's, made after it
    assert len([e for e in body.eqns if e.prim.name == "dynamic_update_slice"]) == 2
    assert _loop_copies(nussinov, 9, seq, array_type="s32[9,9]") == []


def test_a_pass_reading_after_its_write_copies_no_array():
    into, frm = np.arange(6) % 3, (np.arange(6) + 1) % 6
    args = (np.ones(300), np.resize(into, 300), np.resize(frm, 300), np.int64(300))
    assert _loop_copies(written_then_read, *args, array_type="f64[300]") == []
