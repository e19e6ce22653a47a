"""In-place updates under jit with NumPy's meaning: setitem, augmented assignment, out=,
fill, writes through views (and copies that only look like views), write-back into the
caller's arrays, and the aliasing psc_jit refuses to guess."""
from __future__ import annotations

import hypothesis.extra.numpy as hnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy_compare import compare, raises_like
from psc_jit.core import UnsupportedError, jit
from psc_jit.core.frontend import cell
from psc_jit.core.frontend.rewrite import roll_loops

pytestmark = pytest.mark.xla

A = np.arange(24.0).reshape(4, 6)
V = np.arange(10)
B = np.arange(60, dtype=np.int32).reshape(3, 4, 5)


def writer(index, value):
    def f(a):
        a[index] = value
        return a.sum()
    return f


# -- setitem ------------------------------------------------------------------------------------

@pytest.mark.parametrize("index, value", [
    (1, 5.0), (-1, np.arange(6.0)), ((2, 3), -7), ((-1, -6), 1.5), (slice(1, 3), 9),
    (slice(None, None, -1), np.arange(6.0)), (slice(-1, 0, -2), [1, 2, 3, 4, 5, 6]),
    (slice(3, 1), 5), (slice(7, 9), 5), (slice(None, None, 3), 0), ((slice(None), slice(1, 6, 2)), 4),
    ((slice(None, None, -1), slice(None, None, -2)), np.arange(12.0).reshape(4, 3)),
    (None, 2), ((None, 1), 3), (Ellipsis, 8), ((Ellipsis, 2), np.arange(4.0)), ((), 1),
    ((1, Ellipsis, 3), 0), (slice(None), np.ones((1, 6))), (0, np.ones((1, 1, 6))),
])
def test_setitem_basic_like_numpy(index, value):
    compare(writer(index, value), A)


@pytest.mark.parametrize("array, index, value", [
    (A, [0, -1], 5), (V, [0, 0, 1], [5, 6, 7]), (V, np.array([3, 1, 3, 3]), np.arange(4.0)),
    (A, ([0, 2], [1, 5]), [10, 20]), (A, ([0, 0], [1, 1]), [10, 20]),
    (A, (slice(None), [5, 0, 5]), 1), (A, ([[0], [3]], [1, 2, 5]), np.arange(6.0).reshape(2, 3)),
    (A, A > 10, -1), (A, A > 10, -A[A > 10]), (A, np.array([True, False, True, False]),
                                               np.arange(6.0)),
    (A, (1, [True] * 6), 3), (A, [], 5), (V, [[1, 1], [2, 1]], [[5, 6], [7, 8]]),
])
def test_setitem_advanced_like_numpy(array, index, value):
    """Repeated indices: the last value written wins, as in NumPy."""
    compare(writer(index, value), array)


@pytest.mark.parametrize("index", [
    ([0, 2], slice(None), [1, 3]), (slice(None), [0, 2], [1, 3]), (1, slice(1, 3), [0, 4]),
    ([2, 0], Ellipsis, [4]),
])
def test_setitem_mixed_advanced_basic_moves_broadcast_dims_like_numpy(index):
    shape = B[index].shape
    value = np.arange(int(np.prod(shape)), dtype=np.int32).reshape(shape) * 100
    compare(writer(index, value), B)


def test_setitem_casts_like_numpy():
    def f(a, x):
        a[0] = 3.7
        a[1] = -2.9
        a[2:4] = np.array([1.5, 2.5])
        a[4] = x
        return a
    compare(f, V, 9.99)


@pytest.mark.parametrize("index, value", [
    (0, 1j), (slice(0, 2), np.ones(3)), (0, np.ones((2, 6))), (slice(None), np.ones((6, 4))),
    ([0, 1], np.ones(3)), (0, float("nan")),
])
def test_setitem_errors_like_numpy(index, value):
    def f(a):
        a[index] = value
        return a
    raises_like(f, A if not isinstance(value, float) else V)


