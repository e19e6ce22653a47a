"""A cell as compiled regions and host steps, in source order.

A statement that cannot be part of an XLA program (a print, a random draw, file I/O, a clock,
a line magic, `from m import *`, or anything whose trace fails at its line) is a *host step*:
it runs as plain Python, in the user's namespace, between the *regions* around it, each of
which is compiled as a cell of its own (its inputs read from the namespace, its outputs
written back after its run). Values cross between them through the namespace, exactly as
they would between cells, so plain Python's meaning holds across every cut: names assigned
before an error stay assigned, views and aliases stay what the regions made them.

A `for`, `while` or `if` at a block's level that holds a host step runs on the host too
(`HostBlock`): its test or iterable is evaluated by Python, and its bodies are planned in
turn, so the loop's body is still compiled as regions, each found again in the cache on
every pass. A loop whose body leaves it early (`break`, `continue`, `return`) runs whole as
one host step.

`plan_cell(tree, host_lines)` is the plan: a tuple of `Region`, `HostStep` and `HostBlock`.
`host_lines` maps the lines where a trace failed before to the reason (see the runner): the
statements holding them are host steps too. Everything here reads the AST only.
"""
from __future__ import annotations

import ast
import builtins
import functools
import linecache
import types
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from .cell import block_at, impure_findings  # noqa: F401 (block_at: the plan's paths)
from .hoist import Hoist, hoist_of
from .printed import PrintHoist, print_hoist_of, refused_value
from .predraw import predraw_of

# The path of a block of statements: () is the cell's top level; (i, "body") the body of the
# i-th statement of the top level; (i, "body", j, "orelse") the `else` of the j-th statement
# in that body, and so on.
Path = tuple


@dataclass(frozen=True)
class Region:
    """Statements [start, stop) of the block at `path`, compiled as one program."""
    path: Path
    start: int
    stop: int
    first_line: int
    last_line: int
    ends_cell: bool         # it holds the cell's last statement (whose value is shown)
    computes: bool = True   # it computes something (else it runs as plain Python: `acc = []`)
    stores: tuple = ()      # ... or the names whose items it sets (`x[m] = v`): when one
    #                         holds an array, that is an update a program makes
    rewrite: object = None  # how its statements are changed first (a PreDraw), or None

    @property
    def key(self) -> tuple:
        return (self.path, self.start, self.stop) + ((self.rewrite,) if self.rewrite else ())

    def lines(self) -> str:
        if self.first_line == self.last_line:
            return f"line {self.first_line}"
        return f"lines {self.first_line}-{self.last_line}"


@dataclass(frozen=True)
class HostStep:
    """One statement run as plain Python, and why (`construct` is its text, shortened)."""
    path: Path
    index: int
    line: int
    construct: str
    reason: str
    ends_cell: bool
    hoist: object = None        # it makes the draws of its statement, which the region after
    #                             it computes (hoist.Hoist)
    rewritten: object = None    # it runs its statement with the draws made before (a Hoist)

    def describe(self) -> str:
        return f"line {self.line} `{self.construct}`"

    def explain(self) -> str:
        """Why it runs as plain Python, as a fallback reason reads: `line 3: 'print(m)': ...`"""
        return f"line {self.line}: '{self.construct}': {self.reason}"


@dataclass(frozen=True)
class HostBlock:
    """A `for`, `while` or `if` run by Python because its body holds a host step; its bodies
    are plans of their own (`bodies`: the plan of `body`, then of `orelse`)."""
    path: Path
    index: int
    line: int
    kind: str               # "for", "while" or "if"
    reason: str             # the host step inside that puts it on the host
    bodies: tuple           # (plan of body, plan of orelse)
    predraw: object = None  # a `for` whose draws can be made before it (predraw.PreDraw)

    def describe(self) -> str:
        return f"the `{self.kind}` at line {self.line}"

    def rolled(self) -> Region:
        """The loop as one region, its draws made before it (for a block with a predraw)."""
        return Region(self.path, self.index, self.index + 1, self.line, self.line,
                      ends_cell=False, rewrite=self.predraw)

    def explain(self) -> str:
        return f"line {self.line}: the `{self.kind}` runs in Python: {self.reason}"


MAX_DEPTH = 8       # nested host blocks planned; deeper, the statement is one host step


def plan_cell(tree: ast.Module, host_lines: Mapping[int, str] | None = None,
              filename: str = "") -> tuple:
    """The plan of a parsed cell (see the module's docstring)."""
    return _plan_block(tree.body, (), host_lines or {}, filename, top=True)


