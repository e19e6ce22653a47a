"""Traced boolean masks under jit, against NumPy: `x[mask] = v` and `x[mask] op= v` (a select),
reductions over `x[mask]` (masked reductions, NumPy's ValueError for an empty max/min at run
time), elementwise arithmetic on selections, and a clear refusal (with the line) wherever the
selection's data-dependent length would be needed."""
from __future__ import annotations

import hypothesis.extra.numpy as hnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy_compare import compare, raises_like
from psc_jit.core import UnsupportedError, jit

pytestmark = pytest.mark.xla

RNG = np.random.default_rng(5)
X = RNG.standard_normal((5, 4))


def masks_of(shape):
    """A random mask, an empty one and an all-true one."""
    return [RNG.random(shape) > 0.5, np.zeros(shape, bool), np.ones(shape, bool)]


# -- the constructs of real code --------------------------------------------------------------

def clip_and_stats(x, limit):
    x[x > limit] = limit
    x[x < -limit] -= 1.0
    clipped = np.count_nonzero(x == limit)
    positive_mean = x[x > 0].mean()
    largest_negative = x[x < 0].max()
    return x, clipped, positive_mean, largest_negative


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_clipping_and_masked_statistics_like_numpy(dtype):
    x = RNG.standard_normal(200).astype(dtype)
    compare(clip_and_stats, x, 1.5, close=True)


def test_selection_through_a_named_mask_and_same_mask_values():
    def f(s, v):
        m = s <= 0.1
        s[m] = 1.0
        v[m] = v[m] * 2 + s[m]
        return s, v, v[m].sum(), v[~m].min()
    compare(f, RNG.random(30), RNG.standard_normal(30), close=True)


# -- reductions over x[mask] ------------------------------------------------------------------

REDUCTIONS = {
    "sum": lambda s: s.sum(), "prod": lambda s: s.prod(), "mean": lambda s: s.mean(),
    "any": lambda s: s.any(), "all": lambda s: s.all(), "count_nonzero": np.count_nonzero,
    "np.sum": np.sum, "np.mean": np.mean,
}


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("name", sorted(REDUCTIONS))
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int32, np.int8, np.bool_,
                                   np.complex128])
@pytest.mark.parametrize("which", range(3))
def test_reductions_over_a_selection_like_numpy(name, dtype, which):
    x = (X * 3).astype(dtype)
    mask = masks_of(X.shape)[which]
    reduce = REDUCTIONS[name]
    with np.errstate(all="ignore"):
        compare(lambda x, m: reduce(x[m]), x, mask, close=True)


@pytest.mark.parametrize("name", ["max", "min"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int16, np.uint8, np.bool_])
def test_max_min_of_a_selection_like_numpy(name, dtype):
    x = (X * 3).astype(dtype)
    compare(lambda x, m: getattr(x[m], name)(), x, masks_of(X.shape)[0])
    compare(lambda x, m: getattr(np, name)(x[m]), x, masks_of(X.shape)[2])


@pytest.mark.parametrize("name", ["max", "min"])
def test_max_of_an_empty_selection_raises_numpys_error_at_run_time(name):
    def f(x, m):
        x[0] = 1.0
        return getattr(x[m], name)()
    raises_like(f, X.copy(), np.zeros(X.shape, bool))     # and nothing was written back
    compiled = jit(f)
    compiled(X.copy(), X > 0)                              # the same program: fine when not empty
    with pytest.raises(ValueError, match="zero-size array"):
        compiled(X.copy(), X > 100)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("ddof", [0, 1])
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64, np.complex64])
def test_var_and_std_of_a_selection_like_numpy(ddof, dtype):
    x = (X * 2).astype(dtype)
    with np.errstate(all="ignore"):
        for mask in masks_of(X.shape):
            compare(lambda x, m: (x[m].var(ddof=ddof), np.std(x[m], ddof=ddof)), x, mask,
                    close=True)


@pytest.mark.parametrize("reduce", [
    lambda x, m: x[m].sum(axis=0), lambda x, m: x[m].mean(axis=0, keepdims=True),
    lambda x, m: x[m].max(axis=(0, 1)), lambda x, m: x[m].prod(0),
    lambda x, m: np.sum(x[m], axis=0, dtype=np.float32), lambda x, m: x[m].min(keepdims=True),
])
def test_row_mask_reductions_along_the_selected_axis(reduce):
    compare(reduce, X, X[:, 0] > -0.3, close=True)


def test_column_and_trailing_masks():
    m = X[0] > 0
    compare(lambda x, m: (x[:, m].sum(axis=1), x[..., m].max(axis=(0, 1))), X, m | (X[1] > 0),
            close=True)
    compare(lambda x, m: x[1:, m].mean(axis=1), X, m | (X[1] > 0), close=True)
    y = RNG.standard_normal((2, 3, 4))
    compare(lambda y, m: y[m].sum(0), y, y[:, :, 0] > 0, close=True)
    compare(lambda y, m: y[:, m].mean(axis=1), y, y[0, :, 0] > 0, close=True)


def test_elementwise_arithmetic_on_selections():
    def f(x, y, m):
        d = x[m] - y[m]
        return np.abs(d).max(), (d ** 2).mean(), (x[m] > 0).sum(), np.sqrt(np.abs(x[m])).sum()
    compare(f, X, X.T.copy().T * 2, X > -0.5, close=True)


