"""Converting code for tracing: a cell, a jitted function, and the user functions they call.

A converted function is the same function recompiled from its source with

- its reads made visible (`expose_reads`, after the two passes below): a global or closure variable `K` becomes
  `__psc_rd.load(K, __psc_fn, 'K')`, `obj.attr` becomes `__psc_rd.attr(obj, 'attr')`,
  `obj[key]` becomes `__psc_rd.item(obj, key)`, and `f(...)` becomes `__psc_rd.call(f, ...)`,
  so that while `jit` traces, what the code reads from outside becomes an input or a guard
  (see `reads`) and the user functions it calls are converted in turn;
- its `return`s inside `if` statements made into one return at the end (`single_exit`), so
  that such an `if` on a traced value can become a conditional;
- its loops and branches rolled (`rewrite.roll_loops`).

User functions are those defined in a notebook or in the user's own files: not the standard
library, installed packages, NumPy or psc_jit (`reads.is_user_function`). A function whose
source Python cannot give is called as it is.
"""
from __future__ import annotations

import ast
import builtins
import copy
import inspect
import linecache
import operator
import sys
import textwrap
import types
import weakref

import numpy as np

from ..numpy.creation import traced_creator
from .cell import CellAnalysis, cell_function_ast
from .host_calls import NEXT_FROM_OUTSIDE
from ..tracing import TraceError, Tracer
from . import reads
from .definitions import (Definitions, defined, defining,  # noqa: F401 (converted code)
                          mark_definitions, remember_trace_code)
from .helper_sinks import helper_sink_names
from .reads import FunctionInfo, guard_globals, is_user_function, item, load, recording_active
from .rewrite import roll_loops
from .scopes import FUNCTIONS as _FUNCTIONS, outer_loads
from .python_types import isinstance_of, isscalar_of, type_of  # noqa: F401 (and call)
from .refusals import call_watched, refuse_call
from .seen import globals_refused, seen_arguments, vars_of  # noqa: F401 (converted code)

RD = "__psc_rd"           # this module, in converted code
FN = "__psc_fn"           # the FunctionInfo of the converted function
RETURN = "__psc_return"   # the one return value of a function made single-exit
MADE = "__psc_made"       # the converted function, inside the wrapper build_function compiles

__all__ = ["attr", "item", "load", "call", "update_attr", "update_item", "vars_of", "not_caught",
           "defining", "defined", "Unswallowing",
           "globals_refused", "isinstance_of", "type_of",
           "converted", "converted_function", "cell_function"]

# Builtins that look at the calling frame: called directly, never through `call`.
_FRAME_BUILTINS = frozenset({"super", "locals", "globals", "vars", "dir", "eval", "exec"})
# Builtins that read an attribute (or advance an iterator), or may be host calls (a file, the
# user, output, an array's text, which reads NumPy's print options): through `call`, which
# reads it as `obj.name` does (or refuses an iterator from outside, or a host call).
_READING_BUILTINS = frozenset({"getattr", "hasattr", "next", "open", "input", "print", "str",
                               "repr", "format", "ascii"})


# -- the helpers converted code calls ---------------------------------------------------------

def call(fn, *args, **kwargs):
    """`fn(*args, **kwargs)`. While tracing:
    - a user function is called converted (one whose source Python cannot give is called as
      it is, its globals guarded by value), with a partial's stored arguments and the array
      defaults it takes read as any other read (`seen.seen_arguments`);
    - `getattr`/`hasattr` read as `obj.name` does (an attribute not there is guarded so);
    - a host call, whose result or effect can change between runs with equal inputs (a
      file, the clock, the environment, a global setting, a random draw, `next` of an
      iterator from outside: frontend/host_calls.py), is refused at its line, also when a
      library makes it inside (an audit event: `refusals`)."""
    recorder = reads.current_recorder()
    if recorder is None:
        return fn(*args, **kwargs)
    if (fn is builtins.getattr or fn is builtins.hasattr) and not kwargs and \
            len(args) in ((2, 3) if fn is builtins.getattr else (2,)) and type(args[1]) is str:
        return _getattr(recorder, fn, *args)
    refuse_call(fn, args, kwargs, NEXT_FROM_OUTSIDE if fn is builtins.next and args and
                recorder.source_of(args[0]) is not None else None)
    if fn is np.isscalar:
        return isscalar_of(*args, **kwargs)
    make = traced_creator(fn)           # (np.asarray under another name: `f(x, like=None)`)
    if make is not None:
        return make(*args, **kwargs)
    fn, args, kwargs = seen_arguments(recorder, fn, args, kwargs)
    made = converted(fn)
    if made is fn and is_user_function(getattr(fn, "__func__", fn)):
        guard_globals(getattr(fn, "__func__", fn))
    return call_watched(fn, made, args, kwargs)