def test_setitem_with_traced_index_arrays_repeated_last_wins():
    def f(a, idx, v):
        a[idx] = v
        return a
    g = jit(f)
    for idx in ([0, 0, 1], [3, 1, 3, 3, 1], [-1, 9, -1, 0, 0, 0]):
        idx = np.array(idx)
        compare(f, V, idx, np.arange(len(idx)) * 10, jitted=g if len(idx) == 3 else None)


def test_setitem_traced_index_out_of_bounds_leaves_input_unchanged():
    def f(a, i):
        a[0] = -1
        a[i] = 5
        return a
    raises_like(f, V, np.int64(10))
    raises_like(f, V, np.int64(-11))
    with pytest.raises(IndexError):
        jit(f)(V.copy(), np.array([1, 10]))


# -- augmented assignment, out=, fill ----------------------------------------------------------

@pytest.mark.parametrize("index", [slice(1, 3), (slice(None), 2), Ellipsis, (1, 2), 0])
def test_augmented_setitem_basic_index(index):
    def f(a):
        a[index] += 1
        a[index] *= 2
        return a
    compare(f, A)


@pytest.mark.parametrize("index", [[0, 0, 1], np.array([2, 2, 2, -1]), ([0, 0], [1, 1])])
def test_augmented_setitem_fancy_repeated_does_not_accumulate(index):
    def f(a):
        a[index] += 1
        a[index] -= np.arange(np.shape(a[index])[-1] if np.ndim(a[index]) else 1) * 0.5
        return a
    compare(f, A)


def test_augmented_setitem_traced_fancy_index():
    def f(a, idx):
        a[idx] += 1
        return a
    compare(f, V, np.array([1, 1, 4, -1, 4]))


def test_augmented_scalar_element_rebinds_like_numpy():
    """`a[0] += 1.5` on an int array: a[0] is a NumPy scalar, the sum is float, the store casts."""
    def f(a):
        a[0] += 1.5
        s = a[1]
        s += 1
        return a, s
    compare(f, V)


def test_inplace_operators_on_inputs_keep_identity():
    def f(x, y):
        x += 1
        y *= 2.5
        x //= 2
        return x, y
    got, args = compare(f, V, A)
    assert got[0] is args[0] and got[1] is args[1]


@pytest.mark.parametrize("op", ["*=", "/=", "+="])
def test_inplace_int_by_float_raises_ufunctypeerror_like_numpy(op):
    namespace = {}
    exec(f"def f(x):\n    x {op} 2.5\n    return x", namespace)
    err = raises_like(namespace["f"], V)
    assert isinstance(err, np._core._exceptions.UFuncTypeError)


def test_inplace_shape_mismatch_like_numpy():
    def f(x, y):
        x += y
        return x
    raises_like(f, np.zeros(3), np.ones((2, 3)))


def test_ufunc_out_and_fill():
    def f(a, b):
        np.add(a, 1, out=a)
        np.multiply(a[1:3], 2, out=a[1:3])
        b.fill(3)
        a[0].fill(-1)
        return a, b
    compare(f, A, V)
    compare(lambda b: b.fill(2.7), V)
    raises_like(lambda a: np.add(a, 1.5, out=a), V)


def test_whole_array_assignment():
    def f(a, b):
        a[:] = b[::-1] * 2
        a[...] = a + 1
        return a
    compare(f, A, A + 100)


def test_overlapping_self_assignment_reads_before_writing():
    def f(a):
        a[1:] = a[:-1]
        a[::-1] = a
        return a
    compare(f, V)


# -- views ----------------------------------------------------------------------------------------

def test_write_through_basic_slice_view():
    def f(a):
        v = a[1:3]
        v[0] = 5
        v[:, ::2] += 1
        return v
    compare(f, A)


