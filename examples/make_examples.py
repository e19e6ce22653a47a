#!/usr/bin/env python3
"""Write the example notebooks below (no outputs are stored):

    python examples/make_examples.py          # all of them
    python examples/make_examples.py fusion_explained

fusion_explained.ipynb   what XLA fused, and which line went into which kernel
cache_behaviour.ipynb    cache hits and misses: shapes, dtypes, static values, %psc_cache
timing_comparisons.ipynb plain NumPy against compiled, cell by cell, and %psc_timings
gradients.ipynb          %%psc_jit --grad, grad/jvp/vjp/jacobians and vmap of plain NumPy code

Edit the cells here and re-run it, so that the notebooks stay reviewable as diffs.
(quickstart.ipynb has its own script, make_quickstart.py.)
"""
from __future__ import annotations

import pathlib
import sys

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

HERE = pathlib.Path(__file__).resolve().parent

SETUP = """\
%load_ext psc_jit
import numpy as np
import psc_jit

rng = np.random.default_rng(0)"""

# ---------------------------------------------------------------------------------------------
# fusion_explained
# ---------------------------------------------------------------------------------------------

ELEMENTWISE = """\
%%psc_jit --name elementwise
y = np.sin(x) * 2.0 + np.cos(x) ** 2
z = np.sqrt(np.abs(y) + 1.0) - 0.5 * y"""

SOFTMAX = """\
%%psc_jit --name softmax
shifted = logits - logits.max(axis=1, keepdims=True)
e = np.exp(shifted)
probs = e / e.sum(axis=1, keepdims=True)"""

MLP = """\
%%psc_jit --name mlp
h = np.tanh(batch @ w1 + b1)
out = h @ w2 + b2
loss = ((out - target) ** 2).mean()"""

LOOP = """\
%%psc_jit --name loop
h = batch
for step in range(20):
    h = 0.5 * h + np.tanh(h @ w_loop)
energy = (h ** 2).sum()"""

FUSION_EXPLAINED = [
    ("markdown", """\
# Fusion explained

XLA does not run a cell's NumPy calls one by one: it *fuses* neighbouring operations into
kernels, so an intermediate array that only feeds the next operation never goes to memory.
Each `%%psc_jit` report opens on its **Lines** tab: every line of the cell with the time it
took in the compiled run and the kernels it went into. Its **Explorer** tab shows the same cell
as drawings:

* **kernels** (first): the kernels XLA made of it, one box each, linked as XLA's optimized
  module links them, and coloured pale to red by the time each took;
* **traced graph**: the graph psc_jit traced, one node per array primitive, each in the
  colour of the kernel it went into (reshape and broadcast steps hidden until you untick
  *hide steps*).

Click a kernel's box, a row of the kernel table or a line, or search for `tanh`, `exp` or
`line 3`, and what belongs together lights up, at once: the page does it, not the kernel, so
it works while another cell runs and after the notebook is reopened. Hover over a box for
its equations; `−`, `fit`, `100%` and `+` scale the drawings; scroll to pan. *HTML* and *SVG*
save the report and the drawing in view."""),
    ("code", SETUP + """
x = rng.standard_normal((500, 400))"""),
    ("markdown", """\
## An elementwise chain

Every operation here maps each element of `x` to one element of the result, so XLA can do
all of them in one pass over memory: a single loop fusion per output, however many NumPy
calls the lines make."""),
    ("code", ELEMENTWISE),
    ("code", """\
report = psc_jit.last_report()
print(f"{report.n_primitives} primitives -> {report.n_kernels} kernels")
for kernel in report.kernels.kernels:
    print(f"{kernel.name:32} {kernel.kind:8} {', '.join(kernel.fused_ops)}")"""),
    ("markdown", """\
## Softmax

A reduction (`max`, `sum`) has to see a whole row before the next step can use its result,
so a softmax fuses into a few kernels, split at the reductions. In the Explorer, click the
kernel holding `exponential` and see which lines went into it."""),
    ("code", """\
logits = rng.standard_normal((256, 1000))"""),
    ("code", SOFTMAX),
    ("code", """\
np.allclose(probs, np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True))"""),
    ("markdown", """\
## A small MLP

Matrix products (`@`) become their own kernels (XLA calls a tuned library for them); the bias
additions, `tanh` and the loss fuse around them. The kernel table, slowest first, with each
kernel's floating-point operations (XLA's count), shows where the work is."""),
    ("code", """\
batch = rng.standard_normal((128, 64))
w1, b1 = rng.standard_normal((64, 256)) / 8, np.zeros(256)
w2, b2 = rng.standard_normal((256, 10)) / 16, np.zeros(10)
target = rng.standard_normal((128, 10))"""),
    ("code", MLP),
    ("code", """\
report = psc_jit.last_report()
[(k.name, k.kind, k.bytes_estimate, k.flops) for k in report.kernels.kernels]"""),
    ("markdown", """\
## A loop

psc_jit rolls a Python loop over traced values into one XLA `while` loop, so the graph does
not grow with the number of steps. The Explorer draws XLA's `while` kernel as a dashed
cluster holding the kernels of its body, and, in the traced graph, the loop as a cluster
holding its condition and its body."""),
    ("code", "w_loop = rng.standard_normal((64, 64)) / 16"),
    ("code", LOOP),
]

