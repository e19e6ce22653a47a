"""Write docs/coverage.md: every NumPy function, ufunc and array method psc_jit compiles, the
primitives it lowers to, and the dtypes the tests compare against NumPy.

    python docs/make_coverage.py           # rewrite docs/coverage.md
    python docs/make_coverage.py --check   # exit 1 when docs/coverage.md is stale

The primitives are found by tracing one small example per entry (the `EXAMPLES` table below,
plus one example per ufunc and per method made from the entry itself); the dtypes come from
the plan of tests/core/numpy/test_numpy_api.py (`dtypes_compared()`: the runs where NumPy accepts a
case's inputs, which are the ones the tests compare).
"""
from __future__ import annotations

import argparse
import importlib.util
import sys
import warnings
from pathlib import Path
from typing import Callable

import numpy as np

from psc_jit.core import jit
from psc_jit.core.ir import subgraphs
from psc_jit.core.numpy.base import NUMPY_FUNCTIONS, numpy_name
from psc_jit.core.numpy.ufuncs import SPECIAL_UFUNCS, UFUNC_PRIMITIVES
from psc_jit.core import TraceError
from psc_jit.core.primitives import PRIMITIVES
from psc_jit.core.tracing import Tracer

ROOT = Path(__file__).resolve().parent.parent
OUTPUT = ROOT / "docs" / "coverage.md"
TESTS = ROOT / "tests" / "core" / "numpy" / "test_numpy_api.py"

# Every example takes the same operands: x f64[3,4], y f64[4], v f64[5], i i64[2], b bool[3,4].
X, Y, V = np.arange(12.0).reshape(3, 4), np.arange(4.0), np.arange(5.0)
I, B = np.array([2, 0]), np.arange(12).reshape(3, 4) % 3 == 0
OPERANDS = (X, Y, V, I, B)

