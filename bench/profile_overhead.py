"""What measuring each fused kernel costs: a normal compiled call against one under jaxlib's
profiler, in one run.

    .venv/bin/python bench/profile_overhead.py [--repeat N]

Per row: `call` is `jit(f).time_call` (a cache hit, its whole time), `profiled` is
`jit(f).profile_call` (the same call inside a profiler session: start, run, stop, read the
thunk events, sum them per kernel), `xla` is XLA's execution inside each, and `kernels` the
measured top-level kernels' sum (of the profiled call). Times are medians over N
alternating calls of each, in microseconds; the ratio profiled / call is what to read.
"""
from __future__ import annotations

import argparse
import statistics

import time

import numpy as np

from psc_jit.core import jit


def rows_softmax(x, y):
    a = np.exp(x) * 2.0 + y
    b = a.sum(axis=1)
    return np.tanh(a / b[:, None]).sum(axis=0)


def relaxed(x, y):
    for _ in range(20):
        x = np.sin(x) * 2.0 + y
    return x.sum()


def tiny(x, y):
    return (x * y + 1.0).sum()


CASES = {
    "4 kernels, 300x200": (rows_softmax, (300, 200)),
    "4 kernels, 2000x1000": (rows_softmax, (2000, 1000)),
    "loop of 20, 300x200": (relaxed, (300, 200)),
    "tiny, 8 floats": (tiny, (8,)),
}


def measure(fun, shape, repeat: int) -> dict[str, float]:
    rng = np.random.default_rng(0)
    x, y = rng.random(shape), rng.random(shape)
    f = jit(fun)
    f(x, y)
    f.profile_call(x, y)           # the first session starts jaxlib's profiler machinery
    calls, profiled, call_xla, profiled_xla, kernels, note = [], [], [], [], [], None
    for _ in range(repeat):
        _, breakdown = f.time_call(x, y)
        calls.append(breakdown.measured)
        call_xla.append(breakdown.execute)
        start = time.perf_counter()
        _, breakdown, times = f.profile_call(x, y)
        profiled.append(time.perf_counter() - start)
        profiled_xla.append(breakdown.execute)
        kernels.append(times.total)
        note = note or times.note
    median = statistics.median
    return {"call": median(calls), "profiled": median(profiled), "xla": median(call_xla),
            "profiled xla": median(profiled_xla), "kernels": median(kernels), "note": note}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=30)
    options = parser.parse_args()
    print(f"{'case':<24}{'call µs':>10}{'profiled µs':>13}{'ratio':>8}{'xla µs':>9}"
          f"{'prof. xla µs':>14}{'kernels µs':>12}")
    for name, (fun, shape) in CASES.items():
        r = measure(fun, shape, options.repeat)
        print(f"{name:<24}{r['call'] * 1e6:>10.0f}{r['profiled'] * 1e6:>13.0f}"
              f"{r['profiled'] / r['call']:>7.1f}×{r['xla'] * 1e6:>9.0f}"
              f"{r['profiled xla'] * 1e6:>14.0f}{r['kernels'] * 1e6:>12.0f}"
              + (f"   ({r['note']})" if r["note"] else ""))


if __name__ == "__main__":
    main()
