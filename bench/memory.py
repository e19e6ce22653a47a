"""Memory held over a long session: psc_jit's %%psc_jit magic beside jax.jit, in one run.

    .venv/bin/python bench/memory.py [--compiles 100] [--reruns 10000] [--peak-gib 1]

Each scenario runs in a fresh subprocess per side (so one side's allocations never count
against the other), and prints the growth of the resident set size (RSS, from
/proc/self/statm) in MiB:
- reruns:     re-runs of one compiled cell (jax: calls of one jitted function)
- compiles:   distinct compiles (new cell sources; jax: new jitted functions), MiB per compile
- cleared:    after `%psc_cache --clear` (jax: jax.clear_caches()), two more rounds of
              compiles; each round's growth as a share of the first round's
- longdouble: ten runs of a cell over a 16 MB np.longdouble array (XLA cannot take it: psc
              falls back; jax refuses the dtype, so its column is plain NumPy's)

Then the peak of one elementwise cell, `y = x * 2.0 + 1.0` on a 1 GiB input (`--peak-gib`),
each way in a fresh process (tests/extension/memory_child.py): how far the resident set's
high-water mark rose above where it was just before the cell (the input already made, jaxlib
loaded), beside plain NumPy's, and the output's size.
"""
from __future__ import annotations

import argparse
import gc
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np

MIB = 1 << 20
CELL = "y = np.tanh(x * {k}.0 + 1.0).sum() + x.mean()"


def rss() -> float:
    gc.collect()
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / MIB


# -- the psc side: a real IPython shell --------------------------------------------------------

def _shell():
    from IPython.core.interactiveshell import InteractiveShell
    ip = InteractiveShell.instance()
    ip.run_line_magic("load_ext", "psc_jit")
    ip.run_line_magic("config", "PscJit.timing_budget = 0")
    ip.user_ns.update(np=np, x=np.linspace(0.0, 1.0, 1000))
    return ip


def _cell(ip, k):
    ip.run_cell_magic("psc_jit", "--quiet", CELL.format(k=k))


def psc_reruns(n):
    ip = _shell()
    for _ in range(20):
        _cell(ip, 1)
    before = rss()
    for _ in range(n):
        _cell(ip, 1)
    return {"growth": rss() - before}


def psc_compiles(n):
    ip = _shell()
    _cell(ip, 0)
    rounds, start = [], rss()
    for r in range(3):
        if r:
            ip.run_line_magic("psc_cache", "--clear")
        before = rss()
        for k in range(n):
            _cell(ip, 1 + r * n + k)
        rounds.append(rss() - before)
    return {"first": rounds[0], "rounds": rounds, "total": rss() - start}


def psc_longdouble(runs):
    ip = _shell()
    ip.user_ns["x"] = np.ones(MIB, np.longdouble)        # 16 MB
    before = rss()
    for _ in range(runs):
        ip.run_cell_magic("psc_jit", "--quiet", "y = x * 2")
    del ip.user_ns["y"]                    # as the NumPy side drops its result
    return {"growth": rss() - before}


# -- the jax side --------------------------------------------------------------------------------

def _jitted(k):
    import jax
    import jax.numpy as jnp
    jax.config.update("jax_enable_x64", True)
    return jax.jit(lambda x: jnp.tanh(x * float(k) + 1.0).sum() + x.mean())


def jax_reruns(n):
    f, x = _jitted(1), np.linspace(0.0, 1.0, 1000)
    for _ in range(20):
        np.asarray(f(x))
    before = rss()
    for _ in range(n):
        np.asarray(f(x))
    return {"growth": rss() - before}


def jax_compiles(n):
    import jax
    x = np.linspace(0.0, 1.0, 1000)
    np.asarray(_jitted(0)(x))
    rounds, start = [], rss()
    for r in range(3):
        if r:
            jax.clear_caches()
        before = rss()
        fns = []
        for k in range(n):
            fns.append(_jitted(1 + r * n + k))
            np.asarray(fns[-1](x))
        rounds.append(rss() - before)
    return {"first": rounds[0], "rounds": rounds, "total": rss() - start}


