"""What a `%%psc_jit` re-run pays for the functions and classes the cell defines: each run
(a cache hit included) makes them anew from their recipes, as each run of the plain cell
defines them (issue 28, item 3).

    .venv/bin/python bench/cell_definitions.py [--repeat N]

Each row times a re-run (a cache hit, `--quiet --no-compare`) of a cell in a real IPython
shell against the same cell run as plain Python (`exec` of its code in the namespace), and
against the re-run of a cell that computes the same without defining anything. Times are
the best of N interleaved batches, per run, in microseconds (see overhead.py).
"""
from __future__ import annotations

import argparse

import numpy as np
from IPython.core.interactiveshell import InteractiveShell

from overhead import side_by_side

BASE = "y = w * 2.0 + 1.0\n"
CELLS = {
    "def": "def f(v):\n    return v * 2.0 + 1.0\ny = f(w)\n",
    "def, default, lambda": ("def f(v, s=2.0):\n    return v * s + 1.0\n"
                             "g = lambda v: v - 1.0\ny = g(f(w)) + 1.0\n"),
    "class and instance": ("class M:\n    scale = 2.0\n    def __init__(self, v):\n"
                           "        self.v = v\n    def out(self):\n"
                           "        return self.v * self.scale + 1.0\n"
                           "m = M(w)\ny = m.out()\n"),
}


def timings(shell, name: str, cell: str, repeat: int) -> list[float]:
    code = compile(cell, "<plain>", "exec")

    def magic(source=cell, label=name):
        shell.run_cell_magic("psc_jit", f"--quiet --no-compare --name {label}", source)

    def base():
        shell.run_cell_magic("psc_jit", "--quiet --no-compare --name base", BASE)

    def plain():
        exec(code, shell.user_ns)
    magic()
    base()
    return side_by_side([plain, magic, base], repeat)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args()
    shell = InteractiveShell.instance()
    shell.run_line_magic("load_ext", "psc_jit")
    shell.user_ns.update(np=np, w=np.arange(1000.0))
    print(f"{'cell':24} {'plain µs':>9} {'re-run µs':>10} {'no-def re-run µs':>17} "
          f"{'re-run / no-def':>15}")
    for name, cell in CELLS.items():
        plain, magic, base = timings(shell, name.replace(" ", "_").replace(",", ""), cell,
                                     args.repeat)
        print(f"{name:24} {plain:9.1f} {magic:10.1f} {base:17.1f} {magic / base:15.2f}")


if __name__ == "__main__":
    main()
