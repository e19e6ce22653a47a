"""The corpus's parts: a `Cell`, an `Entry` (a setup and the cells run after it), the helpers
that write them (`entry`, `twice`, `raising`), and the tags read from a cell's source (TAGS).
The corpus itself, and how it is run, is in corpus_entries.py."""
from __future__ import annotations

import ast
import re
import textwrap
from dataclasses import dataclass

# The tags a cell can get, and what each means.
TAGS = {
    "print": "calls print()",
    "format": "formats numbers into text (f-string, str.format, %)",
    "display": "calls IPython's display()",
    "random": "draws random numbers or seeds a generator",
    "helper": "defines a function or calls one an earlier cell defined",
    "data-dependent": "a result whose shape depends on the data (x[x > 0], np.unique, ...)",
    "loop": "a for or while loop, or a comprehension",
    "inplace": "updates an array in place (+=, a[i] = ..., out=)",
    "reduction": "reduces an array (sum, mean, max, argmax, cumsum, ...)",
    "linalg": "linear algebra (@, dot, np.linalg, einsum, ...)",
    "error": "raises (the user's own error or NumPy's)",
    "magic": "holds an IPython line magic (%timeit, %time)",
    "star-import": "from numpy import *",
    "io": "reads or writes a file",
    "clock": "reads a clock",
    "class": "defines a class",
    "depends": "reads a name an earlier cell (not the setup) assigned",
    "rerun": "runs twice in a row",
}

RANDOM_CALLS = frozenset(
    "rand randn randint random random_sample normal uniform choice shuffle permutation seed "
    "standard_normal integers poisson binomial exponential multivariate_normal default_rng "
    "RandomState beta gamma lognormal".split())
DATA_DEPENDENT_CALLS = frozenset(
    "unique nonzero flatnonzero argwhere bincount intersect1d setdiff1d union1d setxor1d "
    "extract compress trim_zeros".split())
REDUCTION_CALLS = frozenset(
    "sum mean std var min max prod argmax argmin cumsum cumprod median percentile quantile "
    "any all nanmean nanstd nansum ptp average count_nonzero accumulate reduceat".split())
LINALG_CALLS = frozenset(
    "dot matmul einsum outer inner kron tensordot trace polyfit lstsq".split())
INPLACE_CALLS = frozenset("sort fill shuffle put copyto at".split())
IO_CALLS = frozenset("savetxt loadtxt genfromtxt save load savez tofile fromfile open".split())
CLOCK_CALLS = frozenset("time perf_counter monotonic now".split())
MASK_CALLS = frozenset("isnan isfinite isinf isin logical_and logical_or logical_not".split())
LINE_MAGIC = re.compile(r"^(?P<indent>[ \t]*)%(?!%)(?P<name>\w+)(?P<rest>.*)$", re.M)


@dataclass(frozen=True)
class Cell:
    source: str
    runs: int = 1           # 2: run twice in a row
    raises: bool = False    # the cell raises when run plain (checked by the harness)


@dataclass(frozen=True)
class Entry:
    name: str
    setup: str
    cells: tuple[Cell, ...]
    varies: tuple[str, ...] = ()    # names whose values differ from run to run (clocks)

    def tags(self, index: int) -> frozenset[str]:
        """The tags of cell `index`, read from its source and the cells before it."""
        cell = self.cells[index]
        tree = ast.parse(python_of(cell.source))
        found = set(source_tags(tree))
        earlier = [ast.parse(python_of(c.source)) for c in self.cells[:index]]
        helpers = defined_functions([ast.parse(self.setup), *earlier])
        if helpers & called_names(tree):
            found.add("helper")
        if assigned_names(earlier) & read_names(tree):
            found.add("depends")
        if LINE_MAGIC.search(cell.source):
            found.add("magic")
        if cell.runs > 1:
            found.add("rerun")
        if cell.raises:
            found.add("error")
        return frozenset(found)

    def text(self) -> str:
        """The entry as a user would paste it, cell by cell, with the magic on each cell."""
        parts = [f"# setup\n{self.setup}"]
        for cell in self.cells:
            parts += [f"%%psc_jit\n{cell.source}"] * cell.runs
        return "\n".join(parts)


def python_of(source: str) -> str:
    """The cell with each line magic made a call, as IPython turns it into Python."""
    return LINE_MAGIC.sub(lambda m: f"{m['indent']}line_magic({m['name']!r}, {m['rest']!r})",
                          source)