@functools.lru_cache(maxsize=512)
def static_plan(analysis) -> tuple:
    """The plan of a cell from its source alone (no trace has stopped yet): on the path of
    every re-run, so made once per cell."""
    return plan_cell(analysis.tree, None, analysis.filename)


def cell_plan(analysis, host_lines: Mapping[int, str]) -> tuple:
    """The plan of a cell with `host_lines` on the host too (those where a trace stopped):
    made once per cell and set of such lines, as a re-run finds the same ones again."""
    if not host_lines:
        return static_plan(analysis)
    return _plan_with(analysis, tuple(sorted(host_lines.items())))


@functools.lru_cache(maxsize=512)
def _plan_with(analysis, host_lines: tuple) -> tuple:
    return plan_cell(analysis.tree, dict(host_lines), analysis.filename)


def is_split(plan: tuple) -> bool:
    """Whether the plan has any host step (else the cell is one region, compiled whole)."""
    return any(not isinstance(part, Region) for part in plan)


def regions_of(plan: tuple):
    """Every region of the plan, nested ones included, in source order."""
    for part in plan:
        if isinstance(part, Region):
            yield part
        elif isinstance(part, HostBlock):
            for body in part.bodies:
                yield from regions_of(body)


def host_steps_of(plan: tuple):
    """Every host step and host block of the plan, in source order."""
    for part in plan:
        if isinstance(part, HostStep):
            yield part
        elif isinstance(part, HostBlock):
            yield part
            for body in part.bodies:
                yield from host_steps_of(body)


# -- planning ---------------------------------------------------------------------------------

def plan_part(tree: ast.Module, region: Region, host_lines: Mapping[int, str],
              filename: str = "") -> tuple:
    """The plan of one region's statements with more host lines (a region whose trace failed
    at a line is planned again: the statement holding the line becomes a host step)."""
    stmts = block_at(tree, region.path)
    if not isinstance(region.rewrite, Hoist):
        return _plan_block(stmts, region.path, host_lines, filename, top=region.ends_cell,
                           start=region.start, stop=region.stop)
    first = stmts[region.start]         # (its draws are made: it runs with their names)
    if _stops_at(first, host_lines):
        reason = host_reason(first, filename, host_lines)
        head = HostStep(region.path, region.start, first.lineno, _construct(first, filename),
                        reason[2] if reason else "", region.ends_cell and
                        region.stop == region.start + 1, rewritten=region.rewrite)
    else:
        head = _region(stmts, region.path, region.start, region.start + 1,
                       region.ends_cell, region.rewrite)
    return (head,) + rest_of(tree, region, host_lines, filename)


def rest_of(tree: ast.Module, region: Region, host_lines: Mapping[int, str],
            filename: str = "") -> tuple:
    """The plan of a region's statements after its first."""
    stmts = block_at(tree, region.path)
    return _plan_block(stmts, region.path, host_lines, filename, top=region.ends_cell,
                       start=region.start + 1, stop=region.stop)


def _plan_block(stmts, path, host_lines, filename, top=False, start=0, stop=None) -> tuple:
    """The plan of statements [start, stop) of a block; `top`: the block is the cell's top
    level (its last statement ends the cell)."""
    stop = len(stmts) if stop is None else stop
    parts: list = []
    run_start, rewrite = None, None
    for i in range(start, stop):
        host = _host_part(stmts[i], path, i, host_lines, filename,
                          ends_cell=bool(top) and i == len(stmts) - 1)
        if host is None:
            run_start = i if run_start is None else run_start
            continue
        if isinstance(getattr(host, "rewritten", None), PrintHoist):
            if run_start is not None and rewrite is not None:   # (one rewrite a region)
                parts.append(_region(stmts, path, run_start, i, top, rewrite))
                run_start = None
            run_start = i if run_start is None else run_start   # its values: the region's end
            parts.append(_region(stmts, path, run_start, i + 1, top, host.rewritten.computing()))
        elif run_start is not None:
            parts.append(_region(stmts, path, run_start, i, top, rewrite))
        run_start, rewrite = None, None
        parts.append(host)
        if getattr(host, "hoist", None) is not None:    # its statement starts the next region
            run_start, rewrite = i, host.hoist
    if run_start is not None:
        parts.append(_region(stmts, path, run_start, stop, top, rewrite))
    return tuple(parts)


def _region(stmts, path, start, stop, top, rewrite=None) -> Region:
    return Region(path, start, stop, stmts[start].lineno, stmts[stop - 1].end_lineno,
                  ends_cell=top and stop == len(stmts), computes=computes(stmts[start:stop]),
                  rewrite=rewrite, stores=item_stores(stmts[start:stop]))


