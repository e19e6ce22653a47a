"""Cells as users write them, run through %%psc_jit in a real IPython shell, twice (the second
a cache hit), against the same cell run as plain Python: each compiles, and every name it
leaves is the plain cell's (Python type, dtype, shape and values; floats to 1e-12).

The idioms are those this code once refused: Python's numbers from traced values, math,
conditional expressions, loops over arrays, convolution, index conversions, np.add.at,
sliding windows, NaN-ignoring reductions."""
import copy
import math

import numpy as np
import psc_jit
import pytest
from IPython.core.interactiveshell import InteractiveShell

pytestmark = [pytest.mark.ipython, pytest.mark.xla]

RNG = np.random.default_rng(0)

CELLS = {
    "kmeans_step": (
        "d = ((X[:, None, :] - C[None, :, :]) ** 2).sum(-1)\nlab = d.argmin(1)\n"
        "newC = np.stack([X[lab == k].mean(0) if np.any(lab == k) else C[k]\n"
        "                 for k in range(C.shape[0])])\n",
        dict(X=RNG.random((200, 3)), C=RNG.random((5, 3)) * 3), ["lab", "newC"]),
    "smoothing": ("y = np.convolve(x, k, mode='same')\nr = np.correlate(x, k)\n",
                  dict(x=RNG.random(1000), k=RNG.random(5)), ["y", "r"]),
    "norms_in_python": ("import math\nd = math.sqrt(float(x @ x))\nn = int(x.sum())\n"
                        "m = max(x.max(), 0.5)\nq = round(x.mean() * 10)\nv = x.mean().item()\n",
                        dict(x=RNG.random(10)), ["d", "n", "m", "q", "v"]),
    "math_in_loop": ("acc = 0.0\nfor v in x:\n    acc += math.sqrt(v) * math.exp(-v)\n",
                     dict(x=RNG.random(300), math=math), ["acc"]),
    "rows_enumerated": ("tot = np.zeros(A.shape[1])\nfor i, row in enumerate(A):\n"
                        "    tot += row * i\n", dict(A=RNG.random((40, 4))), ["tot"]),
    "zip_dot": ("acc = 0.0\nfor a, b in zip(x, y):\n    acc += a * b\n",
                dict(x=RNG.random(500), y=RNG.random(400)), ["acc"]),
    "argmax_index": ("i, j = np.unravel_index(np.argmax(A), A.shape)\nrow = A[i]\n",
                     dict(A=RNG.random((30, 40))), ["i", "j", "row"]),
    "histogram_by_add_at": ("counts = np.zeros(10)\nnp.add.at(counts, idx, 1.0)\n",
                            dict(idx=RNG.integers(0, 10, 500)), ["counts"]),
    "rolling_mean": ("w = np.lib.stride_tricks.sliding_window_view(x, 5)\nm = w.mean(axis=1)\n",
                     dict(x=RNG.random(200)), ["m"]),
    "nan_stats": ("m = np.nanmean(x)\ns = np.nanstd(x)\nmed = np.nanmedian(x)\n",
                  dict(x=np.where(RNG.random(50) < 0.2, np.nan, RNG.random(50))),
                  ["m", "s", "med"]),
    "mean_or_zero_then": ("y = x.mean() if x.sum() > 0 else 0.0\n",
                          dict(x=np.array([1.0, 2.0])), ["y"]),
    "membership": ("inside = np.isin(labels, keep)\nkept = np.where(inside, x, 0.0)\n",
                   dict(labels=RNG.integers(0, 20, 100), keep=np.array([1, 3, 5]),
                        x=RNG.random(100)), ["inside", "kept"]),
    "lexicographic_order": ("order = np.lexsort((b, a))\n",
                            dict(a=RNG.integers(0, 3, 20), b=RNG.random(20)), ["order"]),
    "items_to_list": ("l = x[:4].tolist()\nfirst = x[0].item()\n",
                      dict(x=np.arange(6, dtype=np.int16)), ["l", "first"]),
}


def _same(want, got) -> str:
    """'' when got is want as the user sees it, else what differs."""
    if type(got) is not type(want):
        return f"type {type(got).__name__} != {type(want).__name__}"
    if isinstance(want, list):
        return next((r for r in map(_same, want, got) if r), "" if len(want) == len(got)
                    else "length")
    if isinstance(want, (bool, int, float, complex)):
        return "" if math.isclose(got, want, rel_tol=1e-12) or got == want else \
            f"{got!r} != {want!r}"
    if got.dtype != want.dtype or got.shape != want.shape:
        return f"{got.dtype}{got.shape} != {want.dtype}{want.shape}"
    ok = np.allclose(got, want, rtol=1e-12, atol=0, equal_nan=True) if want.dtype.kind in "fc" \
        else np.array_equal(got, want)
    return "" if ok else "values differ"


@pytest.fixture(scope="module")
def shell():
    ip = InteractiveShell.instance()
    ip.run_line_magic("load_ext", "psc_jit")
    return ip


def _inputs(inputs):
    return {k: v if type(v).__name__ == "module" else copy.deepcopy(v)
            for k, v in inputs.items()}


@pytest.mark.parametrize("name", list(CELLS))
def test_the_cell_compiles_and_ends_as_the_plain_cell(shell, name):
    cell, inputs, outputs = CELLS[name]
    plain = {"np": np, "math": math, **_inputs(inputs)}
    exec(cell, plain)
    for _ in range(2):
        shell.user_ns.update({"np": np, "math": math, **_inputs(inputs)})
        shell.run_cell_magic("psc_jit", "--quiet --no-compare", cell)
        report = psc_jit.last_report()
        assert report.compiled, report.fallback_reason
        problems = [f"{o}: {_same(plain[o], shell.user_ns[o])}" for o in outputs
                    if _same(plain[o], shell.user_ns[o])]
        assert not problems, problems
