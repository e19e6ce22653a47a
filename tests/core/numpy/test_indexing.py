"""Reading with NumPy's indexing under jit: basic indices (views), traced integer scalars,
integer arrays (fancy), static boolean masks, mixes; and NumPy's errors."""
from __future__ import annotations

import hypothesis.extra.numpy as hnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy_compare import compare, raises_like
from psc_jit.core import UnsupportedError, jit

pytestmark = pytest.mark.xla

A = np.arange(24.0).reshape(4, 6)
B = np.arange(60, dtype=np.int32).reshape(3, 4, 5)


def reader(index):
    def f(a):
        return a[index]
    return f


@pytest.mark.parametrize("index", [
    1, -1, (2, 3), (-1, -6), slice(None), slice(1, 3), slice(None, None, -1), slice(-1, 0, -2),
    slice(5, 1, -1), slice(None, None, 2), slice(3, 1), slice(7, 9), (slice(None), slice(1, 6, 3)),
    (slice(None, None, -1), slice(None, None, -2)), None, (None, 1), (1, None), Ellipsis,
    (Ellipsis, 2), (Ellipsis, None, 1, slice(0, 2)), (None, Ellipsis, None), (), (1, Ellipsis, 3),
])
def test_basic_indices_read_like_numpy(index):
    compare(reader(index), A)


@pytest.mark.parametrize("index", [(1, 2), (-1, 0), (Ellipsis, 1, 2), (1, Ellipsis, 2), (),
                                   (Ellipsis,), (None, 1, 2)])
def test_numpy_scalar_or_0d_array_like_numpy(index):
    """a[1, 2] is a NumPy scalar; a[..., 1, 2] a 0-d array."""
    compare(reader(index), A)


def test_0d_array_indices():
    x = np.array(3.5)
    compare(lambda x: (x[()], x[...], x[None], x[..., None]), x)


@pytest.mark.parametrize("index", [
    [0, -1, 0, 2], np.array([3, 3, 1]), [[0, 1], [2, -1]], ([0, 2], [1, 5]), ([0, 2], 1),
    (np.array([[0], [3]]), np.array([1, 2, 5])), (slice(None), [5, 0, 0]), (1, [2, -2]),
    np.array(2), (np.int64(1), [0, 1]), [],
])
def test_integer_array_indices_like_numpy(index):
    compare(reader(index), A)


@pytest.mark.parametrize("index", [
    ([0, 2], slice(None), [1, 3]),              # separated by a slice: broadcast dims go first
    (slice(None), [0, 2], [1, 3]),              # adjacent: in place
    ([0, 2], [1, 3]), (1, slice(1, 3), [0, 4]), ([[0], [2]], slice(None), [1, 3]),
    (Ellipsis, [1, 0]), ([2, 0], Ellipsis, [4]), (None, [1, 2], None, slice(0, 2), 3),
])
def test_mixed_advanced_and_basic_like_numpy(index):
    compare(reader(index), B)


@pytest.mark.parametrize("index", [
    np.array([True, False, True, False]), (slice(None), np.arange(6) % 2 == 0),
    A > 10, np.zeros((4, 6), bool), (np.array([False, True, True, False]), [0, 5]),
    True, False, (1, np.array([True] * 6)), [True, False, False, True],
])
def test_static_boolean_masks_like_numpy(index):
    compare(reader(index), A)


def test_traced_integer_scalar_index_including_negative():
    def f(a, i):
        return a[i], a[i, 1:4], a[:, i], a[i, ::-2], a[i, None, 2]
    g = jit(f)
    for i in range(-4, 4):
        compare(f, A, np.int64(i), jitted=g)
    assert g.last_call.cache_hit


def test_traced_integer_array_index():
    def f(a, idx):
        return a[idx], a[1, idx], a[idx, ::2]
    g = jit(f)
    compare(f, A, np.array([0, -1, 2, 2]), jitted=g)
    compare(f, A, np.array([-4, 3, 0, 1]), jitted=g)


@pytest.mark.parametrize("i", [4, -5, 100])
def test_traced_index_out_of_bounds_raises_indexerror(i):
    raises_like(lambda a, i: a[i] + 1, A, np.int64(i))


@pytest.mark.parametrize("read,shape", [
    (lambda x, i: x[i], (0,)), (lambda x, i: np.take(x, i, axis=1), (0, 2)),
    (lambda x, i: np.take_along_axis(x, i, axis=1), (2, 0))],
    ids=["getitem", "take", "take_along_axis"])
def test_an_empty_traced_index_array_reads_an_empty_array(read, shape):
    """Nothing to check at run time (the bounds check took the max of no indices)."""
    x, i = np.arange(6.0).reshape(2, 3), np.zeros(shape, np.int64)
    got, want = jit(read)(x, i), read(x, i)
    assert (got.shape, got.dtype) == (want.shape, want.dtype)


def test_traced_index_array_out_of_bounds_raises_indexerror():
    err = raises_like_type(lambda a, idx: a[idx], A, np.array([1, 7, 2]))
    assert "out of bounds for axis 0 with size 4" in str(err)


def raises_like_type(f, *args):
    with pytest.raises(IndexError) as info:
        f(*args)
    with pytest.raises(type(info.value)) as got:
        jit(f)(*args)
    return got.value


@pytest.mark.parametrize("index", [4, (0, 6), (-5,), (1, 2, 3), (Ellipsis, Ellipsis), [4],
                                   ([0, 1], [9, 0])])
def test_static_index_errors_like_numpy(index):
    raises_like(reader(index), A)


def test_a_traced_boolean_mask_selection_as_a_result_is_unsupported():
    with pytest.raises(UnsupportedError, match="depends on the data"):
        jit(lambda a: a[a > 3])(A)
    with pytest.raises(UnsupportedError, match="depends on the data"):
        jit(lambda a, m: a[m])(A, A > 3)


def test_a_slice_of_traced_length_cannot_be_returned():
    with pytest.raises(UnsupportedError, match="returning the value of `a.i:i . 2.`, whose "
                       "length depends on a traced value"):
        jit(lambda a, i: a[i:i + 2])(A, np.int64(1))


def test_a_slice_of_traced_length_works_in_arithmetic():
    def f(a, i):
        return a[i:i + 2].sum(), a[:i].max(axis=0)
    for i in (1, 3):
        got, want = jit(f)(A, np.int64(i)), f(A, np.int64(i))
        for g, w in zip(got, want, strict=True):
            assert g.dtype == w.dtype
            np.testing.assert_array_equal(g, w)


def test_basic_views_see_later_writes_to_their_base():
    def f(a):
        v = a[:2]
        w = a[::-1, 1]
        a[0] = 9
        a[3, 1] = -1
        return v + 0, w * 1
    compare(f, A)


@st.composite
def shapes_and_indices(draw):
    shape = draw(hnp.array_shapes(min_dims=0, max_dims=4, min_side=0, max_side=5))
    index = draw(hnp.basic_indices(shape, allow_newaxis=True, allow_ellipsis=True))
    return shape, index


@settings(max_examples=30, deadline=None)
@given(shapes_and_indices())
def test_random_basic_indices_read_like_numpy(case):
    shape, index = case
    x = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
    compare(reader(index), x)
