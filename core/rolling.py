"""Loop rolling: Python loops and branches on traced values become XLA loops and conditionals.

`roll_loops(module)` is an AST pass over every function of a module (a cell made into a
function, or a function whose source Python can give). Each

    for NAME in range(...):    while TEST:    if TEST:

is rewritten into a call of a runtime helper that decides *at trace time*: when nothing the
statement touches is traced, the original statement runs as plain Python, with unchanged
meaning. When it is, the body is traced once as a function of the names it uses (see
`control_api` for how carried state is found) into one `while_loop` or `cond` equation, so
the graph, and XLA's compile time, do not grow with the iteration count.

A loop that cannot be rolled (its values change shape or type from one iteration to the next,
it appends to a list, uses `break` or `return`, ...) is unrolled when it is short
(`UNROLL_LIMIT` iterations), and otherwise raises `UnsupportedError` naming the line, the
reason and what to write instead. `unroll_notes(graph)` explains a graph made large by loops
that were unrolled.
"""
from __future__ import annotations

import ast
import builtins
import collections
import contextlib
import contextvars
import copy
import itertools
import linecache
import sys
from dataclasses import dataclass
from typing import Any

import numpy as np

from .cell import _assigned_names, _loads, _walk_block
from .control_api import (INDEX_AVAL, UNBOUND, CannotConvert, LoopSpec, Slot, branch, coerce,
                          contains_tracer, roll_loop, to_pred)
from .ir import Graph, SourceInfo
from .numpy_api import call_ufunc
from .registry import primitive
from .tracing import TraceError, Tracer, UnsupportedError, bind, current_trace

UNROLL_LIMIT = 64             # a loop that cannot be rolled is unrolled up to this many times
LARGE_GRAPH = 2_000           # equations; above this, unroll_notes explains where they came from

_ROLLING: contextvars.ContextVar[bool] = contextvars.ContextVar("psc_jit_rolling", default=True)


@contextlib.contextmanager
def rolling_disabled():
    """Run transformed code with every loop unrolled as plain Python (for comparisons)."""
    token = _ROLLING.set(False)
    try:
        yield
    finally:
        _ROLLING.reset(token)


def rolling_enabled() -> bool:
    return _ROLLING.get()


# =============================================================================================
# The AST pass
# =============================================================================================

RT = "__psc_rt"


def roll_loops(module: ast.Module) -> ast.Module:
    """A copy of `module` whose functions' loops and branches call the rolling helpers."""
    module = copy.deepcopy(module)
    counter = itertools.count()
    for node in reversed(list(ast.walk(module))):        # inner functions first
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            _Rewriter(node, counter).rewrite_function()
    return ast.fix_missing_locations(module)


@dataclass(frozen=True)
class Site:
    """A loop or branch as the pass saw it; built by the generated code, read by the helpers."""
    kind: str                               # "for", "while" or "if"
    line: int
    text: str                               # `for t in range(steps)`, for messages
    names: tuple[str, ...] = ()             # parameters of the generated functions
    assigned: tuple[str, ...] = ()          # the names they return
    exposed: tuple[str, ...] = ()           # assigned names read before assigned
    target: str | None = None               # a for loop's variable
    blocker: str = ""                       # why it cannot be converted, if it cannot
    hint: str = ""

    def spec(self) -> LoopSpec:
        return LoopSpec(self.names, self.assigned, frozenset(self.exposed))


