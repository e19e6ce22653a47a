"""A notebook cell as a function: inputs are the names it reads before assigning them,
outputs the names it assigns at top level, its last expression a result of its own.

Also the static part of the PSC check: calls that are side effects (print, I/O, the global
random state) are found in the AST, with their line, before anything is traced.
"""
from __future__ import annotations

import ast
import builtins
import functools
import hashlib
import linecache
from dataclasses import dataclass

LAST_VALUE = "__psc_last__"
DELETED = "<deleted>"     # the key of a cell function's outputs naming the names it unbound


class _Present:
    """What a cell function's parameter holds for a name the cell may delete but does not
    read: the name is bound, as it is in the namespace, and an output still holding this
    was not touched by the cell (`bind_outputs` leaves the namespace's value)."""

    def __repr__(self) -> str:
        return "<bound before the cell>"


PRESENT = _Present()


def bind_outputs(namespace: dict, outputs: dict) -> None:
    """Write a cell's outputs into the namespace as plain Python leaves it: the names it
    bound set, the names it unbound deleted, the others untouched."""
    for name in outputs.get(DELETED, ()):
        namespace.pop(name, None)
    namespace.update({n: v for n, v in outputs.items() if n != DELETED and v is not PRESENT})

_IMPURE_CALLS = {
    "print": "print() is a side effect; print after the cell, or return the value",
    "input": "input() reads from the user; do it outside the cell",
    "open": "open() does file I/O; read the file before the cell",
    "exec": "exec() runs code psc_jit cannot see; write the code in the cell",
    "eval": "eval() runs code psc_jit cannot see; write the code in the cell",
    "display": "display() is a side effect; display after the cell",
}
_GENERATORS = ("a NumPy random generator draws its numbers outside XLA, and psc_jit does not "
               "compile it; draw the numbers before the cell and use them in it")
_IMPURE_MODULE_PREFIXES = {     # the first that matches gives the reason
    **{f"{np_}.random.{name}": _GENERATORS for np_ in ("np", "numpy")
       for name in ("default_rng", "Generator", "RandomState")},
    "np.random": "the global random state is a side effect; draw the numbers before the cell "
                 "(rng = np.random.default_rng(seed); r = rng.standard_normal(shape))",
    "numpy.random": "the global random state is a side effect; draw the numbers before the cell",
    "time": "time.* reads the clock; time the cell from outside (psc_jit's Timing tab does)",
    "plt": "plotting is a side effect; plot after the cell",
    "np.save": "np.save writes a file; save after the cell",
    "np.load": "np.load reads a file; load before the cell",
    "np.savetxt": "np.savetxt writes a file; save after the cell",
    "np.loadtxt": "np.loadtxt reads a file; load before the cell",
}


@dataclass(frozen=True)
class Finding:
    """A construct that keeps a cell from being compiled, at its line."""
    line: int
    construct: str
    reason: str

    def explain(self) -> str:
        return f"line {self.line}: '{self.construct}': {self.reason}"


@dataclass(frozen=True)
class CellAnalysis:
    source: str               # the cell body (without the %%psc_jit line)
    filename: str             # the name its code is compiled under (also in linecache)
    line_offset: int          # lines before the body in the cell as the user sees it
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]
    has_last_expr: bool
    findings: tuple[Finding, ...]
    deletable: tuple[str, ...] = ()     # names it may unbind (`del`, `except ... as`)
    # A region of the cell (frontend/regions.py): (path of its block, first statement, end),
    # and how its statements are changed first when they are (`rewrite.apply(statements)`);
    # () for the whole cell.
    part: tuple = ()

    def parameters(self, namespace) -> tuple[str, ...]:
        """The cell function's parameters in this namespace: the inputs bound there, then the
        names the cell may delete without reading them that are bound there (each takes
        `PRESENT`, so that `del name` unbinds it as at module level)."""
        inputs = tuple(n for n in self.inputs if n in namespace)
        return inputs + tuple(n for n in self.deletable if n in namespace and n not in inputs)

    @functools.cached_property
    def digest(self) -> str:
        return source_digest(self.source + (repr(self.part) if self.part else ""))

    @functools.cached_property
    def own_source(self) -> str:
        """The source of the cell's statements; of a region, its own statements only (what
        it writes to and reads is told by them, not by the rest of the cell)."""
        if not self.part:
            return self.source
        return "\n".join(ast.unparse(stmt) for stmt in self.statements()) + "\n"

    @functools.cached_property
    def tree(self) -> ast.Module:
        """The cell's (the region's) statements parsed once, to be read, never changed (for a
        tree to transform, `statements()`)."""
        return ast.Module(body=self.statements(), type_ignores=[])

    def statements(self) -> list[ast.stmt]:
        """The cell's statements (the region's, for a region), freshly parsed at the lines
        the user sees."""
        tree = parse_cell(self.source, self.filename, self.line_offset)
        if not self.part:
            return tree.body
        path, start, stop, *rewrite = self.part
        stmts = block_at(tree, path)[start:stop]
        return rewrite[0].apply(stmts) if rewrite else stmts


