"""Interrupts of compiled runs, and the estimate that lets a run stay on the calling thread.

    .venv/bin/python bench/interrupts.py [--repeat 3] [--no-estimates]

First table: the seconds from SIGINT (as Kernel -> Interrupt sends it) to the KeyboardInterrupt
in a real IPython shell, and on to its traceback shown, for runs that take long on every path
to XLA (tests/extension/interrupt_paths_child.py runs them; the best and the worst of
`--repeat` interrupts): `jit(spin)(x, 3e7)` with a `while i < n` loop, the magic's cell on
inputs so small that XLA would run it on the calling thread, and the same with n = 1e12.
Each run is interrupted a second after it starts, and the abandoned run is left to the
killed child.

Second table: programs that psc_jit may run on the calling thread (the inline client), each
with `estimate.run_seconds` beside its measured run (best of 5, the executable alone): the
estimate is meant to be an upper bound, the ratio run / estimate under 1; a program estimated
under `INLINE_SECONDS` runs inline, where an interrupt waits for its end.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "extension"))

REPROS = (("jit(spin)(x, 3e7), x of 400", "jit-400", "n=3e7"),
          ("jit(spin)(x, 3e7), x of 100,000", "jit-large", "n=3e7"),
          ("jit(spin)(x, 1e12), x of 8", "jit-small", None),
          ("magic, small inputs, n = 1e12", "magic-small", None),
          ("magic, in place, n = 1e12", "magic-in-place-small", None),
          ("jit(...).profile_call, n = 1e12", "jit-profiled", None),
          ("magic, trip count 1e12 fixed", "magic-trip-count", None))


def interrupt_table(repeat: int) -> None:
    from interrupt_paths_child import interrupted_run
    print(f"{'run interrupted':<36} {'to IPython s':>13} {'to shown s':>11}  unchanged")
    for name, case, extra in REPROS:
        caught, shown, unchanged = [], [], True
        for _ in range(repeat):
            outcome, seconds = interrupted_run(case, *([extra] if extra else []),
                                               wait=1.0)
            caught.append(seconds)
            shown.append(seconds + outcome["shown"] - outcome["caught"])
            unchanged &= outcome["interrupted"] and outcome["unchanged"]
        print(f"{name:<36} {_span(caught):>13} {_span(shown):>11}  {unchanged}")


def _span(values: list[float]) -> str:
    return f"{min(values):.3f}" if len(values) == 1 else f"{min(values):.3f}-{max(values):.3f}"


# -- the estimate beside the run -----------------------------------------------------------------

def smooth(x):
    for _ in range(3):
        x = np.sin(x) * 0.5 + 0.1
    return x


def scalar_loop(s, n):
    for _ in range(n):
        s = s * 0.5 + 1.0
    return s


def sin_loop(x, n):
    for _ in range(n):
        x = np.sin(x) * 0.5 + 0.1
    return x


def estimate_cases():
    rng = np.random.default_rng(0)
    fixed = {"static_argnames": ("n",)}
    return [
        ("x * 2 + 1, 1k", lambda x: x * 2.0 + 1.0, (np.ones(1000),), {}),
        ("x * 2 + 1, 1M", lambda x: x * 2.0 + 1.0, (np.ones(1_000_000),), {}),
        ("3 x sin, 1k", smooth, (np.ones(1000),), {}),
        ("scalar loop, 1e5 trips", scalar_loop, (np.float64(1.0), 100_000), fixed),
        ("sin loop, 10 x 1e4 trips", sin_loop, (np.ones(10), 10_000), fixed),
        ("sin loop, 1k x 100 trips", sin_loop, (np.ones(1000), 100), fixed),
        ("exp, 1M", np.exp, (np.ones(1_000_000),), {}),
        ("convolve 1e4 by 200", np.convolve, (rng.random(10_000), rng.random(200)), {}),
        ("sort 1e5", np.sort, (rng.random(100_000),), {}),
        ("argsort 1e5", np.argsort, (rng.random(100_000),), {}),
        ("cumsum along axis 0, (1e5, 2)", lambda x: np.cumsum(x, axis=0),
         (rng.random((100_000, 2)),), {}),
        ("cumsum 1M", np.cumsum, (rng.random(1_000_000),), {}),
        ("a @ a, 200", lambda a: a @ a, (rng.random((200, 200)),), {}),
        ("x[i], 1e5", lambda x, i: x[i], (rng.random(100_000),
                                          rng.integers(0, 100_000, 100_000)), {}),
        ("cholesky 200", np.linalg.cholesky, (np.eye(200) * 3 + 0.01,), {}),
    ]


def estimate_table() -> None:
    from psc_jit import jit
    from psc_jit.core.compile import xla
    from psc_jit.core.compile.estimate import INLINE_SECONDS, run_seconds
    print(f"\n{'program':<32} {'estimate ms':>12} {'run ms':>9} {'run/est':>8}  inline")
    for name, fn, args, options in estimate_cases():
        f = jit(fn, **options)
        f(*args)
        lowered = f.last_call.compiled.lowered
        executable = xla.compile_stablehlo(lowered.text, lowered.graph.in_avals,
                                           lowered.graph.out_avals, None, True)
        inputs = [np.asarray(a) for a in args if isinstance(a, (np.ndarray, np.generic))]
        inputs += list(lowered.consts)
        executable.execute(inputs)
        best = float("inf")
        for _ in range(5):
            start = time.perf_counter()
            executable.execute(inputs)
            best = min(best, time.perf_counter() - start)
        estimate = run_seconds(lowered.graph)
        ratio = f"{best / estimate:8.2f}" if estimate else f"{'-':>8}"
        shown = f"{estimate * 1e3:12.3f}" if estimate is not None else f"{'unbounded':>12}"
        inline = estimate is not None and estimate <= INLINE_SECONDS
        print(f"{name:<32} {shown} {best * 1e3:9.3f} {ratio}  {inline}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--no-estimates", action="store_true")
    args = parser.parse_args()
    interrupt_table(args.repeat)
    if not args.no_estimates:
        estimate_table()


if __name__ == "__main__":
    main()