class _Rewriter:
    """Rewrites the statements of one function (nested functions are rewritten on their own)."""

    def __init__(self, fn: ast.FunctionDef, counter):
        self.fn = fn
        self.counter = counter
        self.scope = _function_locals(fn)
        self.captured = _captured_by_closures(fn)

    def rewrite_function(self) -> None:
        body = self.fn.body
        doc = body[:1] if body and isinstance(body[0], ast.Expr) and isinstance(
            body[0].value, ast.Constant) and isinstance(body[0].value.value, str) else []
        imports = _at_line(_parse(f"import {__name__} as {RT}"), self.fn.lineno)
        self.fn.body = doc + imports + self.block(body[len(doc):])

    def block(self, stmts: list[ast.stmt]) -> list[ast.stmt]:
        out: list[ast.stmt] = []
        for stmt in stmts:
            out += self.stmt(stmt)
        return out

    def stmt(self, stmt: ast.stmt) -> list[ast.stmt]:
        if isinstance(stmt, ast.For):
            return self.for_loop(stmt)
        if isinstance(stmt, ast.While):
            return self.while_loop(stmt)
        if isinstance(stmt, ast.If):
            return self.if_stmt(stmt)
        if isinstance(stmt, (ast.With, ast.AsyncWith, ast.Try, ast.AsyncFor)):
            return [self.nested(stmt)]
        return [stmt]

    def nested(self, stmt):
        for fieldname in ("body", "orelse", "finalbody"):
            if hasattr(stmt, fieldname):
                setattr(stmt, fieldname, self.block(getattr(stmt, fieldname)))
        for handler in getattr(stmt, "handlers", []):
            handler.body = self.block(handler.body)
        return stmt

    # analysis ------------------------------------------------------------------------------
    def names_of(self, stmts, extra=(), exclude=()) -> tuple[str, ...]:
        seen: dict[str, None] = {}
        for node in itertools.chain(*(ast.walk(s) for s in list(stmts) + list(extra))):
            if isinstance(node, ast.Name) and node.id in self.scope and node.id not in exclude:
                seen.setdefault(node.id)
        return tuple(seen)

    def blocker(self, stmts, kind: str, target: str | None = None) -> tuple[str, str]:
        """(why these statements cannot become a function of their names, what to write)."""
        found = _find_blocker(stmts, loop=kind != "if")
        if found[0]:
            return found
        assigned = set(_assigned_names(stmts))
        if target in assigned:
            return (f"it assigns to the loop variable `{target}`",
                    "use another name for the value computed from it")
        outside = sorted(assigned - self.scope)
        if outside:
            return (f"it rebinds `{outside[0]}`, which is global", _HINTS["global"])
        shared = sorted(assigned & self.captured)
        if shared:
            return (f"a function defined outside it reads `{shared[0]}`, which it rebinds",
                    f"pass `{shared[0]}` to that function as an argument")
        return ("", "")

    def site(self, kind, node, text, names=(), assigned=(), exposed=(), target=None,
             blocker=("", "")) -> str:
        fields = dict(kind=kind, line=node.lineno, text=text, names=tuple(names),
                      assigned=tuple(assigned), exposed=tuple(exposed), target=target,
                      blocker=blocker[0], hint=blocker[1])
        return f"{RT}.Site(" + ", ".join(f"{k}={v!r}" for k, v in fields.items()) + ")"

    # for NAME in range(...) ----------------------------------------------------------------
    def for_loop(self, node: ast.For) -> list[ast.stmt]:
        if not _is_range_loop(node):
            return [self.nested(node)]
        k = next(self.counter)
        target = node.target.id
        body = _drop_continue(node.body)
        blocker = self.blocker(body, "for", target)
        assigned = tuple(n for n in _assigned_names(body) if n in self.scope)
        names = self.names_of(body, exclude={target})
        exposed = _exposed(body, {target}) & set(assigned)
        text = f"for {target} in {ast.unparse(node.iter)}"
        site = self.site("for", node, text, names, assigned, sorted(exposed), target, blocker)
        args = ast.Tuple(elts=node.iter.args, ctx=ast.Load())
        if blocker[0]:
            site = self.site("for", node, text, names, target=target, blocker=blocker)
            code = _FOR_BLOCKED.format(rt=RT, k=k, site=site, target=target)
        else:
            code = _FOR.format(rt=RT, k=k, site=site, target=target,
                               params=", ".join((target,) + names), ret=_tuple(assigned),
                               outs=_tuple(assigned + (target,)))
        holes = {"ARGS": args, "BODY": self.block(body), "PLAIN": self.block(copy.deepcopy(body)),
                 "ORELSE": self.block(node.orelse), "DELS": _dels(assigned)}
        return _fill(code, node.lineno, holes)

    # while TEST ----------------------------------------------------------------------------
    def while_loop(self, node: ast.While) -> list[ast.stmt]:
        k = next(self.counter)
        body = _drop_continue(node.body)
        blocker = self.blocker(body, "while")
        text = f"while {ast.unparse(node.test)}"
        test = _rewrite_test(node.test)
        if blocker[0]:
            site = self.site("while", node, text, self.names_of(body, [node.test]),
                             blocker=blocker)
            code = _WHILE_BLOCKED.format(rt=RT, site=site)
            holes = {"TEST": test, "BODY": self.block(node.body), "ORELSE": self.block(node.orelse)}
            return _fill(code, node.lineno, holes)
        assigned = tuple(n for n in _assigned_names(body) if n in self.scope)
        names = self.names_of(body, extra=[node.test])
        exposed = (_exposed(body, set()) | _reads(node.test)) & set(assigned)
        site = self.site("while", node, text, names, assigned, sorted(exposed), blocker=blocker)
        code = _WHILE.format(rt=RT, k=k, site=site, params=", ".join(names),
                             ret=_tuple(assigned), outs=_tuple(assigned))
        holes = {"TEST": test, "TEST2": copy.deepcopy(test), "BODY": self.block(body),
                 "PLAIN": self.block(copy.deepcopy(body)), "ORELSE": self.block(node.orelse),
                 "DELS": _dels(assigned)}
        return _fill(code, node.lineno, holes)

    # if TEST -------------------------------------------------------------------------------
    def if_stmt(self, node: ast.If) -> list[ast.stmt]:
        k = next(self.counter)
        text = f"if {ast.unparse(node.test)}"
        blocker = self.blocker(node.body + node.orelse, "if")
        test = _rewrite_test(node.test)
        if blocker[0]:
            site = self.site("if", node, text, blocker=blocker)
            code = _IF_BLOCKED.format(rt=RT, site=site)
            holes = {"TEST": test, "BODY": self.block(node.body),
                     "ORELSE": self.block(node.orelse)}
            return _fill(code, node.lineno, holes)
        both = node.body + node.orelse
        assigned = tuple(n for n in _assigned_names(both) if n in self.scope)
        names = self.names_of(both)
        site = self.site("if", node, text, names, assigned, assigned)
        code = _IF.format(rt=RT, k=k, site=site, params=", ".join(names), ret=_tuple(assigned),
                          assign=f"{_tuple(assigned)} = " if assigned else "")
        holes = {"TEST": test, "BODY": self.block(node.body),
                 "ORELSE": self.block(node.orelse),
                 "PLAIN": self.block(copy.deepcopy(node.body)),
                 "PLAIN_ELSE": self.block(copy.deepcopy(node.orelse)), "DELS": _dels(assigned)}
        return _fill(code, node.lineno, holes)