def not_caught() -> None:
    """The first statement of every `except` block of converted code: an error saying that the
    code cannot be traced as written (TraceError: psc_jit's, not the code's) is never the
    code's to handle (`except Exception:` would take it, and the trace would go on down a path
    plain Python does not take): it is raised again, and the cell runs as plain Python."""
    err = sys.exc_info()[1]
    if isinstance(err, TraceError):
        raise err


class Unswallowing:
    """A context manager of converted code, as it is, except that it never swallows an error
    saying the code cannot be traced (`contextlib.suppress(Exception)` would: see
    `not_caught`). It is exited all the same."""

    def __init__(self, manager):
        self.manager = manager

    def __enter__(self):
        return type(self.manager).__enter__(self.manager)

    def __exit__(self, kind, error, traceback):
        swallowed = type(self.manager).__exit__(self.manager, kind, error, traceback)
        return bool(swallowed) and not isinstance(error, TraceError)


def _getattr(recorder, fn, obj, name: str, *default):
    try:
        value = attr(obj, name)
    except AttributeError:
        recorder.absent(obj, name)
        if fn is builtins.hasattr:
            return False
        if default:
            return default[0]
        raise
    return True if fn is builtins.hasattr else value


def attr(obj, name: str):
    """`obj.name`; while tracing, a property of a user class runs converted (what its getter
    reads is seen, as for any user function). A traced Python number has only its type's
    attributes (`m.shape` of a float raises AttributeError, as plain Python does), and its
    `__class__` is the type NumPy's value has, as `type(m)` is."""
    if name == "__class__" and isinstance(obj, Tracer):
        return type_of(obj)
    if isinstance(obj, Tracer) and obj.kind == "python" and not hasattr(type_of(obj), name):
        raise AttributeError(f"'{type_of(obj).__name__}' object has no attribute '{name}'")
    if recording_active() and not isinstance(obj, Tracer):
        found = inspect.getattr_static(type(obj), name, None)
        if isinstance(found, property) and found.fget is not None and \
                is_user_function(found.fget):
            return call(found.fget, obj)
    return reads.attr(obj, name)


def update_attr(obj, name: str, op: str, value):
    """`obj.name op= value` (op: 'iadd', 'isub', ...): the read is seen like any other (an
    array attribute of an object from outside becomes an input, updated in place and written
    back). When the update was in place (an array's `+=` returns the array) the store is left
    out where Python's would change nothing: `obj.name = obj.name` on an instance attribute.
    (The value is computed before the attribute is read; Python reads it first.)"""
    old = attr(obj, name)
    new = getattr(operator, op)(old, value)
    if new is not old or not _plain_attribute(obj, name):
        setattr(obj, name, new)


def update_item(obj, key, op: str, value):
    """`obj[key] op= value`: as `update_attr`, for an item. The store is left out when the
    update was in place and obj is a list or a dict (storing the same object again changes
    nothing); an array's item is always stored (its view written into itself)."""
    old = item(obj, key)
    new = getattr(operator, op)(old, value)
    if new is not old or not isinstance(obj, (list, dict)):
        obj[key] = new


_GENERIC_SETATTR = (object.__setattr__, types.SimpleNamespace.__setattr__)


def _plain_attribute(obj, name: str) -> bool:
    """Whether `obj.name = v` only stores v in obj's __dict__ (no __setattr__ of its own,
    no descriptor on the class such as a property or a slot)."""
    cls = type(obj)
    return any(cls.__setattr__ is generic for generic in _GENERIC_SETATTR) and \
        not hasattr(inspect.getattr_static(cls, name, None), "__set__") and \
        name in getattr(obj, "__dict__", ())


_CONVERTED: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def converted(fn):
    """fn as traced code calls it: converted when it is a user function (or a method of one),
    else fn itself."""
    if isinstance(fn, types.MethodType):
        func = converted(fn.__func__)
        return fn if func is fn.__func__ else types.MethodType(func, fn.__self__)
    call_method = inspect.getattr_static(type(fn), "__call__", None)   # (`model(x)`)
    if not isinstance(fn, (types.FunctionType, type)) and is_user_function(call_method):
        return converted(types.MethodType(call_method, fn))
    if not is_user_function(fn):
        return fn
    found = _CONVERTED.get(fn)
    if found is None:
        made = converted_function(fn)
        found = _CONVERTED[fn] = (made,) if made is not fn else ()
    return found[0] if found else fn


