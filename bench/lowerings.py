"""NumPy, psc_jit's jit and jax.jit (the same XLA) side by side on calls and lowerings.

    .venv/bin/python bench/lowerings.py [--only NAME ...] [--batches B] [--seconds S]

Each row is one computation on NumPy arrays in and NumPy arrays out: plain NumPy, `jit(f)(x)`,
and `jax.jit(f)` with jax.numpy in place of NumPy (NumPy arrays in, `np.asarray` out; an
in-place update writes jax's result into the caller's array, as psc_jit does). `xla` is
psc_jit's compiled executable alone (inputs already 64-byte aligned, no Python around it).
Times are per call in microseconds: the fastest call over B batches of calls (each batch
about S seconds), with the implementations interleaved batch by batch so that a noisy machine
hurts them alike. `jit/jax` above 1.1 is a lowering or call path slower than jax's.
"""
from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass
from typing import Callable

import numpy as np


def aligned(x: np.ndarray, alignment: int = 64) -> np.ndarray:
    """A C-contiguous copy of x whose data starts on an `alignment`-byte boundary."""
    raw = np.empty(x.nbytes + alignment, np.uint8)
    start = -raw.ctypes.data % alignment
    out = raw[start:start + x.nbytes].view(x.dtype).reshape(x.shape)
    out[...] = x
    return out


def misaligned(x: np.ndarray, offset: int = 16) -> np.ndarray:
    """A C-contiguous copy of x whose data is `offset` bytes past a 64-byte boundary."""
    raw = np.empty(x.nbytes + 64 + offset, np.uint8)
    start = -raw.ctypes.data % 64 + offset
    out = raw[start:start + x.nbytes].view(x.dtype).reshape(x.shape)
    out[...] = x
    return out


@dataclass
class Case:
    name: str
    fn: Callable            # written against `np`: called with NumPy and with jax.numpy
    make_args: Callable     # () -> tuple of NumPy arrays
    in_place: bool = False  # fn updates its first argument and returns nothing
    copy_result: bool = False   # jit's result copied, as psc_jit did before results were XLA's


def _rng():
    return np.random.default_rng(0)


def _elementwise(x, np=np):
    return x * 2.0 + 1.0


def _update(x, np=np):
    x += 1.0


def _batched_matmul(A, C, np=np):
    return A @ C


def _flat_matmul(A, C, np=np):
    return A.reshape(-1, A.shape[-1]) @ C


def _transposed_matvec(M, v, np=np):
    return M.T @ (M @ v)


def _cumsum(x, np=np):
    return np.cumsum(x)


def _cumsum_rows(x, np=np):
    return np.cumsum(x, axis=1)


def _cumprod(x, np=np):
    return np.cumprod(x)


def _cummax(x, np=np):
    return np.maximum.accumulate(x) if np.__name__ == "numpy" else _jax_cummax(x)


def _jax_cummax(x):
    import jax
    return jax.lax.cummax(x)


def _sort_columns(x, np=np):
    return np.sort(x, axis=0)


def _sort(x, np=np):
    return np.sort(x)


def _median_columns(x, np=np):
    return np.median(x, axis=0)


def _argmax_rows(x, np=np):
    return np.argmax(x, axis=1)


def _argsort(x, np=np):
    return np.argsort(x)


def _norm_vector(x, np=np):
    return np.linalg.norm(x)


def _norm_rows(x, np=np):
    return np.linalg.norm(x, axis=1)


def _softmax(x, np=np):
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def _logsumexp(x, np=np):
    m = x.max(axis=1, keepdims=True)
    return m[:, 0] + np.log(np.exp(x - m).sum(axis=1))


def _convolve_same(x, k, np=np):
    return np.convolve(x, k, "same")


def _matmul(A, B, np=np):
    return A @ B


def _tensor_contraction(A, C4, M, v, np=np):
    return A @ C4, A.reshape(-1, A.shape[-1]) @ C4, M.T @ (M @ v)


