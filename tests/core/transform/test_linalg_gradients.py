"""Gradients through np.linalg: solve, inv, det, slogdet, cholesky, eigh, eigvalsh, svd
(values and vectors), qr, lstsq and pinv, against central finite differences (float64, relative
error < 1e-6) and, where jax is installed, `jax.grad` of the same program on jax.numpy.

Each program is written once against a module `xp` (numpy or jax.numpy). Programs of
eigenvectors and singular vectors read them only through sign-invariant products (a
projector), as the vectors' signs are LAPACK's choice."""
from __future__ import annotations

import numpy as np
import pytest
from psc_jit.core import grad, jit

from .test_gradients import assert_matches_finite_differences, jax_grad

pytestmark = pytest.mark.xla

RNG = np.random.default_rng(7)
N = 4
DOMINANT = RNG.standard_normal((N, N)) + N * np.eye(N)
B = RNG.standard_normal((N, 2))
WEIGHTS = RNG.standard_normal((N, N))
TALL = RNG.standard_normal((5, 3))
WIDE = RNG.standard_normal((3, 5))


def _spd(xp, x):
    return x @ x.T + N * xp.eye(N)


def _sym(x):
    return x + x.T


def solve(xp, a, b):
    return xp.sum(WEIGHTS[:, :2] * xp.linalg.solve(a, b))


def inv(xp, a):
    return xp.sum(WEIGHTS * xp.linalg.inv(a))


def det(xp, a):
    return xp.linalg.det(a)


def slogdet(xp, a):
    return xp.linalg.slogdet(a)[1]


def cholesky(xp, x):
    return xp.sum(WEIGHTS * xp.linalg.cholesky(_spd(xp, x)))


def eigh(xp, x):
    w, v = xp.linalg.eigh(_sym(x))
    return xp.sum(WEIGHTS * ((v * xp.arange(1.0, N + 1)) @ v.T)) + xp.sum(w ** 2)


def eigvalsh(xp, x):
    return xp.sum(xp.arange(1.0, N + 1) * xp.linalg.eigvalsh(_sym(x)))


def svd_values(xp, a):
    return xp.sum(xp.arange(1.0, 4.0) * xp.linalg.svd(a, compute_uv=False))


def svd_vectors(xp, a):
    u, s, vt = xp.linalg.svd(a, full_matrices=False)
    return xp.sum(WEIGHTS[:, :3].T @ (u @ u.T)[:4]) + xp.sum(s * (vt.T @ vt)[0])


def qr(xp, a):
    q, r = xp.linalg.qr(a)
    return xp.sum(xp.arange(1.0, q.size + 1).reshape(q.shape) * q) + xp.sum(r[0] * r[-1])


def qr_complete(xp, a):
    q, r = xp.linalg.qr(a, mode="complete")
    return xp.sum(q[:, 0] * q[:, -1]) + xp.sum(r ** 3)


def lstsq_tall(xp, a, b):
    return xp.sum(xp.linalg.lstsq(a, b, rcond=None)[0] ** 2)


def lstsq_wide(xp, a, b):
    return xp.sum(xp.linalg.lstsq(a, b, rcond=None)[0] ** 2)


def pinv(xp, a):
    return xp.sum(WIDE * xp.linalg.pinv(a))


PROGRAMS = [
    ("solve", solve, (DOMINANT, B), (0, 1)),
    ("inv", inv, (DOMINANT,), (0,)),
    ("det", det, (DOMINANT,), (0,)),
    ("slogdet", slogdet, (DOMINANT - 2 * N * np.eye(N),), (0,)),
    ("cholesky", cholesky, (RNG.standard_normal((N, N)),), (0,)),
    ("eigh", eigh, (RNG.standard_normal((N, N)),), (0,)),
    ("eigvalsh", eigvalsh, (RNG.standard_normal((N, N)),), (0,)),
    ("svd_values", svd_values, (TALL,), (0,)),
    ("svd_vectors", svd_vectors, (TALL,), (0,)),
    ("svd_vectors_wide", svd_vectors, (WIDE.T.copy(),), (0,)),
    ("qr_tall", qr, (TALL,), (0,)),
    ("qr_square", qr, (DOMINANT,), (0,)),
    ("qr_wide", qr, (WIDE,), (0,)),
    ("qr_complete_square", qr_complete, (DOMINANT,), (0,)),
    ("lstsq_tall", lstsq_tall, (TALL, RNG.standard_normal((5, 2))), (0, 1)),
    ("lstsq_wide", lstsq_wide, (WIDE, RNG.standard_normal(3)), (0, 1)),
    ("pinv", pinv, (TALL,), (0,)),
]
IDS = [p[0] for p in PROGRAMS]


def _numpy(f):
    return lambda *args: f(np, *args)


@pytest.mark.parametrize("name,f,args,argnums", PROGRAMS, ids=IDS)
def test_linalg_gradients_match_central_differences(name, f, args, argnums):
    grads = jit(grad(_numpy(f), argnums=argnums))(*args)
    assert_matches_finite_differences(_numpy(f), args, argnums, grads)


@pytest.mark.parametrize("name,f,args,argnums", PROGRAMS, ids=IDS)
def test_linalg_gradients_match_jax(name, f, args, argnums):
    jnp = pytest.importorskip("jax.numpy")
    expected = jax_grad(lambda *a: f(jnp, *a), args, argnums)
    got = grad(_numpy(f), argnums=argnums)(*args)
    for g, e in zip(got, expected, strict=True):
        np.testing.assert_allclose(g, np.asarray(e), rtol=1e-8, atol=1e-10)
