"""Batching: psc_jit.vmap of plain NumPy code against a Python loop over psc_jit.jit(f) (one
call per example, results stacked) and against jax.jit(jax.vmap(...)) of the same computation
in jax.numpy, on the same XLA.

    .venv/bin/python bench/vmap.py [--repeat N]

Prints one table: the steady-state time (best of N, ms) of the loop, of vmap and of jax's
vmap, the ratios loop / vmap (the speed-up of batching) and vmap / jax, the first call of
vmap and of jax (trace + lower + compile + run, ms), and the largest difference between the
results. Needs jax (`pip install -e '.[bench]'`).
"""
from __future__ import annotations

import argparse
import time

import numpy as np

RNG = np.random.default_rng(0)
W1, B1 = RNG.standard_normal((64, 128)) * 0.1, RNG.standard_normal(128) * 0.1
W2 = RNG.standard_normal((128, 10)) * 0.1


def mlp(x, np=np):
    return np.tanh(x @ W1 + B1) @ W2


def loss(w1, x, y, np=np):
    h = np.tanh(x @ w1 + B1)
    return ((h @ W2 - y) ** 2).sum()


def heat(u0):
    u = u0.copy()
    for _ in range(200):
        u[1:-1] = u[1:-1] + 0.2 * (u[2:] - 2 * u[1:-1] + u[:-2])
    return u


def heat_jax(u0):
    import jax

    def step(u, _):
        return u.at[1:-1].set(u[1:-1] + 0.2 * (u[2:] - 2 * u[1:-1] + u[:-2])), None
    return jax.lax.scan(step, u0, None, length=200)[0]


def newton(t):
    x = np.ones_like(t)
    err = np.abs(t).max() + 1.0
    while err > 1e-12:
        step = (x * x - t) / (2.0 * x)
        x = x - step
        err = np.abs(step).max()
    return x


def newton_jax(t):
    import jax
    import jax.numpy as jnp

    def body(state):
        x, _ = state
        step = (x * x - t) / (2.0 * x)
        return x - step, jnp.abs(step).max()
    x, _ = jax.lax.while_loop(lambda s: s[1] > 1e-12, body,
                              (jnp.ones_like(t), jnp.abs(t).max() + 1.0))
    return x


def pick(x, i, np=np):
    return x[i] * 2.0 + x.sum()


def in_jax(f):
    """f with np bound to jax.numpy."""
    def with_jax_numpy(*args):
        import jax.numpy as jnp
        return f(*args, np=jnp)
    return with_jax_numpy


def _grad(f):
    import psc_jit
    return psc_jit.grad(f)


def _jax_grad(f):
    import jax
    return jax.grad(in_jax(f))


X = RNG.standard_normal((1024, 64))
Y = RNG.standard_normal((1024, 10))
CASES = {
    # name: (psc function, jax function, in_axes, arguments)
    "mlp 64-128-10": (mlp, in_jax(mlp), 0, [X]),
    "per-example grad": ("grad", "grad", (None, 0, 0), [W1, X[:256], Y[:256]]),
    "heat 1000 x 200 steps": (heat, heat_jax, 0, [RNG.random((64, 1000))]),
    "newton while": (newton, newton_jax, 0, [1.0 + RNG.random((256, 100)) * 10.0 ** RNG.integers(
        0, 6, (256, 1))]),
    "traced index": (pick, in_jax(pick), 0, [RNG.standard_normal((4096, 32)),
                                              RNG.integers(0, 32, 4096)]),
}


def best_of(fn, repeat):
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best * 1e3


def first_call(fn):
    start = time.perf_counter()
    result = fn()
    return (time.perf_counter() - start) * 1e3, result


def _mapped(args, in_axes):
    axes = in_axes if isinstance(in_axes, tuple) else (in_axes,) * len(args)
    return [k for k, a in enumerate(axes) if a is not None]


def loop_over_examples(one, args, in_axes):
    """[one(x) for x in X], stacked: the Python loop vmap replaces."""
    mapped = _mapped(args, in_axes)
    n = len(args[mapped[0]])

    def run():
        outs = [one(*(a[i] if k in mapped else a for k, a in enumerate(args))) for i in range(n)]
        return np.stack(outs)
    return run


def row(name, f, f_jax, in_axes, args, repeat):
    import jax
    import psc_jit
    if f == "grad":
        f, f_jax = _grad(loss), _jax_grad(loss)
    ours = psc_jit.vmap(f, in_axes=in_axes)
    theirs = jax.jit(jax.vmap(f_jax, in_axes=in_axes))
    loop = loop_over_examples(psc_jit.jit(f), args, in_axes)
    v_first, v_out = first_call(lambda: ours(*args))
    j_first, j_out = first_call(lambda: jax.block_until_ready(theirs(*args)))
    loop()
    t_loop = best_of(loop, max(3, repeat // 4))
    t_vmap = best_of(lambda: ours(*args), repeat)
    t_jax = best_of(lambda: jax.block_until_ready(theirs(*args)), repeat)
    diff = float(np.max(np.abs(np.asarray(v_out) - np.asarray(j_out))))
    print(f"{name:22} {t_loop:9.2f} {t_vmap:9.3f} {t_jax:9.3f} {t_loop / t_vmap:9.1f} "
          f"{t_vmap / t_jax:8.2f} {v_first:10.1f} {j_first:10.1f} {diff:10.1e}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args()
    import jax
    jax.config.update("jax_enable_x64", True)
    print(f"{'case':22} {'loop ms':>9} {'vmap ms':>9} {'jax ms':>9} {'loop/vmap':>9} "
          f"{'vmap/jax':>8} {'vmap first':>10} {'jax first':>10} {'max |diff|':>10}")
    for name, (f, f_jax, in_axes, inputs) in CASES.items():
        row(name, f, f_jax, in_axes, inputs, args.repeat)


if __name__ == "__main__":
    main()