EXAMPLES: dict[Callable, Callable] = {
    np.where: lambda x, y, v, i, b: np.where(b, x, y),
    np.clip: lambda x, y, v, i, b: np.clip(x, 1, 6),
    np.matmul: lambda x, y, v, i, b: x @ y,
    np.dot: lambda x, y, v, i, b: np.dot(x, y),
    np.vdot: lambda x, y, v, i, b: np.vdot(y, y),
    np.inner: lambda x, y, v, i, b: np.inner(x, y),
    np.outer: lambda x, y, v, i, b: np.outer(y, v),
    np.polyfit: lambda x, y, v, i, b: np.polyfit(y, y * 2 + 1, 1),
    np.unravel_index: lambda x, y, v, i, b: np.unravel_index(i, (2, 3)),
    np.ravel_multi_index: lambda x, y, v, i, b: np.ravel_multi_index((i, i), (4, 3)),
    np.isin: lambda x, y, v, i, b: np.isin(x, v),
    np.rot90: lambda x, y, v, i, b: np.rot90(x),
    np.dstack: lambda x, y, v, i, b: np.dstack([x, b]),
    np.lib.stride_tricks.sliding_window_view:
        lambda x, y, v, i, b: np.lib.stride_tricks.sliding_window_view(v, 3),
    np.fill_diagonal: lambda x, y, v, i, b: np.fill_diagonal(x, v),
    np.convolve: lambda x, y, v, i, b: np.convolve(v, y),
    np.correlate: lambda x, y, v, i, b: np.correlate(v, y, "same"),
    np.polyval: lambda x, y, v, i, b: np.polyval(y, v),
    np.polyder: lambda x, y, v, i, b: np.polyder(v, 2),
    np.polyint: lambda x, y, v, i, b: np.polyint(v, k=y[0]),
    np.vander: lambda x, y, v, i, b: np.vander(y, 3),
    np.gradient: lambda x, y, v, i, b: np.gradient(x, 2.0, y, edge_order=2),
    np.trapezoid: lambda x, y, v, i, b: np.trapezoid(x, np.sort(y)),
    np.ediff1d: lambda x, y, v, i, b: np.ediff1d(x, to_begin=y[0]),
    np.unwrap: lambda x, y, v, i, b: np.unwrap(x * 2.5, axis=0),
    np.sinc: lambda x, y, v, i, b: np.sinc(x / 4),
    np.geomspace: lambda x, y, v, i, b: np.geomspace(1, v[-1] + 1, 5),
    np.digitize: lambda x, y, v, i, b: np.digitize(x, np.sort(y)),
    np.tensordot: lambda x, y, v, i, b: np.tensordot(x, x, axes=([1], [1])),
    np.einsum: lambda x, y, v, i, b: np.einsum("ij,kj->ik", x, x),
    np.kron: lambda x, y, v, i, b: np.kron(x, y),
    np.cross: lambda x, y, v, i, b: np.cross(x[:, :3], y[:3]),
    np.reshape: lambda x, y, v, i, b: np.reshape(x, (4, 3)),
    np.swapaxes: lambda x, y, v, i, b: np.swapaxes(x, 0, 1),
    np.moveaxis: lambda x, y, v, i, b: np.moveaxis(x, 0, 1),
    np.expand_dims: lambda x, y, v, i, b: np.expand_dims(x, 0),
    np.broadcast_to: lambda x, y, v, i, b: np.broadcast_to(y, (3, 4)),
    np.concatenate: lambda x, y, v, i, b: np.concatenate([x, x]),
    np.stack: lambda x, y, v, i, b: np.stack([x, x]),
    np.hstack: lambda x, y, v, i, b: np.hstack([x, x]),
    np.vstack: lambda x, y, v, i, b: np.vstack([x, y]),
    np.column_stack: lambda x, y, v, i, b: np.column_stack([x, x]),
    np.full_like: lambda x, y, v, i, b: np.full_like(x, 2.0),
    np.split: lambda x, y, v, i, b: np.split(x, 2, axis=1),
    np.array_split: lambda x, y, v, i, b: np.array_split(x, 3, axis=1),
    np.hsplit: lambda x, y, v, i, b: np.hsplit(x, 2),
    np.vsplit: lambda x, y, v, i, b: np.vsplit(x, [1]),
    np.dsplit: lambda x, y, v, i, b: np.dsplit(x[..., None], 1),
    np.tile: lambda x, y, v, i, b: np.tile(x, 2),
    np.repeat: lambda x, y, v, i, b: np.repeat(x, 2, axis=0),
    np.roll: lambda x, y, v, i, b: np.roll(x, 1, axis=1),
    np.pad: lambda x, y, v, i, b: (np.pad(x, 1), np.pad(x, 2, mode="reflect")),
    np.append: lambda x, y, v, i, b: np.append(x, y),
    np.take: lambda x, y, v, i, b: np.take(x, i, axis=1),
    np.take_along_axis: lambda x, y, v, i, b: np.take_along_axis(x, np.argsort(x, 1), 1),
    np.select: lambda x, y, v, i, b: np.select([b, x > 5], [x, y], 0.0),
    np.searchsorted: lambda x, y, v, i, b: np.searchsorted(v, y),
    np.quantile: lambda x, y, v, i, b: np.quantile(x, 0.3, axis=0),
    np.percentile: lambda x, y, v, i, b: np.percentile(x, 30, axis=0),
    np.average: lambda x, y, v, i, b: np.average(x, axis=1, weights=y),
    np.nansum: lambda x, y, v, i, b: np.nansum(np.where(b, np.nan, x), axis=0),
    np.nanprod: lambda x, y, v, i, b: np.nanprod(np.where(b, np.nan, x), axis=1),
    np.nanmax: lambda x, y, v, i, b: np.nanmax(np.where(b, np.nan, x), axis=1),
    np.nanmin: lambda x, y, v, i, b: np.nanmin(np.where(b, np.nan, x), axis=0),
    np.nanargmax: lambda x, y, v, i, b: np.nanargmax(np.where(x > 8, np.nan, x), axis=1),
    np.nanargmin: lambda x, y, v, i, b: np.nanargmin(np.where(b, np.nan, x)),
    np.nanmean: lambda x, y, v, i, b: np.nanmean(np.where(b, np.nan, x), axis=0),
    np.nanvar: lambda x, y, v, i, b: np.nanvar(np.where(b, np.nan, x), axis=1, ddof=1),
    np.nanstd: lambda x, y, v, i, b: np.nanstd(np.where(b, np.nan, x), axis=0),
    np.nancumsum: lambda x, y, v, i, b: np.nancumsum(np.where(b, np.nan, x), axis=1),
    np.nancumprod: lambda x, y, v, i, b: np.nancumprod(np.where(b, np.nan, x), axis=0),
    np.nanmedian: lambda x, y, v, i, b: np.nanmedian(np.where(b, np.nan, x), axis=1),
    np.nanquantile: lambda x, y, v, i, b: np.nanquantile(np.where(b, np.nan, x), 0.3, axis=0),
    np.nanpercentile: lambda x, y, v, i, b: np.nanpercentile(np.where(b, np.nan, x), [25, 75],
                                                             axis=1),
    np.meshgrid: lambda x, y, v, i, b: np.meshgrid(y, v),
    np.ix_: lambda x, y, v, i, b: x[np.ix_(i, i)],
    np.broadcast_arrays: lambda x, y, v, i, b: np.broadcast_arrays(x, y),
    np.isclose: lambda x, y, v, i, b: np.isclose(x, y),
    np.allclose: lambda x, y, v, i, b: np.allclose(x, y),
    np.array_equal: lambda x, y, v, i, b: np.array_equal(x, x + 0),
    np.array_equiv: lambda x, y, v, i, b: np.array_equiv(x, y),
    np.result_type: lambda x, y, v, i, b: np.result_type(x, i),
    np.linspace: lambda x, y, v, i, b: np.linspace(0, v[-1], 5),
    np.logspace: lambda x, y, v, i, b: np.logspace(0, v[-1], 5),
    np.copyto: lambda x, y, v, i, b: np.copyto(x, y, where=b),
    np.full: lambda x, y, v, i, b: np.full((2, 3), v[0], like=v),
    np.fromfunction: lambda x, y, v, i, b: np.fromfunction(lambda r, c: r * v[0] + c, (2, 3),
                                                           like=v),
    np.diag: lambda x, y, v, i, b: (np.diag(y), np.diag(x)),
    np.trace: lambda x, y, v, i, b: np.trace(x),
    np.size: lambda x, y, v, i, b: np.size(x),
    np.astype: lambda x, y, v, i, b: np.astype(x, np.float32),
    np.cumulative_sum: lambda x, y, v, i, b: np.cumulative_sum(x, axis=1, include_initial=True),
    np.cumulative_prod: lambda x, y, v, i, b: np.cumulative_prod(v),
}
_SQUARE = {  # on x[:, :3] @ x[:, :3].T + 30 I: square, symmetric, positive definite
    np.linalg.cholesky: np.linalg.cholesky, np.linalg.inv: np.linalg.inv,
    np.linalg.det: np.linalg.det, np.linalg.slogdet: np.linalg.slogdet,
    np.linalg.eigh: np.linalg.eigh, np.linalg.eigvalsh: np.linalg.eigvalsh,
    np.linalg.solve: lambda s: np.linalg.solve(s, s[0]),
    np.linalg.matrix_power: lambda s: np.linalg.matrix_power(s, 5),
    np.linalg.tensorsolve: lambda s: np.linalg.tensorsolve(s, s[0]),
    np.linalg.tensorinv: lambda s: np.linalg.tensorinv(s, ind=1),
    np.linalg.cond: np.linalg.cond, np.linalg.trace: np.linalg.trace,
}
for _f, _use in _SQUARE.items():
    EXAMPLES[_f] = lambda x, y, v, i, b, u=_use: u(x[:, :3] @ x[:, :3].T + 30 * np.eye(3))
