"""The transformations' signatures and meanings, as JAX's: argnums, has_aux, pytrees, errors,
jvp and vjp, Jacobians, and composition with each other and with jit."""
from __future__ import annotations

from collections import namedtuple

import numpy as np
import pytest
from psc_jit.core import (UnsupportedError, fori_loop, grad, jacfwd, jacrev, jit, jvp,
                          value_and_grad, vjp)
from psc_jit.core.ir import ShapedArray
from psc_jit.core.primitives import Primitive
from psc_jit.core.tracing import bind

pytestmark = pytest.mark.xla

RNG = np.random.default_rng(1)
X = RNG.standard_normal(4)
W = RNG.standard_normal((4, 3))


def loss(x, w):
    return np.sum(np.tanh(x @ w) ** 2)


def loss_grads(x, w):
    h = np.tanh(x @ w)
    dh = 2 * h * (1 - h ** 2)
    return w @ dh, np.outer(x, dh)


def test_argnums_int_and_tuple():
    gx, gw = loss_grads(X, W)
    np.testing.assert_allclose(grad(loss)(X, W), gx, rtol=1e-12)
    np.testing.assert_allclose(grad(loss, argnums=1)(X, W), gw, rtol=1e-12)
    both = grad(loss, argnums=(0, 1))(X, W)
    assert isinstance(both, tuple) and len(both) == 2
    np.testing.assert_allclose(both[1], gw, rtol=1e-12)


def test_has_aux_returns_the_aux_unchanged():
    def with_aux(x, w):
        h = np.tanh(x @ w)
        return np.sum(h ** 2), {"h": h, "label": "hidden"}

    g, aux = grad(with_aux, has_aux=True)(X, W)
    np.testing.assert_allclose(g, loss_grads(X, W)[0], rtol=1e-12)
    np.testing.assert_allclose(aux["h"], np.tanh(X @ W), rtol=1e-12)
    assert aux["label"] == "hidden"
    (value, aux), g = value_and_grad(with_aux, has_aux=True)(X, W)
    assert value == pytest.approx(loss(X, W), rel=1e-12)


Params = namedtuple("Params", "w b")


def test_gradients_of_pytrees_have_their_structure():
    def model(params, x):
        layer = params["layers"][0]
        return np.sum((x @ layer.w + layer.b) ** 2) + params["scale"] ** 2

    params = {"layers": [Params(W, np.ones(3))], "scale": 0.5}
    g = grad(model)(params, X)
    assert set(g) == {"layers", "scale"} and isinstance(g["layers"], list)
    assert isinstance(g["layers"][0], Params)
    y = X @ W + 1.0
    np.testing.assert_allclose(g["layers"][0].w, np.outer(X, 2 * y), rtol=1e-12)
    np.testing.assert_allclose(g["layers"][0].b, 2 * y, rtol=1e-12)
    assert g["scale"] == pytest.approx(1.0)


def test_dtypes_and_python_floats():
    x32 = X.astype(np.float32)
    g = grad(lambda x: np.sum(x * x))(x32)
    assert g.dtype == np.float32
    assert grad(lambda s: s * s * 3.0)(2.0) == pytest.approx(12.0)


def test_grad_with_respect_to_an_integer_raises_type_error():
    with pytest.raises(TypeError, match="requires real- or complex-valued inputs.*int64"):
        grad(lambda n, x: x * n)(3, 1.0)
    with pytest.raises(TypeError, match="int64"):
        grad(lambda x: np.sum(x))(np.arange(3))


def test_grad_of_a_non_scalar_output_raises_type_error():
    with pytest.raises(TypeError, match=r"scalar-output functions. Output had shape: \(3,\)"):
        grad(lambda x: x * 2)(np.ones(3))


def test_jvp_and_vjp():
    def f(x, w):
        return np.sin(x @ w), x.sum()

    tx, tw = RNG.standard_normal(4), RNG.standard_normal((4, 3))
    (y, s), (ty, ts) = jvp(f, (X, W), (tx, tw))
    np.testing.assert_allclose(y, np.sin(X @ W), rtol=1e-12)
    np.testing.assert_allclose(ty, np.cos(X @ W) * (tx @ W + X @ tw), rtol=1e-12)
    assert ts == pytest.approx(tx.sum())
    out, f_vjp = vjp(f, X, W)
    uy, us = RNG.standard_normal(3), 0.7
    cx, cw = f_vjp((uy, us))
    # <u, J v> == <J^T u, v>
    assert np.dot(uy, ty) + us * ts == pytest.approx(np.dot(cx, tx) + np.sum(cw * tw), rel=1e-12)


def test_jacobians_and_hessians():
    def f(x):
        return np.sin(x) * x[0] + np.cumsum(x) ** 2

    x = RNG.standard_normal(5)
    jf, jr = jacfwd(f)(x), jacrev(f)(x)
    assert jf.shape == jr.shape == (5, 5)
    np.testing.assert_allclose(jf, jr, rtol=1e-12, atol=1e-12)
    h = 1e-6
    fd = np.stack([(f(x + h * e) - f(x - h * e)) / (2 * h) for e in np.eye(5)], axis=1)
    np.testing.assert_allclose(jf, fd, rtol=1e-6, atol=1e-8)
    scalar = lambda x: np.sum(np.sin(x) * x ** 2)          # noqa: E731
    hess_fr, hess_rr = jacfwd(jacrev(scalar))(x), jacrev(jacrev(scalar))(x)
    expected = np.diag(2 * np.sin(x) + 4 * x * np.cos(x) - x ** 2 * np.sin(x))
    np.testing.assert_allclose(hess_fr, expected, atol=1e-12)
    np.testing.assert_allclose(hess_rr, expected, atol=1e-12)