# -- the generated code -----------------------------------------------------------------------
# Holes: a statement `__HOLE__` is replaced by a list of statements, a name `__HOLE__` by an
# expression. An empty statement list becomes `pass`.

_FOR = """
__psc_args_{k} = __ARGS__
__psc_site_{k} = {site}
if {rt}.wants_for(__psc_site_{k}, range, __psc_args_{k}, locals()):
    def __psc_body_{k}({params}):
        __BODY__
        return {ret}
    __psc_res_{k} = {rt}.roll_for(__psc_site_{k}, __psc_args_{k}, __psc_body_{k}, locals())
else:
    __psc_res_{k} = None
if __psc_res_{k} is None:
    for {target} in range(*__psc_args_{k}):
        __PLAIN__
    else:
        __ORELSE__
else:
    {outs} = __psc_res_{k}
    __DELS__
    __ORELSE__
"""

_FOR_BLOCKED = """
__psc_args_{k} = __ARGS__
{rt}.check_unroll({site}, range, __psc_args_{k}, locals())
for {target} in range(*__psc_args_{k}):
    __PLAIN__
else:
    __ORELSE__
"""

_WHILE = """
__psc_site_{k} = {site}
if {rt}.wants_while(__psc_site_{k}, locals()):
    def __psc_cond_{k}({params}):
        return __TEST__
    def __psc_body_{k}({params}):
        __BODY__
        return {ret}
    __psc_res_{k} = {rt}.roll_while(__psc_site_{k}, __psc_cond_{k}, __psc_body_{k}, locals())
else:
    __psc_res_{k} = None
if __psc_res_{k} is None:
    while __TEST2__:
        __PLAIN__
    else:
        __ORELSE__
else:
    {outs} = __psc_res_{k}
    __DELS__
    __ORELSE__
"""

_WHILE_BLOCKED = """
while {rt}.truth(__TEST__, {site}):
    __BODY__
else:
    __ORELSE__
"""

