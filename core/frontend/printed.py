"""What a print shows, computed in the region before it: the print is the host step, the
array work in its arguments is compiled.

`print("P(7) =", (rolls == 7).mean())` is a host step only because of the call to print.
Its arguments are computed at the end of the region before it, bound to names of psc_jit's
(`__psc_print0`), and the host step prints those values. Plain Python evaluates the
arguments left to right and then calls print, so the work moves without changing what runs
first, on three conditions:

- Nothing evaluated before an argument that moves can act or fail: only constants, names,
  a name's `shape`/`dtype`/`size`/`ndim`, and f-string parts formatted without a spec (the
  region reads those names first, so an unbound one fails where plain Python fails). A value
  formatted with a spec before a later argument that moves must be a number (checked when
  the region is traced): formatting anything else can fail before that argument would run.
- What moves calls nothing that must run on the host (another print, a draw, I/O).
- The printed text must be NumPy's, digit for digit: every operation behind a value that
  moves must give NumPy's bits (`exactness.py`). Otherwise the region's trace stops at the
  print's line and the print runs whole as plain Python, as it did before.
"""
from __future__ import annotations

import ast
import functools
import re
from dataclasses import dataclass

import numpy as np

from ..ir import SourceInfo
from ..tracing import Tracer, UnsupportedError, current_trace
from ..tree_util import flatten
from .cell import impure_findings
from .exactness import inexact_equation, inexact_reason, producers
from .rewrite import at_line
from .shown import shown_names, statements_of, stores_of

PREFIX = "__psc_print"
PRINTED_REFUSAL = "would not have NumPy's last digits"
_REFUSED_VALUE = re.compile(rf"the print's value (\d+) {PRINTED_REFUSAL}")
_SHAPE_ATTRIBUTES = frozenset({"shape", "dtype", "size", "ndim"})
_NEVER_MOVED = (ast.NamedExpr, ast.Await, ast.Yield, ast.YieldFrom, ast.Starred)


@dataclass(frozen=True)
class PrintHoist:
    """The arguments of one print computed before it. Each moved expression is named by its
    position in `ast.walk` order of the statement freshly parsed (f-string parts have no
    reliable columns before Python 3.12)."""
    line: int
    moved: tuple[int, ...]          # walk positions of the expressions that move
    reads: tuple[str, ...]          # names and attributes read before the last of them
    numbers: tuple[bool, ...]       # per moved expression: formatted with a spec before
    #                                 another one moves (it must be a number)

    def names(self) -> tuple[str, ...]:
        return tuple(f"{PREFIX}{k}" for k in range(len(self.moved)))

    def apply(self, stmts: list) -> list:
        """The print (`stmts`: it alone, freshly parsed) printing the values computed before."""
        by_node = dict(zip((id(n) for n in _moved_nodes(stmts[0], self.moved)), self.names(),
                           strict=True))
        stmts[0] = _ByName(by_node).visit(stmts[0])
        ast.fix_missing_locations(stmts[0])
        return stmts

    def computing(self) -> PrintedValues:
        return PrintedValues(self)


@dataclass(frozen=True)
class PrintedValues:
    """The region's side of a PrintHoist: its last statement, the print, becomes the reads
    and then `__psc_print0, ... = <the moved expressions>`."""
    hoist: PrintHoist

    def apply(self, stmts: list) -> list:
        stmt = stmts[-1]
        exprs = _moved_nodes(stmt, self.hoist.moved)
        reads = at_line([ast.Expr(ast.parse(read, mode="eval").body)
                         for read in self.hoist.reads], stmt.lineno)
        targets = ast.Tuple([ast.Name(n, ast.Store()) for n in self.hoist.names()], ast.Store())
        values = ast.Tuple(exprs, ast.Load())
        assign = ast.copy_location(ast.Assign([targets], values), stmt)
        ast.fix_missing_locations(assign)
        return stmts[:-1] + reads + [assign]


def refused_value(reason: str | None) -> int | None:
    """How many of a print's values may still move, when `reason` is the refusal of one of
    them (the values before it were found exact): the refused value's index; else None."""
    found = _REFUSED_VALUE.search(reason or "")
    return int(found.group(1)) - 1 if found else None


def print_hoist_of(stmt, filename: str, computes, limit: int | None = None
                   ) -> PrintHoist | None:
    """The PrintHoist of `print(...)` as a statement whose arguments compute something
    (`computes`: regions.py's test) under the module's conditions, or None. `limit`: move
    only the first so many (a later one was refused: `refused_value`)."""
    if not (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call)
            and isinstance(stmt.value.func, ast.Name) and stmt.value.func.id == "print"):
        return None
    findings = impure_findings(ast.Module(body=[stmt], type_ignores=[]), filename)
    if len(findings) != 1:
        return None
    call = stmt.value
    order = _argument_parts(call)
    if order is None:
        return None
    moving = [i for i, (node, _) in enumerate(order) if _moves(node, filename, computes)]
    moving = moving[:limit] if limit is not None else moving
    if not moving:
        return None
    reads, numbers = [], []
    for i, (node, spec) in enumerate(order[:moving[-1] + 1]):
        if i in moving:
            numbers.append(spec and i != moving[-1])
            continue
        read = _read(node, spec)
        if read is False:
            return None
        if read is not None:
            reads.append(read)
    if any(not _is_read_or_constant(kw.value) for kw in call.keywords):
        return None
    positions = {id(n): k for k, n in enumerate(ast.walk(stmt))}
    return PrintHoist(stmt.lineno, tuple(positions[id(order[i][0])] for i in moving),
                      tuple(dict.fromkeys(reads)), tuple(numbers))