def cases() -> list[Case]:
    r = _rng()
    million = r.random(1_000_000)
    return [
        Case("elementwise 1M aligned", _elementwise, lambda: (aligned(million),)),
        Case("  same, result copied (before)", _elementwise, lambda: (aligned(million),),
             copy_result=True),
        Case("elementwise 1M misaligned", _elementwise, lambda: (misaligned(million),)),
        Case("in-place x += 1, 1M aligned", _update, lambda: (aligned(million),), True),
        Case("in-place x += 1, 1M misaligned", _update, lambda: (misaligned(million),), True),
        Case("3-D @ 2-D (160,140,160)@(160,160)", _batched_matmul,
             lambda: (r.random((160, 140, 160)), r.random((160, 160)))),
        Case("reshape(-1,k) @ 2-D", _flat_matmul,
             lambda: (r.random((160, 140, 160)), r.random((160, 160)))),
        Case("A @ B (128,128)@(128,128)", _matmul,
             lambda: (r.random((128, 128)), r.random((128, 128)))),
        Case("A @ B f32 (128,784)@(784,256)", _matmul, lambda: (
            r.random((128, 784)).astype(np.float32), r.random((784, 256)).astype(np.float32))),
        Case("A @ B (1200,60)@(60,60)", _matmul, lambda: (r.random((1200, 60)), r.random((60, 60)))),
        Case("M.T @ (M @ v), 2000", _transposed_matvec,
             lambda: (r.random((2000, 2000)), r.random(2000))),
        Case("cumsum 1M", _cumsum, lambda: (million,)),
        Case("cumsum axis=1 (2000,3000)", _cumsum_rows, lambda: (r.standard_normal((2000, 3000)),)),
        Case("cumprod 1M", _cumprod, lambda: (1.0 + 1e-7 * million,)),
        Case("maximum.accumulate 1M", _cummax, lambda: (million,)),
        Case("sort axis=0 (2000,3000)", _sort_columns, lambda: (r.standard_normal((2000, 3000)),)),
        Case("sort axis=0 (200,300)", _sort_columns, lambda: (r.standard_normal((200, 300)),)),
        Case("sort 1M", _sort, lambda: (million,)),
        Case("argsort (200,300)", _argsort, lambda: (r.standard_normal((200, 300)),)),
        Case("median axis=0 (200,300)", _median_columns, lambda: (r.standard_normal((200, 300)),)),
        Case("argsort 1M", _argsort, lambda: (million,)),
        Case("argmax axis=1 (2000,3000)", _argmax_rows, lambda: (r.standard_normal((2000, 3000)),)),
        Case("linalg.norm 1M", _norm_vector, lambda: (million,)),
        Case("linalg.norm axis=1 (2000,3000)", _norm_rows,
             lambda: (r.standard_normal((2000, 3000)),)),
        Case("softmax f32 (4096,1000)", _softmax,
             lambda: (r.standard_normal((4096, 1000)).astype(np.float32),)),
        Case("logsumexp (4096,1000)", _logsumexp, lambda: (r.standard_normal((4096, 1000)),)),
        Case("convolve same 100k, 5 taps", _convolve_same, lambda: (r.random(100_000), r.random(5))),
        Case("convolve same 100k, 31 taps", _convolve_same, lambda: (r.random(100_000), r.random(31))),
        Case("convolve same 100k, 64 taps", _convolve_same, lambda: (r.random(100_000), r.random(64))),
        Case("convolve same 100k, 255 taps", _convolve_same,
             lambda: (r.random(100_000), r.random(255))),
        Case("convolve same 10k, 1000 taps", _convolve_same, lambda: (r.random(10_000), r.random(1000))),
        Case("tensor_contraction S", _tensor_contraction, lambda: (
            r.random((40, 30, 60)), r.random((60, 60)), r.random((1500, 1500)), r.random(1500))),
        Case("tensor_contraction M", _tensor_contraction, lambda: (
            r.random((160, 140, 160)), r.random((160, 160)), r.random((4000, 4000)),
            r.random(4000))),
    ]


# -- runners ----------------------------------------------------------------------------------

def numpy_runner(case: Case, args):
    return lambda: case.fn(*args)


def psc_runner(case: Case, args):
    from psc_jit.core import jit
    f = jit(case.fn)
    f(*args)
    if case.copy_result:
        return lambda: np.array(f(*args))
    return lambda: f(*args)


def xla_runner(case: Case, args):
    """psc_jit's executable alone, on aligned copies of the inputs: the floor of a call."""
    from psc_jit.core import jit
    f = jit(case.fn)
    f(*args)
    compiled = f.last_call.compiled
    executable = compiled.executable
    inputs = [aligned(np.asarray(a)) for a in args] + list(compiled.lowered.consts)
    return lambda: executable.execute(inputs)


def jax_runner(case: Case, args):
    try:
        import jax
        import jax.numpy as jnp
    except ImportError:
        return None
    jax.config.update("jax_enable_x64", True)
    if case.in_place:
        jf = jax.jit(lambda x: x + 1.0)

        def run():
            np.copyto(args[0], np.asarray(jf(args[0])))
        run()
        return run
    jf = jax.jit(lambda *a: case.fn(*a, np=jnp))

    def call():
        out = jf(*args)
        return [np.asarray(o) for o in out] if isinstance(out, tuple) else np.asarray(out)
    call()
    return call


RUNNERS = {"numpy": numpy_runner, "jit": psc_runner, "xla": xla_runner, "jax": jax_runner}


def best_call_seconds(fn, seconds: float) -> float:
    """The fastest of the calls made in about `seconds` (one call at least)."""
    best, spent = float("inf"), 0.0
    while spent < seconds or best == float("inf"):
        start = time.perf_counter()
        fn()
        elapsed = time.perf_counter() - start
        best, spent = min(best, elapsed), spent + elapsed
    return best


def measure(case: Case, batches: int, seconds: float) -> dict[str, float]:
    runners, args = {}, case.make_args()     # one set of arrays (one alignment) for all
    for name, make in RUNNERS.items():
        runner = make(case, args)
        if runner is not None:
            runners[name] = runner
    best = {name: float("inf") for name in runners}
    for _ in range(batches):
        for name, runner in runners.items():
            best[name] = min(best[name], best_call_seconds(runner, seconds))
    return {name: t * 1e6 for name, t in best.items()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="*", help="substrings of case names")
    parser.add_argument("--batches", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=0.2)
    args = parser.parse_args()
    header = (f"{'case':36} {'numpy µs':>10} {'jit µs':>10} {'jax µs':>10} {'xla µs':>10} "
              f"{'numpy/jit':>9} {'jit/jax':>8} {'jit/xla':>8}")
    print(header)
    print("-" * len(header))
    for case in cases():
        if args.only and not any(s in case.name for s in args.only):
            continue
        t = measure(case, args.batches, args.seconds)
        jax_us = t.get("jax", float("nan"))
        print(f"{case.name:36} {t['numpy']:10.1f} {t['jit']:10.1f} {jax_us:10.1f} "
              f"{t['xla']:10.1f} {t['numpy'] / t['jit']:9.2f} {t['jit'] / jax_us:8.2f} "
              f"{t['jit'] / t['xla']:8.2f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
