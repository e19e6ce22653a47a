"""Loading a program from the disk cache against compiling it: what a kernel restart costs.

For each workload of ../shared/workloads, two fresh processes run its cell through psc_jit's
cell runner, sharing one (temporary) cache directory: the first compiles (XLA) and stores
the executable, the second loads it from disk. It prints the XLA compile time of the first,
the load time of the second (read, checksum, deserialize) and their ratio, and the size of
the entry. Both exclude starting XLA's CPU client (once per process, either way: shown as
"client ms"); a program calling LAPACK pays for loading SciPy's LAPACK in both.

    python bench/disk_cache.py [--only NAME ...] [--size S|M]
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

WORKLOADS = Path(__file__).resolve().parents[2] / "shared" / "workloads"
DEFAULT = ["elementwise_chain", "heat_stencil", "mlp_forward", "logistic_regression",
           "softmax", "cholesky_loops", "least_squares", "mandelbrot"]

CHILD = """
import importlib.util, json, sys, time
from psc_jit.core import DISK_CACHE
from psc_jit.core.compile import xla
start = time.perf_counter()
xla.platform(), xla.target_description()       # the CPU client: once per process, either way
client = time.perf_counter() - start
from psc_jit.runner import CellRunner, Options
spec = importlib.util.spec_from_file_location("w", sys.argv[1])
w = importlib.util.module_from_spec(spec)
spec.loader.exec_module(w)
ns = {"__builtins__": __builtins__}
exec("import numpy as np", ns)
ns.update(w.setup(sys.argv[2]) if "size" in w.setup.__code__.co_varnames else w.setup())
report, _ = CellRunner(ns).run(w.CELL, Options(compare=False, quiet=True))
usage = DISK_CACHE.usage()
print(json.dumps({"compiled": report.compiled, "stages": report.stage_seconds,
                  "from_disk": report.loaded_from_disk, "bytes": usage.bytes,
                  "client": client}))
"""


def run_child(path: Path, size: str, cache_dir: str) -> dict:
    env = dict(os.environ, PSC_JIT_CACHE_DIR=cache_dir)
    done = subprocess.run([sys.executable, "-c", CHILD, str(path), size], env=env,
                          capture_output=True, text=True, timeout=600)
    if done.returncode:
        raise RuntimeError(done.stderr[-2000:])
    return json.loads(done.stdout.strip().splitlines()[-1])


def measure(name: str, size: str) -> tuple[float, float, int, float] | None:
    """(compile seconds, load seconds, entry bytes, client start seconds), None when the cell does not compile."""
    with tempfile.TemporaryDirectory(prefix="psc_jit-bench-") as cache_dir:
        path = WORKLOADS / f"{name}.py"
        first = run_child(path, size, cache_dir)
        if not first["compiled"]:
            return None
        second = run_child(path, size, cache_dir)
        assert second["from_disk"], f"{name}: the second process compiled again"
        return (first["stages"]["compile"], second["stages"]["load from disk"], first["bytes"],
                second["client"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="+", default=DEFAULT)
    parser.add_argument("--size", default="S", choices=["S", "M"])
    args = parser.parse_args()
    print(f"{'workload':22} {'compile ms':>11} {'load ms':>9} {'compile/load':>13} "
          f"{'entry KiB':>10} {'client ms':>10}")
    for name in args.only:
        result = measure(name, args.size)
        if result is None:
            print(f"{name:22} {'(not compiled)':>11}")
            continue
        compile_s, load_s, size, client_s = result
        print(f"{name:22} {compile_s * 1e3:11.1f} {load_s * 1e3:9.2f} "
              f"{compile_s / load_s:12.1f}x {size / 1024:10.1f} {client_s * 1e3:10.1f}")


if __name__ == "__main__":
    main()
