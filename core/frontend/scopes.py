"""Which names a function owns and which of them its nested functions read, from the
standard library's `symtable` (the compiler's own scope analysis), not from walking names.

The loop-rolling pass needs both: a loop body becomes a function of the enclosing function's
locals, and a loop that rebinds a name a closure reads cannot be rolled (the closure would
not see the new value). A nested function's own parameters and locals are its own: `def f(t,
y): ...` next to a loop that rebinds `y` does not read the loop's `y`.

Converting a function (`convert`) needs the names it reads from outside (`outer_loads`,
following Python's scopes by walking the tree) to make those reads visible.
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


# -- which names a function reads from outside, and which it binds -----------------------------

FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


def outer_loads(fn) -> list[ast.Name]:
    """The Name loads in fn (nested functions and comprehensions included, class bodies not)
    that refer to no variable of fn or of a scope inside it: globals, builtins and fn's
    closure variables, by Python's scoping rules."""
    found: list[ast.Name] = []

    def visit(node, scopes: list[set[str]]):
        if isinstance(node, ast.Name):
            if isinstance(node.ctx, ast.Load) and not any(node.id in s for s in scopes):
                found.append(node)
        elif isinstance(node, FUNCTIONS):
            args = node.args
            for default in args.defaults + [d for d in args.kw_defaults if d is not None] + \
                    getattr(node, "decorator_list", []):
                visit(default, scopes)
            inner = scopes + [bound_names(node)]
            for stmt in (node.body if isinstance(node.body, list) else [node.body]):
                visit(stmt, inner)
        elif isinstance(node, COMPREHENSIONS):
            visit(node.generators[0].iter, scopes)
            inner = scopes + [bound_names(node)]
            for child in ast.iter_child_nodes(node):
                if child is not node.generators[0]:
                    visit(child, inner)
            first = node.generators[0]
            for child in [first.target, *first.ifs]:
                visit(child, inner)
        elif not isinstance(node, ast.ClassDef):
            for child in ast.iter_child_nodes(node):
                visit(child, scopes)

    visit(fn, [])
    return found


def bound_names(scope) -> set[str]:
    """The names a function, lambda or comprehension binds itself (parameters, assignments,
    imports, defs, except names, match captures; walrus targets of its comprehensions), less
    those it declares global."""
    if isinstance(scope, COMPREHENSIONS):
        return {n.id for g in scope.generators for n in ast.walk(g.target)
                if isinstance(n, ast.Name)}
    args = scope.args
    bound = {a.arg for a in args.posonlyargs + args.args + args.kwonlyargs}
    bound |= {a.arg for a in (args.vararg, args.kwarg) if a is not None}
    declared = set()
    for node in _scope_nodes(scope.body if isinstance(scope.body, list) else [scope.body]):
        bound |= _binds(node)
        if isinstance(node, ast.Global):
            declared |= set(node.names)
    return bound - declared


def _binds(node) -> set[str]:
    if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
        return {node.id}
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return {node.name}
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        return {(a.asname or a.name).split(".")[0] for a in node.names if a.name != "*"}
    if isinstance(node, ast.ExceptHandler) and node.name:
        return {node.name}
    if isinstance(node, ast.NamedExpr):
        return {node.target.id}
    if isinstance(node, (ast.MatchAs, ast.MatchStar)) and node.name:
        return {node.name}
    if isinstance(node, ast.MatchMapping) and node.rest:
        return {node.rest}
    return set()


def _scope_nodes(stmts):
    """The nodes of one scope: nested functions and classes not entered (their names are
    bound here), comprehensions entered only for walrus targets (which bind here)."""
    stack = list(stmts)
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, (*FUNCTIONS, ast.ClassDef)):
            continue
        if isinstance(node, COMPREHENSIONS):
            yield from (n for n in ast.walk(node) if isinstance(n, ast.NamedExpr))
            continue
        stack.extend(ast.iter_child_nodes(node))
