"""Loop kernels as people write them in NumPy: plain NumPy, psc_jit, jax.jit and Numba, in one run.

    .venv/bin/python bench/loops.py [--only NAME ...] [--batches B] [--timeout S]
                                    [--contenders psc jax numba] [--passes]
                                    [--small-loop-bytes N]

Each kernel below is a function written the way scientific codes write it (triangular
factorizations and solves row by row, dynamic programming over a triangle, stencil sweeps,
bit twiddling over bytes, loops whose passes are independent...), called unmodified by every
contender:
- `numpy`: the function itself;
- `psc`: `psc_jit.jit(f)`, a cache hit;
- `jax`: `jax.jit` of the same function with its global `np` bound to `jax.numpy` (most
  kernels update arrays in place or branch on values, which jax does not trace: `-`);
- `numba`: `numba.njit` of the same function (helpers it calls are njit-ed as well).
Each (kernel, contender) pair runs in a child process of its own (a compile that runs away is
stopped after --timeout seconds and shown as `>T s`), timing the contender and NumPy batch by
batch in turns; times are per call, in milliseconds, the fastest batch. Arguments a kernel
updates in place are copied before every call, for every contender alike. `first` is the
first call (trace, compile and run). `ok` says whether the results equal NumPy's (values and
dtypes; `~` within 1e-9 relative, as a product summed in another order gives; a number: the
largest relative difference, for an ill-conditioned kernel; `x` if they differ).

`--passes` prints instead what one pass of a rolled loop costs on tiny bodies: the time per
pass against the pass count, and the kernels (thunks) in the body, or `C (host loop)` where
the loop runs as C (core/compile/hostloops.py; `PSC_JIT_HOST_LOOPS=0` keeps XLA's loop).
"""
from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import time
import types
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from overhead import side_by_side  # noqa: E402


# -- the kernels: dynamic programming, factorizations, solves ----------------------------------

def match(b1, b2):
    if b1 + b2 == 3:
        return 1
    else:
        return 0


def nussinov(N, seq):
    table = np.zeros((N, N), np.int32)
    for i in range(N - 1, -1, -1):
        for j in range(i + 1, N):
            if j - 1 >= 0:
                table[i, j] = max(table[i, j], table[i, j - 1])
            if i + 1 < N:
                table[i, j] = max(table[i, j], table[i + 1, j])
            if j - 1 >= 0 and i + 1 < N:
                if i < j - 1:
                    table[i, j] = max(table[i, j], table[i + 1, j - 1] + match(seq[i], seq[j]))
                else:
                    table[i, j] = max(table[i, j], table[i + 1, j - 1])
            for k in range(i + 1, j):
                table[i, j] = max(table[i, j], table[i, k] + table[k + 1, j])
    return table


def cholesky(A):
    A[0, 0] = np.sqrt(A[0, 0])
    for i in range(1, A.shape[0]):
        for j in range(i):
            A[i, j] -= np.dot(A[i, :j], A[j, :j])
            A[i, j] /= A[j, j]
        A[i, i] -= np.dot(A[i, :i], A[i, :i])
        A[i, i] = np.sqrt(A[i, i])


def lu(A):
    for i in range(A.shape[0]):
        for j in range(i):
            A[i, j] -= A[i, :j] @ A[:j, j]
            A[i, j] /= A[j, j]
        for j in range(i, A.shape[0]):
            A[i, j] -= A[i, :i] @ A[:i, j]


def ludcmp(A, b):
    x = np.zeros_like(b)
    y = np.zeros_like(b)
    for i in range(A.shape[0]):
        for j in range(i):
            A[i, j] -= A[i, :j] @ A[:j, j]
            A[i, j] /= A[j, j]
        for j in range(i, A.shape[0]):
            A[i, j] -= A[i, :i] @ A[:i, j]
    for i in range(A.shape[0]):
        y[i] = b[i] - A[i, :i] @ y[:i]
    for i in range(A.shape[0] - 1, -1, -1):
        x[i] = (y[i] - A[i, i + 1:] @ x[i + 1:]) / A[i, i]
    return x, y


def trisolv(L, x, b):
    for i in range(x.shape[0]):
        x[i] = (b[i] - L[i, :i] @ x[:i]) / L[i, i]