EXAMPLES.update({
    np.linalg.lstsq: lambda x, y, v, i, b: np.linalg.lstsq(x.T, y, rcond=None),
    np.linalg.multi_dot: lambda x, y, v, i, b: np.linalg.multi_dot([y, x.T, x, y]),
    np.linalg.outer: lambda x, y, v, i, b: np.linalg.outer(y, v),
    np.linalg.cross: lambda x, y, v, i, b: np.linalg.cross(x[:, :3], y[:3]),
    np.linalg.vecdot: lambda x, y, v, i, b: np.linalg.vecdot(x, y),
    np.linalg.matmul: lambda x, y, v, i, b: np.linalg.matmul(x, y),
    np.linalg.tensordot: lambda x, y, v, i, b: np.linalg.tensordot(x, y, axes=1),
    np.cov: lambda x, y, v, i, b: np.cov(x),
    np.corrcoef: lambda x, y, v, i, b: np.corrcoef(x),
    np.interp: lambda x, y, v, i, b: np.interp(v, y, y * 2),
    np.histogram: lambda x, y, v, i, b: np.histogram(v, bins=3, range=(0, 4)),
    np.histogram_bin_edges: lambda x, y, v, i, b: np.histogram_bin_edges(v, bins=3),
    np.bincount: lambda x, y, v, i, b: np.bincount(i, minlength=3),
})
for _f in (np.asarray, np.asanyarray, np.ascontiguousarray, np.array):
    EXAMPLES[_f] = lambda x, y, v, i, b, f=_f: f(x, like=x)
