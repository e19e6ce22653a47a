"""Sinks: the inputs a cell (or a helper of the notebook's, `helper_sinks`) only writes to,
found in its source: a list it appends to, a dict it fills, an object whose attributes it
sets. Such an object need not be an input of the compiled program (`effects.Sink`)."""
from __future__ import annotations

import ast
import functools

SINK_METHODS = {"append": "list", "extend": "list", "update": "dict"}


@functools.lru_cache(maxsize=512)
def effect_sinks(source: str, inputs: tuple[str, ...]) -> dict[str, str]:
    """Inputs the cell only writes to, each by one kind of statement at its top level or in a
    `for` loop there: `L.append(v)` or `L.extend(vs)` (a list), `d[k] = v` or `d.update(...)`
    (a dict),
    `obj.a = v` (an object), `hist['loss'].append(v)` (a dict of lists, `lists_kind`);
    name -> kind. Such an object's contents are never read by the cell, so it need not be an
    input of the compiled program: its changes are recorded while tracing and made again,
    with each run's values, after the run (`effects.Sink`)."""
    tree = ast.parse(source)
    kinds: dict[str, set[str]] = {}
    lists: dict[str, set] = {}
    allowed: set[int] = set()
    for stmt in _top_and_for_bodies(tree.body):
        found = _sink_write(stmt)
        if found is not None:
            name_node, kind = found
            if isinstance(kind, tuple):         # `hist['loss'].append(v)`
                lists.setdefault(name_node.id, set()).add(kind[1])
                kind = "lists"
            kinds.setdefault(name_node.id, set()).add(kind)
            allowed.add(id(name_node))
    uses = [n for n in ast.walk(tree) if isinstance(n, ast.Name) and n.id in kinds]
    others = {n.id for n in uses if id(n) not in allowed}
    return {name: lists_kind(lists[name]) if kind == {"lists"} else next(iter(kind))
            for name, kind in kinds.items()
            if name in inputs and name not in others and len(kind) == 1}


def lists_kind(keys) -> str:
    """The kind of a dict of lists the cell appends to by constant keys (`effects.Sink`)."""
    return "lists " + repr(tuple(sorted(keys, key=repr)))


def _top_and_for_bodies(stmts):
    """The statements at the top level and in the bodies of `for` loops there (a rolled loop
    makes its writes once per pass: control/loop_writes.py)."""
    for stmt in stmts:
        yield stmt
        if isinstance(stmt, ast.For):
            yield from _top_and_for_bodies(stmt.body)


def _sink_write(stmt) -> tuple[ast.Name, str] | None:
    """(the written object's name node, its kind) of a top-level statement that only writes
    to a named object, else None."""
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
        func = stmt.value.func
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and \
                func.attr in SINK_METHODS:
            return func.value, SINK_METHODS[func.attr]
        if isinstance(func, ast.Attribute) and func.attr == "append" and \
                isinstance(func.value, ast.Subscript) and \
                isinstance(func.value.value, ast.Name) and \
                isinstance(func.value.slice, ast.Constant) and \
                isinstance(func.value.slice.value, (str, int)):
            return func.value.value, ("lists", func.value.slice.value)
        return None
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
        target = stmt.targets[0]
        if isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name):
            return target.value, "dict"
        if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name):
            return target.value, "object"
    return None