def source_digest(source: str) -> str:
    return hashlib.sha256(source.encode()).hexdigest()[:12]


CELL_FILE_PREFIX = "<psc_jit cell "
CELL_FUNCTION = "cell"


def cell_filename(source: str) -> str:
    return f"{CELL_FILE_PREFIX}{source_digest(source)}>"


def is_cell_code(code) -> bool:
    """Whether this code object is a cell's top level (made by `make_cell_function`): there,
    a name not bound yet has the value it had in the user's namespace."""
    return code.co_name == CELL_FUNCTION and code.co_filename.startswith(CELL_FILE_PREFIX)


@functools.lru_cache(maxsize=512)
def analyze_cell(source: str, line_offset: int = 1, magic_line: str = "%%psc_jit") -> CellAnalysis:
    """Parse a cell body; raise SyntaxError (with the user's line numbers) if it is not Python.
    Re-running a cell re-uses its analysis (this is on the path of every cache hit)."""
    filename = cell_filename(source)
    tree = parse_cell(source, filename, line_offset)
    shown = ([magic_line] * line_offset if line_offset else []) + source.splitlines()
    text = "\n".join(shown) + "\n"
    linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)
    inputs = _reads_before_assignment(tree.body)
    outputs = assigned_names(tree.body)
    last = bool(tree.body) and isinstance(tree.body[-1], ast.Expr)
    return CellAnalysis(source, filename, line_offset, tuple(inputs), tuple(outputs), last,
                        tuple(impure_findings(tree, filename)), tuple(deletable_names(tree.body)))


def parse_cell(source: str, filename: str, line_offset: int) -> ast.Module:
    try:
        tree = ast.parse(source, filename)
    except SyntaxError as err:
        if err.lineno is not None:
            err.lineno += line_offset
        if getattr(err, "end_lineno", None) is not None:
            err.end_lineno += line_offset
        raise
    ast.increment_lineno(tree, line_offset)
    return tree


def block_at(tree: ast.Module, path: tuple) -> list[ast.stmt]:
    """The statements of the block at `path` in a parsed cell: () is the top level, (i,
    "body") the body of its i-th statement, (i, "body", j, "orelse") the `else` of the j-th
    statement in there, and so on."""
    body = tree.body
    for index, field in zip(path[::2], path[1::2], strict=True):
        body = getattr(body[index], field)
    return body


def region_analysis(analysis: CellAnalysis, path: tuple, start: int, stop: int,
                    ends_cell: bool, rewrite=None) -> CellAnalysis:
    """The analysis of statements [start, stop) of the block at `path` (changed by `rewrite`
    first, when given), as a cell of its own: its inputs are what they read before assigning,
    its outputs what they assign."""
    part = (path, start, stop) + ((rewrite,) if rewrite is not None else ())
    return _region_analysis(analysis, part, ends_cell)


@functools.lru_cache(maxsize=1024)
def _region_analysis(analysis, part, ends_cell) -> CellAnalysis:
    path, start, stop, *rewrite = part
    tree = parse_cell(analysis.source, analysis.filename, analysis.line_offset)
    stmts = block_at(tree, path)[start:stop]
    stmts = rewrite[0].apply(stmts) if rewrite else stmts
    last = ends_cell and isinstance(stmts[-1], ast.Expr)
    return CellAnalysis(analysis.source, analysis.filename, analysis.line_offset,
                        tuple(_reads_before_assignment(stmts)), tuple(assigned_names(stmts)),
                        last, (), tuple(deletable_names(stmts)), part)


# -- inputs: names read where they may not have been assigned yet -----------------------------

def _reads_before_assignment(body: list[ast.stmt]) -> list[str]:
    reads: list[str] = []
    walk_block(body, set(), reads)
    seen = set()
    return [n for n in reads if not (n in seen or seen.add(n))]