def source_tags(tree: ast.AST):
    """The tags a cell's own syntax shows (see TAGS)."""
    masks = mask_names(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            yield from call_tags(node)
        elif isinstance(node, (ast.For, ast.While, ast.comprehension)):
            yield "loop"
        elif isinstance(node, (ast.FunctionDef, ast.Lambda)):
            yield "helper"
        elif isinstance(node, ast.ClassDef):
            yield "class"
        elif isinstance(node, ast.JoinedStr):
            yield "format"
        elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.MatMult):
            yield "linalg"
        elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod) and \
                isinstance(node.left, ast.Constant) and isinstance(node.left.value, str):
            yield "format"
        elif isinstance(node, ast.AugAssign) or (isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Subscript) for t in node.targets)):
            yield "inplace"
        elif isinstance(node, ast.Subscript) and is_mask(node.slice, masks):
            yield "data-dependent"
        elif isinstance(node, ast.ImportFrom) and any(a.name == "*" for a in node.names):
            yield "star-import"


def call_tags(call: ast.Call):
    chain = attribute_chain(call.func)
    name = chain[-1] if chain else ""
    if name == "print":
        yield "print"
    if name == "display":
        yield "display"
    if name == "format" and len(chain) > 1:
        yield "format"
    if name in RANDOM_CALLS and ("random" in chain[:-1] or
                                 (len(chain) > 1 and chain[0] not in ("np", "numpy", "math"))):
        yield "random"
    if name in DATA_DEPENDENT_CALLS or (name == "where" and len(call.args) == 1):
        yield "data-dependent"
    if name in REDUCTION_CALLS:
        yield "reduction"
    if name in LINALG_CALLS or "linalg" in chain:
        yield "linalg"
    if name in INPLACE_CALLS and len(chain) > 1 or any(k.arg == "out" for k in call.keywords):
        yield "inplace"
    if name in IO_CALLS:
        yield "io"
    if name in CLOCK_CALLS and chain[0] in ("time", "datetime"):
        yield "clock"


def attribute_chain(node: ast.AST) -> tuple[str, ...]:
    """`np.random.rand` -> ("np", "random", "rand"); () for anything but names and
    attributes (a call's result, a subscript)."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        return (node.id, *reversed(parts))
    return tuple(reversed(parts))


def mask_names(tree: ast.AST) -> set[str]:
    """Names the cell binds to a boolean mask (a comparison, or a mask's combination)."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and is_mask(node.value, names):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
    return names


def is_mask(node: ast.AST, masks: set[str]) -> bool:
    if isinstance(node, ast.Compare):
        return True
    if isinstance(node, ast.Name):
        return node.id in masks
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.Invert, ast.Not)):
        return is_mask(node.operand, masks)
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.BitAnd, ast.BitOr)):
        return is_mask(node.left, masks) or is_mask(node.right, masks)
    if isinstance(node, ast.Call):
        chain = attribute_chain(node.func)
        return bool(chain) and chain[-1] in MASK_CALLS
    return False


def defined_functions(trees) -> set[str]:
    return {node.name for tree in trees for node in ast.walk(tree)
            if isinstance(node, ast.FunctionDef)} | \
        {t.id for tree in trees for node in ast.walk(tree) if isinstance(node, ast.Assign)
         and isinstance(node.value, ast.Lambda) for t in node.targets if isinstance(t, ast.Name)}


def called_names(tree: ast.AST) -> set[str]:
    return {node.func.id for node in ast.walk(tree)
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)}


def assigned_names(trees) -> set[str]:
    return {node.id for tree in trees for node in ast.walk(tree)
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store)}


def read_names(tree: ast.AST) -> set[str]:
    return {node.id for node in ast.walk(tree)
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load)}


def entry(name: str, setup: str, *cells: str | Cell, varies: tuple[str, ...] = ()) -> Entry:
    made = tuple(c if isinstance(c, Cell) else Cell(c) for c in cells)
    return Entry(name, textwrap.dedent(setup).strip() + "\n",
                 tuple(Cell(textwrap.dedent(c.source).strip() + "\n", c.runs, c.raises)
                       for c in made), varies)


def twice(source: str) -> Cell:
    return Cell(source, runs=2)


def raising(source: str) -> Cell:
    return Cell(source, raises=True)


def cells_of(entries) -> list[tuple[Entry, int]]:
    """Every cell of the corpus, as (entry, index)."""
    return [(e, i) for e in entries for i in range(len(e.cells))]