def item_stores(stmts) -> tuple[str, ...]:
    """The names whose items the statements set (`x[m] = v`, `x[1:] = 0`), in order."""
    names = [node.value.id for stmt in stmts for node in ast.walk(stmt)
             if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Store)
             and isinstance(node.value, ast.Name)]
    return tuple(dict.fromkeys(names))


_COMPUTING = (ast.Call, ast.BinOp, ast.UnaryOp, ast.Compare, ast.BoolOp, ast.AugAssign,
              ast.For, ast.While, ast.If, ast.IfExp, ast.ListComp, ast.GeneratorExp)


def _computing(node) -> bool:
    if isinstance(node, ast.UnaryOp) and isinstance(node.operand, ast.Constant):
        return False            # a negative literal (`acc[-1]`)
    return isinstance(node, _COMPUTING)


def computes(stmts) -> bool:
    """Whether the statements compute anything a compiled program could do (a call, an
    operator, a loop or branch), rather than only bind names to values, containers, items or
    attributes (`acc = []`, `total = acc[-1]`): between host steps such statements run as
    plain Python, where they cost nothing, instead of as a program of their own."""
    return any(_computing(node) for stmt in stmts for node in ast.walk(stmt)
               if not isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)))


def _host_part(stmt, path, index, host_lines, filename, ends_cell):
    """The statement's HostStep or HostBlock, or None when it can go into a region."""
    reason = host_reason(stmt, filename, host_lines)
    if reason is None:
        return None
    line, construct, why = reason
    limit = refused_value(host_lines.get(stmt.lineno))
    if limit is not None:               # (a print whose values XLA would round otherwise)
        why = _without_location(host_lines[stmt.lineno], stmt.lineno, construct)
    if isinstance(stmt, (ast.For, ast.While, ast.If)) and len(path) < 2 * MAX_DEPTH and \
            not _leaves_early(stmt) and not _test_is_host(stmt, filename, host_lines):
        bodies = tuple(_plan_block(getattr(stmt, field), path + (index, field), host_lines,
                                   filename) for field in ("body", "orelse"))
        kind = {ast.For: "for", ast.While: "while", ast.If: "if"}[type(stmt)]
        return HostBlock(path, index, stmt.lineno, kind, f"line {line} `{construct}`: {why}",
                         bodies, predraw_of(stmt, bodies[0], HostStep, Region))
    if line != stmt.lineno:             # where in the statement, when not its first line
        why = f"line {line}: '{construct}': {why}"
    hoist = hoist_of(stmt, filename, computes) if not _stops_at(stmt, host_lines) else None
    if hoist is not None:
        shown = hoist.draws[0] if len(hoist.draws[0]) <= 60 else hoist.draws[0][:57] + "..."
        return HostStep(path, index, stmt.lineno, shown, why, False, hoist=hoist)
    others = {n: r for n, r in host_lines.items() if refused_value(r) is None}
    printed = print_hoist_of(stmt, filename, computes, limit) \
        if not _stops_at(stmt, others) else None
    if printed is not None:
        return HostStep(path, index, stmt.lineno, _construct(stmt, filename), why, ends_cell,
                        rewritten=printed)
    return HostStep(path, index, stmt.lineno, _construct(stmt, filename), why, ends_cell)


def _stops_at(stmt, host_lines) -> bool:
    """Whether a trace stopped in the statement for a reason that is not a random draw (then
    the statement is run whole on the host)."""
    return any(stmt.lineno <= n <= stmt.end_lineno and "random" not in reason
               for n, reason in host_lines.items())


def host_reason(stmt, filename: str, host_lines: Mapping[int, str]):
    """(line, construct, reason) of the first thing in `stmt` that must run on the host, or
    None: a call the static check finds (print, random draws, I/O, clocks: `cell`), a line
    magic, a star import, `global`/`nonlocal`, or a line where a trace failed before."""
    findings = impure_findings(ast.Module(body=[stmt], type_ignores=[]), filename)
    if findings:
        first = findings[0]
        return first.line, first.construct, first.reason
    for node in ast.walk(stmt):
        if isinstance(node, ast.ImportFrom) and any(a.name == "*" for a in node.names):
            return node.lineno, _construct(node, filename), \
                "`import *` binds names a compiled program cannot know"
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Call) and \
                isinstance(node.func.func, ast.Name) and node.func.func.id == "get_ipython":
            return node.lineno, _construct(node, filename), "an IPython magic runs on the host"
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
                _calls_get_ipython(node.func.value):
            return node.lineno, _construct(node, filename), "an IPython magic runs on the host"
    lines = [n for n in host_lines if stmt.lineno <= n <= stmt.end_lineno]
    if lines:
        line = min(lines)
        text = _line_text(filename, line)
        return line, text, _without_location(host_lines[line], line, text)
    return None


