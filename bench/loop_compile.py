"""Compile time against iteration count: one loop cell, rolled into one XLA while loop by
psc_jit's loop-rolling pass, and unrolled (rolling switched off, as JAX and torch.compile
trace loops).

For each iteration count it prints the graph size (equations, sub-graphs included), the time
to trace, to lower to StableHLO and to compile with XLA, and one run of the compiled program;
then the ratios unrolled / rolled. `scratch` fills an array made in the cell (np.empty_like);
`prefix` and `cholesky` slice by the loop index (x[:i], L[j + 1:, :j]). The budget is lifted
here (the watchdog below stops what runs away).

    python bench/loop_compile.py [--cell heat|sum|logistic|masked|scratch|prefix|cholesky]
                                 [--counts 10 100 1000 10000]
                                 [--max-seconds S] [--max-gb G]

Each configuration runs in a child process, stopped (and shown as such) when it runs longer
than --max-seconds or its memory passes --max-gb: XLA compiling a loop unrolled 10,000 times
can take many minutes and tens of GB.
"""
from __future__ import annotations

import argparse
import contextlib
import copy
import json
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from psc_jit.core.frontend import cell  # noqa: E402
from psc_jit.core import Jitted, budget  # noqa: E402
from psc_jit.core.frontend.rewrite import roll_loops  # noqa: E402
from psc_jit.core.frontend.runtime import rolling_disabled  # noqa: E402

CELLS = {
    "heat": ("""
for t in range(steps):
    u[1:-1, 1:-1] = u[1:-1, 1:-1] + alpha * (
        u[2:, 1:-1] + u[:-2, 1:-1] + u[1:-1, 2:] + u[1:-1, :-2] - 4 * u[1:-1, 1:-1])
total_heat = u.sum()
""", lambda n: {"u": _grid(64), "steps": n, "alpha": 0.1}),
    "sum": ("""
acc = 0.0
for i in range(n):
    acc = acc + x[i] * x[i]
norm = np.sqrt(acc)
""", lambda n: {"x": np.random.default_rng(0).random(n), "n": n}),
    "logistic": ("""
for i in range(iters):
    p = 1.0 / (1.0 + np.exp(-(X @ w)))
    grad = X.T @ (p - y) / X.shape[0]
    w = w - lr * grad
""", lambda n: _logistic(n)),
    "masked": ("""
for t in range(steps):
    x[x > limit] *= 0.5
    x[x < -limit] += 1.0
    spread = x[x > 0].max() - x[x < 0].min()
""", lambda n: {"x": np.random.default_rng(2).standard_normal(10_000) * 4, "steps": n,
               "limit": 1.5}),
    "scratch": ("""
out = np.empty_like(x)
out[0] = x[0]
for i in range(1, n):
    out[i] = 0.5 * out[i - 1] + x[i]
""", lambda n: {"x": np.random.default_rng(1).random(n), "n": n}),
    "prefix": ("""
out = np.zeros_like(x)
for i in range(1, n):
    out[i] = x[:i] @ w[:i] / i
""", lambda n: {"x": np.random.default_rng(2).random(n), "w": np.random.default_rng(3).random(n),
                "n": n}),
    "cholesky": ("""
n = A.shape[0]
L = np.zeros_like(A)
for j in range(n):
    L[j, j] = np.sqrt(A[j, j] - L[j, :j] @ L[j, :j])
    L[j + 1:, j] = (A[j + 1:, j] - L[j + 1:, :j] @ L[j, :j]) / L[j, j]
""", lambda n: _spd(n)),
}


def _spd(n):
    g = np.random.default_rng(4).standard_normal((n, n))
    return {"A": g @ g.T + n * np.eye(n)}


