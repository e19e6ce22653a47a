"""Magic re-runs of reference workloads with every program run by XLA's asynchronous CPU client
(XLA runs it on a thread of its own while the caller waits, as jax does), and as psc_jit runs
them (a program known to be short runs on the calling thread: `estimate.runs_briefly`), each
in a fresh process.

    .venv/bin/python bench/client_mode.py [--runs N] [NAME ...]

Prints, per workload and mode, the best and the median of N re-runs (fresh copies of the
inputs before each, as ../shared/workloads/run.py times them) and the median of the best of
each 5 (what `run.py --repeat 5` reports), in microseconds. The difference is the hand-off to
XLA's thread and back, paid on every asynchronous call; newton_helper's while loop has no trip
count known when traced, so it stays asynchronous (an interrupt must be able to stop it).
"""
from __future__ import annotations

import argparse
import copy
import importlib.util
import pathlib
import statistics
import subprocess
import sys
import time

WORKLOADS = pathlib.Path(__file__).resolve().parents[1].parent / "shared" / "workloads"
DEFAULT = ["branch_on_data", "masked_update", "newton_helper", "least_squares", "cholesky_loops",
           "mlp_forward", "histogram_stats"]


def measure(mode: str, names: list[str], runs: int) -> None:
    import numpy as np

    from psc_jit.core.compile import jit
    if mode == "async":
        jit.runs_briefly = lambda graph: False
    from IPython.core.interactiveshell import InteractiveShell
    shell = InteractiveShell.instance()
    shell.run_line_magic("load_ext", "psc_jit")
    for name in names:
        spec = importlib.util.spec_from_file_location(name, WORKLOADS / f"{name}.py")
        workload = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(workload)
        inputs = workload.setup("S")
        shell.user_ns.update({"np": np, **copy.deepcopy(inputs)})
        shell.run_cell_magic("psc_jit", "--quiet --no-compare", workload.CELL)
        times = []
        for _ in range(runs):
            shell.user_ns.update(copy.deepcopy(inputs))
            start = time.perf_counter()
            shell.run_cell_magic("psc_jit", "--quiet --no-compare", workload.CELL)
            times.append((time.perf_counter() - start) * 1e6)
        fives = [min(times[i:i + 5]) for i in range(0, runs - 4, 5)]
        print(f"{name:18} {mode:7} {min(times):9.0f} {statistics.median(times):9.0f} "
              f"{statistics.median(fives):11.0f}", flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", default=DEFAULT)
    parser.add_argument("--runs", type=int, default=60)
    parser.add_argument("--mode", choices=("async", "psc_jit"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.mode:
        measure(args.mode, args.names, args.runs)
        return 0
    print(f"{'workload':18} {'mode':7} {'best µs':>9} {'median':>9} {'med best/5':>11}")
    for mode in ("async", "psc_jit"):
        subprocess.run([sys.executable, __file__, "--mode", mode, "--runs", str(args.runs),
                        *args.names], check=True, stderr=subprocess.DEVNULL)
    return 0


if __name__ == "__main__":
    sys.exit(main())