def _argument_parts(call) -> list[tuple[ast.expr, bool]] | None:
    """The arguments in the order Python evaluates them, an f-string's formatted values one by
    one, each with whether it is formatted with a spec; None for `*args`."""
    parts = []
    for arg in call.args:
        if isinstance(arg, ast.Starred):
            return None
        if isinstance(arg, ast.JoinedStr):
            parts += [(v.value, v.format_spec is not None) for v in arg.values
                      if isinstance(v, ast.FormattedValue)]
        else:
            parts.append((arg, False))
    return parts


def _moves(node, filename, computes) -> bool:
    if not computes([ast.Expr(node)]) or any(isinstance(n, _NEVER_MOVED) for n in ast.walk(node)):
        return False
    return not impure_findings(ast.Module(body=[ast.Expr(node)], type_ignores=[]), filename)


def _read(node, spec: bool):
    """What the region reads for an argument evaluated before one that moves: its source (a
    name or a name's shape), None for a constant, False when it could act or fail."""
    if spec:
        return False
    if isinstance(node, ast.Constant):
        return None
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and \
            node.attr in _SHAPE_ATTRIBUTES:
        return ast.unparse(node)
    if isinstance(node, ast.JoinedStr) and all(isinstance(v, ast.Constant) for v in node.values):
        return None
    return False


def _is_read_or_constant(node) -> bool:
    return isinstance(node, (ast.Constant, ast.Name))


def _moved_nodes(stmt, positions: tuple[int, ...]) -> list:
    nodes = list(ast.walk(stmt))
    return [nodes[k] for k in positions]


class _ByName(ast.NodeTransformer):
    def __init__(self, by_node: dict):
        self.by_node = by_node

    def visit(self, node):
        name = self.by_node.get(id(node))
        if name is not None:
            return ast.copy_location(ast.Name(name, ast.Load()), node)
        return super().visit(node)


def checking_prints(fn, analysis):
    """The cell function of a region (`analysis`) refusing, while it is traced, a value that
    a print shows and XLA would not give with NumPy's bits:
    - a print's value the region computes (a PrintHoist's), refused at the print's line (the
      print then runs as plain Python);
    - a name the region binds that a print reads, directly or through other names
      (shown.py), refused at the line of the operation that XLA computes differently (the
      statement holding it then runs as plain Python).
    `fn` itself for a whole cell: its prints are host steps, so it is never one region."""
    if not analysis.part:
        return fn
    rewrite = analysis.part[3] if len(analysis.part) > 3 else None
    hoist = rewrite.hoist if isinstance(rewrite, PrintedValues) else None
    shown = shown_names(analysis.source, analysis.filename, analysis.line_offset)
    checked = tuple(n for n in analysis.outputs if n in shown)
    if hoist is None and not checked:
        return fn

    @functools.wraps(fn)
    def cell(*args, **kwargs):
        result = fn(*args, **kwargs)
        trace = current_trace()
        if trace is not None:
            made = producers(trace)     # (once for all the values)
            if hoist is not None:
                _check_moved(hoist, result[0], analysis, trace, made)
            for name in checked:
                _check_shown(name, result[0].get(name), analysis, trace, made)
        return result
    return cell


def _check_moved(hoist: PrintHoist, outputs: dict, analysis, trace, made: dict) -> None:
    for k, (name, number) in enumerate(zip(hoist.names(), hoist.numbers, strict=True)):
        why = _not_printable(outputs.get(name), number, trace, made)
        if why is not None:     # (the values before it are exact: they may move)
            raise UnsupportedError(f"the print's value {k + 1} {PRINTED_REFUSAL}: {why}",
                                   SourceInfo(analysis.filename, hoist.line),
                                   "it is computed as plain Python")


def _check_shown(name: str, value, analysis, trace, made: dict) -> None:
    for leaf in flatten(value)[0]:
        if not isinstance(leaf, Tracer):
            continue
        found = inexact_equation(leaf.ir_var, trace, made)
        if found is None:
            continue
        why, eqn = found
        shown = f"`{name}`" if "random" not in name else "a value"    # (see regions._stops_at)
        raise UnsupportedError(
            f"{shown} is printed later, and XLA would not give it NumPy's last digits: {why}",
            SourceInfo(analysis.filename, _line_of(eqn, name, analysis)),
            "the statement that computes it runs as plain Python")


def _line_of(eqn, name: str, analysis) -> int:
    """The line of the region where `eqn` is, else of its last statement that binds or
    updates `name`, else its first line."""
    stmts = analysis.statements()
    first, last = stmts[0].lineno, stmts[-1].end_lineno
    source = getattr(eqn, "source", None)
    if source is not None and source.file == analysis.filename and first <= source.line <= last:
        return source.line
    binding = [s.lineno for s in statements_of(stmts) if name in stores_of(s)]
    return binding[-1] if binding else first


def _not_printable(value, number: bool, trace, made: dict) -> str | None:
    if isinstance(value, Tracer):
        aval = value.aval
        if number and (aval.shape != () or aval.dtype.kind not in "iufc"):
            return "an array formatted with a spec"
        return inexact_reason(value.ir_var, trace, made)
    if number and not isinstance(value, (int, float, complex, np.number)):
        return "a value formatted with a spec"
    return None