def durbin(r):
    y = np.empty_like(r)
    alpha = -r[0]
    beta = 1.0
    y[0] = -r[0]
    for k in range(1, r.shape[0]):
        beta *= 1.0 - alpha * alpha
        alpha = -(r[k] + np.dot(np.flip(r[:k]), y[:k])) / beta
        y[:k] += alpha * np.flip(y[:k])
        y[k] = alpha
    return y


def gramschmidt(A):
    Q = np.zeros_like(A)
    R = np.zeros((A.shape[1], A.shape[1]), dtype=A.dtype)
    for k in range(A.shape[1]):
        nrm = np.dot(A[:, k], A[:, k])
        R[k, k] = np.sqrt(nrm)
        Q[:, k] = A[:, k] / R[k, k]
        for j in range(k + 1, A.shape[1]):
            R[k, j] = np.dot(Q[:, k], A[:, j])
            A[:, j] -= Q[:, k] * R[k, j]
    return Q, R


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


def jacobi_iteration(A, b, iterations):
    x = np.zeros_like(b)
    D = np.diag(A)
    R = A - np.diagflat(D)
    for _ in range(iterations):
        x_new = (b - R @ x) / D
        x = x_new
    return x


# -- triangular and symmetric products with index-dependent slices ----------------------------

def trmm(alpha, A, B):
    for i in range(B.shape[0]):
        for j in range(B.shape[1]):
            B[i, j] += np.dot(A[i + 1:, i], B[i + 1:, j])
    B *= alpha


def symm(alpha, beta, C, A, B):
    temp2 = np.empty((C.shape[1], ), dtype=C.dtype)
    C *= beta
    for i in range(C.shape[0]):
        for j in range(C.shape[1]):
            C[:i, j] += alpha * B[i, j] * A[i, :i]
            temp2[j] = B[:i, j] @ A[i, :i]
        C[i, :] += alpha * B[i, :] * A[i, i] + alpha * temp2


def syrk(alpha, beta, C, A):
    for i in range(A.shape[0]):
        C[i, :i + 1] *= beta
        for k in range(A.shape[1]):
            C[i, :i + 1] += alpha * A[i, k] * A[:i + 1, k]


def syr2k(alpha, beta, C, A, B):
    for i in range(A.shape[0]):
        C[i, :i + 1] *= beta
        for k in range(A.shape[1]):
            C[i, :i + 1] += (A[:i + 1, k] * alpha * B[i, k] +
                             B[:i + 1, k] * alpha * A[i, k])


def covariance(M, float_n, data):
    mean = np.mean(data, axis=0)
    data -= mean
    cov = np.zeros((M, M), dtype=data.dtype)
    for i in range(M):
        cov[i:M, i] = cov[i, i:M] = data[:, i] @ data[:, i:M] / (float_n - 1.0)
    return cov


def correlation(M, float_n, data):
    mean = np.mean(data, axis=0)
    stddev = np.std(data, axis=0)
    stddev[stddev <= 0.1] = 1.0
    data -= mean
    data /= np.sqrt(float_n) * stddev
    corr = np.eye(M, dtype=data.dtype)
    for i in range(M - 1):
        corr[i + 1:M, i] = corr[i, i + 1:M] = data[:, i] @ data[:, i + 1:M]
    return corr


# -- sweeps and stencils -----------------------------------------------------------------------

def seidel_2d(TSTEPS, N, A):
    for t in range(0, TSTEPS - 1):  # noqa: B007 (as written)
        for i in range(1, N - 1):
            A[i, 1:-1] += (A[i - 1, :-2] + A[i - 1, 1:-1] + A[i - 1, 2:] +
                           A[i, 2:] + A[i + 1, :-2] + A[i + 1, 1:-1] +
                           A[i + 1, 2:])
            for j in range(1, N - 1):
                A[i, j] += A[i, j - 1]
                A[i, j] /= 9.0


def jacobi_1d(TSTEPS, A, B):
    for t in range(1, TSTEPS):  # noqa: B007 (as written)
        B[1:-1] = 0.33333 * (A[:-2] + A[1:-1] + A[2:])
        A[1:-1] = 0.33333 * (B[:-2] + B[1:-1] + B[2:])


def jacobi_2d(TSTEPS, A, B):
    for t in range(1, TSTEPS):  # noqa: B007 (as written)
        B[1:-1, 1:-1] = 0.2 * (A[1:-1, 1:-1] + A[1:-1, :-2] + A[1:-1, 2:] +
                               A[2:, 1:-1] + A[:-2, 1:-1])
        A[1:-1, 1:-1] = 0.2 * (B[1:-1, 1:-1] + B[1:-1, :-2] + B[1:-1, 2:] +
                               B[2:, 1:-1] + B[:-2, 1:-1])


