"""Loop rolling, the AST pass: Python loops and branches become calls of runtime helpers.

`roll_loops(module)` is an AST pass over every function of a module (a cell made into a
function, or a function whose source Python can give; see `convert`). Each

    for NAME in range(...):    while TEST:    if TEST:

is rewritten into a call of a helper of `runtime` that decides *at trace time* whether the
statement runs as plain Python or becomes one XLA loop or conditional.
"""
from __future__ import annotations

import ast
import copy
import itertools
from typing import Any


from . import runtime
from .blockers import HINTS, drop_break, drop_continue, find_blocker
from .cell import assigned_names, collect_loads, walk_block
from .creation_calls import wrap_creation_calls
from .rewrite_expressions import RT, IfExpressions, assert_call, raise_call, rewrite_test, rt_attr
from .scopes import function_scope

def roll_loops(module: ast.Module) -> ast.Module:
    """A copy of `module` whose functions' loops and branches call the rolling helpers."""
    module = copy.deepcopy(module)
    counter = itertools.count()
    for node in reversed(list(ast.walk(module))):        # inner functions first
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            _Rewriter(node, counter).rewrite_function()
    return ast.fix_missing_locations(module)


class _Rewriter:
    """Rewrites the statements of one function (nested functions are rewritten on their own)."""

    def __init__(self, fn: ast.FunctionDef, counter):
        self.fn = fn
        self.counter = counter
        facts = function_scope(fn)
        self.scope = set(facts.locals)
        self.captured = set(facts.captured)

    def rewrite_function(self) -> None:
        body = self.fn.body
        doc = body[:1] if body and isinstance(body[0], ast.Expr) and isinstance(
            body[0].value, ast.Constant) and isinstance(body[0].value.value, str) else []
        imports = at_line(_parse(f"import {runtime.__name__} as {RT}"), self.fn.lineno)
        body = [IfExpressions().visit(stmt) for stmt in body[len(doc):]]
        self.fn.body = doc + imports + self.block(wrap_creation_calls(body, RT))

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
        if isinstance(stmt, ast.Assert):
            return [assert_call(stmt)]
        if isinstance(stmt, ast.Raise) and isinstance(stmt.exc, ast.Call):
            return [raise_call(stmt)]
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
        found = find_blocker(stmts, loop=kind != "if")
        if found[0]:
            return found
        assigned = set(assigned_names(stmts))
        if target in assigned:
            return (f"it assigns to the loop variable `{target}`",
                    "use another name for the value computed from it")
        outside = sorted(assigned - self.scope)
        if outside:
            return (f"it rebinds `{outside[0]}`, which is global", HINTS["global"])
        shared = sorted(assigned & self.captured)
        if shared:
            return (f"a function defined outside it reads `{shared[0]}`, which it rebinds",
                    f"pass `{shared[0]}` to that function as an argument")
        return ("", "")

    def site(self, kind, node, text, names=(), assigned=(), exposed=(), target=None,
             blocker=("", ""), dead=(), kept=()) -> str:
        fields = dict(kind=kind, line=node.lineno, text=text, names=tuple(names),
                      assigned=tuple(assigned), exposed=tuple(exposed), target=target,
                      blocker=blocker[0], hint=blocker[1], dead=tuple(dead), kept=tuple(kept),
                      static_note=getattr(node, "psc_static_note", ""))
        return f"{RT}.Site(" + ", ".join(f"{k}={v!r}" for k, v in fields.items()) + ")"

    # for NAME in range(...) ----------------------------------------------------------------
    def for_loop(self, node: ast.For) -> list[ast.stmt]:
        if not _is_range_loop(node):
            return self.sequence_loop(node)
        if drop_break(node.body, "") is not None:
            return self.break_loop(node)
        k = next(self.counter)
        target = node.target.id
        body = drop_continue(node.body)
        blocker = self.blocker(body, "for", target)
        local = _pass_local(self.fn, node, body, {target})
        assigned = tuple(n for n in assigned_names(body) if n in self.scope and n not in local)
        names = self.names_of(body, exclude={target})
        exposed = _exposed(body, {target}) & set(assigned)
        text = f"for {target} in {ast.unparse(node.iter)}"
        site = self.site("for", node, text, names, assigned, sorted(exposed), target, blocker,
                         kept=_maybe_unassigned(body, assigned))
        args = ast.Tuple(elts=node.iter.args, ctx=ast.Load())
        if blocker[0]:
            site = self.site("for", node, text, names, target=target, blocker=blocker)
            code = _FOR_BLOCKED.format(rt=RT, k=k, site=site, target=target)
        else:
            code = _FOR.format(rt=RT, k=k, site=site, target=target,
                               params=", ".join((target,) + names), ret=_tuple(assigned),
                               outs=_tuple(assigned + (target,)))
        holes = {"ARGS": args, "BODY": self.block(body), "ORELSE": self.block(node.orelse),
                 "DELS": _dels(assigned + (target,))}
        if blocker[0] or not _nests(body):
            holes["PLAIN"] = self.block(copy.deepcopy(body))
        else:
            code = _hoisted(code, k, "body")
            holes["PLAIN"] = _plain_pass(k, assigned, target)
        return _fill(code, node.lineno, holes)

    # loops with `break` ----------------------------------------------------------------------
    def break_loop(self, node: ast.For) -> list[ast.stmt]:
        """A range loop that leaves by `break` (inside `if`s): a `while` over the index whose
        test also asks a flag that the `break` sets; what follows a `break` in the body runs
        under `if not flag:`. Its test stays a Python bool while the exit tests are (the loop
        then runs as plain Python, as before); an exit test on a traced value makes the flag,
        and from there the loop, traced (runtime.roll_while)."""
        k = next(self.counter)
        at, stop, step, flag = (f"__psc_{part}_{k}" for part in ("at", "stop", "step", "brk"))
        self.scope |= {at, stop, step}
        target = node.target.id
        head = f"{at}, {stop}, {step} = {RT}.range_bounds(__ARGS__)\n"
        loop = (f"while {RT}.in_range({at}, {stop}, {step}) and not {flag}:\n"
                f"    {target} = {at}\n"
                f"    {at} = {at} + {step}\n")
        stmts = self.flagged(node, flag, head, loop, f"for {target} in {ast.unparse(node.iter)}",
                             {"ARGS": ast.Tuple(elts=node.iter.args, ctx=ast.Load())})
        stmts[0].value.args = stmts[0].value.args[0].elts       # range_bounds(*ARGS)
        stmts[2].psc_static_note = "it uses `break`"            # (for notes)
        return self.block(stmts)

    def break_while(self, node: ast.While) -> list[ast.stmt]:
        """`while TEST:` that leaves by `break` (inside `if`s): `while not flag and TEST:`,
        as `break_loop` does for a range loop (TEST is not evaluated after the `break`)."""
        flag = f"__psc_brk_{next(self.counter)}"
        stmts = self.flagged(node, flag, "", f"while not {flag} and (__TEST__):\n",
                             f"while {ast.unparse(node.test)}", {"TEST": node.test})
        return self.block(stmts)

    def flagged(self, node, flag: str, head: str, loop: str, text: str, holes: dict
                ) -> list[ast.stmt]:
        """`head`, `flag = False`, then `loop` (its `while` line and first statements) over
        node's body with its `break`s setting flag, and node's `else` under `if not flag:`;
        the `while` and that `if` say `text` in messages."""
        self.scope.add(flag)
        code = f"{head}{flag} = False\n{loop}    __BODY__\n"
        if node.orelse:
            code += f"if not {flag}:\n    __ORELSE__\n"
        stmts = _fill(code, node.lineno, holes | {"BODY": drop_break(node.body, flag),
                                                  "ORELSE": node.orelse})
        at = next(k for k, s in enumerate(stmts) if isinstance(s, ast.While))
        stmts[at].psc_text = text
        if node.orelse:
            stmts[at + 1].psc_text = f"{text}: ... else"
        return stmts

    # for TARGET in x / enumerate(x) / zip(x, y) ----------------------------------------------
    def sequence_loop(self, node: ast.For) -> list[ast.stmt]:
        """A loop over an array (its rows), `enumerate` or `zip` of arrays: when they are
        traced, a loop over `range` of their length whose body first binds the target to
        the rows at the index (rolled like any); otherwise the loop as written."""
        if _blocks_sequence(node):
            return [self.nested(node)]
        k = next(self.counter)
        seq, index = f"__psc_seq_{k}", f"__psc_i_{k}"
        self.scope |= {seq, index}
        it = node.iter
        kind, args = "plain", [it]
        if isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and \
                it.func.id in ("enumerate", "zip") and not any(
                    isinstance(a, ast.Starred) for a in it.args) and not it.keywords:
            kind, args = it.func.id, [it.func, *it.args]
        make = ast.Call(func=rt_attr("Sequence"), args=[ast.Constant(kind), *args],
                        keywords=[])
        rows = ast.For(target=ast.Name(index, ast.Store()), iter=ast.Call(
            func=ast.Name("range", ast.Load()),
            args=[ast.Attribute(ast.Name(seq, ast.Load()), "length", ast.Load())], keywords=[]),
            body=[ast.Assign(targets=[node.target], value=ast.Call(
                func=ast.Attribute(ast.Name(seq, ast.Load()), "item", ast.Load()),
                args=[ast.Name(index, ast.Load())], keywords=[]))] + node.body,
            orelse=copy.deepcopy(node.orelse))
        plain = ast.For(target=copy.deepcopy(node.target), iter=ast.Call(
            func=ast.Attribute(ast.Name(seq, ast.Load()), "plain", ast.Load()), args=[],
            keywords=[]), body=copy.deepcopy(node.body), orelse=copy.deepcopy(node.orelse))
        code = (f"{seq} = __MAKE__\nif {seq}.rolls:\n    __ROWS__\n    __LAST__\n"
                f"else:\n    __PLAIN__\n")
        for stmt in (rows, plain):
            ast.copy_location(stmt, node)
            ast.fix_missing_locations(stmt)
        holes = {"MAKE": make, "ROWS": self.for_loop(rows), "PLAIN": [self.nested(plain)],
                 "LAST": _last_rows(node, seq)}
        return _fill(code, node.lineno, holes)

    # while TEST ----------------------------------------------------------------------------
    def while_loop(self, node: ast.While) -> list[ast.stmt]:
        if drop_break(node.body, "") is not None:
            return self.break_while(node)
        k = next(self.counter)
        body = drop_continue(node.body)
        blocker = self.blocker(body, "while")
        text = getattr(node, "psc_text", None) or f"while {ast.unparse(node.test)}"
        test = rewrite_test(node.test)
        if blocker[0]:
            site = self.site("while", node, text, self.names_of(body, [node.test]),
                             blocker=blocker)
            return self.blocked_test("while", node, site, test)
        local = _pass_local(self.fn, node, body, set()) - _reads(node.test)
        assigned = tuple(n for n in assigned_names(body) if n in self.scope and n not in local)
        names = self.names_of(body, extra=[node.test])
        exposed = (_exposed(body, set()) | _reads(node.test)) & set(assigned)
        site = self.site("while", node, text, names, assigned, sorted(exposed), blocker=blocker,
                         kept=_maybe_unassigned(body, assigned))
        code = _WHILE.format(rt=RT, k=k, site=site, params=", ".join(names),
                             ret=_tuple(assigned), outs=_tuple(assigned))
        holes = {"TEST": test, "TEST2": copy.deepcopy(test), "BODY": self.block(body),
                 "ORELSE": self.block(node.orelse), "DELS": _dels(assigned)}
        if _nests(body):
            code = _hoisted(code, k, "body")
            holes["PLAIN"] = _plain_pass(k, assigned)
        else:
            holes["PLAIN"] = self.block(copy.deepcopy(body))
        return _fill(code, node.lineno, holes)

    def blocked_test(self, keyword: str, node, site: str, test) -> list[ast.stmt]:
        """`while`/`if` left as it is, its test checked to be a Python bool (not traced)."""
        code = _BLOCKED_TEST.format(keyword=keyword, rt=RT, site=site)
        holes = {"TEST": test, "BODY": self.block(node.body), "ORELSE": self.block(node.orelse)}
        return _fill(code, node.lineno, holes)

    # if TEST -------------------------------------------------------------------------------
    def if_stmt(self, node: ast.If) -> list[ast.stmt]:
        k = next(self.counter)
        text = getattr(node, "psc_text", None) or f"if {ast.unparse(node.test)}"
        blocker = self.blocker(node.body + node.orelse, "if")
        test = rewrite_test(node.test)
        if blocker[0]:
            return self.blocked_test("if", node, self.site("if", node, text, blocker=blocker), test)
        both = node.body + node.orelse
        assigned = tuple(n for n in assigned_names(both) if n in self.scope)
        names = self.names_of(both)
        read_elsewhere = _reads_outside(self.fn, node)
        dead = [n for n in assigned if n not in read_elsewhere]
        site = self.site("if", node, text, names, assigned, assigned, dead=dead)
        code = _IF.format(rt=RT, k=k, site=site, params=", ".join(names), ret=_tuple(assigned),
                          assign=f"{_tuple(assigned)} = " if assigned else "")
        holes = {"TEST": test, "BODY": self.block(node.body),
                 "ORELSE": self.block(node.orelse),
                 "DELS": _dels([n for n in assigned if n not in dead])}
        if _nests(both):
            code = _hoisted(_hoisted(code, k, "then"), k, "else")
            holes["PLAIN"] = _plain_pass(k, assigned, kind="then")
            holes["PLAIN_ELSE"] = _plain_pass(k, assigned, kind="else")
        else:
            holes["PLAIN"] = self.block(copy.deepcopy(node.body))
            holes["PLAIN_ELSE"] = self.block(copy.deepcopy(node.orelse))
        return _fill(code, node.lineno, holes)


