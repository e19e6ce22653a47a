"""Slices whose bounds depend on a rolled loop's index: `x[:i]`, `L[j + 1:, :j]`,
`A[i, :i + 1] *= a`, `x[i:i + 3]`, read, combined, reduced, multiplied and written, with
NumPy's values (NaN/inf outside the slice never leak), NumPy's errors, and one while loop
whatever the trip count."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from numpy_compare import compare as exact_compare
from numpy_compare import copies
from psc_jit.core import UnsupportedError, check_graph, jit

pytestmark = pytest.mark.xla


def compare(f, *args):
    """Like NumPy; float sums over a padded slice may round differently (reassociation)."""
    return exact_compare(f, *args, rtol=1e-12)

rng = np.random.default_rng(7)
N = 6
G = rng.standard_normal((N, N))
SPD = G @ G.T + N * np.eye(N)
B = rng.standard_normal(N)


def cholesky(A):
    n = A.shape[0]
    L = np.zeros_like(A)
    for j in range(n):
        L[j, j] = np.sqrt(A[j, j] - L[j, :j] @ L[j, :j])
        L[j + 1:, j] = (A[j + 1:, j] - L[j + 1:, :j] @ L[j, :j]) / L[j, j]
    return L


def forward_substitution(L, b):
    n = b.shape[0]
    x = np.zeros_like(b)
    for i in range(n):
        x[i] = (b[i] - L[i, :i] @ x[:i]) / L[i, i]
    return x


def scale_lower(A, alpha):
    A = A.copy()
    for i in range(A.shape[0]):
        A[i, :i + 1] *= alpha
    return A


def lu_in_place(A):
    A = A.copy()
    n = A.shape[0]
    for k in range(n - 1):
        A[k + 1:, k] /= A[k, k]
        A[k + 1:, k + 1:] -= np.outer(A[k + 1:, k], A[k, k + 1:])
    return A


def stencil(x, w):
    y = np.zeros(x.shape[0] - 2)
    for i in range(x.shape[0] - 2):
        y[i] = x[i:i + 3] @ w
    return y


def prefix_stats(x):
    out = np.zeros((x.shape[0], 4))
    for i in range(1, x.shape[0]):
        out[i, 0] = x[:i].sum()
        out[i, 1] = x[:i].max()
        out[i, 2] = x[:i].mean()
        out[i, 3] = np.dot(x[i:], x[i:])
    return out


def shifted_differences(x):
    y = np.zeros_like(x)
    for i in range(1, x.shape[0]):
        y[:i] = x[1:i + 1] - x[:i]
    return y


def test_cholesky_loops():
    L, _ = compare(cholesky, SPD)
    np.testing.assert_allclose(L, np.linalg.cholesky(SPD))


def test_forward_substitution():
    compare(forward_substitution, np.linalg.cholesky(SPD), B)


@pytest.mark.parametrize("alpha", [0.5, 2])
def test_in_place_update_of_a_slice_of_traced_length(alpha):
    compare(scale_lower, SPD, alpha)
    compare(scale_lower, np.arange(36, dtype=np.int64).reshape(6, 6), 3)


def test_rank_one_update_with_outer():
    compare(lu_in_place, SPD)


def test_a_slice_of_fixed_length_is_an_exact_view():
    compare(stencil, B, np.array([1.0, -2.0, 1.0]))
    graph = jit(stencil).trace(B, np.array([1.0, -2.0, 1.0])).graph
    assert not any(e.prim.name == "select_n" or e.prim.name == "select"
                   for e in graph.all_eqns())


@pytest.mark.parametrize("x", [B, np.arange(1, 7, dtype=np.int32), B[:1], B[:2]],
                         ids=["float", "int32", "one", "two"])
def test_reductions_of_prefixes_and_suffixes(x):
    compare(prefix_stats, x)


def test_slices_that_start_at_different_positions_are_aligned():
    compare(shifted_differences, B)
    compare(shifted_differences, np.arange(6, dtype=np.int16))


def test_nan_and_inf_outside_the_slice_do_not_leak():
    x = np.array([1.0, 2.0, np.nan, np.inf, -np.inf, np.nan])
    compare(prefix_stats, x)

    def masked_product(x, y):
        out = np.zeros(x.shape[0])
        for i in range(x.shape[0]):
            out[i] = x[:i] @ y[:i]
        return out
    compare(masked_product, x, x[::-1].copy())


def test_nan_and_inf_outside_a_matrix_window_do_not_leak():
    a = np.where(np.tril(np.ones((N, N)), -1) > 0, SPD, np.nan)   # NaN on and above the diagonal
    a[0, -1] = np.inf

    def lower_products(a, x):
        out = np.zeros((a.shape[0], 2))
        for j in range(a.shape[0]):
            out[j, 0] = (a[j + 1:, :j] @ x[:j]).sum()
            out[j, 1] = (x[j + 1:] @ a[j + 1:, :j]).sum()
        return out
    compare(lower_products, a, B)
    exact_compare(lower_products, a.astype(np.float32), B.astype(np.float32), rtol=1e-5)


def test_a_float_matrix_window_times_a_vector_is_one_product_of_the_window():
    """No select over the matrix: the product reads the window alone (window_matvec)."""
    graph = jit(cholesky).trace(SPD).graph
    names = [e.prim.name for e in graph.all_eqns()]
    assert "window_matvec" in names
    selects = [e for e in graph.all_eqns() if e.prim.name == "select"]
    assert all(e.outs[0].aval.ndim < 2 for e in selects), "a matrix was masked"
    int_graph = jit(cholesky).trace(np.arange(36).reshape(6, 6)).graph
    assert "window_matvec" not in [e.prim.name for e in int_graph.all_eqns()]


def writes_through_views(a, x):
    """Masked writes through each kind of view a window can be a view of, into an array
    holding NaN and inf: what lies outside each write must come through untouched."""
    a = a.copy()
    n = a.shape[0]
    every_other = a[:, ::2]                 # a static slice with a step
    flipped = a[::-1]                       # a negative step
    for i in range(n):
        a[i, :i] = x[:i] * 2                # a traced row, then a window
        a[i:, i] += 1.0                     # a traced column, window written with +=
        every_other[i, i // 2:] = -x[:every_other.shape[1] - i // 2]
        flipped[i, :i] = 7.0                # a scalar into a window of a reversed view
        a[1:, 1:][i:, :i] = 3.0             # a window of a static view of the array
        a.T[i, i:] = 5.0                    # through a transpose (written the other way)
    return a


def test_writes_of_traced_length_through_views_leave_everything_else_alone():
    a = np.full((5, 6), np.nan)
    a[0, 3], a[4, 0], a[2, 5] = np.inf, -np.inf, 0.25
    compare(writes_through_views, a, np.arange(1.0, 7.0))
    compare(writes_through_views, np.arange(30.0).reshape(5, 6), -np.arange(6.0))


def updates_then_assignments(a):
    """`a[key] += v` writes once; an assignment of such a window elsewhere, or after another
    write, still writes."""
    a = a.copy()
    for i in range(a.shape[0]):
        a[i:, 0] += 1.0
        key = (slice(i, None), 2)
        w = a[key]
        w *= 3.0
        a[i:, 1] = w                # the same values into another column
        a[key] = w                  # its own place: nothing to write
        a[i, 2] = -1.0
        a[key] = w                  # after a write into it: w is a view, so it reads -1
    return a


def test_in_place_updates_of_windows_and_assignments_of_them():
    compare(updates_then_assignments, np.arange(12.0).reshape(4, 3))


@pytest.mark.parametrize("n", [0, 1, 2])
def test_loops_of_zero_one_and_two_iterations(n):
    def f(x, n):
        out = np.zeros_like(x)
        for i in range(n):
            out[:i + 1] += x[i:].sum()
        return out
    compare(f, B, n)


def test_bounds_at_zero_and_at_the_end():
    def f(x):
        out = np.zeros(4)
        for i in range(x.shape[0]):
            out[0] += x[:i].sum() + x[i:].sum()          # empty at i = 0 and at the end
            out[1] += x[i:x.shape[0]].sum() + x[0:i].sum()
            out[2] += x[-i:].sum()                       # x[-0:] is all of x
            out[3] += x[i - 1:].sum()                    # x[-1:] at i = 0
        return out
    compare(f, B)


def test_the_graph_does_not_grow_with_the_trip_count():
    sizes = []
    for n in (40, 400):             # (a smaller matrix may write its columns another way)
        a = rng.standard_normal((n, n))
        graph = jit(cholesky).trace(a @ a.T + n * np.eye(n)).graph
        check_graph(graph)
        sizes.append(sum(1 for _ in graph.all_eqns()))
    assert sizes[0] == sizes[1]


def test_max_of_an_empty_slice_raises_like_numpy():
    def f(x):
        out = np.zeros_like(x)
        for i in range(x.shape[0]):
            out[i] = x[:i].max()
        return out
    with pytest.raises(ValueError, match="zero-size array to reduction operation maximum"):
        f(B)
    with pytest.raises(ValueError, match="zero-size array to reduction operation maximum"):
        jit(f)(B)


def test_a_length_of_one_broadcasts_like_numpy():
    def f(x):
        out = np.zeros_like(x)
        for i in range(x.shape[0]):
            out[i] = (x[:i] * x[i - 1:i]).sum()        # lengths i and 1 (0 and 0 at i = 0)
        return out
    compare(f, B)


def test_lengths_that_differ_raise_like_numpy():
    def f(x):
        out = np.zeros_like(x)
        for i in range(x.shape[0]):
            out[i] = (x[:i] * x[:i + 1]).sum()
        return out
    with pytest.raises(ValueError):
        f(B)
    with pytest.raises(ValueError, match="could not be broadcast"):
        jit(f)(B)


def test_what_cannot_be_done_with_a_slice_of_traced_length_is_refused_with_the_line():
    def f(x, k):
        return np.concatenate([x[:k], x[:1]]).sum()
    with pytest.raises(UnsupportedError) as info:
        jit(f)(B, np.int64(2))
    text = str(info.value)
    assert "return np.concatenate([x[:k], x[:1]]).sum()" in text
    assert "np.concatenate of `x[:k]`, whose length depends on a traced value" in text

    def g(x, k):
        return x[:k].shape
    with pytest.raises(UnsupportedError, match="the shape of `x.:k.`"):
        jit(g)(B, np.int64(2))


def test_returning_such_a_slice_is_refused_at_the_line_that_made_it():
    def f(x, k):
        tail = x[k:]
        return tail
    with pytest.raises(UnsupportedError) as info:
        jit(f)(B, np.int64(2))
    text = str(info.value)
    assert "'tail = x[k:]'" in text and "returning the value of `x[k:]`" in text


def test_a_loop_that_cannot_roll_such_a_slice_is_unrolled_with_static_bounds():
    def f(x):
        out = np.zeros_like(x)
        for i in range(x.shape[0]):
            out[i] = np.concatenate([x[:i], x[:1]]).sum()
        return out
    compare(f, B)


def test_a_slice_bound_to_a_name_is_usable_in_the_body_but_not_after_the_loop():
    def inside(A):
        n = A.shape[0]
        L = np.zeros_like(A)
        for j in range(n):
            row = L[j, :j]
            L[j, j] = np.sqrt(A[j, j] - row @ row)
            L[j + 1:, j] = (A[j + 1:, j] - L[j + 1:, :j] @ row) / L[j, j]
        return L
    compare(inside, SPD)

    def after(x):
        out = np.zeros_like(x)
        for i in range(x.shape[0]):
            head = x[:i]
            out[i] = head.sum()
        return out, head.sum()
    with pytest.raises(UnsupportedError, match="after the loop, a name the loop body bound to "
                       "`x.:i.`"):
        jit(after)(B)


def test_a_traced_index_that_is_not_a_loop_index():
    def f(x, k):
        return x[:k].sum(), x[k:].max(), x[k:k + 2].sum()
    for k in (0, 2, 5):
        compare(f, B, np.int64(k))


# -- hypothesis: random bounds around the loop index ------------------------------------------

def read_offsets(x, y, p, q):
    out = np.zeros(x.shape[0])
    for i in range(x.shape[0]):
        out[i] = x[i + p:i + q].sum() + x[p:i + q].sum() + x[i + p:q].sum()
    return out


def read_reversed(x, y, p, q):
    out = np.zeros(x.shape[0])
    for i in range(x.shape[0]):
        out[i] = x[p - i:q].sum() + x[:q - i].sum()
    return out


def product_of_matching(x, y, p, q):
    out = np.zeros(x.shape[0])
    for i in range(x.shape[0]):
        out[i] = x[p:i + q] @ y[p:i + q]
    return out


def write_window(x, y, p, q):
    out = np.zeros_like(x)
    for i in range(x.shape[0]):
        out[i + p:i + q] = x[i + p:i + q] * 2 + out[i + p:i + q]
        out[p:i + q] += 1
    return out


def shifted_pair(x, y, p, q):
    out = np.zeros(x.shape[0])
    for i in range(x.shape[0]):
        out[i] = (x[i + p:i + q] * y[i + p + 1:i + q + 1]).sum()
    return out


def matrix_rows(x, y, p, q):
    a = np.outer(x, y)
    out = np.zeros(x.shape[0])
    for i in range(x.shape[0]):
        out[i] = (a[i, :i + q] @ x[:i + q]) + a[p:i + q, i].sum()
    return out


def matrix_windows(x, y, p, q):
    """Matrix windows times vectors, either side: the product of the window alone."""
    a = np.outer(x, y) + np.eye(x.shape[0])
    out = np.zeros(x.shape[0])
    for i in range(x.shape[0]):
        out[i] = (a[i + p:, :i + q] @ x[:i + q]).sum() + (y[p:i] @ a[p:i, i:]).sum()
        out[i] += (a[i:, :] @ y).sum() + (x @ a[:, :i + q]).sum()
    return out


def write_rows(x, y, p, q):
    a = np.outer(x, y)
    for i in range(x.shape[0]):
        a[i, :i + q] *= 2
        a[p:i + q, i] = a[p:i + q, i] - x[p:i + q]
        a[i + p:, i:] -= np.outer(x[i + p:], y[i:]) // 4
    return a


@settings(max_examples=100, deadline=None)
@given(n=st.integers(1, 6), p=st.integers(-8, 8), q=st.integers(-8, 8),
       f=st.sampled_from([read_offsets, read_reversed, product_of_matching, write_window,
                          shifted_pair, matrix_rows, matrix_windows, write_rows]),
       dtype=st.sampled_from([np.float64, np.int64]))
@example(n=2, p=0, q=-1, f=shifted_pair, dtype=np.float64)    # lengths 1 and 0: broadcast
@example(n=3, p=0, q=2, f=write_window, dtype=np.float64)      # a value of length 1 at the end
def test_index_dependent_slices_agree_with_numpy(n, p, q, f, dtype):
    x = np.arange(1, n + 1, dtype=dtype) * (1 if dtype == np.int64 else 0.5)
    y = x[::-1].copy()
    try:
        f(*copies((x, y)), p, q)
    except (ValueError, TypeError) as err:
        with pytest.raises(type(err)):
            jit(f, static_argnames=("p", "q"))(x, y, p, q)
        return
    compare(f, x, y, p, q)


def window_functions(x, a):
    out = np.zeros((x.shape[0], 9))
    for i in range(1, x.shape[0]):
        out[i, 0] = np.linalg.norm(x[:i])
        out[i, 1] = np.where(x[:i] > 0, x[:i], 0.0).sum()
        out[i, 2] = np.outer(x[:i], x[:i]).sum()
        out[i, 3] = np.vdot(x[i:], x[i:]) + np.inner(x[:i], x[:i])
        out[i, 4] = a[:i, :i].mean(axis=0).sum() + a[:i].T.sum()
        out[i, 5] = (x[:i] > 1).any() + (x[:i] > -5).all()
        out[i, 6] = x[:i].copy().astype(np.float32).sum()
        out[i, 7] = np.abs(-x[:i]).min() + np.prod(x[:i] / 2)
        out[i, 8] = (a[i:, :i] @ x[:i]).max()
    return out


def test_numpy_functions_on_slices_of_traced_length():
    compare(window_functions, B, SPD)