# ---------------------------------------------------------------------------------------------
# cache_behaviour
# ---------------------------------------------------------------------------------------------

LAYER = """\
%%psc_jit --force --name layer
h = np.tanh(x @ w + 1.0)
loss = (h ** 2).mean()"""

POWER = """\
%%psc_jit --force --name power
p = x
for _ in range(n):
    p = p * 0.5 + 1.0
total = p.sum()"""

CACHE_BEHAVIOUR = [
    ("markdown", """\
# Cache behaviour

A compiled cell is cached under its **signature**: the dtype and shape of every array it
reads, and the value of every static input (Python ints, bools, strings, ...). The same
signature again is a *hit*: nothing is traced or compiled. A new signature is a *miss*, and
the report's **Cache** tab says what changed, in the cell's own names.

Where a timed first run finds plain Python faster, the magic runs the cell's later runs as
plain Python and says so; these cells take `--force`, so that every run here is compiled
and shows the cache at work."""),
    ("code", SETUP + """
x = rng.standard_normal((1000, 200))
w = np.ones(200)"""),
    ("markdown", "The first run is a miss (there is nothing to hit yet):"),
    ("code", LAYER),
    ("markdown", "The same cell again, with inputs of the same dtypes and shapes, is a hit:"),
    ("code", LAYER),
    ("code", "psc_jit.last_report().cache_hit"),
    ("markdown", """\
## A shape change

Taking half the rows of `x` gives a new signature. The miss names `x` and both shapes."""),
    ("code", "x = x[:500]"),
    ("code", LAYER),
    ("code", "psc_jit.last_report().miss_reason"),
    ("markdown", """\
## A dtype change

A dtype is part of the signature too (the compiled program is specialised to it), so
`float32` rows are a miss whose reason names `x`'s old and new type."""),
    ("code", "x = x.astype(np.float32)"),
    ("code", LAYER),
    ("code", "psc_jit.last_report().miss_reason"),
    ("markdown", """\
## Static values

A Python `int` is static: its value is part of the signature, and the loop below is traced
for that many steps. Changing `n` is a miss whose reason says `(static)`."""),
    ("code", """\
x = rng.standard_normal(1000)
n = 3"""),
    ("code", POWER),
    ("code", "n = 5"),
    ("code", POWER),
    ("code", "psc_jit.last_report().miss_reason"),
    ("markdown", """\
## The whole notebook's cache

`%psc_cache` lists every cached program of the session with its hits, compile time and size,
and every miss with its reason. `%psc_cache --clear` empties the caches; the next run of a
cell compiles it again."""),
    ("code", "%psc_cache"),
    ("code", "%psc_cache --clear"),
    ("code", "%psc_cache"),
]

# ---------------------------------------------------------------------------------------------
# timing_comparisons
# ---------------------------------------------------------------------------------------------