# After a helper ran: None means "run the statement as plain Python", else the loop's results.
_ROLLED_OR_PLAIN = """
if __psc_res_{k} is None:
    LOOP:
        __PLAIN__
    else:
        __ORELSE__
else:
    {outs} = __psc_res_{k}
    __DELS__
    __ORELSE__
"""


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
""" + _ROLLED_OR_PLAIN.replace("LOOP", "for {target} in range(*__psc_args_{k})")


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
""" + _ROLLED_OR_PLAIN.replace("LOOP", "while __TEST2__")


_IF = """
__psc_site_{k} = {site}
__psc_pred_{k} = __TEST__
if {rt}.is_traced(__psc_pred_{k}):
    def __psc_then_{k}({params}):
        __BODY__
        return {ret}
    def __psc_else_{k}({params}):
        __ORELSE__
        return {ret}
    {assign}{rt}.convert_if(__psc_site_{k}, __psc_pred_{k}, __psc_then_{k}, __psc_else_{k}, locals())
    __DELS__
elif __psc_pred_{k}:
    __PLAIN__
else:
    __PLAIN_ELSE__
"""


# `while` or `if` whose body cannot be converted: the test must be a Python bool.
_BLOCKED_TEST = """
{keyword} {rt}.truth(__TEST__, {site}):
    __BODY__
else:
    __ORELSE__
"""


