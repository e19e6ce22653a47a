"""Per-call cost of compiled code: NumPy, psc_jit and jax.jit side by side, in one run.

    .venv/bin/python bench/overhead.py [--repeat N] [--only NAME ...]

Each row times one computation three ways with NumPy arrays in and out: plain NumPy,
`psc_jit.jit` (a cache hit), and `jax.jit` (with `np.asarray` of its result; an in-place
update copies jax's result into the array). `xla` is psc_jit's XLA executable alone (no
Python dispatch). The last rows time a `%%psc_jit` re-run in a real IPython shell against
the `jit` call of the same function: their difference is the magic's own overhead.
Times are the best of N batches, per call, in microseconds; each batch runs long enough
to be measured (about 5 ms), and the batches of one row's contenders take turns, each
round started by the next contender, so that a busy machine, and the memory state one
contender leaves to the next, touch them alike (the ratios are what to read).
"""
from __future__ import annotations

import argparse
import random
import time

import numpy as np

BATCH_SECONDS = 0.005


def per_call(fn, repeat: int) -> float:
    """Best time of one call (µs) over `repeat` batches of calls."""
    return side_by_side([fn], repeat)[0]


def side_by_side(fns, repeat: int) -> list[float]:
    """Best time of one call (µs) of each function, their batches interleaved (one batch of
    each per round) so that a busy machine slows them alike."""
    numbers = [_batch_size(fn) for fn in fns]
    best = [float("inf")] * len(fns)
    for round_ in range(repeat):
        for k in _turns(len(fns), round_):
            fn, number = fns[k], numbers[k]
            fn()            # untimed: the first call after another contender pays its memory
            start = time.perf_counter()
            for _ in range(number):
                fn()
            best[k] = min(best[k], (time.perf_counter() - start) / number)
    return [b * 1e6 for b in best]


def _turns(count: int, round_: int) -> list[int]:
    """The order of one round, shuffled (the same shuffles every run), so that no contender
    always runs right after the same neighbour: one that runs right after NumPy's large
    temporaries are freed pays page faults of fresh memory (measured, 1M elementwise: psc
    413 µs right after NumPy, 223 µs right after XLA alone, the same call)."""
    order = list(range(count))
    random.Random(round_).shuffle(order)
    return order


def _batch_size(fn) -> int:
    fn()
    start = time.perf_counter()
    fn()
    once = max(time.perf_counter() - start, 1e-7)
    return max(1, min(10_000, int(BATCH_SECONDS / once)))