# -- functions --------------------------------------------------------------------------------

def converted_function(fun, roll: bool = True):
    """`fun` recompiled with its reads visible, its returns made one and (roll) its loops and
    branches rolled; `fun` itself when its source is not available. A bound method is the
    same method of its converted function."""
    if isinstance(fun, types.MethodType):
        func = converted_function(fun.__func__, roll)
        return fun if func is fun.__func__ else types.MethodType(func, fun.__self__)
    if not isinstance(fun, types.FunctionType):
        return fun
    module = function_source(fun)
    if module is None:
        return fun
    code = fun.__code__
    info = FunctionInfo(fun.__qualname__.split("<locals>.")[-1], fun.__globals__,
                        dict(zip(code.co_freevars, fun.__closure__ or (), strict=True)),
                        helper_sink_names(module.body[0], code))
    single_exit(module.body[0])
    if roll:
        module = roll_loops(module)
    expose_reads(module.body[0], fun.__globals__, info.cells)
    made = build_function(module, code.co_filename, fun.__globals__, info, fun.__qualname__)
    made.__defaults__, made.__kwdefaults__ = fun.__defaults__, fun.__kwdefaults__
    made.__name__, made.__qualname__ = fun.__name__, fun.__qualname__
    made.__doc__ = fun.__doc__
    return made


def cell_function(analysis: CellAnalysis, inputs: list[str], user_ns: dict):
    """The cell as a converted function of its inputs, run in the user's namespace; its defs,
    classes and lambdas record what they make (see definitions.py)."""
    module = cell_function_ast(analysis, inputs)
    nodes = mark_definitions(module.body[0])
    module = roll_loops(module)
    expose_reads(module.body[0], user_ns)
    definitions = Definitions(nodes, analysis.filename, user_ns)
    return build_function(module, analysis.filename, user_ns,
                          FunctionInfo("the cell", user_ns, {}, definitions=definitions), "")


def function_source(fun) -> ast.Module | None:
    """A module holding `def <name>(...)` for fun (a lambda becomes a def), at fun's lines;
    None when Python cannot give its source or it cannot be found in it."""
    try:
        lines, start = inspect.getsourcelines(fun)
        text = "".join(lines)
        dedented = textwrap.dedent(text)
        tree = ast.parse(dedented)
    except (OSError, TypeError, SyntaxError, IndentationError):
        tree = None         # (a lambda's lines need not be a statement: see _lambda_in_file)
    else:
        ast.increment_lineno(tree, start - 1)
        _shift_columns(tree, _indent(text) - _indent(dedented))
    if fun.__name__ == "<lambda>":
        module = tree and _lambda_module(tree, fun.__code__) or _lambda_in_file(fun)
    elif tree is not None and len(tree.body) == 1 and isinstance(tree.body[0], ast.FunctionDef) \
            and tree.body[0].name == fun.__name__:
        module = tree
    else:
        return None
    if module is not None:
        _signature_only(module.body[0])
    return module


def _indent(text: str) -> int:
    first = next(line for line in text.splitlines() if line.strip())
    return len(first) - len(first.lstrip())


def _shift_columns(tree: ast.AST, columns: int) -> None:
    """Columns as in the source file (the function was parsed dedented), so that errors can
    quote the expression."""
    if not columns:
        return
    for node in ast.walk(tree):
        if "col_offset" in node._attributes:
            node.col_offset += columns
            if getattr(node, "end_col_offset", None) is not None:
                node.end_col_offset += columns


def _signature_only(fn: ast.FunctionDef) -> None:
    """Drop what a `def` evaluates where it stands (decorators, defaults, annotations): the
    converted function takes fun's own defaults, and those expressions may name variables
    of a scope the recompiled code does not have."""
    fn.decorator_list = []
    fn.returns = None
    args = fn.args
    args.defaults = []
    args.kw_defaults = [None] * len(args.kwonlyargs)
    for arg in args.posonlyargs + args.args + args.kwonlyargs + [
            a for a in (args.vararg, args.kwarg) if a is not None]:
        arg.annotation = None