TIMING_COMPARISONS = [
    ("markdown", """\
# Timing comparisons

On a cache miss (or always, with `--compare`) psc_jit times the cell twice on copies of its
inputs: as plain NumPy and compiled, taking turns, so that a busy machine slows both alike.
The verdict ("3.2× faster", or "about the same (±4%)" when the runs overlap) comes from those
runs; the **Timing** tab shows both medians with the middle half of their runs, the compile
time and the first call separately, the median call split into its parts, and the FLOP/s and
bytes/s the compiled run achieved. `%psc_timings` puts every timed cell in one table and
chart.

Timings depend on the machine; where XLA fuses a chain of elementwise operations the compiled
cell reads memory once instead of once per operation."""),
    ("code", SETUP.replace("import psc_jit\n", "") + """
a = rng.standard_normal(1_000_000)
m = rng.standard_normal((512, 512))"""),
    ("markdown", "A long elementwise chain: NumPy makes a temporary array per operation."),
    ("code", """\
%%psc_jit --compare --name chain
r = np.exp(-a ** 2) * np.cos(3.0 * a) + np.sin(a) ** 2 - 0.5 * np.tanh(a)"""),
    ("markdown", "A reduction over the same data:"),
    ("code", """\
%%psc_jit --compare --name norms
norm = np.sqrt((a * a).sum())
mean_abs = np.abs(a).mean()"""),
    ("markdown", """\
A matrix product followed by elementwise work: the product dominates, and both sides call a
tuned library for it, so expect a smaller speed-up."""),
    ("code", """\
%%psc_jit --compare --name matmul
g = np.tanh(m @ m.T) + 1.0"""),
    ("markdown", "Every timed cell, side by side:"),
    ("code", "%psc_timings"),
]

# ---------------------------------------------------------------------------------------------
# gradients
# ---------------------------------------------------------------------------------------------

MLP_GRAD = """\
%%psc_jit --grad loss --wrt w1 b1 w2 b2 --name mlp
h = np.tanh(x @ w1 + b1)
pred = h @ w2 + b2
loss = ((pred - y) ** 2).mean()"""

HEAT_GRAD = """\
%%psc_jit --grad energy --wrt u0 --name heat
u = u0.copy()
for step in range(200):
    u[1:-1] = u[1:-1] + 0.25 * (u[2:] - 2 * u[1:-1] + u[:-2])
energy = (u[20:40] ** 2).sum()"""

