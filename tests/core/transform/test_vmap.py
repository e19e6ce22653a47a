"""vmap's signature and meaning, as JAX's: `vmap(f)(X) == np.stack([f(x) for x in X])` for
plain NumPy functions (in-place updates, rolled loops, branches, indexing), in_axes and
out_axes as ints, None or tree prefixes, axis_size, JAX's errors, run-time index checks, and
composition with jit, grad, jvp, vjp and itself (per-example gradients)."""
from __future__ import annotations

import numpy as np
import pytest
from psc_jit.core import (UnsupportedError, check_graph, grad, jacfwd, jit, jvp, value_and_grad,
                          vjp, vmap)
from psc_jit.core.primitives import Primitive
from psc_jit.core.tracing import bind

pytestmark = pytest.mark.xla

RNG = np.random.default_rng(3)
X = RNG.standard_normal((5, 4))
W = RNG.standard_normal((4, 3))


def stacked(f, *batches, axis=0):
    return np.stack([f(*xs) for xs in zip(*batches, strict=True)], axis=axis)


def assert_same(got, expected):
    got, expected = np.asarray(got), np.asarray(expected)
    assert got.dtype == expected.dtype and got.shape == expected.shape
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-14)


def layer(x, w):
    return np.tanh(x @ w) + x.sum()


# -- meaning ----------------------------------------------------------------------------------

def test_vmap_is_a_loop_over_the_leading_axis_dtype_included():
    for batch in (X, X.astype(np.float32), (X * 10).astype(np.int32)):
        f = lambda x: np.maximum(x * 2, x.sum()) - x[::-1].cumsum()   # noqa: E731
        assert_same(vmap(f)(batch), stacked(f, batch))
    assert_same(vmap(np.sum)(X), X.sum(axis=1))


def test_plain_numpy_with_in_place_updates_and_rolled_loops():
    def smooth(u, k):
        u = u.copy()
        for _ in range(20):
            u[1:-1] = u[1:-1] + k * (u[2:] - 2 * u[1:-1] + u[:-2])
        return u

    assert_same(vmap(smooth, in_axes=(0, None))(X, 0.2), stacked(lambda u: smooth(u, 0.2), X))
    ks = np.array([0.1, 0.2, 0.3, 0.4, 0.05])
    assert_same(vmap(smooth)(X, ks), stacked(smooth, X, ks))


def newton_sqrt(t):
    x = np.ones_like(t)
    err = np.abs(t).max() + 1.0
    steps = 0
    while err > 1e-12:
        step = (x * x - t) / (2.0 * x)
        x = x - step
        err = np.abs(step).max()
        steps += 1
    return x, steps


def test_a_while_loop_runs_each_member_its_own_number_of_iterations():
    t = np.array([[2.0, 3.0], [1e6, 5.0], [1.0, 1.0], [1e-3, 4e4]])
    x, steps = vmap(newton_sqrt)(t)
    expected = [newton_sqrt(row) for row in t]
    assert_same(x, np.stack([e[0] for e in expected]))
    assert steps.tolist() == [e[1] for e in expected]
    assert len(set(steps.tolist())) > 1


def branchy(x):
    if x.sum() > 0:
        y = np.sqrt(np.abs(x)) * 2.0
    else:
        y = np.where(x < -0.5, x ** 2, -x)
    return y


def test_branches_on_each_members_data():
    signs = np.array([1.0, -1.0, 1.0, -1.0, -1.0])[:, None]
    assert_same(vmap(branchy)(X * signs), stacked(branchy, X * signs))


def test_indexing_sorting_and_matmul():
    idx = np.array([3, 0, 2, 2, 1])

    def f(x, i, w):
        picked = x[i] + x[[0, 2]].sum()
        order = np.argsort(x)
        return np.sort(x) @ w + picked, order, x[order[::-1]]

    got = vmap(f, in_axes=(0, 0, None))(X, idx, W)
    expected = [f(x, i, W) for x, i in zip(X, idx, strict=True)]
    for k in range(3):
        assert_same(got[k], np.stack([e[k] for e in expected]))


def test_writing_at_a_traced_index_per_member():
    def put(x, i, v):
        x = x.copy()
        x[i] = v
        x[(i + 1) % 4] *= 3.0
        return x

    idx = np.array([0, 3, 1, 2, 2])
    vals = RNG.standard_normal(5)
    assert_same(vmap(put)(X, idx, vals), stacked(put, X, idx, vals))