def walk_block(body, assigned: set[str], reads: list[str]) -> set[str]:
    """Record reads of names not definitely assigned; return the definitely-assigned set."""
    assigned = set(assigned)
    for stmt in body:
        assigned = _walk_stmt(stmt, assigned, reads)
    return assigned


def _walk_stmt(stmt, assigned, reads):
    if isinstance(stmt, (ast.For, ast.AsyncFor)):
        collect_loads(stmt.iter, assigned, reads)
        inner = assigned | _targets(stmt.target)
        after_body = walk_block(stmt.body, inner, reads)
        walk_block(stmt.orelse, inner, reads)
        return after_body if _runs_through_at_least_once(stmt) else assigned
    if isinstance(stmt, ast.While):
        collect_loads(stmt.test, assigned, reads)
        _walk_loop_body(stmt.body, assigned, reads)
        walk_block(stmt.orelse, assigned, reads)
        return assigned
    if isinstance(stmt, ast.If):
        collect_loads(stmt.test, assigned, reads)
        return walk_block(stmt.body, assigned, reads) & walk_block(stmt.orelse, assigned, reads)
    if isinstance(stmt, (ast.With, ast.AsyncWith)):
        for item in stmt.items:
            collect_loads(item.context_expr, assigned, reads)
            if item.optional_vars is not None:
                assigned = assigned | _targets(item.optional_vars)
        return walk_block(stmt.body, assigned, reads)
    if isinstance(stmt, (ast.Try, getattr(ast, "TryStar", ast.Try))):
        after = walk_block(stmt.body, assigned, reads)
        for handler in stmt.handlers:
            if handler.type is not None:
                collect_loads(handler.type, assigned, reads)
            walk_block(handler.body, assigned | set(bound_by(handler)), reads)
        walk_block(stmt.orelse, after, reads)
        walk_block(stmt.finalbody, assigned, reads)
        return assigned
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        for node in stmt.decorator_list:
            collect_loads(node, assigned, reads)
        _loads_in_nested_scope(stmt, assigned | {stmt.name}, reads)
        return assigned | {stmt.name}
    if isinstance(stmt, ast.AugAssign):
        collect_loads(stmt.value, assigned, reads)
        collect_loads(stmt.target, assigned, reads, store_too=True)
        return assigned | _targets(stmt.target)
    if isinstance(stmt, (ast.Assign, ast.AnnAssign)):
        if stmt.value is not None:
            collect_loads(stmt.value, assigned, reads)
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
        for target in targets:
            collect_loads(target, assigned, reads)      # subscripts and attributes read their base
        return assigned | set().union(*(_targets(t) for t in targets))
    if isinstance(stmt, (ast.Import, ast.ImportFrom)):
        return assigned | set(bound_by(stmt))
    if isinstance(stmt, ast.Match):
        collect_loads(stmt.subject, assigned, reads)
        for case in stmt.cases:
            _walk_case(case, assigned, reads)
        return assigned
    collect_loads(stmt, assigned, reads)
    return assigned | _walrus_targets(stmt)


def _runs_through_at_least_once(loop: ast.For) -> bool:
    """Whether the loop's body surely runs to its end at least once: it iterates over
    `range` of int literals with at least one value, or a non-empty literal tuple or list,
    and has no `break` or `continue` of its own. Then what the body always assigns is
    assigned after the loop (`for i in range(3): a = x * i`, then `b = a + 1`: `a` is not
    an input)."""
    if any(isinstance(node, (ast.Break, ast.Continue)) for node in _own_statements(loop.body)):
        return False
    items = loop.iter
    if isinstance(items, (ast.Tuple, ast.List)):
        return bool(items.elts) and not any(isinstance(e, ast.Starred) for e in items.elts)
    if not (isinstance(items, ast.Call) and isinstance(items.func, ast.Name)
            and items.func.id == "range" and not items.keywords):
        return False
    bounds = [_int_literal(arg) for arg in items.args]
    if None in bounds or not 1 <= len(bounds) <= 3 or 0 in bounds[2:]:
        return False
    return len(range(*bounds)) > 0


def _int_literal(node) -> int | None:
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        value = _int_literal(node.operand)
        return None if value is None else -value
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    return None