def aligned(n: int, offset: int = 0, dtype=np.float64) -> np.ndarray:
    """n elements whose data starts `offset` bytes after a 64-byte boundary."""
    itemsize = np.dtype(dtype).itemsize
    buffer = np.empty(n + 128 // itemsize, dtype)
    shift = (-buffer.ctypes.data % 64 + offset) // itemsize
    out = buffer[shift:shift + n]
    out[...] = np.random.default_rng(0).random(n)
    assert out.ctypes.data % 64 == offset
    return out


# -- the computations -------------------------------------------------------------------------

def affine(x):
    return x * 2.0 + 1.0


def wave(x):
    return np.sin(x) * 2.0      # reads the global np: a guard checked on every call


def affine_in_place(x):
    x *= 0.5
    x += 1.0


def matmul(a, c):
    return a @ c


def cumsum(x):
    return np.cumsum(x)


def normal_matvec(m, v):
    return m.T @ (m @ v)


def cases():
    """(name, function, arguments, jax function or None, in place)."""
    rng = np.random.default_rng(1)
    a3 = rng.random((32, 128, 256))
    c2 = rng.random((256, 64))
    m = rng.random((2000, 2000))
    v = rng.random(2000)
    return [
        ("8 floats: x * 2 + 1", affine, (np.ones(8),), "affine", False),
        ("8 floats: np.sin(x) * 2", wave, (np.ones(8),), "wave", False),
        ("8 floats in place (Python path)", affine_in_place, (np.ones(8),), "halve", True),
        ("100k elementwise, aligned", affine, (aligned(100_000),), "affine", False),
        ("100k elementwise, misaligned", affine, (aligned(100_000, 16),), "affine", False),
        ("1M elementwise, aligned", affine, (aligned(1_000_000),), "affine", False),
        ("1M elementwise, misaligned", affine, (aligned(1_000_000, 16),), "affine", False),
        ("1M in-place update", affine_in_place, (aligned(1_000_000),), "halve", True),
        ("6M elementwise (48 MB), aligned", affine, (aligned(6_000_000),), "affine", False),
        ("3-D @ 2-D matmul", matmul, (a3, c2), "matmul", False),
        ("cumsum of 1M", cumsum, (aligned(1_000_000),), "cumsum", False),
        ("M.T @ (M @ v), 2000²", normal_matvec, (m, v), "normal_matvec", False),
        ("A @ x, 4000², aligned", matmul, (aligned(16_000_000).reshape(4000, 4000),
                                           aligned(4000)), "matmul", False),
        ("A @ x, 4000², misaligned", matmul, (aligned(16_000_000, 16).reshape(4000, 4000),
                                              aligned(4000)), "matmul", False),
    ]


def jax_functions():
    try:
        import jax
        import jax.numpy as jnp
    except ImportError:
        return None
    jax.config.update("jax_enable_x64", True)
    return {"affine": jax.jit(lambda x: x * 2.0 + 1.0),
            "wave": jax.jit(lambda x: jnp.sin(x) * 2.0),
            "halve": jax.jit(lambda x: x * 0.5 + 1.0),
            "matmul": jax.jit(lambda a, c: a @ c),
            "cumsum": jax.jit(jnp.cumsum),
            "normal_matvec": jax.jit(lambda m, v: m.T @ (m @ v))}


def jax_call(jf, args, in_place: bool):
    if in_place:
        def run():
            np.copyto(args[0], np.asarray(jf(*args)))
    else:
        def run():
            return np.asarray(jf(*args))
    return run


def xla_alone(jitted, args):
    """The compiled executable run on the same inputs, without psc_jit's dispatch."""
    compiled = jitted.last_call.compiled
    inputs = [a for a in args if isinstance(a, np.ndarray)] + list(compiled.lowered.consts)
    execute = compiled.executable.execute
    return lambda: execute(inputs)


# -- the magic --------------------------------------------------------------------------------

def magic_rows(repeat: int, jit):
    from IPython.core.interactiveshell import InteractiveShell
    shell = InteractiveShell.instance()
    shell.run_line_magic("load_ext", "psc_jit")
    rows = []
    for name, x in (("magic re-run, 8 floats", np.ones(8)),
                    ("magic re-run, 1M aligned", aligned(1_000_000))):
        shell.user_ns.update(np=np, x=x)
        cell = "y = x * 2.0 + 1.0"
        shell.run_cell_magic("psc_jit", "--quiet --no-compare", cell)
        code = compile(cell, "<plain>", "exec")
        f = jit(affine)
        f(x)
        plain, rerun, call = side_by_side([
            lambda: exec(code, dict(shell.user_ns)),                          # noqa: B023
            lambda: shell.run_cell_magic("psc_jit", "--quiet --no-compare", cell),  # noqa: B023
            lambda: f(x)], repeat)                                            # noqa: B023
        rows.append((name, plain, rerun, None, call))
    return rows


# -- the table --------------------------------------------------------------------------------

def fmt(value) -> str:
    return f"{value:10.1f}" if value is not None else f"{'-':>10}"


def ratio(a, b) -> str:
    return f"{a / b:8.2f}" if a is not None and b else f"{'-':>8}"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=30)
    parser.add_argument("--only", nargs="*", help="substrings of the row names to run")
    parser.add_argument("--keep-freed-memory", type=int, default=0, metavar="MIB",
                        help="keep this much freed memory for reuse from the start "
                             "(psc_jit.core.keep_freed_memory; the magic rows turn on the "
                             "magic's own setting, 1024 MiB, whatever this says)")
    args = parser.parse_args()
    from psc_jit import jit
    from psc_jit.core import keep_freed_memory
    if args.keep_freed_memory:
        print(f"freed memory kept: {keep_freed_memory(args.keep_freed_memory << 20)}")
    jax_fns = jax_functions()
    print(f"{'case':30} {'numpy µs':>10} {'psc µs':>10} {'jax µs':>10} {'xla µs':>10} "
          f"{'psc/jax':>8} {'psc/xla':>8} {'np/psc':>8}")
    for name, fn, fargs, jax_name, in_place in cases():
        if args.only and not any(s in name for s in args.only):
            continue
        plain_args = [a.copy() if isinstance(a, np.ndarray) else a for a in fargs]
        f = jit(fn)
        f(*fargs)
        contenders = [lambda: fn(*plain_args), lambda: f(*fargs), xla_alone(f, fargs)]  # noqa: B023
        if jax_fns is not None:
            contenders.append(jax_call(jax_fns[jax_name], fargs, in_place))
        times = side_by_side(contenders, args.repeat) + [None]
        t_numpy, t_psc, t_xla, t_jax = times[:4]
        print(f"{name:30} {fmt(t_numpy)} {fmt(t_psc)} {fmt(t_jax)} {fmt(t_xla)} "
              f"{ratio(t_psc, t_jax)} {ratio(t_psc, t_xla)} {ratio(t_numpy, t_psc)}")
    if not args.only or any("magic" in s for s in args.only):
        print(f"\n{'case':30} {'plain µs':>10} {'magic µs':>10} {'jit µs':>10} "
              f"{'overhead':>10}  (magic re-run minus the jit call)")
        for name, plain, rerun, _, call in magic_rows(args.repeat, jit):
            print(f"{name:30} {fmt(plain)} {fmt(rerun)} {fmt(call)} {fmt(rerun - call)}")


if __name__ == "__main__":
    main()