def test_an_argument_updated_in_place_is_updated_along_its_axis():
    def scale_first(x):
        x[0] = x[0] * 10.0
        return x.sum()

    a, b = X.T.copy(), X.T.copy()
    sums = vmap(scale_first, in_axes=1)(a)
    expected = [scale_first(b[:, j]) for j in range(b.shape[1])]
    assert_same(sums, np.array(expected))
    assert_same(a, b)


def test_an_out_of_bounds_index_in_any_member_raises_index_error():
    def pick(x, i):
        return x[i]

    assert_same(vmap(pick)(X, np.array([0, 1, 2, 3, -4])), X[np.arange(5), [0, 1, 2, 3, 0]])
    with pytest.raises(IndexError, match="index 7 is out of bounds for axis 0 with size 4"):
        vmap(pick)(X, np.array([0, 1, 7, 3, 0]))
    with pytest.raises(IndexError, match="index -5 is out of bounds"):
        vmap(pick, in_axes=(None, 0))(X[0], np.array([0, -5, 1]))


# -- in_axes, out_axes, axis_size -------------------------------------------------------------

def test_in_axes_ints_negative_none_and_tree_prefixes():
    assert_same(vmap(layer, in_axes=(1, None))(X.T, W), stacked(layer, X, [W] * 5))
    assert_same(vmap(layer, in_axes=[-1, None])(X.T, W), stacked(layer, X, [W] * 5))
    params = {"w": W, "b": np.arange(3.0)}

    def model(p, x):
        return x @ p["w"] + p["b"]
    bs = RNG.standard_normal((5, 3))
    got = vmap(model, in_axes=({"w": None, "b": 0}, 0))({"w": W, "b": bs}, X)
    assert_same(got, stacked(lambda b, x: model({"w": W, "b": b}, x), bs, X))
    assert_same(vmap(model, in_axes=(None, 0))(params, X), stacked(lambda x: model(params, x), X))


def test_keyword_arguments_are_mapped_along_axis_zero():
    def f(x, *, scale, how="times"):
        return x * scale if how == "times" else x + scale
    assert_same(vmap(f, in_axes=None, axis_size=5)(X[0], scale=np.arange(5.0)),
                np.arange(5.0)[:, None] * X[0])
    assert_same(vmap(f, in_axes=None)(X[0], scale=np.arange(5.0), how="plus"),
                np.arange(5.0)[:, None] + X[0])


def test_out_axes_place_the_batch_axis_and_none_passes_through():
    def f(x):
        return x * 2.0, x.sum(), W

    a, b, c = vmap(f, out_axes=(1, 0, None))(X)
    assert_same(a, (X * 2.0).T)
    assert_same(b, X.sum(axis=1))
    assert_same(c, W)
    assert_same(vmap(lambda x: np.outer(x, x), out_axes=-1)(X),
                stacked(lambda x: np.outer(x, x), X, axis=-1))
    assert_same(vmap(lambda x: W, in_axes=0, out_axes=0)(X), np.stack([W] * 5))


def test_axis_size_without_mapped_arguments():
    assert_same(vmap(lambda w: w * 2.0, in_axes=None, axis_size=3)(W), np.stack([W * 2.0] * 3))


def test_results_keep_their_tree():
    got = vmap(lambda x: {"sum": x.sum(), "parts": [x[0], None], "name": "stats"})(X)
    assert got["name"] == "stats" and got["parts"][1] is None
    assert_same(got["parts"][0], X[:, 0])


def test_errors_say_what_is_wrong_as_jax_does():
    with pytest.raises(ValueError, match="(?s)inconsistent sizes.*one axis had size 5.*argument x.*size 4"):
        vmap(layer)(X, W)
    with pytest.raises(ValueError, match="along axis 2.*rank should be at least 3.*only 2"):
        vmap(layer, in_axes=(2, None))(X, W)
    with pytest.raises(ValueError, match="at least one non-None value in in_axes"):
        vmap(layer, in_axes=None)(X, W)
    with pytest.raises(ValueError, match=r"len\(in_axes\)=3, len\(args\)=2"):
        vmap(layer, in_axes=(0, None, 0))(X, W)
    with pytest.raises(ValueError, match="tree prefix"):
        vmap(lambda p: p["w"], in_axes=({"v": 0},))({"w": X})
    with pytest.raises(ValueError, match="mapped output but out_axes is None"):
        vmap(np.sin, out_axes=None)(X)
    with pytest.raises(ValueError, match="(?s)inconsistent sizes.*axis_size"):
        vmap(np.sin, axis_size=3)(X)
    with pytest.raises(TypeError, match="in_axes must be an int, None"):
        vmap(np.sin, in_axes="0")
    with pytest.raises(TypeError, match="out_axes must be an int, None"):
        vmap(np.sin, out_axes=1.5)