# A loop or `if` whose body holds loops or branches of its own runs its plain path (no
# tracer, or a single pass) by calling the function of its rewritten body, once per pass,
# rather than from a second rewritten copy of the body: copies doubled at every level, and an
# 8-deep loop nest took 50 s to rewrite.
def _nests(stmts) -> bool:
    """Whether statements hold a loop or an `if` (outside functions they define)."""
    for stmt in stmts:
        for node in _walk_same_scope(stmt):
            if isinstance(node, (ast.For, ast.While, ast.If)):
                return True
    return False


def _walk_same_scope(node):
    yield node
    for child in ast.iter_child_nodes(node):
        if not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef,
                                  ast.Lambda)):
            yield from _walk_same_scope(child)


def _hoisted(code: str, k: int, kind: str) -> str:
    """The template with the definition of its `__psc_<kind>_k` function moved before the
    statement, where the plain path can call it too."""
    lines = code.strip("\n").split("\n")
    start = next(i for i, line in enumerate(lines)
                 if line.strip().startswith(f"def __psc_{kind}_{k}("))
    indent = len(lines[start]) - len(lines[start].lstrip())
    end = start + 1
    while end < len(lines) and len(lines[end]) - len(lines[end].lstrip()) > indent:
        end += 1
    definition = [line[indent:] for line in lines[start:end]]
    return "\n".join(definition + lines[:start] + lines[end:]) + "\n"


