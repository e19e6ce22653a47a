"""Loops over array elements and shrinking slices, rolled into one XLA loop, against NumPy.

    .venv/bin/python bench/rolled_loops.py [--only NAME ...] [--batches B]

Each row is a function written as plain NumPy loops (triangular factorizations and solves
whose slices depend on the loop index, a recurrence that reads what the iteration before
wrote), called as itself and through `jit` (a cache hit), interleaved batch by batch. Times
are per call in microseconds, the fastest batch; `np/psc` above 1 is psc_jit faster.
`equal` says whether the results are NumPy's bit for bit (a product over a slice may be
summed in another order: the largest difference is printed then).
"""
from __future__ import annotations

import argparse
import sys

import numpy as np

from overhead import side_by_side


def cholesky(A):
    n = A.shape[0]
    L = np.zeros_like(A)
    for j in range(n):
        L[j, j] = np.sqrt(A[j, j] - L[j, :j] @ L[j, :j])
        L[j + 1:, j] = (A[j + 1:, j] - L[j + 1:, :j] @ L[j, :j]) / L[j, j]
    return L


def cholesky_upper(A):
    n = A.shape[0]
    U = np.zeros_like(A)
    for j in range(n):
        U[j, j] = np.sqrt(A[j, j] - U[:j, j] @ U[:j, j])
        U[j, j + 1:] = (A[j, j + 1:] - U[:j, j] @ U[:j, j + 1:]) / U[j, j]
    return U


def forward_substitution(L, b):
    y = np.zeros_like(b)
    for i in range(b.shape[0]):
        y[i] = (b[i] - L[i, :i] @ y[:i]) / L[i, i]
    return y


def lu_in_place(A):
    A = A.copy()
    n = A.shape[0]
    for k in range(n - 1):
        A[k + 1:, k] /= A[k, k]
        A[k + 1:, k + 1:] -= np.outer(A[k + 1:, k], A[k, k + 1:])
    return A


def thomas(a, b, c, d):
    n = d.shape[0]
    cp = np.empty(n)
    dp = np.empty(n)
    cp[0] = c[0] / b[0]
    dp[0] = d[0] / b[0]
    for i in range(1, n):
        m = b[i] - a[i] * cp[i - 1]
        cp[i] = c[i] / m
        dp[i] = (d[i] - a[i] * dp[i - 1]) / m
    x = np.zeros(n)
    x[n - 1] = dp[n - 1]
    for i in range(n - 2, -1, -1):
        x[i] = dp[i] - cp[i] * x[i + 1]
    return x


def prefix_add(x):
    y = np.zeros_like(x)
    for i in range(1, 20):
        y[:i * 5000] += x[:i * 5000]
    return y


def _spd(n):
    g = np.random.default_rng(12).standard_normal((n, n))
    return g @ g.T + n * np.eye(n)


def cases():
    rng = np.random.default_rng(0)
    lower = np.tril(rng.random((1000, 1000))) + 1000 * np.eye(1000)

    def tridiagonal(n):
        return rng.random(n), 4.0 + rng.random(n), rng.random(n), rng.random(n)
    return [("cholesky 100", cholesky, lambda: (_spd(100),)),
            ("cholesky 200", cholesky, lambda: (_spd(200),)),
            ("cholesky 400", cholesky, lambda: (_spd(400),)),
            ("upper cholesky 300", cholesky_upper, lambda: (_spd(300),)),
            ("forward substitution 1000", forward_substitution,
             lambda: (lower, rng.random(1000))),
            ("lu 200", lu_in_place, lambda: (_spd(200),)),
            ("thomas 1,000", thomas, lambda: tridiagonal(1_000)),
            ("thomas 100,000", thomas, lambda: tridiagonal(100_000)),
            ("prefix y[:k] += x[:k], 100,000", prefix_add, lambda: (rng.random(100_000),))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="*", help="substrings of the row names to run")
    parser.add_argument("--batches", type=int, default=9)
    args = parser.parse_args()
    from psc_jit import jit

    header = f"{'case':32} {'numpy µs':>10} {'psc µs':>10} {'np/psc':>7}  equal"
    print(header)
    print("-" * len(header))
    for name, fn, make_args in cases():
        if args.only and not any(s in name for s in args.only):
            continue
        inputs = make_args()
        jitted = jit(fn)
        got, want = jitted(*inputs), fn(*inputs)
        equal = "yes" if np.array_equal(got, want) else \
            f"no (largest difference {np.max(np.abs(got - want)):.1e})"
        numpy_us, psc_us = side_by_side([lambda: fn(*inputs),          # noqa: B023
                                         lambda: jitted(*inputs)], args.batches)  # noqa: B023
        print(f"{name:32} {numpy_us:10.0f} {psc_us:10.0f} {numpy_us / psc_us:7.2f}  {equal}",
              flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