def _lambda_in_file(fun) -> ast.Module | None:
    """A lambda whose lines are not a statement of their own (`{"f": (lambda x: ...)}`, an
    argument continued over lines), found in its whole file; None without one."""
    try:
        tree = ast.parse("".join(linecache.getlines(inspect.getsourcefile(fun) or "")))
    except (TypeError, SyntaxError, ValueError):
        return None
    return _lambda_module(tree, fun.__code__)


def _lambda_module(tree: ast.Module, code) -> ast.Module | None:
    params = code.co_varnames[:code.co_argcount + code.co_kwonlyargcount]
    found = [node for node in ast.walk(tree) if isinstance(node, ast.Lambda)
             and node.lineno == code.co_firstlineno
             and tuple(a.arg for a in node.args.posonlyargs + node.args.args
                       + node.args.kwonlyargs) == params]
    if len(found) != 1:
        return None
    lam = found[0]
    body = [ast.copy_location(ast.Return(value=lam.body), lam.body)]
    fn = ast.copy_location(ast.FunctionDef(name="__psc_lambda", args=lam.args, body=body,
                                           decorator_list=[], returns=None, type_params=[]), lam)
    return ast.fix_missing_locations(ast.Module(body=[fn], type_ignores=[]))


def build_function(module: ast.Module, filename: str, globals_ns: dict, info: FunctionInfo,
                   qualname: str):
    """Compile the one function of module, with info's closure cells as its free variables
    (the function is compiled inside `def __psc_outer(<free names>, __psc_fn, __psc_rd)`);
    the functions and classes inside it are named as in the code it came from (`qualname`:
    the original function's; "" for a cell, whose functions are the notebook's)."""
    fn_node = module.body[0]
    name = fn_node.name
    fn_node.name = MADE      # its own name inside the wrapper would shadow the global a
    #                          recursive call reads
    params = [*info.cells, FN, RD]
    outer = ast.FunctionDef(
        name="__psc_outer", args=ast.arguments(posonlyargs=[], args=[ast.arg(p) for p in params],
                                               kwonlyargs=[], kw_defaults=[], defaults=[]),
        body=[fn_node, ast.Return(value=ast.Name(MADE, ast.Load()))],
        decorator_list=[], returns=None, type_params=[])
    wrapper = ast.Module(body=[ast.copy_location(outer, fn_node)], type_ignores=[])
    ast.fix_missing_locations(wrapper)
    scope: dict = {}
    exec(compile(wrapper, filename, "exec", dont_inherit=True), globals_ns, scope)
    made = scope["__psc_outer"](*([None] * len(info.cells)), info, sys.modules[__name__])
    cells = dict(zip(made.__code__.co_freevars, made.__closure__ or (), strict=True))
    cells.update({n: c for n, c in info.cells.items() if n in cells})
    closure = tuple(cells[n] for n in made.__code__.co_freevars) or None
    code = plain_qualnames(made.__code__.replace(co_name=name, co_qualname=name),
                           qualname + ".<locals>." if qualname else "")
    remember_trace_code(code)
    result = types.FunctionType(code, globals_ns, name, None, closure)
    result.__psc_converted__ = True
    return result


def plain_qualnames(code: types.CodeType, prefix: str) -> types.CodeType:
    """code with the functions and classes inside it named as the original code names them:
    `__psc_outer.<locals>.__psc_made.<locals>.f.<locals>.g` (or inside a rolled loop's body)
    becomes prefix + `f.<locals>.g`; a class body's `__qualname__` too."""
    consts = tuple(_renamed(c, prefix) if isinstance(c, types.CodeType) else c
                   for c in code.co_consts)
    return code.replace(co_consts=consts)


def _renamed(code: types.CodeType, prefix: str) -> types.CodeType:
    parts = [p for p in code.co_qualname.split(".<locals>.") if not p.startswith("__psc")]
    qualname = prefix + ".<locals>.".join(parts)
    consts = tuple(_renamed(c, prefix) if isinstance(c, types.CodeType) else
                   qualname if c == code.co_qualname and _is_class_body(code) else c
                   for c in code.co_consts)
    return code.replace(co_qualname=qualname, co_consts=consts)


def _is_class_body(code: types.CodeType) -> bool:
    return not code.co_flags & inspect.CO_NEWLOCALS


# -- making reads visible ---------------------------------------------------------------------

