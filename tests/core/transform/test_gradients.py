"""Gradients of whole NumPy programs: a two-layer MLP loss, a heat-equation loop (rolled, in
place), a softmax cross-entropy and a data-dependent branch, against central finite
differences (float64, relative error < 1e-6) and, where jax is installed, `jax.grad` of the
same computation written in jax.numpy."""
from __future__ import annotations

import numpy as np
import pytest
from psc_jit.core import check_graph, grad, jit, value_and_grad

pytestmark = pytest.mark.xla

RNG = np.random.default_rng(0)


def central_difference(f, args, argnum, step=1e-5):
    """d f / d args[argnum], element by element."""
    x = np.asarray(args[argnum], dtype=np.float64)
    out = np.zeros(x.shape)

    def at(index, delta):
        moved = x.copy()
        moved[index] += delta
        values = list(args)
        values[argnum] = moved if np.ndim(args[argnum]) else float(moved)
        return f(*values)
    for index in np.ndindex(x.shape):
        out[index] = (at(index, step) - at(index, -step)) / (2 * step)
    return out


def assert_matches_finite_differences(f, args, argnums, grads):
    for argnum, g in zip(argnums, grads, strict=True):
        expected = central_difference(f, args, argnum)
        error = np.linalg.norm(np.asarray(g) - expected) / max(np.linalg.norm(expected), 1e-12)
        assert error < 1e-6, f"argument {argnum}: relative error {error:.2e}"


def jax_grad(f_jax, args, argnums):
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    return jax.grad(f_jax, argnums=argnums)(*args)


# -- the programs, in NumPy and (for the oracle) in jax.numpy --------------------------------

def mlp_loss(w1, b1, w2, b2, x, y):
    h = np.tanh(x @ w1 + b1)
    out = h @ w2 + b2
    return ((out - y) ** 2).mean()


def mlp_loss_jax(w1, b1, w2, b2, x, y):
    import jax.numpy as jnp
    h = jnp.tanh(x @ w1 + b1)
    return ((h @ w2 + b2 - y) ** 2).mean()


def heat(u0, k):
    u = u0.copy()
    for _ in range(40):
        u[1:-1] = u[1:-1] + k * (u[2:] - 2 * u[1:-1] + u[:-2])
    return (u * u).sum() + u[3]


def heat_jax(u0, k):
    u = u0
    for _ in range(40):
        u = u.at[1:-1].set(u[1:-1] + k * (u[2:] - 2 * u[1:-1] + u[:-2]))
    return (u * u).sum() + u[3]


def cross_entropy(logits, labels):
    shifted = logits - logits.max(axis=1, keepdims=True)
    log_probs = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
    return -log_probs[np.arange(len(labels)), labels].mean()


def cross_entropy_jax(logits, labels):
    import jax.numpy as jnp
    shifted = logits - logits.max(axis=1, keepdims=True)
    log_probs = shifted - jnp.log(jnp.exp(shifted).sum(axis=1, keepdims=True))
    return -log_probs[jnp.arange(len(labels)), labels].mean()


def branchy(x, w):
    y = x @ w
    if y.sum() > 0:
        z = np.sin(y) * y
    else:
        z = np.cos(y) / (1.0 + y * y)
    return z.sum()


def branchy_jax(x, w):
    import jax
    import jax.numpy as jnp
    y = x @ w
    return jax.lax.cond(y.sum() > 0, lambda y: (jnp.sin(y) * y).sum(),
                        lambda y: (jnp.cos(y) / (1.0 + y * y)).sum(), y)


MLP_ARGS = [RNG.standard_normal(s) for s in [(3, 5), (5,), (5, 2), (2,), (7, 3), (7, 2)]]
HEAT_ARGS = [RNG.standard_normal(12), 0.2]
XENT_ARGS = [RNG.standard_normal((6, 4)), RNG.integers(0, 4, 6)]


def branch_args(sign):
    x = RNG.standard_normal((2, 3))
    w = RNG.standard_normal((3, 4))
    return [x, w if np.sign((x @ w).sum()) == sign else -w]


PROGRAMS = [
    ("mlp", mlp_loss, mlp_loss_jax, MLP_ARGS, (0, 1, 2, 3)),
    ("heat", heat, heat_jax, HEAT_ARGS, (0, 1)),
    ("cross_entropy", cross_entropy, cross_entropy_jax, XENT_ARGS, (0,)),
    ("branch_true", branchy, branchy_jax, branch_args(1), (0, 1)),
    ("branch_false", branchy, branchy_jax, branch_args(-1), (0, 1)),
]
IDS = [p[0] for p in PROGRAMS]


@pytest.mark.parametrize("name,f,f_jax,args,argnums", PROGRAMS, ids=IDS)
def test_gradients_match_central_differences(name, f, f_jax, args, argnums):
    grads = grad(f, argnums=argnums)(*args)
    assert_matches_finite_differences(f, args, argnums, grads)
    for g, argnum in zip(grads, argnums, strict=True):
        assert np.shape(g) == np.shape(args[argnum])


@pytest.mark.parametrize("name,f,f_jax,args,argnums", PROGRAMS, ids=IDS)
def test_gradients_match_jax(name, f, f_jax, args, argnums):
    expected = jax_grad(f_jax, args, argnums)
    for g, e in zip(grad(f, argnums=argnums)(*args), expected, strict=True):
        np.testing.assert_allclose(g, np.asarray(e), rtol=1e-10, atol=1e-12)


def test_the_heat_loop_stays_rolled_and_its_graph_is_well_typed():
    g = grad(heat, argnums=(0, 1))
    g(*HEAT_ARGS)
    graph = g.jitted.last_call.compiled.graph
    check_graph(graph)
    loops = [e for e in graph.eqns if e.prim.name == "while_loop"]
    assert len(loops) == 2 and all(e.params["trip_count"] == 40 for e in loops)
    assert sum(1 for _ in graph.all_eqns()) < 150      # not 40 unrolled iterations


def test_backward_equations_keep_the_forward_lines():
    g = grad(mlp_loss)
    g(*MLP_ARGS)
    graph = g.jitted.last_call.compiled.graph
    lines = {e.source.line for e in graph.all_eqns() if e.source is not None}
    first = mlp_loss.__code__.co_firstlineno
    assert {first + 1, first + 2, first + 3} <= lines
    tanh_lines = {e.source.line for e in graph.eqns if e.prim.name == "tanh"}
    # the derivative of tanh (1 - tanh**2) is computed on the line of the tanh
    squares = [e for e in graph.eqns if e.prim.name == "multiply" and e.source.line in tanh_lines]
    assert squares


def test_value_and_grad_and_jit_of_grad_agree():
    value, grads = value_and_grad(mlp_loss, argnums=(0, 2))(*MLP_ARGS)
    assert value == pytest.approx(mlp_loss(*MLP_ARGS), rel=1e-12)
    jitted = jit(grad(mlp_loss, argnums=(0, 2)))(*MLP_ARGS)
    for a, b in zip(grads, jitted, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-12)