def test_write_through_transpose_view():
    def f(a):
        t = a.T
        t[0] = 1
        np.swapaxes(a, 0, 1)[1, 2] = -5
        np.moveaxis(a, 0, -1)[3] *= 10
        return t
    compare(f, A)


def test_reshape_of_contiguous_array_is_a_view():
    def f(a):
        r = a.reshape(-1)
        r[3] = 7
        np.ravel(a)[4] = 8
        np.expand_dims(a, 0)[0, 1, 1] = 9
        a[None][0, 2] = 3
        return r
    compare(f, A)


def test_reshape_of_transposed_array_is_a_copy():
    def f(a):
        r = a.T.reshape(-1)
        r[3] = 7
        q = a[:, ::2].ravel()
        q[0] = -1
        return r, q
    compare(f, A)


def test_reading_a_view_after_its_base_changed():
    def f(a):
        v = a[:2]
        a[0] = 9
        y = v + 0
        a[...] = 0
        return y, v * 1
    compare(f, A)


def test_chained_views():
    def f(a):
        a[1:][::2][0] = 4
        a[::-1][1:][::3][1] = -4
        return a
    compare(f, V)


def test_view_of_view_of_transposed_array():
    def f(a):
        t = a.T
        v = t[1:]
        w = v[:, ::2]
        w[0, 1] = -3
        w[-1] += 100
        return w
    compare(f, A)


def test_flip_and_flat_are_views_broadcast_to_is_read_only():
    def f(a):
        np.flip(a, 0)[0, 0] = -1
        np.fliplr(a)[1] = 0
        a.T.flat[3] = 7
        return a

    compare(f, A)
    raises_like(lambda a: np.broadcast_to(a[0], (3, 6)).__setitem__(0, 1), A)


def test_complex_parts_are_views():
    def f(z, a):
        z.real[0] = 5
        np.imag(z)[1:] *= -1
        return z.imag, np.real(z)[::2], a.real, a.imag
    compare(f, np.arange(4) * (1 + 2j), A)
    raises_like(lambda a: a.imag.__setitem__(0, 1), A)


def test_views_see_writes_through_other_views():
    def f(a):
        x = a[:, :3]
        y = a.T
        y[1] = 5
        z = x * 1
        x[0] = -1
        return z, y[:, 0] + 0
    compare(f, A)


def test_returned_views_alias_their_inputs_like_numpy():
    def f(a, i):
        return a, a[1:], a.T, a.reshape(-1)[::2], a[i], a[[0, 1]]
    got, args = compare(f, A, np.int64(2))
    assert got[0] is args[0]


def test_returned_views_of_one_result_alias_each_other():
    def f(a):
        b = a * 2
        return b, b[1:], b.T[::2]
    got, _ = compare(f, A)
    assert np.shares_memory(got[0], got[1]) and np.shares_memory(got[0], got[2])


def test_ambiguous_reshape_then_write_is_unsupported():
    """`a.T + 1` is laid out in Fortran order by NumPy: reshaping it copies. psc_jit does not
    follow NumPy's layout of computed results, so it refuses to guess when it matters."""
    def f(a):
        b = a.T + 1
        r = b.reshape(-1)
        r[0] = 100
        return b
    with pytest.raises(UnsupportedError, match="view or a copy"):
        jit(f)(A.copy())

    def g(a):
        b = a.T + 1
        s = b.reshape(-1).sum()       # the reshape is dead before the write: fine
        b[0] = s
        return b
    compare(g, A)


def test_non_contiguous_inputs_follow_their_layout():
    def f(a):
        r = a.reshape(-1)
        r[0] = -1
        return a, r
    g = jit(f)
    for layout in (A.copy(), np.asfortranarray(A), A.T.copy().T, A[:, ::2].copy()):
        plain, compiled = layout.copy(order="K"), layout.copy(order="K")
        want, got = f(plain), g(compiled)
        np.testing.assert_array_equal(got[1], want[1])
        np.testing.assert_array_equal(compiled, plain)
        assert np.shares_memory(got[1], compiled) == np.shares_memory(want[1], plain)


