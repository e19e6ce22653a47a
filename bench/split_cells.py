"""Re-runs of cells split into compiled regions and host steps: where the time goes.

    .venv/bin/python bench/split_cells.py [--repeat N]

Each row is one cell run again and again in a real IPython shell (every region a cache hit),
three ways, their batches interleaved (bench/overhead.py's `side_by_side`): as plain Python,
through `%%psc_jit` (split), and the same cell with its host steps removed, through
`%%psc_jit` (one compiled region, for the cost of the split itself). `in regions` is the time
the split run spent in its regions' compiled calls (the regions' `run` stage, from the
report of one more run); `outside` is the rest of the split run: the host steps themselves,
and the runner's work around the regions (their signatures, the plan, the namespace).
Times are per run, in microseconds, best of N batches; ratios are what to read.

The second table is loops holding a random draw: plain Python; through `%%psc_jit` with the
loop run pass by pass, its body compiled (the draw's `loc` an array, which the draws made
before the loop do not take); and through `%%psc_jit` with the loop rolled, its draws made
before it (`loc` a float: the same numbers). Ratios are plain / magic (above 1: faster).
"""
from __future__ import annotations

import argparse
import contextlib
import io

import psc_jit
from IPython.core.interactiveshell import InteractiveShell

from overhead import side_by_side

SETUP = "import numpy as np\nx = np.random.default_rng(0).standard_normal({n})\nlog = io.StringIO()"

# (name, cell with host steps, the same without them, n)
CELLS = [
    ("print between two regions",
     "a = np.tanh(x) * 2.0\nprint(a[0], file=log)\nb = np.exp(-a * a).sum()\n",
     "a = np.tanh(x) * 2.0\nb = np.exp(-a * a).sum()\n", 1000),
    ("print between two regions, 1M",
     "a = np.tanh(x) * 2.0\nprint(a[0], file=log)\nb = np.exp(-a * a).sum()\n",
     "a = np.tanh(x) * 2.0\nb = np.exp(-a * a).sum()\n", 1_000_000),
    ("a draw between two regions",
     "a = x * 2.0 + 1.0\nr = np.random.standard_normal(a.shape)\nb = (a * r).sum()\n",
     "a = x * 2.0 + 1.0\nb = (a * a).sum()\n", 10_000),
    ("a mask selection between regions",
     "y = np.sin(x) * 3\npos = y[y > 0]\nm = pos.mean() + y.std()\n",
     "y = np.sin(x) * 3\nm = np.where(y > 0, y, 0).mean() + y.std()\n", 10_000),
    ("a loop of 20 passes with a print",
     "acc = 0.0\nfor i in range(20):\n    acc = acc + x[i] * 2\n    print(i, file=log)\n",
     "acc = 0.0\nfor i in range(20):\n    acc = acc + x[i] * 2\n", 100),
]


# (name, the loop with a draw, n elements, passes)
LOOPS = [
    ("random walk, 3 elements, 100 passes",
     "x = np.zeros({n})\nfor t in range({passes}):\n    x = 0.9 * x + rng.normal(LOC, 1.0, size={n})\n",
     3, 100),
    ("random walk, 1000 elements, 100 passes",
     "x = np.zeros({n})\nfor t in range({passes}):\n    x = 0.9 * x + rng.normal(LOC, 1.0, size={n})\n",
     1000, 100),
    ("noisy gradient steps, 100 elements, 500 passes",
     "w = np.ones({n})\nfor t in range({passes}):\n    g = 2 * w + rng.normal(LOC, 1.0, size={n})\n"
     "    w = w - 0.01 * g\nloss = (w * w).sum()\n", 100, 500),
]


def loop_table(shell, repeat: int) -> None:
    print(f"\n{'loop with a draw':48} {'plain':>9} {'per pass':>9} {'rolled':>9} "
          f"{'plain/per pass':>15} {'plain/rolled':>13}")
    for name, template, n, passes in LOOPS:
        cell = template.format(n=n, passes=passes)
        rolled, per_pass = cell.replace("LOC", "loc"), cell.replace("LOC", "locs")
        shell.run_cell(f"rng = np.random.default_rng(0)\nloc = 0.5\nlocs = np.full({n}, 0.5)")
        plain_code = compile(rolled, "<plain>", "exec")

        def plain(code=plain_code, ns=shell.user_ns):
            exec(code, ns)

        def magic(cell):
            shell.run_cell_magic("psc_jit", "--quiet --no-compare", cell)

        with contextlib.redirect_stdout(io.StringIO()):
            magic(per_pass)
            assert not psc_jit.last_report().predrawn
            magic(rolled)
            assert psc_jit.last_report().predrawn
            times = side_by_side([plain, lambda c=per_pass: magic(c), lambda c=rolled: magic(c)],
                                 repeat)
        plain_us, per_pass_us, rolled_us = times
        print(f"{name:48} {plain_us:9.1f} {per_pass_us:9.1f} {rolled_us:9.1f} "
              f"{plain_us / per_pass_us:14.2f}x {plain_us / rolled_us:12.2f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    shell = InteractiveShell.instance()
    shell.run_line_magic("load_ext", "psc_jit")
    shell.run_cell("import io")
    rows = []
    for name, split, whole, n in CELLS:
        shell.run_cell(SETUP.format(n=n))
        ns = shell.user_ns
        plain_code = compile(split, "<plain>", "exec")

        def plain(code=plain_code, ns=ns):
            exec(code, ns)

        def magic(cell=split):
            shell.run_cell_magic("psc_jit", "--quiet --no-compare", cell)

        with contextlib.redirect_stdout(io.StringIO()):
            magic(), magic(whole)
            plain_us, split_us, whole_us = side_by_side(
                [plain, magic, lambda cell=whole: magic(cell)], args.repeat)
            magic()
        report = psc_jit.last_report()
        assert report.split and all(r.cache_hit for r in report.regions if r.compiled)
        in_regions = sum(r.stage_seconds.get("run", 0.0) for r in report.regions) * 1e6
        rows.append((name, plain_us, split_us, whole_us, in_regions,
                     len([r for r in report.regions if r.compiled])))
    print(f"{'cell':36} {'plain':>9} {'split':>9} {'no host':>9} {'in regions':>11} "
          f"{'outside':>9} {'regions':>8} {'split/plain':>12}")
    for name, plain_us, split_us, whole_us, in_regions, regions in rows:
        print(f"{name:36} {plain_us:9.1f} {split_us:9.1f} {whole_us:9.1f} {in_regions:11.1f} "
              f"{split_us - in_regions:9.1f} {regions:8d} {plain_us / split_us:11.2f}x")
    loop_table(shell, args.repeat)


if __name__ == "__main__":
    main()
