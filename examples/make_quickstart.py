#!/usr/bin/env python3
"""Write examples/quickstart.ipynb from the cells below (no outputs are stored).

    python examples/make_quickstart.py

Edit the cells here and re-run it, so that the notebook stays reviewable as a diff.
"""
import pathlib

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

HERE = pathlib.Path(__file__).resolve().parent

JIT_CELL = """\
%%psc_jit
mu = x.mean(axis=1, keepdims=True)
var = ((x - mu) ** 2).mean(axis=1, keepdims=True)
y = (x - mu) / np.sqrt(var + 1e-5)
h = 0.5 * y * (1.0 + np.tanh(0.7978845608 * (y + 0.044715 * y ** 3)))"""

CELLS = [
    ("markdown", """\
# psc_jit quickstart

Put `%%psc_jit` on top of a cell of plain NumPy code. The cell is traced into a graph of
array primitives, lowered to StableHLO, compiled by XLA, cached under its signature (the
dtypes and shapes of its inputs) and run. The names it assigns land in the notebook as
NumPy arrays, as if the cell had run as plain Python."""),
    ("code", """\
%load_ext psc_jit
import numpy as np
import psc_jit

x = np.random.default_rng(0).standard_normal((1000, 1000))
w = np.ones(1000)"""),
    ("markdown", """\
The cell below (each row of `x` normalised to mean 0 and variance 1, then the tanh form of
the GELU activation, as in a transformer block) reads `x` (its input) and assigns `mu`,
`var`, `y` and `h` (its outputs).
The first run traces and compiles it: the panel shows whether it compiled, the traced
graph, the kernels XLA fused it into, and its time against the same cell run as plain
NumPy."""),
    ("code", JIT_CELL),
    ("markdown", "The outputs are ordinary NumPy values, equal to what plain NumPy gives:"),
    ("code", """\
mu_numpy = x.mean(axis=1, keepdims=True)
y_numpy = (x - mu_numpy) / np.sqrt(((x - mu_numpy) ** 2).mean(axis=1, keepdims=True) + 1e-5)
h_numpy = 0.5 * y_numpy * (1.0 + np.tanh(0.7978845608 * (y_numpy + 0.044715 * y_numpy ** 3)))
h.dtype, h.shape, np.allclose(y, y_numpy), np.allclose(h, h_numpy)"""),
    ("markdown", """\
Running the same cell again with inputs of the same dtypes and shapes is a cache hit:
nothing is traced or compiled again."""),
    ("code", JIT_CELL),
    ("code", "psc_jit.last_report().cache_hit"),
    ("markdown", """\
A new shape is a new signature: a cache miss, a new trace and a new compile. The report
says which input changed and how."""),
    ("code", "x = x[:500]"),
    ("code", JIT_CELL),
    ("code", "psc_jit.last_report().miss_reason"),
    ("markdown", """\
Cells print, draw random numbers and pick values by a mask. Such a statement cannot be part
of an XLA program, so it runs as plain Python, as a *host step*, and the statements around it
are compiled as *regions*, each cached on its own. The printed text and the random numbers are
NumPy's own (the generator advances exactly as in plain Python). So `z = np.tanh(...)` runs as
plain Python too: the print shows digits of `z`, and XLA's `tanh` is not NumPy's to the last
bit. The report says why for each host step and draws the regions and host steps in the
order they ran."""),
    ("code", """\
%%psc_jit
rng = np.random.default_rng(42)
noise = rng.standard_normal(x.shape) * 0.1
z = np.tanh(x + noise)
print("mean", z.mean().round(6), "share above 0.5:", (z > 0.5).mean().round(6))
big = z[z > 0.5]
score = np.sqrt((big ** 2).mean())"""),
    ("code", """\
report = psc_jit.last_report()
print(report.split_summary())
report.split, [region.compiled for region in report.regions]"""),
    ("markdown", "`%psc_cache` lists every cached entry with its hits, misses and reasons."),
    ("code", "%psc_cache"),
    ("markdown", """\
The same compiler is there for functions, with JAX's staged API: `trace` gives the graph,
`lower` the StableHLO module, `compile` the XLA executable (its optimized HLO, cost
analysis and fused kernels)."""),
    ("code", """\
from psc_jit import jit


def layer(x, w):
    h = np.tanh(x @ w + 1.0)
    return h, (h ** 2).mean()


traced = jit(layer).trace(x, w)
print(traced.graph)
print(traced.lower().compile().cost_analysis())
traced.lower().as_text()[:800]"""),
    ("markdown", """\
Not every cell gets faster. The normalisation cell wins because XLA fuses its elementwise
work and reductions into a few loops where NumPy makes a temporary array per operation
(and `y ** 3` becomes two multiplies where NumPy calls `pow`). `layer` is
mostly one matrix-vector product, which NumPy already hands to a single BLAS call; XLA's own
matrix-vector kernel is slower than OpenBLAS, and an input that is not 64-byte aligned (as
`standard_normal` makes it) is copied on every call. The timing panel says which part of the
compiled call dominates; `psc_jit.aligned(x)` makes an aligned copy that XLA reads in place."""),
    ("code", """\
%%psc_jit --compare
h = np.tanh(x @ w + 1.0)"""),
]


def build() -> nbformat.NotebookNode:
    makers = {"markdown": new_markdown_cell, "code": new_code_cell}
    cells = [makers[kind](source, id=f"cell-{number:02d}")
             for number, (kind, source) in enumerate(CELLS, start=1)]
    metadata = {
        "kernelspec": {"name": "python3", "display_name": "Python 3 (ipykernel)",
                       "language": "python"},
        "language_info": {"name": "python"},
    }
    return new_notebook(cells=cells, metadata=metadata)


def main() -> None:
    notebook = build()
    nbformat.validate(notebook)
    path = HERE / "quickstart.ipynb"
    nbformat.write(notebook, path)
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