for _f in (np.zeros, np.ones, np.empty, np.eye, np.identity, np.tri, np.arange):
    EXAMPLES[_f] = lambda x, y, v, i, b, f=_f: f(3, like=x)


# -- constructs: code that is not one NumPy call ------------------------------------------------
# Each is traced when the document is built, so the table only lists what compiles.

def _scratch_array(x, y, v, i, b):
    out = np.empty_like(v)
    out[0] = v[0]
    for k in range(1, v.shape[0]):
        out[k] = out[k - 1] * 0.5 + v[k]
    return out


def _zeros_written(x, y, v, i, b):
    z = np.zeros((3, 5))
    z[:, 1:] = v[1:] - v[:-1]
    return z


def _out_argument(x, y, v, i, b):
    tmp = np.empty(4)
    np.add(y, 1.0, out=tmp)
    total = np.empty(())
    np.sum(x, out=total)
    return tmp, total


def _prefix_slices(x, y, v, i, b):
    out = np.zeros_like(v)
    for k in range(v.shape[0]):
        out[k] = (v[k] - v[:k] @ out[:k]) / (k + 1)
    return out


def _rank_one_updates(x, y, v, i, b):
    a = np.outer(v, v) + np.eye(5)
    for k in range(4):
        a[k + 1:, k] /= a[k, k]
        a[k + 1:, k + 1:] -= np.outer(a[k + 1:, k], a[k, k + 1:])
    return a


def _fixed_window(x, y, v, i, b):
    out = np.zeros(3)
    for k in range(3):
        out[k] = v[k:k + 3].sum()
    return out


def _shape_setter(x, y, v, i, b):
    z = x * 2
    z.shape = (4, 3)
    return z


CONSTRUCTS = [
    ("an array made in the code, filled by a loop", "`out = np.empty_like(x); out[0] = ...; "
     "for i in range(1, n): out[i] = ...`", _scratch_array),
    ("np.zeros/ones/full/eye/arange/array/... written with traced values",
     "`y = np.zeros((n, m)); y[:, 1:] = x[1:] - x[:-1]`", _zeros_written),
    ("out= for ufuncs, reductions, matmul and dot", "`np.add(a, b, out=tmp)`, "
     "`np.sum(x, axis=0, out=s)`", _out_argument),
    ("slices whose length depends on the loop index", "`x[i] = (b[i] - L[i, :i] @ x[:i]) / "
     "L[i, i]`", _prefix_slices),
    ("in-place updates of such slices", "`A[k + 1:, k + 1:] -= np.outer(A[k + 1:, k], "
     "A[k, k + 1:])`", _rank_one_updates),
    ("slices of fixed length at the loop index", "`x[i:i + 3]`", _fixed_window),
    ("in-place reshape", "`a.shape = (4, 3)`", _shape_setter),
]


def _default_example(fn):
    return lambda x, y, v, i, b: fn(x)


def _ufunc_example(ufunc: np.ufunc):
    """The ufunc on float operands, or on integer or bool ones where floats have no loop."""
    for operands in ((X, Y), (I, I), (B, B)):
        try:
            with warnings.catch_warnings(), np.errstate(all="ignore"):
                warnings.simplefilter("ignore")
                ufunc(*operands[:ufunc.nin])
        except TypeError:
            continue
        which = {id(X): "x", id(Y): "y", id(I): "i", id(B): "b"}
        names = [which[id(o)] for o in operands[:ufunc.nin]]
        return lambda x, y, v, i, b: ufunc(*[dict(x=x, y=y, i=i, b=b)[n] for n in names])
    raise ValueError(f"no example operands for np.{ufunc.__name__}")