def _plain_pass(k: int, assigned, target: str | None = None, kind: str = "body"
                ) -> list[ast.stmt]:
    """One pass (or branch) of the plain path: the body's function called on the current
    values of its names."""
    index = f", {target}" if target else ""
    call = f"{RT}.plain_pass(__psc_site_{k}, __psc_{kind}_{k}, locals(){index})"
    if not assigned:
        return _parse(f"{call}\n")
    return _parse(f"{_tuple(assigned)} = {call}\n") + _dels(assigned)


def _parse(code: str) -> list[ast.stmt]:
    return ast.parse(code).body


def at_line(stmts: list[ast.stmt], line: int) -> list[ast.stmt]:
    """The statements with every node at `line` (what a trace stopping in them names)."""
    for stmt in stmts:
        for node in ast.walk(stmt):
            if "lineno" in node._attributes:
                node.lineno = node.end_lineno = line
                node.col_offset, node.end_col_offset = 0, 0
    return stmts


def _fill(code: str, line: int, holes: dict[str, Any]) -> list[ast.stmt]:
    """The template's statements at `line`, with its holes filled."""
    return _HoleFiller(holes).visit_block(at_line(_parse(code), line))


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


def _blocks_sequence(node: ast.For) -> bool:
    """A target the row loop cannot bind the same way (an attribute, a subscript, a starred
    name)."""
    return not all(isinstance(t, ast.Name) or isinstance(t, ast.Tuple) and all(
        isinstance(e, ast.Name) for e in t.elts) for t in [node.target])