def expose_reads(fn: ast.FunctionDef, globals_ns: dict, cells=()) -> None:
    """Rewrite fn's reads of globals and closure variables, attributes and items, and its
    calls, into the helpers above (in place). Class bodies inside it are left as they are.
    Builtins (names neither global nor closure variables) are read as they are."""
    outer, builtin = set(), set()
    for name in outer_loads(fn):
        if name.id.startswith("__psc"):
            continue
        if name.id in globals_ns or name.id in cells or not hasattr(builtins, name.id):
            outer.add(id(name))
        else:
            builtin.add(id(name))
    fn.body = [_ExposeReads(outer, builtin).visit(stmt) for stmt in fn.body]


def _rd(name: str) -> ast.Attribute:
    return ast.Attribute(value=ast.Name(RD, ast.Load()), attr=name, ctx=ast.Load())


def _helper_call(name: str, args: list, keywords=(), like=None) -> ast.Call:
    node = ast.Call(func=_rd(name), args=args, keywords=list(keywords))
    return ast.copy_location(node, like) if like is not None else node


class _ExposeReads(ast.NodeTransformer):
    """outer: the Name nodes read from a global or closure variable; builtin: those read from
    builtins (called directly: `range(n)` must stay what the loop pass recognises)."""

    def __init__(self, outer: set[int], builtin: set[int]):
        self.outer = outer
        self.builtin = builtin

    def visit_ClassDef(self, node):
        return node

    def visit_With(self, node):
        """Each context manager of a `with` lets psc_jit's own errors through (see
        `Unswallowing`)."""
        self.generic_visit(node)
        for with_item in node.items:
            manager = with_item.context_expr
            with_item.context_expr = _helper_call("Unswallowing", [manager], like=manager)
        return node

    def visit_ExceptHandler(self, node):
        """Each `except` block first raises again psc_jit's own errors (see `not_caught`)."""
        self.generic_visit(node)
        check = ast.Expr(_helper_call("not_caught", [], like=node))
        node.body = [ast.copy_location(check, node), *node.body]
        return node

    def visit_Name(self, node):
        if id(node) in self.outer:
            return _helper_call("load", [node, ast.Name(FN, ast.Load()),
                                         ast.Constant(node.id)], like=node)
        return node

    def visit_Attribute(self, node):
        self.generic_visit(node)
        if not isinstance(node.ctx, ast.Load) or _generated(node.value):
            return node
        return _helper_call("attr", [node.value, ast.Constant(node.attr)], like=node)

    def visit_Subscript(self, node):
        self.generic_visit(node)
        if not isinstance(node.ctx, ast.Load) or _generated(node.value):
            return node
        return _helper_call("item", [node.value, _index_expr(node.slice)], like=node)

    def visit_AugAssign(self, node):
        """`obj.a += v` and `obj[k] += v` read obj.a and obj[k] like loads (Python reads a
        target of an augmented assignment without a Load node)."""
        target = node.target
        if isinstance(target, ast.Name) or _generated(target.value) or \
                type(node.op).__name__ not in _INPLACE:
            return self.generic_visit(node)
        container, value = self.visit(target.value), self.visit(node.value)
        op = ast.Constant(_INPLACE[type(node.op).__name__])
        if isinstance(target, ast.Attribute):
            call = _helper_call("update_attr", [container, ast.Constant(target.attr), op, value],
                                like=node)
        else:
            call = _helper_call("update_item",
                                [container, _index_expr(self.visit(target.slice)), op, value],
                                like=node)
        return ast.copy_location(ast.Expr(call), node)

    def visit_Call(self, node):
        direct = isinstance(node.func, ast.Name) and (
            node.func.id in _FRAME_BUILTINS or id(node.func) in self.builtin and
            node.func.id not in _READING_BUILTINS) or _generated(node.func)
        self.generic_visit(node)
        if isinstance(node.func, ast.Name) and node.func.id == "vars" and \
                id(node.func) in self.builtin and len(node.args) == 1 and not node.keywords:
            return _helper_call("vars_of", node.args, like=node)
        if isinstance(node.func, ast.Name) and id(node.func) in self.builtin and \
                node.func.id in _TYPE_BUILTINS and len(node.args) == _TYPE_BUILTINS[
                    node.func.id][1] and not node.keywords:
            return _helper_call(_TYPE_BUILTINS[node.func.id][0], node.args, like=node)
        if isinstance(node.func, ast.Name) and node.func.id == "globals" and \
                id(node.func) in self.builtin:
            return _helper_call("globals_refused", [], like=node)
        if direct:
            return node
        return _helper_call("call", [node.func, *node.args], node.keywords, like=node)