GRADIENTS = [
    ("markdown", """\
# Gradients of plain NumPy code

`%%psc_jit --grad OUT --wrt NAME ...` differentiates a cell: besides the cell's own outputs it
binds the gradient of the scalar `OUT` with respect to each input `NAME` as `dOUT_dNAME`. The
cell stays plain NumPy: no `jax.numpy`, in-place updates and Python loops included.

The forward and the backward pass are one compiled program, and its report is like any
other: the **Explorer** shows the backward graph's kernels and its traced graph, each
equation on the line of the forward computation it came from (the derivative of `np.tanh` is
on the `np.tanh` line)."""),
    ("code", SETUP + """
x = rng.standard_normal((256, 8))
y = np.sin(x.sum(axis=1, keepdims=True))
w1, b1 = 0.5 * rng.standard_normal((8, 32)), np.zeros(32)
w2, b2 = 0.5 * rng.standard_normal((32, 1)), np.zeros(1)"""),
    ("markdown", "## A two-layer MLP"),
    ("code", MLP_GRAD),
    ("code", "loss, dloss_dw1.shape, dloss_db1.shape, dloss_dw2.shape, dloss_db2.shape"),
    ("markdown", """\
The gradient is exact (up to rounding): a central finite difference of the plain NumPy loss
agrees with it to about 1e-9."""),
    ("code", """\
def mlp_loss(w1):
    h = np.tanh(x @ w1 + b1)
    return (((h @ w2 + b2) - y) ** 2).mean()

e = np.zeros_like(w1); e[3, 5] = 1e-6
finite_difference = (mlp_loss(w1 + e) - mlp_loss(w1 - e)) / 2e-6
bool(abs(finite_difference - dloss_dw1[3, 5]) < 1e-8)"""),
    ("markdown", """\
## Training with `psc_jit.value_and_grad`

The same transformations are functions, with JAX's signatures: `grad`, `value_and_grad`,
`vjp`, `jvp`, `jacfwd`, `jacrev`. They compose with `jit` and with each other, and take
nested containers (here a dict of parameters)."""),
    ("code", """\
def loss_fn(params, x, y):
    h = np.tanh(x @ params["w1"] + params["b1"])
    return (((h @ params["w2"] + params["b2"]) - y) ** 2).mean()

step = psc_jit.jit(psc_jit.value_and_grad(loss_fn))
params = {"w1": w1, "b1": b1, "w2": w2, "b2": b2}
losses = []
for _ in range(100):
    value, grads = step(params, x, y)
    params = {k: params[k] - 0.1 * grads[k] for k in params}
    losses.append(value)
losses[0], losses[-1]"""),
    ("markdown", """\
## Through a loop that updates an array in place

The heat equation below runs 200 steps of an in-place stencil. psc_jit rolls the loop into
one XLA loop; its reverse-mode derivative keeps each step's values in a stacked buffer and
runs a second loop backwards, as JAX's `scan` would. The graph stays small however many steps
there are."""),
    ("code", "u0 = np.exp(-np.linspace(-3, 3, 64) ** 2)"),
    ("code", HEAT_GRAD),
    ("code", "denergy_du0.shape, psc_jit.last_report().n_primitives"),
    ("markdown", """\
## Forward mode, Jacobians, Hessians

`jvp` pushes a tangent forward; `jacfwd` and `jacrev` build whole Jacobians (one rolled loop
over the basis); composing them gives a Hessian."""),
    ("code", """\
def f(v):
    return np.sum(np.sin(v) * v ** 2)

v = np.array([0.1, 0.7, -1.2])
psc_jit.jvp(f, (v,), (np.ones(3),)), psc_jit.jacfwd(psc_jit.jacrev(f))(v).round(4)"""),
    ("markdown", """\
A `while` loop whose number of iterations depends on the data can be differentiated in forward
mode. Reverse mode would have to keep an unknown number of iterations, so it is refused, with
the line and the reason (JAX refuses it too)."""),
    ("code", """\
def grow(v):
    while v.sum() < 10.0:
        v = v * 1.5
    return v.sum()

print(psc_jit.jvp(grow, (np.ones(3),), (np.ones(3),)))
try:
    psc_jit.grad(grow)(np.ones(3))
except Exception as error:
    print(error.explain())"""),
    ("markdown", """\
## Batching with `psc_jit.vmap`

`vmap(f)(X)` is `np.stack([f(x) for x in X])`, computed as one program over the whole batch:
f is traced once, on one example, and each of its operations is rewritten to work on all of
them (JAX's `vmap`, with its `in_axes`, `out_axes` and `axis_size`). Composed with `grad` it
gives per-example gradients: `in_axes=(None, 0, 0)` shares the parameters and maps over the
rows of `x` and `y`. Their mean is the gradient of the mean loss."""),
    ("code", """\
def example_loss(params, x, y):
    h = np.tanh(x @ params["w1"] + params["b1"])
    return (((h @ params["w2"] + params["b2"]) - y) ** 2).sum()

per_example = psc_jit.vmap(psc_jit.grad(example_loss), in_axes=(None, 0, 0))(params, x, y)
one_by_one = [psc_jit.grad(example_loss)(params, x[i], y[i])["w1"] for i in range(4)]
(per_example["w1"].shape,
 bool(np.allclose(per_example["w1"][:4], one_by_one)),
 bool(np.allclose(per_example["w1"].mean(axis=0), psc_jit.grad(loss_fn)(params, x, y)["w1"])))"""),
    ("markdown", """\
Control flow is batched too. A `while` loop whose number of iterations depends on each
example's data runs until every example is done, each keeping its values from the iteration it
finished (as in the Python loop over examples); a branch on an example's data takes each
example's side."""),
    ("code", """\
def newton_sqrt(t):
    x = np.ones_like(t)
    err, steps = np.abs(t).max() + 1.0, 0
    while err > 1e-12:
        step = (x * x - t) / (2.0 * x)
        x = x - step
        err = np.abs(step).max()
        steps += 1
    return x, steps

roots, steps = psc_jit.vmap(newton_sqrt)(np.array([[2.0, 3.0], [1e6, 5.0], [1.0, 4.0]]))
roots, steps"""),
]

NOTEBOOKS = {
    "fusion_explained": FUSION_EXPLAINED,
    "cache_behaviour": CACHE_BEHAVIOUR,
    "timing_comparisons": TIMING_COMPARISONS,
    "gradients": GRADIENTS,
}


def build(name: str) -> nbformat.NotebookNode:
    makers = {"markdown": new_markdown_cell, "code": new_code_cell}
    cells = [makers[kind](source, id=f"cell-{number:02d}")
             for number, (kind, source) in enumerate(NOTEBOOKS[name], start=1)]
    metadata = {
        "kernelspec": {"name": "python3", "display_name": "Python 3 (ipykernel)",
                       "language": "python"},
        "language_info": {"name": "python"},
    }
    return new_notebook(cells=cells, metadata=metadata)


def main(names: list[str]) -> None:
    for name in names or NOTEBOOKS:
        notebook = build(name)
        nbformat.validate(notebook)
        path = HERE / f"{name}.ipynb"
        nbformat.write(notebook, path)
        print(f"wrote {path}")


if __name__ == "__main__":
    main(sys.argv[1:])