def _last_rows(node: ast.For, seq: str) -> list[ast.stmt]:
    """After a loop over rows that ran to its end, its target is the last rows themselves:
    views of the arrays, as Python's loop leaves them (the loop's carry is a copy). Nothing
    where the body rebinds the target, can leave by `break`, or an `else` reads it first."""
    targets = {n.id for n in ast.walk(node.target) if isinstance(n, ast.Name)}
    if node.orelse or targets & set(assigned_names(node.body)) or \
            find_blocker(node.body, loop=True)[0] == "it uses `break`":
        return []
    code = f"if {seq}.length:\n    __TARGET__ = {seq}.item({seq}.length - 1)\n"
    last = _fill(code, node.lineno, {})
    last[0].body[0].targets = [copy.deepcopy(node.target)]
    return last


def _is_range_loop(node: ast.For) -> bool:
    it = node.iter
    return (isinstance(node.target, ast.Name) and isinstance(it, ast.Call)
            and isinstance(it.func, ast.Name) and it.func.id == "range" and not it.keywords
            and 1 <= len(it.args) <= 3 and not any(isinstance(a, ast.Starred) for a in it.args))


def _exposed(body, assigned: set[str]) -> set[str]:
    """Names whose value on entry the body may use: read before assigned, or not assigned on
    every path (the old value then flows through)."""
    reads: list[str] = []
    definite = walk_block(body, set(assigned), reads)
    return set(reads) | (set(assigned_names(body)) - definite)


def _maybe_unassigned(body, assigned) -> list[str]:
    """The names of `assigned` that a pass of the body may leave as they were."""
    definite = walk_block(body, set(), [])
    return [n for n in assigned if n not in definite]


def _pass_local(fn, node, body, bound: set[str]) -> set[str]:
    """Names each pass of a loop assigns before it reads them and nothing reads after the
    loop (`dHG = G[k] @ dH[a]` under an `if`, used only there): every pass has its own, so the
    loop does not carry them. (A pass that leaves such a name unassigned would otherwise carry
    a value that one branch of the `if` gives and the other does not.)"""
    reads: list[str] = []
    walk_block(body, bound, reads)
    outside = _reads_outside(fn, node)
    if outside & _NAMESPACE_READERS:
        return set()
    return set(assigned_names(body)) - set(reads) - outside


_NAMESPACE_READERS = frozenset({"locals", "vars", "eval", "exec", "dir"})


def _reads_outside(fn, node) -> set[str]:
    """Names fn (or a function inside it) may read anywhere but inside `node`: a name
    assigned in `node` and read nowhere else is dead after it (it keeps the UNBOUND marker
    where a branch did not assign it). String constants count as reads: a cell function
    returns its outputs by name (`locals()[name]`)."""
    inside = {id(n) for n in ast.walk(node)}
    found = set()
    for n in ast.walk(fn):
        if id(n) in inside:
            continue
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load):
            found.add(n.id)
        elif isinstance(n, ast.Constant) and isinstance(n.value, str):
            found.add(n.value)
    return found


def _reads(expr) -> set[str]:
    reads: list[str] = []
    collect_loads(expr, set(), reads)
    return set(reads)