def heat_3d(TSTEPS, A, B):
    for t in range(1, TSTEPS):  # noqa: B007 (as written)
        B[1:-1, 1:-1, 1:-1] = (
            0.125 * (A[2:, 1:-1, 1:-1] - 2.0 * A[1:-1, 1:-1, 1:-1] + A[:-2, 1:-1, 1:-1]) +
            0.125 * (A[1:-1, 2:, 1:-1] - 2.0 * A[1:-1, 1:-1, 1:-1] + A[1:-1, :-2, 1:-1]) +
            0.125 * (A[1:-1, 1:-1, 2:] - 2.0 * A[1:-1, 1:-1, 1:-1] + A[1:-1, 1:-1, 0:-2]) +
            A[1:-1, 1:-1, 1:-1])
        A[1:-1, 1:-1, 1:-1] = (
            0.125 * (B[2:, 1:-1, 1:-1] - 2.0 * B[1:-1, 1:-1, 1:-1] + B[:-2, 1:-1, 1:-1]) +
            0.125 * (B[1:-1, 2:, 1:-1] - 2.0 * B[1:-1, 1:-1, 1:-1] + B[1:-1, :-2, 1:-1]) +
            0.125 * (B[1:-1, 1:-1, 2:] - 2.0 * B[1:-1, 1:-1, 1:-1] + B[1:-1, 1:-1, 0:-2]) +
            B[1:-1, 1:-1, 1:-1])


def floyd_warshall(path):
    for k in range(path.shape[0]):
        path[:] = np.minimum(path[:], np.add.outer(path[:, k], path[k, :]))


def prefix_sum(x):
    out = np.empty_like(x)
    out[0] = x[0]
    for i in range(1, x.shape[0]):
        out[i] = out[i - 1] + x[i]
    return out


# -- bits, complex numbers, a deep nest -------------------------------------------------------

def crc16(data, poly=0x8408):
    crc = 0xFFFF
    for b in data:
        cur_byte = 0xFF & b
        for _ in range(0, 8):
            if (crc & 0x0001) ^ (cur_byte & 0x0001):
                crc = (crc >> 1) ^ poly
            else:
                crc >>= 1
            cur_byte >>= 1
    crc = (~crc & 0xFFFF)
    crc = (crc << 8) | ((crc >> 8) & 0xFF)
    return crc & 0xFFFF


def scattering_self_energies(neigh_idx, dH, G, D, Sigma):
    for k in range(G.shape[0]):
        for E in range(G.shape[1]):
            for q in range(D.shape[0]):
                for w in range(D.shape[1]):
                    for i in range(D.shape[-2]):
                        for j in range(D.shape[-1]):
                            for a in range(neigh_idx.shape[0]):
                                for b in range(neigh_idx.shape[1]):
                                    if E - w >= 0:
                                        dHG = G[k, E - w, neigh_idx[a, b]] @ dH[a, b, i]
                                        dHD = dH[a, b, j] * D[q, w, a, b, i, j]
                                        Sigma[k, E, a] += dHG @ dHD


# -- loops whose passes are independent --------------------------------------------------------

def go_fast(a):
    trace = 0.0
    for i in range(a.shape[0]):
        trace += np.tanh(a[i, i])
    return a + trace


def normalize_rows(X):
    out = np.empty_like(X)
    for i in range(X.shape[0]):
        row = X[i]
        out[i] = (row - row.mean()) / row.std()
    return out


def pairwise_distances(X):
    n = X.shape[0]
    D = np.empty((n, n))
    for i in range(n):
        D[i] = np.sqrt(((X[i] - X) ** 2).sum(axis=1))
    return D


def doitgen(NR, NQ, NP, A, C4):
    for r in range(NR):
        A[r, :, :] = np.reshape(np.reshape(A[r], (NQ, 1, NP)) @ C4, (NQ, NP))


def row_softmax(X):
    out = np.empty_like(X)
    for i in range(X.shape[0]):
        e = np.exp(X[i] - X[i].max())
        out[i] = e / e.sum()
    return out