def test_jacobian_shapes_follow_output_and_input():
    j = jacrev(lambda m: m @ np.ones((3, 2)))(np.ones((4, 3)))
    assert j.shape == (4, 2, 4, 3)


def test_composition_with_jit_and_itself():
    f = lambda x: np.sin(x) * x                            # noqa: E731
    assert grad(grad(f))(1.3) == pytest.approx(2 * np.cos(1.3) - 1.3 * np.sin(1.3))
    assert grad(grad(grad(f)))(0.4) == pytest.approx(-3 * np.sin(0.4) - 0.4 * np.cos(0.4))
    np.testing.assert_allclose(grad(jit(lambda x: np.sum(np.sin(x))))(X), np.cos(X))
    np.testing.assert_allclose(jit(grad(lambda x: np.sum(np.sin(x))))(X), np.cos(X))


def step_loop(x, n):
    for _ in range(n):
        x = x * 0.9 + np.sin(x)
    return x.sum()


def test_loops_with_a_static_trip_count_differentiate_both_ways():
    x = RNG.standard_normal(3)
    g = grad(step_loop)(x, 6)
    (value, ), (tangent, ) = zip(jvp(lambda x: step_loop(x, 6), (x,), (np.ones(3),)))
    assert tangent == pytest.approx(g.sum(), rel=1e-12)
    assert grad(lambda x: fori_loop(0, 5, lambda i, v: v * np.cos(v), x).sum())(x).shape == (3,)


def grow(x):
    while x.sum() < 10.0:
        x = x * 1.5
    return x


def grown_total(x):
    while x.sum() < 10.0:
        x = x * 1.5
    return x.sum()


def test_a_while_loop_with_a_traced_trip_count_differentiates_forward_only():
    x = np.array([0.5, 1.0])
    y, t = jvp(grow, (x,), (np.ones(2),))
    np.testing.assert_allclose(t, y / x)
    with pytest.raises(UnsupportedError) as info:
        grad(grown_total)(x)
    text = info.value.explain()
    assert "'while x.sum() < 10.0:'" in text and "forward mode" in text
    assert "number of iterations is only known at run time" in text


def _no_rule_impl(x):
    return x


mystery_p = Primitive("mystery", lambda a: a.shape, lambda a: a.dtype, _no_rule_impl,
                      lambda ctx, x: [x])


def uses_mystery(x):
    return np.sum(bind(mystery_p, x * 2.0))


def test_a_missing_rule_names_the_primitive_and_the_line():
    with pytest.raises(UnsupportedError) as info:
        grad(uses_mystery)(np.ones(2))
    assert "`mystery`" in info.value.message and "JVP rule" in info.value.message
    assert "bind(mystery_p, x * 2.0)" in info.value.explain()
    assert mystery_p.abstract_eval(ShapedArray((2,), np.float64))[0].shape == (2,)


def test_in_place_updates_of_arguments_happen_as_in_numpy():
    def f(x):
        x[0] = 5.0
        return np.sum(x * x)

    x = np.ones(3)
    g = grad(f)(x)
    np.testing.assert_allclose(g, [0.0, 2.0, 2.0])
    np.testing.assert_allclose(x, [5.0, 1.0, 1.0])


def test_vjp_and_jvp_with_aux_and_pytrees_inside_jit():
    def f(p):
        y = {"a": p["w"] * 2.0, "b": np.sin(p["w"]).sum()}
        return y, "aux"

    p = {"w": X}
    y, f_vjp, aux = vjp(f, p, has_aux=True)
    assert aux == "aux"
    (ct,) = f_vjp({"a": np.ones(4), "b": 1.0})
    np.testing.assert_allclose(ct["w"], 2.0 + np.cos(X), rtol=1e-12)
    y, t, aux = jvp(f, (p,), ({"w": np.ones(4)},), has_aux=True)
    assert t["b"] == pytest.approx(np.cos(X).sum())

    @jit
    def inside(w):
        out, f_vjp = vjp(lambda w: np.tanh(w) * w, w)
        (ct,) = f_vjp(np.ones_like(w))
        return out, ct
    out, ct = inside(X)
    np.testing.assert_allclose(ct, np.tanh(X) + X * (1 - np.tanh(X) ** 2), rtol=1e-12)
    with pytest.raises(TypeError, match="structure"):
        f_vjp({"a": np.ones(4)})


def test_a_transformation_made_again_finds_its_compiled_program():
    grad(loss, argnums=1)(X, W)
    again = grad(loss, argnums=1)
    again(X, W)
    assert again.jitted.last_call.cache_hit
    assert grad(loss, argnums=0).jitted is not again.jitted
    jvp(np.sin, (X,), (X,))
    jvp(np.sin, (X,), (X,))