def _own_statements(body):
    """The statements of a loop's body, not those of loops or functions nested in it (their
    `break` is their own)."""
    for stmt in body:
        yield stmt
        if isinstance(stmt, (ast.For, ast.AsyncFor, ast.While, ast.FunctionDef,
                             ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        for field in ("body", "orelse", "finalbody", "handlers", "cases"):
            yield from _own_statements(getattr(stmt, field, ()))


def _walk_case(case: ast.match_case, assigned, reads) -> None:
    """A `case`: its pattern reads value patterns and classes, binds its captures; then its
    guard and body."""
    captured = set(assigned)
    for node in ast.walk(case.pattern):
        if isinstance(node, ast.MatchValue):
            collect_loads(node.value, assigned, reads)
        elif isinstance(node, ast.MatchClass):
            collect_loads(node.cls, assigned, reads)
        elif isinstance(node, ast.MatchMapping):
            for key in node.keys:
                collect_loads(key, assigned, reads)
        captured |= set(bound_by(node))
    if case.guard is not None:
        collect_loads(case.guard, captured, reads)
    walk_block(case.body, captured, reads)


def _walk_loop_body(body, assigned, reads):
    """A name read in the body before the body assigns it is read from before the loop (or
    from the previous iteration): one pass with what was assigned before the loop finds it."""
    walk_block(body, assigned, reads)


_NESTED_SCOPES = (ast.Lambda, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef,
                  ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


def collect_loads(node, assigned, reads, store_too=False):
    """Reads in this scope, in source order; nested scopes contribute their free names."""
    if isinstance(node, _NESTED_SCOPES):
        _loads_in_nested_scope(node, assigned, reads)
        return
    if isinstance(node, ast.Name) and (isinstance(node.ctx, ast.Load) or store_too) \
            and node.id not in assigned:
        reads.append(node.id)
    for child in ast.iter_child_nodes(node):
        collect_loads(child, assigned, reads, store_too)


def _loads_in_nested_scope(node, assigned, reads):
    """Free names of a nested scope (comprehension, lambda, def) are reads too."""
    local = set()
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Store):
            local.add(sub.id)
        elif isinstance(sub, ast.arg):
            local.add(sub.arg)
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Load) and \
                sub.id not in local and sub.id not in assigned:
            reads.append(sub.id)


def _targets(node) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(
        n.ctx, ast.Store)}


def _walrus_targets(node) -> set[str]:
    """Walrus targets binding in node's scope (in its comprehensions too, not its lambdas)."""
    return {n.target.id for n in scope_nodes(node) if isinstance(n, ast.NamedExpr)}


# -- outputs: names the cell binds in its own scope -------------------------------------------

def assigned_names(body) -> list[str]:
    """The names these statements bind in their own scope, in source order, by every form
    Python has: assignment targets (chained, starred, tuple), augmented assignment, `for`,
    `with ... as` and `except ... as` targets, `del`, imports, `def` and `class`, walrus
    targets (those inside comprehensions too: they bind the scope around the comprehension)
    and match captures (`case (n, *rest) as whole`, `{**kw}`, `P(x=px)`)."""
    names = [name for stmt in body for node in scope_nodes(stmt) for name in bound_by(node)]
    return list(dict.fromkeys(names))


def deletable_names(body) -> list[str]:
    """The names these statements may unbind in their own scope: `del name`, and the target
    of `except ... as name` (Python deletes it when the handler ends)."""
    found = []
    for stmt in body:
        for node in scope_nodes(stmt):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Del):
                found.append(node.id)
            elif isinstance(node, ast.ExceptHandler) and node.name:
                found.append(node.name)
    return list(dict.fromkeys(found))


def bound_by(node) -> list[str]:
    """The names one node binds in the scope it stands in."""
    if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
        return [node.id]
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return [node.name]
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        return [(a.asname or a.name).split(".")[0] for a in node.names if a.name != "*"]
    if isinstance(node, ast.ExceptHandler) and node.name:
        return [node.name]
    if isinstance(node, ast.NamedExpr):
        return [node.target.id]
    if isinstance(node, (ast.MatchAs, ast.MatchStar)) and node.name:
        return [node.name]
    if isinstance(node, ast.MatchMapping) and node.rest:
        return [node.rest]
    return []


_SCOPE_NODES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)
COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


