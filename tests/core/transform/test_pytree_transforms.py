"""Pytrees through the transformations: registered dataclasses and classes, namedtuples and
None in and out of grad, value_and_grad, vjp, jvp, jacfwd, jacrev and vmap; an object that is
not registered is refused with what to write."""
from __future__ import annotations

import dataclasses
from typing import NamedTuple

import numpy as np
import pytest
from psc_jit import grad, jacfwd, jacrev, jit, jvp, tree_util, value_and_grad, vjp, vmap

pytestmark = pytest.mark.xla


@tree_util.register_dataclass
@dataclasses.dataclass
class Dense:
    w: np.ndarray
    b: np.ndarray
    name: str = dataclasses.field(default="dense", metadata={"static": True})


class Scaled:
    """A class registered by hand: its scale is data, its label part of the structure."""

    def __init__(self, value, scale, label="s"):
        self.value, self.scale, self.label = value, scale, label


tree_util.register_pytree_node(Scaled, lambda s: ((s.value, s.scale), s.label),
                               lambda label, kids: Scaled(*kids, label))


class Pair(NamedTuple):
    first: np.ndarray
    second: np.ndarray


RNG = np.random.default_rng(3)
LAYER = Dense(RNG.standard_normal((3, 2)), RNG.standard_normal(2))
X = RNG.standard_normal(3)


def loss(params, x):
    layer, s = params["layer"], params["scaled"]
    y = np.tanh(x @ layer.w + layer.b) * s.scale
    return np.sum(y ** 2) + np.sum(s.value ** 2)


PARAMS = {"layer": LAYER, "scaled": Scaled(RNG.standard_normal(2), 1.5), "unused": None}


def _numeric_grad(f, tree, h=1e-6):
    leaves, treedef = tree_util.tree_flatten(tree)
    grads = []
    for i, leaf in enumerate(leaves):
        leaf = np.asarray(leaf, float)
        g = np.zeros_like(leaf)
        for j in np.ndindex(leaf.shape):
            def at(delta, i=i, j=j, leaf=leaf):
                moved = leaf.copy()
                moved[j] += delta
                new = list(leaves)
                new[i] = moved if moved.ndim else float(moved)
                return f(tree_util.tree_unflatten(treedef, new))
            g[j] = (at(h) - at(-h)) / (2 * h)
        grads.append(g)
    return grads


def _assert_tree_close(got, want_leaves, treedef):
    assert tree_util.tree_structure(got) == treedef
    for g, w in zip(tree_util.tree_leaves(got), want_leaves, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-8)


def test_grad_of_registered_nodes_has_their_structure():
    for g in (grad(loss)(PARAMS, X), jit(grad(loss))(PARAMS, X)):
        assert isinstance(g["layer"], Dense) and g["layer"].name == "dense"
        assert isinstance(g["scaled"], Scaled) and g["unused"] is None
        _assert_tree_close(g, _numeric_grad(lambda p: loss(p, X), PARAMS),
                           tree_util.tree_structure(PARAMS))
    value, g = value_and_grad(loss)(PARAMS, X)
    assert value == pytest.approx(loss(PARAMS, X), rel=1e-12)


def test_jvp_and_vjp_take_and_give_trees():
    def f(pair):
        return Dense(pair.first * pair.second, np.sin(pair.first))
    p = Pair(RNG.standard_normal(2), RNG.standard_normal(2))
    t = Pair(RNG.standard_normal(2), RNG.standard_normal(2))
    out, tangent = jvp(f, (p,), (t,))
    assert isinstance(out, Dense) and isinstance(tangent, Dense)
    np.testing.assert_allclose(tangent.w, t.first * p.second + p.first * t.second, rtol=1e-12)
    out, pullback = vjp(f, p)
    u = Dense(RNG.standard_normal(2), RNG.standard_normal(2))
    (ct,) = pullback(u)
    assert isinstance(ct, Pair)
    left = np.sum(u.w * tangent.w) + np.sum(u.b * tangent.b)
    right = np.sum(ct.first * t.first) + np.sum(ct.second * t.second)
    assert left == pytest.approx(right, rel=1e-12)


def test_jacobians_of_registered_inputs():
    def f(layer):
        return layer.w.sum(axis=0) * layer.b
    for jac in (jacfwd(f), jacrev(f)):
        j = jac(LAYER)
        assert isinstance(j, Dense) and j.w.shape == (2, 3, 2) and j.b.shape == (2, 2)
        np.testing.assert_allclose(j.b, np.diag(LAYER.w.sum(axis=0)), rtol=1e-12)


def test_vmap_over_registered_nodes_and_none():
    def f(layer, x, nothing):
        assert nothing is None
        return {"y": x @ layer.w + layer.b, "none": None}
    xs = RNG.standard_normal((4, 3))
    out = vmap(f, in_axes=(None, 0, None))(LAYER, xs, None)
    np.testing.assert_allclose(out["y"], xs @ LAYER.w + LAYER.b, rtol=1e-12)
    assert out["none"] is None
    layers = Dense(RNG.standard_normal((4, 3, 2)), RNG.standard_normal((4, 2)))
    out = vmap(lambda layer: layer.w.sum() + layer.b.sum())(layers)
    np.testing.assert_allclose(out, layers.w.sum(axis=(1, 2)) + layers.b.sum(axis=1))


@dataclasses.dataclass
class Unregistered:
    w: np.ndarray


def test_an_unregistered_object_is_refused_with_what_to_do():
    with pytest.raises(TypeError, match=r"register_dataclass\(Unregistered\)") as info:
        grad(lambda p: np.sum(p.w ** 2))(Unregistered(np.ones(2)))
    assert "register_pytree_node" in str(info.value)


@pytest.mark.parametrize("call", [
    lambda f, u: jvp(f, (u,), (u,)), lambda f, u: vjp(f, u), lambda f, u: jacfwd(f)(u),
    lambda f, u: jacrev(f)(u), lambda f, u: vmap(f)(u)], ids=["jvp", "vjp", "jacfwd", "jacrev",
                                                             "vmap"])
def test_every_transformation_refuses_an_unregistered_object(call):
    with pytest.raises((TypeError, ValueError), match=r"register_dataclass\(Unregistered\)"):
        call(lambda p: p.w * 2, Unregistered(np.ones((2, 2))))
