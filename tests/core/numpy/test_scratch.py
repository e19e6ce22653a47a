"""Arrays made inside traced code (np.empty, np.zeros, ..._like, np.ndarray, np.arange, np.eye,
np.copy, np.array) are traced buffers: written with traced values, through views and aliases,
in loops of any length, with NumPy's values and dtypes; `out=` into them for every ufunc and
reduction that takes it; and while only constants are written into them they still serve as
indices, masks and bounds."""
from __future__ import annotations

import numpy as np
import pytest
from numpy_compare import compare, raises_like
from psc_jit.core import ConcretizationError, check_graph, jit

pytestmark = pytest.mark.xla

X = np.linspace(0.5, 3.0, 6)
XI = np.arange(1, 7, dtype=np.int32)


def running_sum(x):
    out = np.empty_like(x)
    out[0] = x[0]
    for i in range(1, x.shape[0]):
        out[i] = out[i - 1] + x[i]
    return out


def differences(x):
    y = np.zeros((2, x.shape[0]))
    y[:, 1:] = x[1:] - x[:-1]
    return y


def into_ndarray(x):
    res = np.ndarray((x.shape[0],), dtype=x.dtype)
    res[:] = x * 2
    return res


@pytest.mark.parametrize("x", [X, XI, X[:1], X[:2]], ids=["float", "int32", "one", "two"])
@pytest.mark.parametrize("f", [running_sum, differences, into_ndarray])
def test_scratch_arrays_written_with_traced_values(f, x):
    compare(f, x)


@pytest.mark.parametrize("n", [0, 1, 2, 5])
def test_loops_of_any_length_fill_a_scratch_array(n):
    def f(x, n):
        out = np.zeros(x.shape[0], dtype=x.dtype)
        for i in range(n):
            out[i] = x[i] * i
        return out
    compare(f, X, n)
    compare(f, XI, n)


def test_creation_functions_all_give_traced_buffers():
    def f(x):
        a = np.zeros(3)
        b = np.ones((2, 3), dtype=np.int16)
        c = np.full(3, 7, dtype=np.uint8)
        d = np.full_like(x, 2.5)
        e = np.eye(3)
        g = np.identity(2, dtype=np.float32)
        h = np.arange(3.0)
        k = np.copy(h)
        m = np.array([1, 2, 3])
        z = np.zeros_like(x[:3], dtype=complex)
        for arr in (a, c, h, k, m, z):
            arr[1] = x[0]
        b[1] = x[:3]
        d[::2] = x[1]
        e[0] = x[:3]
        g[1, 1] = x[2]
        return a, b, c, d, e, g, h, k, m, z
    compare(f, X)


def test_a_traced_fill_value_and_arrays_of_traced_values():
    def f(x):
        return np.full(3, x[0]), np.array([x.sum(), x.max(), 1.0]), np.array([[x[0], 1], [2, x[1]]])
    compare(f, X)
    compare(f, XI)


def test_fortran_order_and_like_layouts_keep_numpys_views():
    def f(x):
        a = np.zeros((2, 3), order="F")
        a[0] = x[:3]
        flat = a.T.reshape(-1)          # a view: a's data is in Fortran order
        flat[0] = x[5]
        return a
    compare(f, X)


def test_views_and_aliases_of_a_scratch_array_see_each_others_writes():
    def f(x):
        y = np.zeros((3, 2))
        alias = y
        column = y[:, 1]
        column[:] = x[:3]
        alias[0, 0] = x[5]
        return y, column
    compare(f, X)


def test_constants_written_into_a_scratch_array_keep_it_usable_as_index_and_mask():
    def f(x):
        mask = np.zeros(x.shape[0], dtype=bool)
        mask[::2] = True
        order = np.arange(x.shape[0])[::-1]
        k = np.arange(4)[-1]
        return x[mask], x[order], x[:k], np.zeros(int(order[0]))
    graph = jit(f).trace(X).graph
    check_graph(graph)
    compare(f, X)


def test_a_scratch_array_in_a_static_branch_and_loop_bound():
    def f(x):
        steps = np.array([2])
        acc = np.zeros(1)
        if steps[0] > 1:
            for i in range(steps[0]):
                acc = acc + x[i]
        return acc
    compare(f, X)


def test_out_into_scratch_arrays_for_ufuncs_and_reductions():
    def f(x):
        m = x.reshape(2, 3)
        a = np.empty(3)
        np.sum(m, axis=0, out=a)
        b = np.empty((), dtype=int)
        np.max(m, out=b)
        c = np.empty((2, 2))
        np.matmul(m, m.T, out=c)
        d = np.empty((2, 2))
        np.dot(m, m.T, out=d)
        q, r = np.empty_like(m), np.empty_like(m)
        np.divmod(m, 0.7, out=(q, r))
        e = np.empty_like(m)
        np.cumsum(m, axis=1, out=e)
        g = np.empty(2)
        np.add.reduce(m, axis=1, out=g)
        h = np.empty((2, 3))
        np.maximum.accumulate(m, axis=1, out=h)
        k = np.empty(3, dtype=np.int64)
        np.argmax(m, axis=0, out=k)
        p = np.zeros(())
        np.mean(m, out=p)
        s = np.empty_like(m)
        np.add(m, 1, out=s)
        return a, b, c, d, q, r, e, g, h, k, p, s
    compare(f, X)


def test_out_returns_the_out_array():
    def f(x):
        t = np.empty_like(x)
        r = np.multiply(x, 2, out=t)
        s = np.empty(())
        u = np.sum(x, out=s)
        return r is t, u is s, t, s
    compare(f, X)


def sum_into_wrong_ndim(x):
    return np.sum(x.reshape(2, 3), axis=1, keepdims=True, out=np.empty(2))


def add_into_wrong_shape(x):
    return np.add(x, x, out=np.empty(5))


def add_float_into_int(x):
    return np.add(x, 1.5, out=np.zeros(6, dtype=np.int32))


def test_out_shape_errors_like_numpy():
    raises_like(add_into_wrong_shape, X)
    with pytest.raises(ValueError, match="wrong number of dimensions"):
        sum_into_wrong_ndim(X)
    with pytest.raises(ValueError, match="wrong number of dimensions"):
        jit(sum_into_wrong_ndim)(X)


def test_writing_into_an_array_made_outside_names_the_line_and_the_cause():
    outside = np.zeros(6)

    def f(x):
        outside[:] = x
        return x

    with pytest.raises(ConcretizationError) as info:
        jit(f)(X)
    text = str(info.value)
    assert text.startswith("line ") and "outside[:] = x" in text
    assert "written into a NumPy array that is not traced" in text
    assert "make that array in the cell or function itself" in text


def test_int_dtypes_keep_numpys_casting_when_written():
    def f(x):
        out = np.zeros(3, dtype=np.int8)
        out[0] = x[0] * 100
        out[1:] = x[1:3]
        return out
    compare(f, X)
    raises_like(add_float_into_int, XI)