def numpy_longdouble(runs):
    x = np.ones(MIB, np.longdouble)
    before = rss()
    for _ in range(runs):
        y = x * 2
    del y
    return {"growth": rss() - before}


SCENARIOS = {("psc", "reruns"): psc_reruns, ("jax", "reruns"): jax_reruns,
             ("psc", "compiles"): psc_compiles, ("jax", "compiles"): jax_compiles,
             ("psc", "longdouble"): psc_longdouble, ("jax", "longdouble"): numpy_longdouble}


def measure(side: str, scenario: str, n: int) -> dict:
    command = [sys.executable, __file__, "--child", side, scenario, str(n)]
    out = subprocess.run(command, capture_output=True, text=True, check=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--compiles", type=int, default=100)
    parser.add_argument("--reruns", type=int, default=10_000)
    parser.add_argument("--peak-gib", type=float, default=1.0,
                        help="input size of the peak rows (0: none)")
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        side, scenario, n = args.child
        print(json.dumps(SCENARIOS[side, scenario](int(n))))
        return
    rows = []
    reruns = {s: measure(s, "reruns", args.reruns)["growth"] for s in ("psc", "jax")}
    rows.append((f"{args.reruns} re-runs of one cell (MiB)", reruns["psc"], reruns["jax"]))
    compiles = {s: measure(s, "compiles", args.compiles) for s in ("psc", "jax")}
    per = {s: compiles[s]["first"] / args.compiles for s in compiles}
    rows.append((f"{args.compiles} compiles, MiB per compile", per["psc"], per["jax"]))
    for r in (1, 2):
        share = {s: 100 * c["rounds"][r] / max(c["first"], 1e-9) for s, c in compiles.items()}
        rows.append((f"round {r + 1} after clearing, % of round 1", share["psc"], share["jax"]))
    ld = {s: measure(s, "longdouble", 10)["growth"] for s in ("psc", "jax")}
    rows.append(("10 runs over 16 MB longdouble (MiB; jax: NumPy)", ld["psc"], ld["jax"]))
    print(f"{'scenario':<50} {'psc_jit':>9} {'jax.jit':>9} {'ratio':>7}")
    for name, psc, jax in rows:
        ratio = f"{psc / jax:7.2f}" if abs(jax) > 1e-6 else f"{'-':>7}"
        print(f"{name:<50} {psc:9.2f} {jax:9.2f} {ratio}")
    if args.peak_gib:
        print_peaks(args.peak_gib)


PEAK_CHILD = Path(__file__).resolve().parents[1] / "tests" / "extension" / "memory_child.py"
PEAK_WAYS = (("plain NumPy", "numpy"), ("psc_jit jit", "jit"),
             ("%%psc_jit --no-compare", "magic"), ("%%psc_jit, timed first run", "magic-timed"),
             ("jax.jit", "jax"))


def print_peaks(gib: float) -> None:
    """The peak rise of one elementwise cell on a `gib` GiB input, each way."""
    elements = int(gib * (1 << 30)) // 8
    print(f"\npeak of `y = x * 2.0 + 1.0` on a {gib:g} GiB float64 input, MiB above the "
          "resident set before the cell")
    print(f"{'way':<30} {'peak MiB':>9} {'output MiB':>11} {'/ NumPy':>8}")
    numpy_peak = None
    for name, mode in PEAK_WAYS:
        out = subprocess.run([sys.executable, str(PEAK_CHILD), mode, str(elements)],
                             capture_output=True, text=True, check=True).stdout
        report = json.loads(out.strip().splitlines()[-1])
        peak = report["peak_mib"]
        if peak is None:
            print("this Linux cannot reset a process's peak memory (/proc/self/clear_refs)")
            return
        numpy_peak = numpy_peak or peak
        print(f"{name:<30} {peak:9.0f} {report['output_mib']:11.0f} {peak / numpy_peak:8.2f}")


if __name__ == "__main__":
    main()
