"""Gradients: psc_jit.grad of plain NumPy code against jax.jit(jax.grad(...)) of the same
computation in jax.numpy, on the same XLA.

    .venv/bin/python bench/gradients.py [--repeat N]

Prints one table: the steady-state time of a compiled gradient call (best of N, ms), the
first call (trace + lower + compile + run, ms), the program size (equations of the graph,
sub-graphs included) and the ratios psc_jit / jax. Needs jax (`pip install -e '.[bench]'`).
"""
from __future__ import annotations

import argparse
import functools
import time

import numpy as np

RNG = np.random.default_rng(0)


def mlp(w1, b1, w2, b2, x, y, np=np):
    h = np.tanh(x @ w1 + b1)
    return ((h @ w2 + b2 - y) ** 2).mean()


def heat(u0, k):
    u = u0.copy()
    for _ in range(500):
        u[1:-1] = u[1:-1] + k * (u[2:] - 2 * u[1:-1] + u[:-2]) * (1.0 + 0.1 * u[1:-1])
    return (u * u).sum()


def heat_jax(u0, k):
    import jax

    def step(u, _):
        return u.at[1:-1].set(u[1:-1] + k * (u[2:] - 2 * u[1:-1] + u[:-2])
                              * (1.0 + 0.1 * u[1:-1])), None
    u, _ = jax.lax.scan(step, u0, None, length=500)
    return (u * u).sum()


def cross_entropy(logits, labels, np=np):
    shifted = logits - logits.max(axis=1, keepdims=True)
    log_probs = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
    return -log_probs[np.arange(len(labels)), labels].mean()


def in_jax(f):
    """f with np bound to jax.numpy."""
    def with_jax_numpy(*args):
        import jax.numpy as jnp
        return f(*args, np=jnp)
    return with_jax_numpy


CASES = {
    "mlp 512x256x256x10": (
        mlp, in_jax(mlp), (0, 1, 2, 3),
        [RNG.standard_normal(s) * 0.1 for s in [(256, 256), (256,), (256, 10), (10,)]]
        + [RNG.standard_normal((512, 256)), RNG.standard_normal((512, 10))]),
    "heat 1000 x 500 steps": (heat, heat_jax, (0, 1),
                              [np.sin(np.linspace(0, 3, 1000)), 0.2]),
    "cross-entropy 4096x100": (
        cross_entropy, in_jax(cross_entropy), (0,),
        [RNG.standard_normal((4096, 100)), RNG.integers(0, 100, 4096)]),
}


def timed(fn, args, repeat):
    start = time.perf_counter()
    first_result = fn(*args)
    first = time.perf_counter() - start
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fn(*args)
        best = min(best, time.perf_counter() - start)
    return first * 1e3, best * 1e3, first_result


def _ready(fn, *args):
    import jax
    return jax.block_until_ready(fn(*args))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args()
    import jax
    jax.config.update("jax_enable_x64", True)
    import psc_jit

    print(f"{'case':26} {'psc first':>10} {'jax first':>10} {'psc ms':>9} {'jax ms':>9} "
          f"{'psc/jax':>8} {'eqns':>6} {'max |diff|':>11}")
    for name, (f, f_jax, argnums, inputs) in CASES.items():
        ours = psc_jit.grad(f, argnums=argnums)
        theirs = jax.jit(jax.grad(f_jax, argnums=argnums))
        p_first, p_best, p_out = timed(ours, inputs, args.repeat)
        j_first, j_best, j_out = timed(functools.partial(_ready, theirs), inputs, args.repeat)
        eqns = sum(1 for _ in ours.jitted.last_call.compiled.graph.all_eqns())
        diff = max(float(np.max(np.abs(np.asarray(a) - np.asarray(b))))
                   for a, b in zip(p_out, j_out, strict=True))
        print(f"{name:26} {p_first:10.1f} {j_first:10.1f} {p_best:9.3f} {j_best:9.3f} "
              f"{p_best / j_best:8.2f} {eqns:6d} {diff:11.2e}")


if __name__ == "__main__":
    main()