def azimint_naive(data, radius, npt):
    rmax = radius.max()
    res = np.zeros(npt, dtype=np.float64)
    for i in range(npt):
        r1 = rmax * i / npt
        r2 = rmax * (i + 1) / npt
        mask_r12 = np.logical_and((r1 <= radius), (radius < r2))
        values_r12 = data[mask_r12]
        res[i] = values_r12.mean()
    return res


def spmv(A_row, A_col, A_val, x):
    y = np.empty(A_row.size - 1, A_val.dtype)
    for i in range(A_row.size - 1):
        cols = A_col[A_row[i]:A_row[i + 1]]
        vals = A_val[A_row[i]:A_row[i + 1]]
        y[i] = vals @ x[cols]
    return y


# -- inputs ------------------------------------------------------------------------------------

def _rng(seed=42):
    return np.random.default_rng(seed)


def _spd(n):
    g = _rng(12).random((n, n))
    return g @ g.T + n * np.eye(n)


def _tridiagonal(n):
    rng = _rng(1)
    return rng.random(n), 4.0 + rng.random(n), rng.random(n), rng.random(n)


def _self_energy_inputs():
    rng = _rng(3)
    nkz, ne, nqz, nw, n3d, na, nb, norb = 2, 4, 2, 2, 3, 6, 2, 4
    neigh_idx = rng.integers(0, na, (na, nb)).astype(np.int32)
    dH = rng.random((na, nb, n3d, norb, norb)) + 1j * rng.random((na, nb, n3d, norb, norb))
    G = rng.random((nkz, ne, na, norb, norb)) + 1j * rng.random((nkz, ne, na, norb, norb))
    D = rng.random((nqz, nw, na, nb, n3d, n3d)) + 1j * rng.random((nqz, nw, na, nb, n3d, n3d))
    Sigma = np.zeros((nkz, ne, na, norb, norb), dtype=np.complex128)
    return neigh_idx, dH, G, D, Sigma


def _csr(n, density):
    rng = _rng(5)
    counts = rng.binomial(n, density, n)
    A_row = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    A_col = np.concatenate([np.sort(rng.choice(n, c, replace=False)) for c in counts])
    return A_row, A_col.astype(np.int64), rng.random(A_row[-1]), rng.random(n)


def _lower(n):
    return np.tril(_rng(7).random((n, n))) + n * np.eye(n)


KERNELS = {
    # name: (function, inputs (a function of nothing), what it stands for)
    "nussinov": (nussinov, lambda: (60, _rng().integers(0, 4, 60).astype(np.int32)),
                 "DP recurrence over a triangle"),
    "cholesky": (cholesky, lambda: (_spd(200),), "row by row, prefix dot products"),
    "lu": (lu, lambda: (_spd(60),), "LU, index-dependent slices"),
    "ludcmp": (ludcmp, lambda: (_spd(60), _rng().random(60)), "LU and solve"),
    "trisolv": (trisolv, lambda: (_lower(2000), np.zeros(2000), _rng().random(2000)),
                "forward substitution"),
    "durbin": (durbin, lambda: (_rng().random(1000) * 0.1,), "np.flip of a shrinking slice"),
    "gramschmidt": (gramschmidt, lambda: (_rng().random((70, 60)),), "column by column"),
    "thomas": (thomas, lambda: _tridiagonal(100_000), "reads what the pass before wrote"),
    "jacobi iteration": (jacobi_iteration,
                         lambda: (_spd(1000), _rng().random(1000), 50), "x = x_new, matvec"),
    "trmm": (trmm, lambda: (1.5, _rng().random((60, 60)), _rng().random((60, 80))),
             "triangular product"),
    "symm": (symm, lambda: (1.5, 1.2, _rng().random((60, 80)), _rng().random((60, 60)),
                            _rng().random((60, 80))), "symmetric product"),
    "syrk": (syrk, lambda: (1.5, 1.2, _rng().random((70, 70)), _rng().random((70, 50))),
             "symmetric rank-k, row slices :i+1"),
    "syr2k": (syr2k, lambda: (1.5, 1.2, _rng().random((70, 70)), _rng().random((70, 50)),
                              _rng().random((70, 50))), "symmetric rank-2k"),
    "covariance": (covariance, lambda: (80, 100.0, _rng().random((100, 80))),
                   "a loop over column pairs"),
    "correlation": (correlation, lambda: (80, 100.0, _rng().random((100, 80))),
                    "a loop over column pairs"),
    "seidel_2d": (seidel_2d, lambda: (8, 50, _rng().random((50, 50))), "Gauss-Seidel sweep"),
    "jacobi_1d": (jacobi_1d, lambda: (100, _rng().random(400), _rng().random(400)),
                  "1-D stencil in time"),
    "jacobi_2d": (jacobi_2d, lambda: (20, _rng().random((90, 90)), _rng().random((90, 90))),
                  "2-D stencil in time"),
    "heat_3d": (heat_3d, lambda: (10, _rng().random((20, 20, 20)), _rng().random((20, 20, 20))),
                "3-D stencil in time"),
    "floyd_warshall": (floyd_warshall, lambda: (_rng().integers(1, 100, (100, 100)) * 1.0,),
                       "outer min per pass"),
    "prefix_sum": (prefix_sum, lambda: (_rng().random(100_000),), "scan written as a loop"),
    "crc16": (crc16, lambda: (_rng().integers(0, 256, 1000).astype(np.uint8),),
              "bitwise CRC over bytes"),
    "self_energies": (scattering_self_energies, _self_energy_inputs,
                      "complex products, 8-deep nest, a branch"),
    "go_fast": (go_fast, lambda: (_rng().random((1000, 1000)),), "reduction carry"),
    "normalize_rows": (normalize_rows, lambda: (_rng().random((2000, 100)),),
                       "independent rows"),
    "pairwise": (pairwise_distances, lambda: (_rng().random((500, 3)),), "independent rows"),
    "row_softmax": (row_softmax, lambda: (_rng().random((2000, 100)),), "independent rows"),
    "doitgen": (doitgen, lambda: (20, 25, 30, _rng().random((20, 25, 30)),
                                  _rng().random((30, 30))), "independent slabs, matmul"),
    "azimint_naive": (azimint_naive, lambda: (_rng().random(40_000), _rng().random(40_000), 100),
                      "a mask per pass"),
    "spmv": (spmv, lambda: _csr(1000, 0.01), "CSR rows, bounds from an index array"),
}


