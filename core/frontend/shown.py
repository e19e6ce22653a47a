"""The names whose values a cell's prints can show, found from its source alone.

A print shows every digit of a float, so a value that reaches a print must have NumPy's bits
(exactness.py), whether the print computes it (printed.py) or a region before computed it
and the print only reads it: in

    Xs = (X - X.mean(axis=0)) / X.std(axis=0)       # a region: XLA sums in its own order
    for j in range(3):
        print(f"mean {Xs[:, j].mean():+.2e}")       # a residue of -8e-18 shows those bits

the print reads `Xs`, and `Xs` reads `X`, so a region that makes either must give NumPy's bits
(else the statement that makes it runs as plain Python: `printed.checking_prints`).

A name is *shown* when a statement that shows text (a call to print or display, or to a
function of the cell that calls one) reads it, when a statement that binds or updates a shown
name reads it (`s = f"{x:.3f}"`, `x[i] = v`, `x.sort()`), or when the test of an `if` or
`while` whose body binds a shown name or shows text reads it (the branch taken decides what
is printed). The analysis is by name, over the whole cell and in no order: a name printed
anywhere counts everywhere. That is conservative, as the check must be.
"""
from __future__ import annotations

import ast
import functools

from .cell import parse_cell

SHOWING = frozenset({"print", "display"})
# Methods that change their object (an array's or a list's): `x.sort()` binds no name.
_UPDATING = frozenset({"sort", "fill", "resize", "put", "itemset", "partition", "setflags",
                       "append", "extend", "insert", "pop", "remove", "clear", "update",
                       "setdefault", "reverse", "__setitem__", "__iadd__"})
_LOOPS = (ast.For, ast.AsyncFor)
_COMPOUND = (ast.If, ast.While, *_LOOPS)
_DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)


@functools.lru_cache(maxsize=512)
def shown_names(source: str, filename: str, line_offset: int) -> frozenset[str]:
    """The shown names of the cell with this source (see the module's docstring)."""
    tree = parse_cell(source, filename, line_offset)
    showing = _showing_functions(tree)
    statements = list(statements_of(tree.body))
    shown: set[str] = set()
    for stmt in statements:
        if _shows(stmt, showing):
            shown |= _loads(stmt)
    while True:
        before = len(shown)
        for stmt in statements:
            if isinstance(stmt, (ast.If, ast.While)):
                if any(_shows(s, showing) or _binds(s, shown)
                       for s in statements_of(stmt.body + stmt.orelse)):
                    shown |= _loads(stmt.test)
            elif _binds(stmt, shown):
                shown |= _loads(stmt.iter if isinstance(stmt, _LOOPS) else stmt)
        if len(shown) == before:
            return frozenset(shown)


def _showing_functions(tree: ast.Module) -> frozenset[str]:
    """The functions the cell defines that show text, directly or through another of them."""
    defs = {node.name: node for node in ast.walk(tree)
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))}
    found: set[str] = set()
    while True:
        more = {name for name, node in defs.items() if name not in found and any(
            _called(n) in SHOWING | found for n in ast.walk(node) if isinstance(n, ast.Call))}
        if not more:
            return frozenset(found)
        found |= more


def statements_of(body):
    """Every statement of a block and of the blocks inside it, not those of definitions."""
    for stmt in body:
        if isinstance(stmt, _DEFINITIONS):
            continue
        yield stmt
        for field in ("body", "orelse", "finalbody", "handlers", "cases"):
            for child in getattr(stmt, field, ()):
                if isinstance(child, ast.stmt):
                    yield from statements_of([child])
                else:       # an except handler or a match case: its body
                    yield from statements_of(child.body)


def _own_nodes(node):
    """The nodes of a statement outside the blocks it holds and outside definitions."""
    todo = [node]
    while todo:
        node = todo.pop()
        yield node
        for field, value in ast.iter_fields(node):
            if field in ("body", "orelse", "finalbody", "handlers", "cases") and \
                    isinstance(node, ast.stmt):
                continue
            children = value if isinstance(value, list) else [value]
            todo += [c for c in children if isinstance(c, ast.AST)
                     and not isinstance(c, _DEFINITIONS)]


def _called(call: ast.Call) -> str | None:
    return call.func.id if isinstance(call.func, ast.Name) else None


def _shows(stmt, showing: frozenset[str]) -> bool:
    """Whether a simple statement shows text (a loop's or branch's header does not count)."""
    return not isinstance(stmt, _COMPOUND) and any(
        isinstance(n, ast.Call) and _called(n) in SHOWING | showing for n in _own_nodes(stmt))


def _binds(stmt, shown: set[str]) -> bool:
    """Whether a statement binds or changes a shown name (a `for`: by its target; an `if` or
    `while` itself: never, its bodies are statements of their own)."""
    if isinstance(stmt, (ast.If, ast.While)):
        return False
    return bool(stores_of(stmt.target if isinstance(stmt, _LOOPS) else stmt) & shown)


def _loads(node) -> set[str]:
    return {n.id for n in _own_nodes(node) if isinstance(n, ast.Name) and
            isinstance(n.ctx, ast.Load)}


def stores_of(node) -> set[str]:
    """The names a statement binds or changes: targets, the bases of item and attribute
    stores (`x[i] = v`, `x.a = v`), and the objects of methods that change them (`x.sort()`)."""
    found = set()
    for n in _own_nodes(node):
        if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del)):
            found.add(n.id)
        elif isinstance(n, (ast.Subscript, ast.Attribute)) and \
                isinstance(n.ctx, (ast.Store, ast.Del)):
            found.add(_base(n))
        elif isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and \
                n.func.attr in _UPDATING:
            found.add(_base(n.func.value))
    found.discard(None)
    return found


def _base(node) -> str | None:
    while isinstance(node, (ast.Subscript, ast.Attribute)):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None