# -- write-back: the caller's arrays ----------------------------------------------------------

def test_mutated_input_passed_twice():
    def f(a, b):
        a[0] = 1
        b[1] += 2
        return a + b
    x = A.copy()
    y = A.copy()
    got = jit(f)(x, x)
    want = f(y, y)
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(x, y)


def test_overlapping_inputs_with_mutation_are_unsupported():
    def f(a, b):
        a[0] = 100
        return b * 1
    x = np.arange(10.0)
    with pytest.raises(UnsupportedError) as info:
        jit(f)(x, x[1:])
    assert "a and b" in str(info.value)
    np.testing.assert_array_equal(x, np.arange(10.0))
    compare(lambda a, b: a + b[0], x[1:], x[:-1])    # reading overlapping inputs is fine


def test_read_only_input_is_not_written():
    def f(a):
        a[0] = 5
        return a
    x = np.arange(3.0)
    x.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        jit(f)(x)
    np.testing.assert_array_equal(x, np.arange(3.0))


def test_loop_with_traced_index():
    def step(a, i):
        a[i] = a[i - 1] * 2 + a[i]
        a[-i] -= 1
        return a

    g = jit(step)
    plain, compiled = A.copy(), A.copy()
    for i in range(-3, 4):
        step(plain, np.int64(i))
        g(compiled, np.int64(i))
    np.testing.assert_array_equal(compiled, plain)


def _rolled_cell(source: str):
    analysis = cell.analyze_cell(source)
    fn = cell.make_cell_function(analysis, ["a"], {"np": np}, transform=roll_loops)
    return jit(fn)


def test_rolled_loop_writes_through_traced_index():
    source = ("for i in range(1, 10):\n"
              "    a[i] = a[i - 1] * 2 + a[i]\n"
              "    v = a[:, 0]\n"
              "    v[-i] -= 1\n")
    plain = {"np": np, "a": np.arange(30.0).reshape(3, 10).T.copy()}
    compiled = plain["a"].copy()
    exec(source, plain)
    jitted = _rolled_cell(source)
    jitted(a=compiled)
    np.testing.assert_array_equal(compiled, plain["a"])
    graph = jitted.trace(a=compiled.copy()).graph
    assert any(e.prim.name == "while_loop" for e in graph.eqns)


def test_rolled_loop_index_out_of_bounds_raises_and_writes_nothing():
    x = np.arange(10.0)
    with pytest.raises(IndexError, match="index 10 is out of bounds for axis 0 with size 10"):
        _rolled_cell("for i in range(10):\n    a[i + 1] = a[i]\n")(a=x)
    np.testing.assert_array_equal(x, np.arange(10.0))


# -- hypothesis: random basic index tuples, written -------------------------------------------

@st.composite
def shapes_indices_values(draw):
    shape = draw(hnp.array_shapes(min_dims=1, max_dims=4, min_side=0, max_side=5))
    index = draw(hnp.basic_indices(shape, allow_newaxis=True, allow_ellipsis=True))
    selected = np.empty(shape)[index].shape
    kept = selected[draw(st.integers(0, len(selected))):]
    value_shape = tuple(draw(st.sampled_from([n, 1])) for n in kept)   # broadcasts to selected
    return shape, index, value_shape


@settings(max_examples=30, deadline=None)
@given(shapes_indices_values(), st.booleans())
def test_random_basic_indices_write_like_numpy(case, augmented):
    shape, index, value_shape = case
    x = np.arange(int(np.prod(shape)), dtype=np.int64).reshape(shape)
    value = -1 - np.arange(int(np.prod(value_shape)), dtype=np.int64).reshape(value_shape)

    def f(a):
        if augmented:
            a[index] += value
        else:
            a[index] = value
        return a[index] * 1
    compare(f, x)