def _keep(x):
    return x


opaque_p = Primitive("opaque", lambda a: a.shape, lambda a: a.dtype, _keep, lambda ctx, x: [x])


def uses_opaque(x):
    return bind(opaque_p, x * 2.0)


def test_a_missing_rule_names_the_primitive_and_the_line():
    with pytest.raises(UnsupportedError) as info:
        vmap(uses_opaque)(X)
    assert "`opaque`" in info.value.message and "no batching rule" in info.value.message
    assert "bind(opaque_p, x * 2.0)" in info.value.explain()


# -- composition ------------------------------------------------------------------------------

def loss(w, x, y):
    return (np.tanh(x @ w) - y) ** 2 @ np.ones(3)


def test_per_example_gradients_match_a_loop_of_grad():
    Y = RNG.standard_normal((5, 3))
    per_example = vmap(grad(loss), in_axes=(None, 0, 0))(W, X, Y)
    assert_same(per_example, stacked(lambda x, y: grad(loss)(W, x, y), X, Y))
    values, grads = vmap(value_and_grad(loss), in_axes=(None, 0, 0))(W, X, Y)
    assert_same(values, stacked(lambda x, y: loss(W, x, y), X, Y))


def test_grad_of_a_function_that_uses_vmap():
    Y = RNG.standard_normal((5, 3))

    def total(w):
        return vmap(loss, in_axes=(None, 0, 0))(w, X, Y).sum()

    def total_loop(w):
        return sum(loss(w, x, y) for x, y in zip(X, Y, strict=True))

    assert_same(grad(total)(W), grad(total_loop)(W))


def test_jvp_vjp_and_jacobians_of_vmap():
    f = vmap(np.sin)
    out, tangent = jvp(f, (X,), (np.ones_like(X),))
    assert_same(tangent, np.cos(X))
    out, f_vjp = vjp(f, X)
    assert_same(f_vjp(np.ones_like(X))[0], np.cos(X))
    assert_same(vmap(jacfwd(np.sin))(X), stacked(lambda x: np.diag(np.cos(x)), X))


def test_vmap_of_vmap_jit_of_vmap_and_vmap_of_jit():
    Z = RNG.standard_normal((2, 5, 4))
    f = lambda x: layer(x, W)     # noqa: E731
    assert_same(vmap(vmap(f))(Z), np.stack([stacked(f, z) for z in Z]))
    assert_same(vmap(vmap(f), in_axes=1)(Z), np.stack([stacked(f, z) for z in Z.swapaxes(0, 1)]))
    assert_same(jit(vmap(f))(X), stacked(f, X))
    assert_same(vmap(jit(f))(X), stacked(f, X))
    outer = vmap(lambda x: vmap(lambda y: x * y)(X[:3]))(X[:2])
    assert_same(outer, X[:2, None, :] * X[None, :3, :])


def test_a_vmapped_function_inside_jit_closes_over_traced_values():
    @jit
    def scaled(xs, w):
        return vmap(lambda x: x @ w * w.sum())(xs)
    assert_same(scaled(X, W), stacked(lambda x: x @ W * W.sum(), X))


def test_the_batched_graph_is_well_typed():
    for f in (lambda x: layer(x, W), branchy, newton_sqrt):
        check_graph(jit(vmap(f)).trace(np.abs(X) + 0.5).graph)


def test_the_compiled_program_is_reused():
    first = vmap(layer, in_axes=(0, None))
    first(X, W)
    again = vmap(layer, in_axes=(0, None))
    again(X, W)
    assert again.jitted.last_call.cache_hit


def test_an_empty_batch_gives_empty_results():
    empty = np.zeros((0, 4))
    assert vmap(layer, in_axes=(0, None))(empty, W).shape == (0, 3)
    assert vmap(lambda x, i: x[i])(empty, np.zeros(0, np.int64)).shape == (0,)
    assert vmap(newton_sqrt)(empty)[0].shape == (0, 4)


def test_an_unmapped_argument_updated_in_place():
    def count(x, seen):
        seen[0] = 1.0
        return x.sum()

    seen = np.zeros(2)
    assert_same(vmap(count, in_axes=(0, None))(X, seen), X.sum(axis=1))
    assert seen.tolist() == [1.0, 0.0]

    def record(x, last):
        last[0] = x.sum()
        return x

    with pytest.raises(ValueError, match="argument last in place.*differ from member"):
        vmap(record, in_axes=(0, None))(X, np.zeros(2))
