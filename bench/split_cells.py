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


if __name__ == "__main__":
    main()
