"""The oracle of the cell fuzzer: run a `Scenario` plain and through `%%psc_jit` in a real
IPython shell, and say where they part.

Both sides start from the same setup; after each run of the cell (and after each change
between runs) the two namespaces must hold the same values, dtypes and types, the same names
(none missing, none extra), arrays that alias in one alias in the other, and the same
exception (type and message) or none. A fallback is fine when it gives its reason.
"""
from __future__ import annotations

import ast
import warnings
from dataclasses import dataclass, field

import numpy as np


MISSING = "<missing>"


@dataclass
class Outcome:
    """What one scenario did: `failure` is None, or (category, detail)."""
    runs: int = 0
    fallbacks: list[str] = field(default_factory=list)
    failure: tuple[str, str] | None = None


def run_source(source: str, ns: dict):
    """Exec a cell as IPython would (its last expression is its value): (value, error)."""
    tree = ast.parse(source)
    last = None
    if tree.body and isinstance(tree.body[-1], ast.Expr):
        last = ast.Expression(tree.body.pop().value)
    try:
        exec(compile(tree, "<cell>", "exec"), ns)
        value = eval(compile(last, "<cell>", "eval"), ns) if last is not None else None
    except Exception as err:  # noqa: BLE001 (the cell's own error is a result to compare)
        return None, err
    return value, None


def describe_error(err) -> str | None:
    return None if err is None else f"{type(err).__name__}: {err}"


def tolerance(value) -> float:
    dtype = getattr(value, "dtype", np.dtype(type(value)) if isinstance(value, float) else None)
    if dtype is None or dtype.kind not in "fc":
        return 0.0
    return 1e-5 if dtype.itemsize <= 4 or dtype.kind == "c" and dtype.itemsize <= 8 else 1e-12


def difference(want, got, where: str) -> str | None:
    """Why `got` is not `want` (None when they agree)."""
    if callable(want) and callable(got):
        return None     # functions and classes: defined by the same code on both sides
    if type(want).__qualname__ != type(got).__qualname__ and \
            {type(want), type(got)} != {float, np.float64}:     # np.float64 is a float
        return f"{where}: type {type(want).__name__} != {type(got).__name__} ({want!r} vs {got!r})"
    if isinstance(want, (list, tuple)):
        if len(want) != len(got):
            return f"{where}: length {len(want)} != {len(got)}"
        return next((d for i, (w, g) in enumerate(zip(want, got, strict=True))
                     if (d := difference(w, g, f"{where}[{i}]"))), None)
    if isinstance(want, dict):
        if set(want) != set(got):
            return f"{where}: keys {sorted(want, key=str)} != {sorted(got, key=str)}"
        return next((d for k in want if (d := difference(want[k], got[k], f"{where}[{k!r}]"))),
                    None)
    if isinstance(want, (np.ndarray, np.generic)):
        if want.dtype != got.dtype or np.shape(want) != np.shape(got):
            return f"{where}: {want.dtype}{list(np.shape(want))} != {got.dtype}{list(np.shape(got))}"
    if isinstance(want, (np.ndarray, np.generic, int, float, complex)):
        return _value_difference(want, got, where)
    if hasattr(want, "__dict__"):
        return difference(vars(want), vars(got), f"{where}.__dict__")
    return None


def _value_difference(want, got, where: str) -> str | None:
    tol = tolerance(want)
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        same = np.allclose(want, got, rtol=tol, atol=tol, equal_nan=True) if tol else \
            np.array_equal(want, got)
        if same and tol and not np.array_equal(np.signbit(want) & (want == 0),
                                               np.signbit(got) & (got == 0)):
            return f"{where}: the sign of a zero: {want!r} != {got!r}"
    return None if same else f"{where}: {want!r} != {got!r}"


def namespace_difference(names, plain: dict, magic: dict) -> str | None:
    for name in sorted(names):
        want, got = plain.get(name, MISSING), magic.get(name, MISSING)
        if (want is MISSING) != (got is MISSING):
            return f"{name}: {'unbound' if want is MISSING else 'bound'} plain, " \
                   f"{'unbound' if got is MISSING else 'bound'} compiled"
        if want is not MISSING and (d := difference(want, got, name)):
            return d
    return alias_difference(names, plain, magic)


def alias_difference(names, plain: dict, magic: dict) -> str | None:
    """Arrays that share memory plain share it compiled (an update through one is seen
    through the other)."""
    arrays = sorted(n for n in names if isinstance(plain.get(n), np.ndarray)
                    and isinstance(magic.get(n), np.ndarray))
    for i, x in enumerate(arrays):
        for y in arrays[i + 1:]:
            if np.shares_memory(plain[x], plain[y]) and not np.shares_memory(magic[x], magic[y]):
                return f"{x} and {y} share memory plain, not compiled"
    return None


def compare_step(step: str, names, plain: dict, magic: dict, errors) -> tuple[str, str] | None:
    want, got = (describe_error(e) for e in errors)
    if want != got:
        return "exception", f"{step}: plain {want or 'no error'}; compiled {got or 'no error'}"
    diff = namespace_difference(names, plain, magic)
    return None if diff is None else (_category(diff), f"{step}: {diff}")


def _category(diff: str) -> str:
    for words, category in (("bound", "namespace"), ("share memory", "alias"),
                            ("the sign of a zero", "signed zero")):
        if words in diff:
            return category
    return "value"