def test_a_0d_traced_mask_selects_along_a_new_axis():
    compare(lambda x, b: x[b].sum(axis=(0, 1)), X, np.bool_(True), close=True)
    compare(lambda x, b: x[b].sum(), X, np.bool_(False))

    def assign(x, b):
        x[b] = -1.0
        return x
    compare(assign, X, np.bool_(True))
    compare(assign, X, np.bool_(False))


# -- masked assignment ------------------------------------------------------------------------

DTYPES = [np.float64, np.float32, np.int16, np.int64, np.uint8, np.bool_, np.complex64]


@st.composite
def masked_assignments(draw):
    """(x, mask of x's leading axes, value broadcastable along the rest, an op or None)."""
    dtype = draw(st.sampled_from(DTYPES))
    shape = draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=0, max_side=4))
    x = draw(hnp.arrays(dtype, shape, elements=_elements(dtype)))
    lead = draw(st.integers(1, len(shape)))
    kind = draw(st.sampled_from(["random", "empty", "full"]))
    mask_shape = shape[:lead]
    mask = (draw(hnp.arrays(np.bool_, mask_shape)) if kind == "random" else
            np.full(mask_shape, kind == "full"))
    rest = shape[lead:]
    value_shape = draw(st.sampled_from([(), (1,)] + ([rest[-1:], rest] if rest else [])))
    value_dtype = draw(st.sampled_from([dtype, np.float64, np.int64, np.bool_]))
    if np.dtype(value_dtype).kind == "c" or np.dtype(dtype).kind == "c":
        value_dtype = dtype
    value = draw(hnp.arrays(value_dtype, value_shape, elements=_elements(value_dtype)))
    if value_shape == () and draw(st.booleans()):
        value = value.item()                   # a Python scalar
    op = draw(st.sampled_from([None, "add", "mul"]))
    return x, mask, value, op


def _elements(dtype):
    dtype = np.dtype(dtype)
    if dtype.kind == "f" or dtype.kind == "c":
        return st.floats(-100, 100, width=32)
    if dtype == np.bool_:
        return st.booleans()
    return st.integers(0 if dtype.kind == "u" else -50, 50)


def _assign(op):
    def f(x, mask, value):
        if op is None:
            x[mask] = value
        elif op == "add":
            x[mask] += value
        else:
            x[mask] *= value
        return x
    return f


@settings(max_examples=60, deadline=None)
@given(masked_assignments())
def test_masked_assignment_like_numpy(case):
    x, mask, value, op = case
    f = _assign(op)
    try:
        with np.errstate(all="ignore"):
            f(np.copy(x), mask, value)
    except Exception:                  # noqa: BLE001  NumPy refuses it: so must jit
        raises_like(f, x, mask, value)
        return
    with np.errstate(all="ignore"):
        compare(f, x, mask, value, close=True)


def test_masked_assignment_through_a_view_and_with_other_indices():
    def f(x, m):
        x[1:, m] = 0.0
        x[0, m] += 1.0
        x[::-1][x[::-1, 0] > 0] = 7.0
        return x
    compare(f, X, X[0] > 0)


def test_masked_assignment_of_a_data_dependent_length_is_refused_with_the_line():
    def f(x, m):
        x[m] = np.ones(3)          # NumPy: fine when 3 elements are selected, else ValueError
        return x
    with pytest.raises(UnsupportedError, match=r"an array of shape \(3,\)") as info:
        jit(f)(X[:, 0].copy(), X[:, 0] > 0)
    assert "x[m] = np.ones(3)" in info.value.explain()


def test_mask_shape_mismatch_is_numpys_index_error():
    raises_like(lambda x, m: x[m].sum(), X, np.ones(4, bool))
    raises_like(lambda x, m: x[:, m].sum(), X, np.ones(5, bool))


def test_an_inplace_op_of_another_dtype_is_numpys_casting_error():
    def f(x, m):
        x[m] -= 1.5
        return x
    raises_like(f, np.arange(6), np.arange(6) > 2)


# -- what needs the length: refused with the line ---------------------------------------------

@pytest.mark.parametrize("use, words", [
    (lambda x, m: x[m], r"the result is a boolean-mask selection"),
    (lambda x, m: len(x[m]), r"len\(x\[mask\]\)"),
    (lambda x, m: np.sort(x[m]), r"np.sort"),
    (lambda x, m: x[m].shape, r"x\[mask\].shape"),
    (lambda x, m: x[m] + np.ones(7), r"an array of shape \(7,\)"),
    (lambda x, m: x[m].cumsum(), r"x\[mask\].cumsum"),
    (lambda x, m: x[m] + x[~m], r"another mask"),
    (lambda x, m: x[m][0], r"indexing x\[mask\]\[...\]"),
])
def test_uses_that_need_the_length_are_refused_with_the_line(use, words):
    with pytest.raises(UnsupportedError, match=words) as info:
        jit(use)(X[:, 0].copy(), X[:, 0] > 0)
    assert "test_masks.py" in info.value.source.file
    assert "np.where(mask, x, fill)" in info.value.explain()


def test_a_reduction_that_keeps_the_selected_axis_is_refused():
    with pytest.raises(UnsupportedError, match="axis=1, which keeps the selected axis"):
        jit(lambda x, m: x[m].sum(axis=1))(X, X[:, 0] > 0)