def _without_location(reason: str, line: int, text: str) -> str:
    """A trace error's reason without the `line 4: 'for ...': ` it starts with (the host
    step says where)."""
    for prefix in (f"line {line}: '{text}': ", f"line {line}: "):
        if reason.startswith(prefix):
            return reason[len(prefix):]
    return reason


def _calls_get_ipython(node) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and \
        node.func.id == "get_ipython"


def _test_is_host(stmt, filename, host_lines) -> bool:
    """Whether the host step is in the loop's own test or iterable (then the whole statement
    is one host step: Python evaluates that part anyway, but not apart from the rest)."""
    head = stmt.iter if isinstance(stmt, ast.For) else stmt.test
    probe = ast.Expr(head)
    ast.copy_location(probe, head)
    probe.end_lineno = head.end_lineno
    return host_reason(probe, filename, host_lines) is not None


def _leaves_early(stmt) -> bool:
    """Whether a loop's body (at its own level, not in nested loops or functions) has `break`,
    `continue`, `return` or `yield`, or an `if`'s body has `return`/`yield`/`break`/
    `continue` (those would have to leave a region)."""
    for child in _own_nodes(stmt):
        if isinstance(child, (ast.Break, ast.Continue, ast.Return, ast.Yield,
                              ast.YieldFrom, ast.Await)):
            return True
    return False


def _own_nodes(stmt):
    """The nodes of a statement's bodies that belong to it: not inside nested loops (for
    break/continue), functions, classes or lambdas."""
    stack = list(stmt.body) + list(stmt.orelse)
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        if isinstance(node, (ast.For, ast.While, ast.AsyncFor)):
            # a nested loop's break/continue are its own; its returns are still ours
            stack.extend(n for n in ast.walk(node) if isinstance(n, (ast.Return, ast.Yield)))
            continue
        stack.extend(ast.iter_child_nodes(node))


def _construct(node, filename: str) -> str:
    text = _line_text(filename, node.lineno) or ast.unparse(node).splitlines()[0]
    return text if len(text) <= 60 else text[:57] + "..."


def _line_text(filename: str, line: int) -> str:
    return linecache.getline(filename, line).strip()


# -- where a trace failed ---------------------------------------------------------------------

def failure_line(frames, analysis) -> int | None:
    """The line of the cell (`analysis`: a cell or a region of one) whose statement a trace
    was running when it stopped, from where it was (`frames`: (file, line) outermost first,
    then the error's own source): the innermost at a line of the cell's own statements (not
    inside a function or class the cell defines, whose line would name the definition, not
    the call). None when the trace did not stop at a line of the cell (lowering, XLA)."""
    lines = _statement_lines(analysis)
    found = None
    for filename, line in frames:
        if filename == analysis.filename and line in lines:
            found = line
    return found


@functools.lru_cache(maxsize=512)
def _statement_lines(analysis) -> frozenset[int]:
    """The lines of the cell's statements that run at its own level (in its loops and
    branches too), not inside the functions and classes it defines (only their first line)."""
    lines: set[int] = set()
    _own_lines(analysis.statements(), lines)
    return frozenset(lines)


def _own_lines(stmts, lines: set[int]) -> None:
    for stmt in stmts:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            lines.add(stmt.lineno)
            continue
        bodies = [b for b in _bodies(stmt) if b]
        if not bodies:
            lines.update(range(stmt.lineno, stmt.end_lineno + 1))
            continue
        lines.update(range(stmt.lineno, min(b[0].lineno for b in bodies)))
        for body in bodies:
            _own_lines(body, lines)


def _bodies(stmt) -> list[list]:
    """The statement lists a compound statement holds (none for a simple statement)."""
    bodies = [getattr(stmt, name) for name in ("body", "orelse", "finalbody")
              if isinstance(getattr(stmt, name, None), list)]
    bodies += [handler.body for handler in getattr(stmt, "handlers", ())]
    bodies += [case.body for case in getattr(stmt, "cases", ())]
    return bodies


def loop_names(tree: ast.Module, path: Path) -> frozenset[str]:
    """The names bound by the targets of the `for` loops around the block at `path` (each a
    host block): a region in such a body reads a new value of them on every pass."""
    names: set[str] = set()
    body = tree.body
    for index, field in zip(path[::2], path[1::2], strict=True):
        stmt = body[index]
        if isinstance(stmt, ast.For) and field == "body":
            names.update(n.id for n in ast.walk(stmt.target) if isinstance(n, ast.Name))
        body = getattr(stmt, field)
    return frozenset(names)