METHOD_EXAMPLES = {
    "reshape": lambda x: x.reshape(4, 3), "transpose": lambda x: x.transpose(1, 0),
    "swapaxes": lambda x: x.swapaxes(0, 1), "astype": lambda x: x.astype(np.float32),
    "fill": lambda x: x.fill(1.0), "clip": lambda x: x.clip(0, 1), "dot": lambda x: x.dot(x.T),
    "repeat": lambda x: x.repeat(2), "take": lambda x: x.take([0, 1]),
    "searchsorted": lambda x: x[0].searchsorted(x[1]), "sort": lambda x: x.sort(axis=0),
    "item": lambda x: x.item(5), "tolist": lambda x: x.tolist(),
    "view": lambda x: x.view(np.int64) + 1,
}


def ufuncs() -> list[np.ufunc]:
    found = set(UFUNC_PRIMITIVES) | {u for u in SPECIAL_UFUNCS if isinstance(u, np.ufunc)}
    return sorted(found | {np.matmul, np.divmod, np.modf}, key=lambda u: u.__name__)


def functions() -> list[Callable]:
    return sorted((f for f in NUMPY_FUNCTIONS if not isinstance(f, np.ufunc)
                   and not hasattr(NUMPY_FUNCTIONS[f], "refused")), key=numpy_name)


def refused() -> list[Callable]:
    return sorted((f for f in NUMPY_FUNCTIONS if hasattr(NUMPY_FUNCTIONS[f], "refused")),
                  key=numpy_name)


def methods() -> list[str]:
    """The public ndarray attributes a Tracer has (methods and properties)."""
    return sorted(n for n in dir(np.ndarray) if not n.startswith("_") and hasattr(Tracer, n))


def examples() -> list[tuple[str, Callable]]:
    """(name, example) for every NumPy function and ufunc in the table: each example takes
    the operands (x, y, v, i, b) of `OPERANDS`."""
    return ([(numpy_name(f), EXAMPLES.get(f, _default_example(f))) for f in functions()]
            + [(f"np.{u.__name__}", _ufunc_example(u)) for u in ufuncs()])


def primitives_of(example, operands=OPERANDS) -> list[str]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        graph = jit(example).trace(*[np.copy(o) for o in operands]).graph
    return sorted(_names(graph))


def _names(graph) -> set[str]:
    found = set()
    for eqn in graph.eqns:
        found.add(eqn.prim.name)
        for sub in subgraphs(eqn):
            found |= _names(sub)
    return found


def method_primitives(name: str) -> list[str]:
    example = METHOD_EXAMPLES.get(name)
    if example is None:
        attr = getattr(Tracer, name)
        example = (lambda x: getattr(x, name)) if isinstance(attr, property) else (
            lambda x: getattr(x, name)())
    return primitives_of(example, (np.copy(X),))


# -- dtypes tested ----------------------------------------------------------------------------

_SHORT = {"bool": "bool", "int8": "i8", "int16": "i16", "int32": "i32", "int64": "i64",
          "uint8": "u8", "uint16": "u16", "uint32": "u32", "uint64": "u64", "float16": "f16",
          "float32": "f32", "float64": "f64", "complex64": "c64", "complex128": "c128"}
_GROUPS = [("int8–64", ("int8", "int16", "int32", "int64")),
           ("uint8–64", ("uint8", "uint16", "uint32", "uint64")),
           ("float16–64", ("float16", "float32", "float64")),
           ("complex64–128", ("complex64", "complex128"))]


def load_tests():
    spec = importlib.util.spec_from_file_location("test_numpy_api", TESTS)
    module = importlib.util.module_from_spec(spec)
    sys.modules["test_numpy_api"] = module
    spec.loader.exec_module(module)
    return module


def dtype_text(names: set) -> str:
    if not names:
        return "—"
    parts = []
    remaining = set(names)
    if "bool" in remaining:
        parts.append("bool")
        remaining.discard("bool")
    for label, group in _GROUPS:
        if set(group) <= remaining:
            parts.append(label)
            remaining -= set(group)
        else:
            parts += [_SHORT[n] for n in group if n in remaining]
            remaining -= set(group)
    return ", ".join(parts)


# -- the document -----------------------------------------------------------------------------