def _grid(n):
    u = np.zeros((n, n))
    u[n // 4: n // 2, n // 4: n // 2] = 1.0
    return u


def _logistic(iters):
    rng = np.random.default_rng(5)
    X = rng.standard_normal((1000, 20))
    y = (X @ rng.standard_normal(20) > 0).astype(np.float64)
    return {"X": X, "y": y, "w": np.zeros(20), "lr": 0.1, "iters": iters}


def measure(source: str, inputs: dict, rolled: bool) -> dict:
    analysis = cell.analyze_cell(source)
    names = [n for n in analysis.inputs if n in inputs]
    fn = cell.make_cell_function(analysis, names, {"np": np}, transform=roll_loops)
    jitted = Jitted(fn, name=f"loop_{'rolled' if rolled else 'unrolled'}")
    args = {n: copy.deepcopy(inputs[n]) for n in names}
    with contextlib.nullcontext() if rolled else rolling_disabled(), budget.budget_scope(
            max_equations=10**9, max_compile_seconds=1e9):   # the watchdog stops runaways here
        start = time.perf_counter()
        traced = jitted.trace(**args)
        traced_at = time.perf_counter()
        lowered = traced.lower()
        lowered_at = time.perf_counter()
        compiled = lowered.compile()
    compiled_at = time.perf_counter()
    compiled.run(jitted.spec((), args).leaves)
    run_at = time.perf_counter()
    return {"eqns": sum(1 for _ in traced.graph.all_eqns()), "trace": traced_at - start,
            "lower": lowered_at - traced_at, "compile": compiled_at - lowered_at,
            "total": compiled_at - start, "run": run_at - compiled_at}


def measure_in_child(cell_name: str, count: int, mode: str, max_seconds: float,
                     max_gb: float) -> dict:
    """`measure` in a child process, watched: {"stopped": why} if it had to be stopped."""
    cmd = [sys.executable, __file__, "--child", cell_name, str(count), mode]
    child = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    start, peak = time.monotonic(), 0.0
    while child.poll() is None:
        peak = max(peak, _rss_gb(child.pid))
        elapsed = time.monotonic() - start
        if peak > max_gb or elapsed > max_seconds:
            child.kill()
            child.wait()
            why = f"memory > {max_gb:g} GB" if peak > max_gb else f"> {max_seconds:g} s"
            return {"stopped": f"stopped after {elapsed:.0f} s: {why}"}
        time.sleep(0.2)
    out = child.stdout.read()
    if child.returncode != 0:
        return {"stopped": f"failed (exit {child.returncode}) after {time.monotonic() - start:.0f} s"}
    return {**json.loads(out.strip().splitlines()[-1]), "peak_gb": peak}


def _rss_gb(pid: int) -> float:
    try:
        with open(f"/proc/{pid}/status") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 2**20
    except OSError:
        pass
    return 0.0


def fmt_time(seconds: float) -> str:
    return f"{seconds * 1e3:8.1f} ms" if seconds < 10 else f"{seconds:8.1f} s "


def row(count, mode, m) -> str:
    if "stopped" in m:
        return f"{count:>7,} {mode:<9} {m['stopped']}"
    return (f"{count:>7,} {mode:<9} {m['eqns']:>8,} {fmt_time(m['trace'])} {fmt_time(m['lower'])} "
            f"{fmt_time(m['compile'])} {fmt_time(m['total'])} {fmt_time(m['run'])} "
            f"{m['peak_gb']:6.2f} GB")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cell", choices=sorted(CELLS), default="heat")
    parser.add_argument("--counts", type=int, nargs="+", default=[10, 100, 1000, 10000])
    parser.add_argument("--max-seconds", type=float, default=600.0)
    parser.add_argument("--max-gb", type=float, default=8.0)
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    opts = parser.parse_args(argv)
    if opts.child:
        name, count, mode = opts.child
        source, make_inputs = CELLS[name]
        print(json.dumps(measure(source, make_inputs(int(count)), mode == "rolled")))
        return
    print(f"cell '{opts.cell}':{CELLS[opts.cell][0]}")
    header = (f"{'iters':>7} {'mode':<9} {'eqns':>8} {'trace':>11} {'lower':>11} {'compile':>11} "
              f"{'total':>11} {'first run':>11} {'memory':>9}")
    print(header)
    print("-" * len(header))
    results = {}
    for count in opts.counts:
        for mode in ("rolled", "unrolled"):
            results[count, mode] = measure_in_child(opts.cell, count, mode, opts.max_seconds,
                                                    opts.max_gb)
            print(row(count, mode, results[count, mode]), flush=True)
    print("\ntotal = trace + lower + compile; memory = the process's peak resident size\n")
    print(f"{'iters':>7} {'eqns unrolled/rolled':>22} {'total unrolled/rolled':>23}")
    for count in opts.counts:
        r, u = results[count, "rolled"], results[count, "unrolled"]
        if "stopped" in u or "stopped" in r:
            print(f"{count:>7,} {'-':>22} {'-':>23}")
        else:
            print(f"{count:>7,} {u['eqns'] / r['eqns']:>21.1f}x {u['total'] / r['total']:>22.1f}x")


if __name__ == "__main__":
    main()