# Builtins asking a value's type: answered for the value a tracer stands for (python_types).
_TYPE_BUILTINS = {"isinstance": ("isinstance_of", 2), "type": ("type_of", 1)}
_INPLACE = {"Add": "iadd", "Sub": "isub", "Mult": "imul", "MatMult": "imatmul",
            "Div": "itruediv", "FloorDiv": "ifloordiv", "Mod": "imod", "Pow": "ipow",
            "LShift": "ilshift", "RShift": "irshift", "BitOr": "ior", "BitXor": "ixor",
            "BitAnd": "iand"}


def _generated(node) -> bool:
    """Code the loop pass wrote (`__psc_rt.roll_for(...)`, `__psc_locals__[k]`): left as it
    is."""
    while isinstance(node, ast.Attribute):
        node = node.value
    return isinstance(node, ast.Name) and node.id.startswith("__psc")


def _index_expr(index: ast.expr) -> ast.expr:
    """An index as an expression: `a:b:c` becomes `slice(a, b, c)` (inside tuples too)."""
    if isinstance(index, ast.Slice):
        parts = [p if p is not None else ast.Constant(None)
                 for p in (index.lower, index.upper, index.step)]
        return ast.copy_location(_helper_call("make_slice", parts), index)
    if isinstance(index, ast.Tuple):
        return ast.copy_location(ast.Tuple(elts=[_index_expr(e) for e in index.elts],
                                           ctx=ast.Load()), index)
    return index


make_slice = builtins.slice          # `a:b:c` in converted code


# -- one return at the end --------------------------------------------------------------------

def single_exit(fn: ast.FunctionDef) -> None:
    """`if t: return a` ... `return b` becomes `if t: r = a` `else: ...; r = b` and one
    `return r` at the end (in place), so that the `if` can become a conditional. Left as it
    is when no return is inside an `if`, or one is inside a loop, `with` or `try`."""
    if not any(isinstance(s, ast.If) and _has_return(s) for s in _statements(fn.body)):
        return
    if any(isinstance(s, (ast.For, ast.AsyncFor, ast.While, ast.With, ast.AsyncWith, ast.Try))
           and _has_return(s) for s in _statements(fn.body)):
        return
    end = fn.body[-1]
    body = _assign_returns(fn.body)
    if not _always_returns(fn.body):
        body = [ast.copy_location(_assign_return(ast.Constant(None)), fn.body[0])] + body
    ret = ast.Return(value=ast.Name(RETURN, ast.Load()))
    fn.body = body + [ast.copy_location(ret, end)]
    ast.fix_missing_locations(fn)


def _statements(stmts):
    """Every statement in these, in if-branches and other blocks too (not nested functions)."""
    for stmt in stmts:
        yield stmt
        if isinstance(stmt, (*_FUNCTIONS, ast.ClassDef)):
            continue
        for fieldname in ("body", "orelse", "finalbody"):
            yield from _statements(getattr(stmt, fieldname, []) or [])
        for handler in getattr(stmt, "handlers", []):
            yield from _statements(handler.body)


def _has_return(stmt) -> bool:
    return any(isinstance(s, ast.Return) for s in _statements([stmt]))


def _always_returns(stmts) -> bool:
    return any(isinstance(s, ast.Return) or isinstance(s, ast.If) and _always_returns(s.body)
               and _always_returns(s.orelse) for s in stmts)


def _assign_return(value) -> ast.Assign:
    return ast.Assign(targets=[ast.Name(RETURN, ast.Store())], value=value)


def _assign_returns(stmts: list[ast.stmt]) -> list[ast.stmt]:
    """stmts with each `return v` made `__psc_return = v` and the statements after an `if`
    holding a return moved into its branches that do not return."""
    out: list[ast.stmt] = []
    for k, stmt in enumerate(stmts):
        if isinstance(stmt, ast.Return):
            out.append(ast.copy_location(_assign_return(stmt.value or ast.Constant(None)), stmt))
            return out
        if isinstance(stmt, ast.If) and _has_return(stmt):
            rest = stmts[k + 1:]
            branches = [_assign_returns(b + ([] if _always_returns(b) else copy.deepcopy(rest)))
                        for b in (stmt.body, stmt.orelse)]
            body = branches[0] or [ast.copy_location(ast.Pass(), stmt)]
            out.append(ast.copy_location(ast.If(test=stmt.test, body=body, orelse=branches[1]),
                                         stmt))
            return out
        out.append(stmt)
    return out
