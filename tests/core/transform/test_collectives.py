"""psum, pmean and all_gather over a named vmap axis, against NumPy (a sum, a mean, a stack
over the batch) and, for gradients through them, against JAX's own vmap with axis_name."""
import numpy as np
import pytest

import psc_jit
from psc_jit import all_gather, pmean, psum, vmap

X = np.random.default_rng(0).standard_normal((5, 3))
Y = np.arange(24.0).reshape(2, 3, 4)


@pytest.mark.parametrize("compiled", [False, True], ids=["eager", "jit"])
def test_collectives_are_the_batch_sum_mean_and_stack(compiled):
    def per_member(x):
        return x - pmean(x, "i"), psum(x, "i"), all_gather(x, "i"), psum(1.0, "i")
    f = vmap(per_member, axis_name="i")
    f = psc_jit.jit(f) if compiled else f
    centred, total, stack, count = f(X)
    np.testing.assert_array_equal(centred, X - X.mean(axis=0))
    np.testing.assert_array_equal(total, np.broadcast_to(X.sum(axis=0), X.shape))
    np.testing.assert_array_equal(stack, np.broadcast_to(X, (5,) + X.shape))
    np.testing.assert_array_equal(count, np.full(5, 5.0))


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.int64, np.complex128])
def test_psum_keeps_the_dtype(dtype):
    x = (X * 10).astype(dtype)
    total = vmap(lambda v: psum(v, "i"), axis_name="i")(x)
    assert total.dtype == x.dtype
    np.testing.assert_array_equal(total[0], x.sum(axis=0, dtype=x.dtype))


def test_nested_vmaps_sum_over_the_axis_named():
    outer = vmap(vmap(lambda v: psum(v, "i"), axis_name="j"), axis_name="i")
    inner = vmap(vmap(lambda v: psum(v, "j"), axis_name="j"), axis_name="i")
    np.testing.assert_array_equal(outer(Y), np.broadcast_to(Y.sum(axis=0), Y.shape))
    np.testing.assert_array_equal(inner(Y), np.broadcast_to(Y.sum(axis=1, keepdims=True),
                                                            Y.shape))
    gathered = vmap(vmap(lambda v: all_gather(v, "i"), axis_name="j"), axis_name="i")(Y)
    assert gathered.shape == (2, 3, 2, 4)
    for i in range(2):
        for j in range(3):
            np.testing.assert_array_equal(gathered[i, j], Y[:, j])


def test_an_unbound_axis_name_is_a_name_error():
    with pytest.raises(NameError, match="unbound axis name: k"):
        vmap(lambda v: psum(v, "k"), axis_name="i")(X)
    with pytest.raises(NameError, match="unbound axis name: i"):
        psum(X, "i")


@pytest.mark.parametrize("collective", ["psum", "pmean"])
def test_gradients_through_collectives_are_jaxs(collective):
    jax = pytest.importorskip("jax")     # (in the test extra: the oracle of gradients)
    jax.config.update("jax_enable_x64", True)
    ours, theirs = {"psum": (psum, jax.lax.psum), "pmean": (pmean, jax.lax.pmean)}[collective]

    def loss(reduce):
        return lambda w, x: reduce(np.tanh(x @ w) ** 2, "b")
    mine = vmap(psc_jit.grad(loss(ours)), in_axes=(None, 0), axis_name="b")(np.ones(3), X)
    import jax.numpy as jnp

    def jax_loss(w, x):
        return theirs(jnp.tanh(x @ w) ** 2, "b")
    want = jax.vmap(jax.grad(jax_loss), in_axes=(None, 0), axis_name="b")(jnp.ones(3), X)
    np.testing.assert_allclose(mine, np.asarray(want), rtol=1e-13)


def test_gradients_through_all_gather_are_refused_at_the_line():
    from psc_jit.core import UnsupportedError
    f = vmap(psc_jit.grad(lambda x: all_gather(x, "i").sum()), axis_name="i")
    with pytest.raises(UnsupportedError, match="all_gather"):
        f(X[:, 0])