def scope_nodes(node):
    """The nodes of node's scope, in source order: a nested function, class or lambda is
    not entered (what it evaluates where it stands is: decorators, defaults, bases), a
    comprehension only for its walrus targets (which bind here)."""
    yield node
    if isinstance(node, _SCOPE_NODES):
        for child in _evaluated_here(node):
            yield from scope_nodes(child)
        return
    if isinstance(node, COMPREHENSIONS):
        yield from (n for n in ast.walk(node) if isinstance(n, ast.NamedExpr))
        return
    for child in ast.iter_child_nodes(node):
        yield from scope_nodes(child)


def _evaluated_here(node) -> list[ast.AST]:
    """What a def, class or lambda evaluates in the scope around it."""
    found = list(getattr(node, "decorator_list", ()))
    if isinstance(node, ast.ClassDef):
        return found + node.bases + [k.value for k in node.keywords]
    args = node.args
    return found + args.defaults + [d for d in args.kw_defaults if d is not None]


# -- the static PSC check ---------------------------------------------------------------------

def impure_findings(tree: ast.Module, filename: str) -> list[Finding]:
    findings = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            name = dotted_name(node.func)
            reason = _IMPURE_CALLS.get(name) if name in _IMPURE_CALLS else _prefix_reason(name)
            if reason:
                findings.append(Finding(node.lineno, _snippet(filename, node), reason))
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            findings.append(Finding(node.lineno, _snippet(filename, node),
                                    "global/nonlocal rebinding is a side effect; return the "
                                    "value and assign it"))
    return sorted(findings, key=lambda f: f.line)


def _prefix_reason(name: str | None) -> str | None:
    if not name:
        return None
    for prefix, reason in _IMPURE_MODULE_PREFIXES.items():
        if name == prefix or name.startswith(prefix + "."):
            return reason
    return None


def dotted_name(node) -> str | None:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return None


def _snippet(filename: str, node) -> str:
    line = linecache.getline(filename, node.lineno)
    if not line:
        return ast.unparse(node)
    text = line.strip()
    return text if len(text) <= 60 else text[:57] + "..."


# -- the cell as a function -------------------------------------------------------------------

def cell_function_ast(analysis: CellAnalysis, inputs: list[str]) -> ast.Module:
    """`def cell(<inputs>): <body>; return {assigned outputs}, <last expression>`."""
    body = analysis.statements()
    if analysis.has_last_expr:
        last = body[-1]
        body[-1] = ast.copy_location(ast.Assign(
            targets=[ast.Name(LAST_VALUE, ast.Store())], value=last.value), last)
    end_line = body[-1].end_lineno if body else 1
    body += _return_outputs(analysis.outputs, analysis.deletable, end_line)
    args = ast.arguments(posonlyargs=[], args=[ast.arg(n) for n in inputs], kwonlyargs=[],
                         kw_defaults=[], defaults=[])
    fn = ast.FunctionDef(name=CELL_FUNCTION, args=args, body=body, decorator_list=[], returns=None,
                         type_params=[])
    module = ast.Module(body=[fn], type_ignores=[])
    ast.fix_missing_locations(module)
    return module


def _return_outputs(outputs, deletable, line):
    """`return ({name: value of each output bound}, last value)`; the outputs also hold, under
    DELETED, the names the cell may delete that are unbound at its end."""
    code = (f"__psc_locals__ = locals()\n"
            f"__psc_out__ = {{__k: __psc_locals__[__k] for __k in {tuple(outputs)!r} "
            f"if __k in __psc_locals__}}\n")
    if deletable:
        code += (f"__psc_out__[{DELETED!r}] = tuple(__k for __k in {tuple(deletable)!r} "
                 f"if __k not in __psc_locals__)\n")
    code += f"return (__psc_out__, __psc_locals__.get({LAST_VALUE!r}))"
    stmts = ast.parse(code).body
    for stmt in stmts:
        for node in ast.walk(stmt):
            if hasattr(node, "lineno"):
                node.lineno = node.end_lineno = line
    return stmts


def make_cell_function(analysis: CellAnalysis, inputs: list[str], globals_ns: dict,
                       transform=None):
    """Compile the cell into a Python function of its inputs (in the user's globals)."""
    module = cell_function_ast(analysis, inputs)
    if transform is not None:
        module = transform(module)
    code = compile(module, analysis.filename, "exec", dont_inherit=True)
    scope: dict = {}
    exec(code, globals_ns, scope)
    return scope[CELL_FUNCTION]


def is_builtin(name: str) -> bool:
    return hasattr(builtins, name)