_IF = """
__psc_pred_{k} = __TEST__
if {rt}.is_traced(__psc_pred_{k}):
    def __psc_then_{k}({params}):
        __BODY__
        return {ret}
    def __psc_else_{k}({params}):
        __ORELSE__
        return {ret}
    {assign}{rt}.convert_if({site}, __psc_pred_{k}, __psc_then_{k}, __psc_else_{k}, locals())
    __DELS__
elif __psc_pred_{k}:
    __PLAIN__
else:
    __PLAIN_ELSE__
"""

_IF_BLOCKED = """
if {rt}.truth(__TEST__, {site}):
    __BODY__
else:
    __ORELSE__
"""


def _parse(code: str) -> list[ast.stmt]:
    return ast.parse(code).body


def _at_line(stmts: list[ast.stmt], line: int) -> list[ast.stmt]:
    for stmt in stmts:
        for node in ast.walk(stmt):
            if "lineno" in node._attributes:
                node.lineno = node.end_lineno = line
                node.col_offset, node.end_col_offset = 0, 0
    return stmts


def _fill(code: str, line: int, holes: dict[str, Any]) -> list[ast.stmt]:
    """The template's statements at `line`, with its holes filled."""
    return _HoleFiller(holes).visit_block(_at_line(_parse(code), line))


class _HoleFiller(ast.NodeTransformer):
    def __init__(self, holes):
        self.holes = holes

    def visit_block(self, stmts):
        out = []
        for stmt in stmts:
            hole = _hole_name(stmt)
            if hole is not None:
                out += copy.deepcopy(self.holes[hole])
                continue
            out.append(self.visit(stmt))
        return out

    def generic_visit(self, node):
        for fieldname in ("body", "orelse", "finalbody"):
            value = getattr(node, fieldname, None)
            if isinstance(value, list) and value and isinstance(value[0], ast.stmt):
                filled = self.visit_block(value)
                if fieldname == "body" and not filled:
                    filled = [ast.copy_location(ast.Pass(), node)]
                setattr(node, fieldname, filled)
        for fieldname, value in ast.iter_fields(node):
            if fieldname in ("body", "orelse", "finalbody") and isinstance(value, list):
                continue
            if isinstance(value, ast.AST):
                setattr(node, fieldname, self.visit(value))
            elif isinstance(value, list):
                setattr(node, fieldname, [self.visit(v) if isinstance(v, ast.AST) else v
                                          for v in value])
        return node

    def visit_Name(self, node):
        if node.id.startswith("__") and node.id.endswith("__") and node.id[2:-2] in self.holes:
            return copy.deepcopy(self.holes[node.id[2:-2]])
        return node


def _hole_name(stmt) -> str | None:
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Name):
        name = stmt.value.id
        if name.startswith("__") and name.endswith("__") and name[2:-2].isupper():
            return name[2:-2]
    return None


def _tuple(names) -> str:
    return "(" + "".join(f"{n}, " for n in names) + ")"


def _dels(names) -> list[ast.stmt]:
    return _parse("".join(f"if {n} is {RT}.UNBOUND:\n    del {n}\n" for n in names))


# -- analysis helpers -------------------------------------------------------------------------

_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)


def _function_locals(fn) -> set[str]:
    a = fn.args
    params = [x.arg for x in a.posonlyargs + a.args + a.kwonlyargs]
    params += [x.arg for x in (a.vararg, a.kwarg) if x is not None]
    declared = {name for node in _own_nodes(fn.body) if isinstance(node, (ast.Global, ast.Nonlocal))
                for name in node.names}
    return (set(params) | set(_assigned_names(fn.body))) - declared


def _own_nodes(stmts):
    """Nodes of this scope: nested functions, lambdas and classes not entered."""
    stack = list(stmts)
    while stack:
        node = stack.pop()
        yield node
        if not isinstance(node, _SCOPES):
            stack.extend(ast.iter_child_nodes(node))


