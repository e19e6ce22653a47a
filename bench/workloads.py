"""Plain NumPy against %%psc_jit (and jax.jit, when jax is installed) on reference workloads.

    .venv/bin/python bench/workloads.py [--size S|M] [--only NAME ...] [--repeat N]

Prints one table: plain NumPy time, the magic's cache-hit time (whole cell as a user runs it),
psc_jit's steady-state call time (jit of the cell function, no magic), jax.jit's steady-state
time of the same cell with `np` bound to `jax.numpy`, NumPy arrays in and out (only for
cells jax can trace: no in-place updates, no Python loops over traced values; `nan`
otherwise), the speed-ups over plain NumPy of psc (plain/jit) and of jax (plain/jax), and
compile time (trace + lower + XLA compile). Every workload by default. Times are the best of
N runs in milliseconds. Cells jax cannot trace as written (branches and loops on traced values,
in-place updates) are timed through their hand-written jax.numpy peer in bench/jax_peers.py
("jax: peer" in the last column).
"""
from __future__ import annotations

import argparse
import contextlib
import copy
import functools
import importlib.util
import io
import pathlib
import sys
import time

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))     # bench/jax_peers.py

ROOT = pathlib.Path(__file__).resolve().parents[1]
WORKLOADS = ROOT.parent / "shared" / "workloads"


def every_workload() -> list[str]:
    return sorted(p.stem for p in WORKLOADS.glob("*.py") if p.stem != "run")


def load(path: pathlib.Path):
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def best_ms(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times) * 1e3


def plain_runner(cell: str, inputs: dict):
    code = compile(cell, "<plain>", "exec")

    def run():
        ns = {"np": np, **inputs}
        with contextlib.redirect_stdout(io.StringIO()):
            exec(code, ns)
    return run


def jax_runner(name: str, cell: str, inputs: dict, outputs: list[str]):
    """(jax.jit of the cell with np = jax.numpy, or of its hand-written peer in
    bench/jax_peers.py when jax cannot trace the cell as written; which one), or (None, "")
    when jax is absent or neither traces."""
    try:
        import jax
        import jax.numpy as jnp
    except ImportError:
        return None, ""
    jax.config.update("jax_enable_x64", True)
    traced = {k: v for k, v in inputs.items() if isinstance(v, (np.ndarray, float))}
    static = {k: v for k, v in inputs.items() if k not in traced}
    code = compile(cell, "<jax>", "exec")

    def body(**arrays):
        ns = {"np": jnp, **static, **arrays}
        exec(code, ns)
        return [ns[n] for n in outputs]
    for fn, kind in ((jax.jit(body), "cell"), (_jax_peer(name, static), "peer")):
        if fn is not None and _traces(jax, fn, traced):
            return (lambda fn=fn: [np.asarray(out) for out in fn(**traced)]), kind
    return None, ""


def _jax_peer(name: str, static: dict):
    import jax
    from jax_peers import PEERS
    peer = PEERS.get(name)
    if peer is None:
        return None
    return jax.jit(functools.partial(peer, jax.numpy, jax.lax, **static))


def _traces(jax, fn, traced: dict) -> bool:
    try:
        jax.block_until_ready(fn(**{k: jax.numpy.asarray(v) for k, v in traced.items()}))
    except Exception:   # noqa: BLE001 - any trace failure means "not comparable"
        return False
    return True


def peer_agrees(run, expected: dict, outputs: list[str]) -> bool:
    """Whether the jax peer's outputs have the plain cell's values (a check on the peer)."""
    got = run()
    return all(np.allclose(np.asarray(expected[n], dtype=float), np.asarray(g, dtype=float),
                           rtol=1e-6, atol=1e-9, equal_nan=True)
               for n, g in zip(outputs, got, strict=True))


def plain_outputs(cell: str, inputs: dict) -> dict:
    ns = {"np": np, **copy.deepcopy(inputs)}
    with contextlib.redirect_stdout(io.StringIO()):
        exec(cell, ns)
    return ns


def jit_call_ms(jitted, call_args: dict, repeat: int) -> float:
    """psc_jit's steady-state call of the cell function; nan when the bare function cannot be
    traced (the magic rewrites Python branches and loops over traced values first)."""
    try:
        jitted(**call_args)
    except Exception:   # noqa: BLE001 - any trace failure means "only the magic column"
        return float("nan")
    return best_ms(functools.partial(jitted, **call_args), repeat)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", default="S")
    parser.add_argument("--only", nargs="*", default=every_workload())
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()

    from IPython.core.interactiveshell import InteractiveShell

    import psc_jit
    from psc_jit.core.frontend.cell import analyze_cell, make_cell_function
    from psc_jit.core import Jitted
    shell = InteractiveShell.instance()
    shell.run_line_magic("load_ext", "psc_jit")

    header = (f"{'workload':22} {'plain ms':>9} {'magic ms':>9} {'jit ms':>9} {'jax ms':>9} "
              f"{'plain/jit':>9} {'plain/jax':>9} {'jax/jit':>8} {'compile s':>9}  ran as")
    print(header)
    print("-" * len(header))
    for name in args.only:
        w = load(WORKLOADS / f"{name}.py")
        inputs = w.setup(args.size)
        plain_ms = best_ms(plain_runner(w.CELL, copy.deepcopy(inputs)), args.repeat)

        shell.user_ns.update({"np": np, **copy.deepcopy(inputs)})
        shell.run_cell_magic("psc_jit", "--quiet --no-compare", w.CELL)
        report = psc_jit.last_report()
        compile_s = sum(report.stage_seconds.get(k, 0.0) for k in ("trace", "lower", "compile"))

        def magic(inputs=inputs, cell=w.CELL):
            shell.user_ns.update(inputs)
            shell.run_cell_magic("psc_jit", "--quiet --no-compare", cell)
        magic_ms = best_ms(magic, args.repeat)

        analysis = analyze_cell(w.CELL)
        names = [n for n in analysis.inputs if n in inputs or n == "np"]
        jitted = Jitted(make_cell_function(analysis, names, {"np": np}))
        arguments = {"np": np, **copy.deepcopy(inputs)}
        call_args = {n: arguments[n] for n in names}
        jit_ms = jit_call_ms(jitted, call_args, args.repeat)

        jax_fn, jax_kind = jax_runner(name, w.CELL, inputs, w.OUTPUTS)
        jax_ms = best_ms(jax_fn, args.repeat) if jax_fn else float("nan")
        if jax_kind == "peer" and not peer_agrees(jax_fn, plain_outputs(w.CELL, inputs),
                                                  w.OUTPUTS):
            jax_kind = "peer DISAGREES"
        ran = "compiled" if report.compiled else f"fallback: {report.fallback_reason[:40]}"
        print(f"{name:22} {plain_ms:9.3f} {magic_ms:9.3f} {jit_ms:9.3f} {jax_ms:9.3f} "
              f"{plain_ms / jit_ms:9.2f} {plain_ms / jax_ms:9.2f} {jax_ms / jit_ms:8.2f} "
              f"{compile_s:9.3f}  {ran}{'; jax: ' + jax_kind if jax_kind != 'cell' else ''}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