# -- one contender in a child process ----------------------------------------------------------

def rebound(fn, numpy_module, wrap=None):
    """`fn` with its global `np` bound to `numpy_module`, and the functions of this module it
    calls rebound alike (and wrapped: numba needs its helpers njit-ed too)."""
    shared = dict(fn.__globals__)
    shared["np"] = numpy_module
    for name, value in fn.__globals__.items():
        if isinstance(value, types.FunctionType) and value.__module__ == fn.__module__ and \
                name in fn.__code__.co_names:
            helper = types.FunctionType(value.__code__, shared, name, value.__defaults__)
            shared[name] = wrap(helper) if wrap else helper
    return types.FunctionType(fn.__code__, shared, fn.__name__, fn.__defaults__)


def contender(kind: str, fn):
    if kind == "psc":
        from psc_jit import jit
        small_loop_bytes_as_asked()
        return jit(fn)
    if kind == "jax":
        import jax
        import jax.numpy as jnp
        jax.config.update("jax_enable_x64", True)
        jitted = jax.jit(rebound(fn, jnp), static_argnums=_static_positions(fn))
        return lambda *args: _to_numpy(jitted(*args))
    import numba
    warnings.simplefilter("ignore", numba.NumbaPerformanceWarning)
    return numba.njit(rebound(fn, np, numba.njit))


SMALL_LOOP_BYTES_VAR = "PSC_BENCH_SMALL_LOOP_BYTES"


def small_loop_bytes_as_asked() -> None:
    """--small-loop-bytes N (passed to the children through the environment): XLA:CPU emits a
    loop as one function when a pass touches under N bytes (psc_jit's choice is
    backend_options.SMALL_LOOP_BYTES, jaxlib's own default 1024). Programs are then compiled
    anew, not read from the persistent cache, which keys on psc_jit's choice."""
    if SMALL_LOOP_BYTES_VAR not in os.environ:
        return
    from psc_jit.core.compile import xla
    os.environ["PSC_JIT_CACHE_DIR"] = "off"
    xla.BACKEND_OPTIONS = (("xla_cpu_small_while_loop_byte_threshold",
                            os.environ[SMALL_LOOP_BYTES_VAR]),)


def _static_positions(fn) -> tuple[int, ...]:
    inputs = KERNELS[_name_of(fn)][1]()
    return tuple(k for k, a in enumerate(inputs) if isinstance(a, int))


def _name_of(fn) -> str:
    return next(name for name, (f, _, _) in KERNELS.items() if f is fn)


