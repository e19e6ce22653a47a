"""Which names a function owns and which of them its nested functions read, from the
standard library's `symtable` (the compiler's own scope analysis), not from walking names.

The loop-rolling pass needs both: a loop body becomes a function of the enclosing function's
locals, and a loop that rebinds a name a closure reads cannot be rolled (the closure would
not see the new value). A nested function's own parameters and locals are its own: `def f(t,
y): ...` next to a loop that rebinds `y` does not read the loop's `y`.
"""
from __future__ import annotations

import ast
import symtable
from dataclasses import dataclass


@dataclass(frozen=True)
class Scope:
    locals: frozenset[str]       # names local to the function (parameters included)
    captured: frozenset[str]     # its locals that nested functions, lambdas, classes read


def function_scope(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> Scope:
    """The scope facts of one function definition (analysed on its own: names it reads from
    functions around it are not its locals, which is all the rolling pass asks)."""
    table = symtable.symtable(ast.unparse(_undecorated(fn)), "<psc_jit scope>", "exec")
    (own,) = [t for t in table.get_children() if t.get_name() == fn.name]
    names = frozenset(s.get_name() for s in own.get_symbols() if s.is_local())
    captured: set[str] = set()
    for child in own.get_children():
        captured |= {s.get_name() for s in child.get_symbols() if s.is_free()}
    return Scope(names, frozenset(captured & names))


def _undecorated(fn):
    """fn without decorators (they are evaluated outside it; a decorator may not parse alone)."""
    copy = type(fn)(name=fn.name, args=fn.args, body=fn.body, decorator_list=[],
                           returns=None, type_comment=None)
    return ast.fix_missing_locations(ast.copy_location(copy, fn))