# -- whether a split cell can run again, to be timed ------------------------------------------

# What a host step may call and still run again on copies of the cell's inputs with nothing
# outside them changed: these modules' functions (but for NumPy's files and settings), Python
# builtins that only compute, methods of the values the cell holds (copied for a timed run,
# or generators whose states are put back), and `print` to the cell's output (captured).
_REPEATABLE_MODULES = frozenset({"numpy", "math", "cmath", "statistics", "operator"})
_ONCE_NAMES = frozenset({"save", "savez", "savez_compressed", "savetxt", "load", "loadtxt",
                         "genfromtxt", "fromfile", "memmap", "set_printoptions", "seterr",
                         "setbufsize", "seterrcall", "tofile", "dump"})
_REPEATABLE_BUILTINS = frozenset({
    "abs", "all", "any", "bool", "complex", "dict", "divmod", "enumerate", "float", "int",
    "isinstance", "len", "list", "max", "min", "pow", "print", "range", "repr", "reversed",
    "round", "set", "sorted", "str", "sum", "tuple", "type", "zip", "format", "frozenset"})


def unrepeatable(plan: tuple, tree: ast.Module, namespace: Mapping,
                 holds: Callable[[object], bool]) -> str | None:
    """Why the cell, split as `plan`, cannot be run again on copies of its inputs to be timed
    (a host step that writes a file, prints to a file, calls a function of the notebook's or
    a method of an object the timing does not copy: `holds(value)` says which it does), or
    None when it can."""
    for step in host_steps_of(plan):
        stmt = block_at(tree, step.path)[step.index]
        if isinstance(step, HostBlock):      # (Python evaluates its test or iterable)
            stmt = stmt.iter if isinstance(stmt, ast.For) else stmt.test
        why = _once(stmt, namespace, holds)
        if why is not None:
            return f"{step.describe()} {why}"
    return None


def _once(stmt, namespace, holds) -> str | None:
    for node in ast.walk(stmt):
        if isinstance(node, (ast.Global, ast.Nonlocal)):
            return "binds names outside the cell's"
        if isinstance(node, ast.Call):
            why = _call_once(node, namespace, holds)
            if why is not None:
                return why
    return None


def _call_once(call: ast.Call, namespace, holds) -> str | None:
    func = call.func
    if isinstance(func, ast.Name):
        value = namespace.get(func.id, getattr(builtins, func.id, None))
        if func.id == "print" and any(k.arg == "file" for k in call.keywords):
            return "prints to a file"
        if func.id in _REPEATABLE_BUILTINS and value is getattr(builtins, func.id, None) or \
                _of_repeatable_module(value) and func.id not in _ONCE_NAMES:
            return None
        return f"calls `{func.id}`, which may act outside the cell"
    if not isinstance(func, ast.Attribute) or func.attr in _ONCE_NAMES:
        return f"calls `{ast.unparse(func)}`, which may act outside the cell"
    root = func.value
    while isinstance(root, ast.Attribute):
        root = root.value
    if isinstance(root, ast.Name) and root.id in namespace:
        value = namespace[root.id]
        if isinstance(value, types.ModuleType) and \
                value.__name__.partition(".")[0] in _REPEATABLE_MODULES or \
                not isinstance(value, types.ModuleType) and holds(value):
            return None
    if isinstance(root, (ast.Constant, ast.Subscript, ast.BinOp, ast.Call)) and \
            _of_repeatable_call(root, namespace, holds):
        return None
    return f"calls `{ast.unparse(func)}`, which may act outside the cell"


def _of_repeatable_call(node, namespace, holds) -> bool:
    """A method called on what a repeatable expression made (`np.arange(3).sum()`,
    `x[1:].copy()`, `"a".join(...)`): its calls are checked on their own."""
    names = [n for n in ast.walk(node) if isinstance(n, ast.Name)]
    return all(n.id in namespace and (holds(namespace[n.id]) or isinstance(
        namespace[n.id], types.ModuleType)) for n in names if n.id not in dir(builtins))


def _of_repeatable_module(value) -> bool:
    """A function of NumPy's or math's (`from numpy import sqrt`), a ufunc, not a class."""
    module = getattr(value, "__module__", None) or ""
    return callable(value) and not isinstance(value, type) and \
        module.partition(".")[0] in _REPEATABLE_MODULES