def _captured_by_closures(fn) -> set[str]:
    """Names read by functions and lambdas nested in fn (they see fn's variables, not copies)."""
    captured = set()
    for node in _own_nodes(fn.body):
        if isinstance(node, _SCOPES) and not isinstance(node, ast.ClassDef):
            captured |= {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
    return captured


def _is_range_loop(node: ast.For) -> bool:
    it = node.iter
    return (isinstance(node.target, ast.Name) and isinstance(it, ast.Call)
            and isinstance(it.func, ast.Name) and it.func.id == "range" and not it.keywords
            and 1 <= len(it.args) <= 3 and not any(isinstance(a, ast.Starred) for a in it.args))


def _exposed(body, assigned: set[str]) -> set[str]:
    """Names whose value on entry the body may use: read before assigned, or not assigned on
    every path (the old value then flows through)."""
    reads: list[str] = []
    definite = _walk_block(body, set(assigned), reads)
    return set(reads) | (set(_assigned_names(body)) - definite)


def _reads(expr) -> set[str]:
    reads: list[str] = []
    _loads(expr, set(), reads)
    return set(reads)


_HINTS = {
    "break": "put the exit test in the loop's condition: `while i < n and not done:`",
    "continue": "put the rest of the body under `if not ...:` instead of `continue`",
    "return": "assign the result to a name and return after the loop or branch",
    "yield": "collect the values in a preallocated array instead of yielding them",
    "del": "rebind the name instead of deleting it",
    "global": "return the value from the cell instead of rebinding a global",
    "attribute": "keep the value in a local name and set the attribute after the loop",
}


def _find_blocker(stmts, loop: bool) -> tuple[str, str]:
    """What keeps these statements from becoming a function of their names: (reason, hint)."""
    def visit(node, depth) -> tuple[str, str]:
        if isinstance(node, _SCOPES):
            return ("", "")
        found = _blocking_node(node, depth, loop)
        if found:
            return found, _HINTS[found.split("`")[1]]
        inner = depth + 1 if isinstance(node, (ast.For, ast.While, ast.AsyncFor)) else depth
        for fieldname, value in ast.iter_fields(node):
            children = value if isinstance(value, list) else [value]
            sub_depth = depth if fieldname == "orelse" else inner
            for child in children:
                if isinstance(child, ast.AST):
                    found = visit(child, sub_depth)
                    if found[0]:
                        return found
        return ("", "")
    for stmt in stmts:
        found = visit(stmt, 0)
        if found[0]:
            return found
    return ("", "")


def _blocking_node(node, depth: int, loop: bool) -> str:
    if isinstance(node, ast.Return):
        return "it uses `return`"
    if isinstance(node, (ast.Yield, ast.YieldFrom, ast.Await)):
        return "it uses `yield`"
    if isinstance(node, (ast.Break, ast.Continue)) and (depth == 0):
        word = "break" if isinstance(node, ast.Break) else "continue"
        return f"it uses `{word}`"
    if isinstance(node, ast.Delete) and any(isinstance(t, ast.Name) for t in node.targets):
        return "it uses `del`"
    if isinstance(node, (ast.Global, ast.Nonlocal)):
        return "it uses `global`"
    if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
        return f"it sets an `attribute` ({ast.unparse(node)})"
    return ""


def _drop_continue(stmts: list[ast.stmt]) -> list[ast.stmt]:
    """`if c: continue` (at any depth of ifs) becomes the rest of the body under `else`."""
    out: list[ast.stmt] = []
    for k, stmt in enumerate(stmts):
        if isinstance(stmt, ast.Continue):
            return out
        if isinstance(stmt, ast.If) and _continues(stmt):
            rest = stmts[k + 1:]
            new = ast.If(test=stmt.test, body=_drop_continue(stmt.body + rest) or [ast.Pass()],
                         orelse=_drop_continue(stmt.orelse + copy.deepcopy(rest)))
            out.append(ast.copy_location(new, stmt))
            return out
        out.append(stmt)
    return out


def _continues(node) -> bool:
    """Whether a `continue` of the current loop is inside node's ifs."""
    if isinstance(node, ast.Continue):
        return True
    if isinstance(node, ast.If):
        return any(_continues(s) for s in node.body + node.orelse)
    return False


def _rewrite_test(test: ast.expr) -> ast.expr:
    """`a and b`, `a or b`, `not a` in a test: evaluated on traced values too."""
    if isinstance(test, ast.BoolOp):
        op = "and_" if isinstance(test.op, ast.And) else "or_"
        thunks = [ast.Lambda(args=_no_args(), body=_rewrite_test(v)) for v in test.values[1:]]
        call = ast.Call(func=_rt_attr(op), args=[_rewrite_test(test.values[0])] + thunks,
                        keywords=[])
        return ast.copy_location(call, test)
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        call = ast.Call(func=_rt_attr("not_"), args=[_rewrite_test(test.operand)], keywords=[])
        return ast.copy_location(call, test)
    return test


def _no_args() -> ast.arguments:
    return ast.arguments(posonlyargs=[], args=[], kwonlyargs=[], kw_defaults=[], defaults=[])


def _rt_attr(name: str) -> ast.Attribute:
    return ast.Attribute(value=ast.Name(RT, ast.Load()), attr=name, ctx=ast.Load())


# =============================================================================================
# The runtime helpers (called by the generated code)
# =============================================================================================

def _caller_file(depth: int = 2) -> str:
    return sys._getframe(depth).f_code.co_filename


def _source(site: Site, file: str) -> SourceInfo:
    return SourceInfo(file, site.line)


def _touches_tracer(site: Site, env: dict) -> bool:
    return any(contains_tracer(env.get(name)) for name in site.names)


def wants_for(site: Site, range_fn, args, env) -> bool:
    """Whether to try rolling this loop: tracing, a builtin range, and something traced."""
    if not _ROLLING.get() or current_trace() is None or range_fn is not builtins.range:
        return False
    if any(isinstance(a, Tracer) for a in args):
        return True
    return len(range(*args)) >= 2 and _touches_tracer(site, env)


def wants_while(site: Site, env) -> bool:
    return _ROLLING.get() and current_trace() is not None and _touches_tracer(site, env)


def is_traced(pred) -> bool:
    return isinstance(pred, Tracer) and _ROLLING.get()


def _range_args(args) -> tuple:
    if len(args) == 1:
        return 0, args[0], 1
    return (args[0], args[1], args[2] if len(args) == 3 else 1)


def roll_for(site: Site, args, body_fn, env) -> tuple | None:
    """Roll `for target in range(*args)` into one while_loop; None: run it as plain Python."""
    file = _caller_file()
    start, stop, step = _range_args(args)
    if isinstance(step, Tracer):
        raise UnsupportedError(f"the step of `{site.text}` is a traced value",
                               _source(site, file), "make the step a Python int")
    if step == 0:
        raise ValueError("range() arg 3 must not be zero")
    static = not isinstance(start, Tracer) and not isinstance(stop, Tracer)
    if static:
        start, stop, step = (int(v) for v in (start, stop, step))
    count = total = len(range(start, stop, step)) if static else None
    env = dict(env)
    peeled = False
    while True:
        try:
            out = roll_loop(site.spec(), env, body_fn, index=(start, stop, step),
                            observed=_observer(env))
            break
        except Exception as err:       # any failure of the traced pass: unroll or explain
            if _may_peel(err, peeled, count):
                env.update(_run_body(site, body_fn, start, env))
                start, count, peeled = start + step, count - 1, True
                continue
            return _fallback(site, file, err, (count, total), env if peeled else None,
                             body_fn, (start, stop, step))
    last = start + (count - 1) * step if static else _last_index(out["__index__"], step)
    return tuple(out[name] for name in site.assigned) + (last,)


def _may_peel(err, peeled: bool, count) -> bool:
    return isinstance(err, CannotConvert) and err.peel and not peeled and count is not None \
        and count >= 3


def _last_index(end, step):
    return coerce(call_ufunc(np.subtract, end, step), Slot(INDEX_AVAL, "python"))


def _run_body(site: Site, body_fn, i, env) -> dict:
    """One iteration as plain Python (traced arrays updated in place as usual)."""
    values = body_fn(i, *(env.get(n, UNBOUND) for n in site.names))
    return {site.target: i, **dict(zip(site.assigned, values, strict=True))}


def _fallback(site: Site, file: str, err: Exception, counts, env, body_fn, bounds):
    """Unroll a short loop (None: the plain loop runs it); explain a long one.
    counts: (iterations left, iterations of the loop), None when traced."""
    reason = _reason(err)
    count, total = counts
    if count is not None and count <= UNROLL_LIMIT:
        _note_unrolled(file, site.line, reason)
        if env is None:
            return None
        start, stop, step = bounds
        for i in range(start, stop, step):
            env.update(_run_body(site, body_fn, i, env))
        return tuple(env.get(name, UNBOUND) for name in site.assigned) + (env[site.target],)
    raise _cannot_roll(site, file, reason, _hint(err), total) from err


def _cannot_roll(site: Site, file: str, reason: str, hint: str, count) -> UnsupportedError:
    many = f"{count:,} iterations" if count is not None else "a traced number of iterations"
    what = "rolled into an XLA loop" if site.kind != "if" else "converted to an XLA conditional"
    if site.kind == "for":
        hint = (hint + "; " if hint else "") + (
            f"psc_jit unrolls such a loop only up to {UNROLL_LIMIT} iterations, this one has "
            f"{many}")
    return UnsupportedError(f"`{site.text}` cannot be {what}: {reason}", _source(site, file),
                            hint)


def _reason(err: Exception) -> str:
    if isinstance(err, CannotConvert):
        return err.message
    if isinstance(err, TraceError):
        return err.explain() if err.source is not None else err.message
    return f"{type(err).__name__}: {err}"


def _hint(err: Exception) -> str:
    return err.hint if isinstance(err, CannotConvert) else ""


def _observer(env: dict):
    """Whether an array is seen from outside the loop's names: a view, an input of the trace,
    or held by more than one name."""
    trace = current_trace()
    inputs = {id(b) for b in trace.buffers} if trace is not None else set()
    counts = collections.Counter(id(t._buffer) for t in _tracers_in(env.values()))
    return lambda t: t.is_view or id(t._buffer) in inputs or counts[id(t._buffer)] > 1


def _tracers_in(values, depth: int = 3):
    for value in values:
        if isinstance(value, Tracer):
            yield value
        elif depth and isinstance(value, (tuple, list, set)):
            yield from _tracers_in(value, depth - 1)
        elif depth and isinstance(value, dict):
            yield from _tracers_in(value.values(), depth - 1)


def check_unroll(site: Site, range_fn, args, env) -> None:
    """A loop the pass could not make a function of its names (it uses `break`, ...) runs as
    plain Python: unrolled. An exit on a traced value inside it is refused where it happens
    (`truth`); traced bounds leave nothing to unroll."""
    if not _ROLLING.get() or current_trace() is None or range_fn is not builtins.range:
        return
    file = _caller_file()
    if any(isinstance(a, Tracer) for a in args):
        raise _cannot_roll(site, file, site.blocker, site.hint, None)
    if _touches_tracer(site, env):
        _note_unrolled(file, site.line, site.blocker)


def roll_while(site: Site, cond_fn, body_fn, env) -> tuple | None:
    """A while loop whose test is traced: one while_loop. None: the test is static, so it
    runs as plain Python."""
    file = _caller_file()
    env = dict(env)
    first = cond_fn(*(env.get(n, UNBOUND) for n in site.names))
    if not isinstance(first, Tracer):
        return None
    try:
        out = roll_loop(site.spec(), env, body_fn, cond_fn=cond_fn, observed=_observer(env))
    except Exception as err:           # a traced test leaves no plain-Python way out
        raise _cannot_roll(site, file, _reason(err), _hint(err), None) from err
    return tuple(out[name] for name in site.assigned)


def convert_if(site: Site, pred, then_fn, else_fn, env) -> tuple:
    """An `if` on a traced value: both branches traced into one cond (or a select)."""
    file = _caller_file()
    p = to_pred(pred)
    index = bind(primitive("convert_element_type"), p, new_dtype=np.dtype(np.int32),
                 weak_type=False)
    args = [env.get(n, UNBOUND) for n in site.names]
    try:
        return branch(index, [else_fn, then_fn], args, pred=p, names=site.assigned)
    except CannotConvert as err:
        raise _cannot_roll(site, file, err.message, err.hint, None) from None


def truth(value, site: Site) -> bool:
    """bool(value); on a traced value, say why this statement could not be converted."""
    if isinstance(value, Tracer) and _ROLLING.get():
        raise _cannot_roll(site, _caller_file(), f"its test is traced ({value.aval}) and "
                           f"{site.blocker}", site.hint, None)
    return bool(value)


def and_(first, *rest):
    value = first
    for thunk in rest:
        if isinstance(value, Tracer):
            value = call_ufunc(np.logical_and, to_pred(value), to_pred(thunk()))
        elif not value:
            return value
        else:
            value = thunk()
    return value


def or_(first, *rest):
    value = first
    for thunk in rest:
        if isinstance(value, Tracer):
            value = call_ufunc(np.logical_or, to_pred(value), to_pred(thunk()))
        elif value:
            return value
        else:
            value = thunk()
    return value


def not_(value):
    if isinstance(value, Tracer):
        return call_ufunc(np.logical_not, to_pred(value))
    return not value


# =============================================================================================
# Why a graph is large
# =============================================================================================

_UNROLLED: collections.OrderedDict[tuple[str, int], str] = collections.OrderedDict()


def _note_unrolled(file: str, line: int, reason: str) -> None:
    _UNROLLED[(file, line)] = reason
    _UNROLLED.move_to_end((file, line))
    while len(_UNROLLED) > 256:
        _UNROLLED.popitem(last=False)


def unroll_notes(graph: Graph, limit: int = LARGE_GRAPH) -> list[str]:
    """Where the equations of a large graph come from, per loop (or line), with what to do:
    `line 3: 12,000 equations from an unrolled loop; write it as a for loop over range(...)
    so psc_jit can roll it`. Empty when the graph has at most `limit` equations."""
    eqns = list(graph.all_eqns())
    if len(eqns) <= limit:
        return []
    counts: collections.Counter = collections.Counter()
    for eqn in eqns:
        if eqn.source is not None:
            counts[_enclosing_loop(eqn.source.file, eqn.source.line)] += 1
    notes = []
    for (file, line, is_loop), n in counts.most_common():
        if n < max(limit // 10, 50) or len(notes) == 3:
            break
        notes.append(_note(file, line, is_loop, n))
    return notes


def _note(file: str, line: int, is_loop: bool, n: int) -> str:
    reason = _UNROLLED.get((file, line))
    if reason:
        return (f"line {line}: {n:,} equations from a loop psc_jit unrolled because {reason}; "
                "change that so it can be rolled into one XLA loop")
    if is_loop:
        text = linecache.getline(file, line).strip()
        what = "a while loop with a static test" if text.startswith("while") else \
            "an unrolled loop"
        return (f"line {line}: {n:,} equations from {what}; write it as a for loop over "
                "range(...) so psc_jit can roll it")
    return f"line {line}: {n:,} equations"


def _enclosing_loop(file: str, line: int) -> tuple[str, int, bool]:
    """(file, line of the outermost loop around `line`, True) or (file, line, False)."""
    loops = _loop_spans(file)
    for start, end in loops:
        if start <= line <= end:
            return file, start, True
    return file, line, False


_SPANS: dict[tuple[str, int], list[tuple[int, int]]] = {}


def _loop_spans(file: str) -> list[tuple[int, int]]:
    lines = linecache.getlines(file)
    key = (file, hash(tuple(lines)))
    if key not in _SPANS:
        _SPANS[key] = _parse_loop_spans("".join(lines))
    return _SPANS[key]


def _parse_loop_spans(text: str) -> list[tuple[int, int]]:
    try:
        tree = ast.parse(_without_magics(text))
    except SyntaxError:
        return []
    spans = [(n.lineno, n.end_lineno) for n in ast.walk(tree) if isinstance(n, (ast.For, ast.While))]
    return sorted(spans, key=lambda s: (s[0], -s[1]))


def _without_magics(text: str) -> str:
    return "\n".join("" if line.lstrip().startswith(("%", "!")) else line
                     for line in text.splitlines())


# =============================================================================================
# Functions: the same pass on a function whose source Python can give
# =============================================================================================

def rolled_function(fun):
    """`fun` recompiled with its loops and branches rolled, or `fun` itself when that cannot
    be done: no source (built in, defined in a REPL without source), a lambda, or a closure
    (its free variables' cells cannot be handed to a recompiled function)."""
    import inspect
    import textwrap
    import types
    if not isinstance(fun, types.FunctionType) or fun.__code__.co_freevars \
            or fun.__name__ == "<lambda>":
        return fun
    try:
        lines, start = inspect.getsourcelines(fun)
    except (OSError, TypeError):
        return fun
    try:
        tree = ast.parse(textwrap.dedent("".join(lines)))
    except SyntaxError:
        return fun
    if len(tree.body) != 1 or not isinstance(tree.body[0], ast.FunctionDef):
        return fun
    tree.body[0].decorator_list = []
    ast.increment_lineno(tree, start - 1)
    code = compile(roll_loops(tree), fun.__code__.co_filename, "exec")
    scope: dict = {}
    exec(code, fun.__globals__, scope)
    rolled = scope[tree.body[0].name]
    rolled.__defaults__, rolled.__kwdefaults__ = fun.__defaults__, fun.__kwdefaults__
    return rolled
