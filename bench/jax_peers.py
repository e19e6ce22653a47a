"""The reference workloads that jax.jit cannot trace as written (Python branches and loops on
traced values, in-place updates), written by hand in jax.numpy: the same computation, for the
jax.jit column of bench/workloads.py. Each takes the workload's inputs by name and returns its
outputs in the workload's OUTPUTS order; `static` names the inputs that are not arrays."""
from __future__ import annotations


def branch_on_data(jnp, lax, x):
    return [lax.cond(x.sum() > 0, lambda v: v * 2.0, lambda v: -v, x)]


def masked_update(jnp, lax, x, limit):
    x = jnp.where(x > limit, limit, x)
    x = jnp.where(x < -limit, x - 1.0, x)
    clipped = jnp.count_nonzero(x == limit)
    positive = x > 0
    positive_mean = jnp.where(positive, x, 0.0).sum() / positive.sum()
    largest_negative = jnp.where(x < 0, x, -jnp.inf).max()
    return [x, clipped, positive_mean, largest_negative]


def newton_helper(jnp, lax, target, damped=None):
    def step_of(state):
        x, err, iterations = state
        step = (x * x - target) / (2.0 * x)
        x = lax.cond(jnp.abs(step).max() > 1.0, lambda: x - 0.5 * step, lambda: x - step)
        return x, jnp.abs(step).max(), iterations + 1

    def going(state):
        _, err, iterations = state
        return (err > 1e-10) & (iterations < 100)

    x, _, iterations = lax.while_loop(going, step_of, (jnp.ones_like(target), 1.0, 0))
    return [x, iterations]


def cholesky_loops(jnp, lax, A):
    n = A.shape[0]
    index = jnp.arange(n)

    def column(j, L):
        before = index < j
        row = jnp.where(before, L[j], 0.0)
        diagonal = jnp.sqrt(A[j, j] - row @ row)
        L = L.at[j, j].set(diagonal)
        below = index > j
        values = (A[:, j] - jnp.where(before[None, :], L, 0.0) @ row) / diagonal
        return L.at[:, j].set(jnp.where(below, values, L[:, j]))

    return [lax.fori_loop(0, n, column, jnp.zeros_like(A))]


def histogram_stats(jnp, lax, samples, labels):
    counts, edges = jnp.histogram(samples, bins=32, range=(0.0, 1.0))
    per_label = jnp.bincount(labels, weights=samples, minlength=32, length=32)
    grid = per_label.reshape(4, 8)
    density = counts / counts.sum()
    return [counts, edges, per_label, grid, density]


PEERS = {f.__name__: f for f in (branch_on_data, masked_update, newton_helper, cholesky_loops,
                                 histogram_stats)}
STATIC = {"masked_update": ("limit",), "newton_helper": ("damped",)}