def build() -> str:
    tests = load_tests()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        dtypes = tests.dtypes_compared()
    function_rows = [(numpy_name(f), primitives_of(EXAMPLES.get(f, _default_example(f))),
                      dtype_text(dtypes.get(f, set()))) for f in functions()]
    ufunc_rows = [(f"np.{u.__name__}", primitives_of(_ufunc_example(u)),
                   dtype_text(dtypes.get(u, set()))) for u in ufuncs()]
    method_rows, refused_methods = [], []
    for m in methods():
        try:
            primitives = method_primitives(m)
        except TraceError as err:     # a refusal (.item(), .tolist(), ...): listed as such
            refused_methods.append((f"ndarray.{m}", err.message.replace(
                " is not supported by psc_jit", "")))
            continue
        method_rows.append((f"ndarray.{m}", primitives, dtype_text(
            dtypes.get(f".{m}", set()) or _method_dtypes(m, dtypes))))
    used = {p for rows in (function_rows, ufunc_rows, method_rows) for _, ps, _ in rows
            for p in ps}
    refusals = [(numpy_name(f), NUMPY_FUNCTIONS[f].refused) for f in refused()]
    construct_rows = [(what, code, primitives_of(example)) for what, code, example in CONSTRUCTS]
    return _render(function_rows, ufunc_rows, method_rows, refusals + refused_methods, used,
                   len(PRIMITIVES)) + _render_constructs(construct_rows)


def _render_constructs(rows) -> str:
    lines = ["## Constructs", "",
             "Code that is not one NumPy call, compiled with NumPy's meaning (each is traced on",
             "an example when this file is generated; loops stay one XLA loop whatever their",
             "trip count).", "", "| construct | example | lowers to |", "|---|---|---|"]
    lines += [f"| {what} | {code} | {', '.join(ps)} |" for what, code, ps in rows]
    lines.append("")
    return "\n".join(lines)


def _method_dtypes(name: str, dtypes: dict) -> set:
    fn = getattr(np, name, None)
    return dtypes.get(fn, set()) if fn is not None else set()


def _render(function_rows, ufunc_rows, method_rows, refusals, used, n_primitives) -> str:
    lines = [
        "# NumPy coverage",
        "",
        "Generated by `docs/make_coverage.py` (do not edit; `--check` tells when it is stale).",
        "Each entry is traced on a small example; *lowers to* lists the primitives of the",
        "traced graph. *Dtypes tested* are those for which tests/core/numpy/test_numpy_api.py",
        "compares the compiled result with NumPy's (dtype, shape, type and values).",
        "Operators (`+`, `<`, `@`, `x[i]`, `x += y`, ...) go through the ufuncs and methods below.",
        "Anything not listed fails at trace time with an error naming the function.",
        "",
        f"- supported NumPy functions: **{len(function_rows)}**",
        f"- supported ufuncs: **{len(ufunc_rows)}**",
        f"- supported ndarray methods and properties: **{len(method_rows)}**",
        f"- primitives they lower to: **{len(used)}** (of {n_primitives} registered)",
        "",
    ]
    for title, rows in (("Functions", function_rows), ("Ufuncs", ufunc_rows),
                        ("ndarray methods and properties", method_rows)):
        lines += [f"## {title}", "", "| NumPy | lowers to | dtypes tested |", "|---|---|---|"]
        lines += [f"| `{name}` | {', '.join(ps) or '(no primitive: static or a constant)'} "
                  f"| {dts} |" for name, ps, dts in rows]
        lines.append("")
    lines += ["## Refused with a reason", "",
              "These fail at trace time with the reason below (a data-dependent result shape or",
              "dtype, or a value needed in Python), rather than with the generic message.", ""]
    lines += [f"- `{name}`: {reason}" for name, reason in refusals]
    lines.append("")
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true",
                        help="exit 1 if docs/coverage.md differs from what would be written")
    args = parser.parse_args(argv)
    text = build()
    if args.check:
        current = OUTPUT.read_text() if OUTPUT.exists() else ""
        if current != text:
            print(f"{OUTPUT.relative_to(ROOT)} is stale: run python docs/make_coverage.py",
                  file=sys.stderr)
            return 1
        return 0
    OUTPUT.write_text(text)
    print(f"wrote {OUTPUT.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