def _to_numpy(value):
    if isinstance(value, tuple):
        return tuple(_to_numpy(v) for v in value)
    return None if value is None else np.asarray(value)


def caller(fn, inputs, mutated):
    """A call of `fn` on fresh copies of the inputs it updates in place; returns what it
    returned and those inputs."""
    def call():
        args = [a.copy() if k in mutated else a for k, a in enumerate(inputs)]
        return fn(*args), [args[k] for k in mutated]
    return call


def agreement(got, want) -> str:
    """`yes` (bit for bit), `~` (within 1e-9 relative), the largest relative difference up to
    1e-5 (a kernel as ill-conditioned as durbin's recursion: NumPy's own result moves by
    2.5e-8 when its input moves by 1e-15), or `x`."""
    got_leaves, want_leaves = _leaves(got), _leaves(want)
    if len(got_leaves) != len(want_leaves):
        return "x"
    largest = 0.0
    for g, w in zip(got_leaves, want_leaves, strict=True):
        g, w = np.asarray(g), np.asarray(w)
        if g.dtype != w.dtype or g.shape != w.shape:
            return "x"
        if not np.array_equal(g, w, equal_nan=True):
            with np.errstate(all="ignore"):
                largest = max(largest, float(np.nanmax(np.abs(g - w) / np.abs(w))))
    if largest == 0.0:
        return "yes"
    return "~" if largest <= 1e-9 else f"{largest:.0e}" if largest <= 1e-5 else "x"


def _leaves(value) -> list:
    if isinstance(value, (tuple, list)):
        return [leaf for v in value for leaf in _leaves(v)]
    return [] if value is None else [value]


def run_one(name: str, kind: str, batches: int) -> dict:
    fn, make_inputs, _ = KERNELS[name]
    inputs = make_inputs()
    mutated = _mutated_positions(fn, inputs)
    plain = caller(fn, inputs, mutated)
    want = plain()
    try:
        compiled = caller(contender(kind, fn), inputs, mutated)
        start = time.perf_counter()
        got = compiled()
        first = time.perf_counter() - start
    except Exception as error:          # a contender that does not take the function as is
        return {"error": f"{type(error).__name__}: {str(error).splitlines()[0][:120]}"}
    numpy_us, contender_us = side_by_side([plain, compiled], batches)
    return {"numpy": numpy_us / 1e3, "time": contender_us / 1e3, "first": first,
            "ok": agreement(got, want)}


def _mutated_positions(fn, inputs) -> list[int]:
    copies = [a.copy() if isinstance(a, np.ndarray) else a for a in inputs]
    fn(*copies)
    return [k for k, (a, c) in enumerate(zip(inputs, copies, strict=True))
            if isinstance(a, np.ndarray) and not np.array_equal(a, c, equal_nan=True)]


def in_child(name: str, kind: str, batches: int, timeout: float) -> dict:
    command = [sys.executable, __file__, "--child", name, kind, "--batches", str(batches)]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"error": f">{timeout:.0f} s"}
    lines = done.stdout.strip().splitlines()
    if done.returncode != 0 or not lines:
        return {"error": (done.stderr.strip().splitlines() or ["crashed"])[-1][:120]}
    return json.loads(lines[-1])


# -- the table ---------------------------------------------------------------------------------

def cell(result: dict | None) -> str:
    if result is None:
        return f"{'':>33}"
    if "error" in result:
        text = result["error"]
        return f"{'-' if not text.startswith('>') else text:>9} {'':>7} {'':>9} {'':>5}"
    return (f"{result['time']:9.3f} {result['numpy'] / result['time']:7.2f} "
            f"{result['first']:9.2f} {result['ok']:>5}")


def print_table(rows: dict, contenders: list[str]) -> None:
    head = f"{'kernel':18} {'numpy ms':>9}"
    for kind in contenders:
        head += f" | {kind + ' ms':>9} {'np/' + kind:>7} {'first s':>9} {'ok':>5}"
    print(head)
    print("-" * len(head))
    for name, results in rows.items():
        numpy_ms = next((r["numpy"] for r in results.values() if "numpy" in r), math.nan)
        print(f"{name:18} {numpy_ms:9.3f}" +
              "".join(f" | {cell(results.get(k))}" for k in contenders), flush=True)
    for kind in contenders:
        ratios = [r[kind]["numpy"] / r[kind]["time"] for r in rows.values()
                  if "time" in r.get(kind, {})]
        firsts = sorted(r[kind]["first"] for r in rows.values() if "first" in r.get(kind, {}))
        if ratios:
            geomean = math.exp(sum(map(math.log, ratios)) / len(ratios))
            print(f"{kind}: {len(ratios)}/{len(rows)} ran; geomean np/{kind} {geomean:.2f}, "
                  f"below NumPy {sum(r < 1 for r in ratios)}; first call median "
                  f"{firsts[len(firsts) // 2]:.2f} s, max {firsts[-1]:.2f} s")
    for name, results in rows.items():
        for kind in contenders:
            if "error" in results.get(kind, {}):
                print(f"  {name} / {kind}: {results[kind]['error']}")


# -- the cost of one pass of a rolled loop -----------------------------------------------------

def recurrence(x):
    y = np.empty_like(x)
    y[0] = x[0]
    for i in range(1, x.shape[0]):
        y[i] = 0.5 * y[i - 1] + x[i]
    return y


def scalar_sum(x):
    acc = 0.0
    for i in range(x.shape[0]):
        acc = acc + x[i] * x[i]
    return acc


def row_dot(L, b):
    x = np.zeros_like(b)
    for i in range(b.shape[0]):
        x[i] = b[i] - L[i, :i] @ x[:i]
    return x


def passes_table(batches: int) -> None:
    """Per pass of a rolled loop with a tiny body: time / passes, the kernels XLA made of the
    body (each one a thunk the CPU runtime dispatches on every pass, unless XLA emitted the
    whole loop as one function: `how` says which) and the time per pass and kernel."""
    from psc_jit import jit
    small_loop_bytes_as_asked()
    print(f"{'body':30} {'passes':>7} {'µs/call':>9} {'ns/pass':>8} {'kernels':>7} "
          f"{'ns/kernel':>9}  how")
    for label, fn, sizes in (("y[i] = 0.5 * y[i-1] + x[i]", recurrence, (1_000, 100_000)),
                             ("acc = acc + x[i] * x[i]", scalar_sum, (1_000, 100_000)),
                             ("x[i] = b[i] - L[i, :i] @ x[:i]", row_dot, (100, 1_000))):
        for n in sizes:
            args = (_lower(n), _rng().random(n)) if fn is row_dot else (_rng().random(n),)
            jitted = jit(fn)
            jitted(*args)
            us = side_by_side([lambda: jitted(*args)], batches)[0]      # noqa: B023
            compiled = jitted.lower(*args).compile()
            if "psc_loop_" in compiled.as_text():       # a host loop: one C function
                kernels, how = 1, "C (host loop)"
            else:
                kernels = body_kernels(compiled.kernels)
                how = "one function" if "xla_cpu_small_call" in compiled.as_text() else "thunks"
            print(f"{label:30} {n:7} {us:9.1f} {us * 1e3 / n:8.1f} {kernels:>7} "
                  f"{us * 1e3 / n / kernels:9.1f}  {how}", flush=True)


def body_kernels(model) -> int:
    """The kernels of the (first) while loop's body: what runs on every pass."""
    loop = next(k for k in model.all_kernels() if k.body and k.kind == "while")
    return len(loop.body)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="*", help="substrings of the kernel names to run")
    parser.add_argument("--batches", type=int, default=5)
    parser.add_argument("--timeout", type=float, default=300.0)
    parser.add_argument("--contenders", nargs="*", default=["psc", "jax", "numba"])
    parser.add_argument("--passes", action="store_true")
    parser.add_argument("--small-loop-bytes", type=int,
                        help="XLA:CPU's small-loop threshold instead of psc_jit's (1024: jaxlib's)")
    parser.add_argument("--child", nargs=2, metavar=("KERNEL", "CONTENDER"),
                        help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.small_loop_bytes is not None:
        os.environ[SMALL_LOOP_BYTES_VAR] = str(args.small_loop_bytes)
    if args.child:
        print(json.dumps(run_one(*args.child, args.batches)))
        return 0
    if args.passes:
        passes_table(args.batches)
        return 0
    rows = {}
    for name in KERNELS:
        if args.only and not any(s in name for s in args.only):
            continue
        rows[name] = {kind: in_child(name, kind, args.batches, args.timeout)
                      for kind in args.contenders}
    print_table(rows, args.contenders)
    return 0


if __name__ == "__main__":
    sys.exit(main())
