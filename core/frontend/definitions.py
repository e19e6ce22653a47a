"""Functions and classes a cell defines: what plain Python binds, made again on every run.

At a notebook's top level, `k = 2.0; def f(x): return x * k` makes a function of module
`__main__` named `f`, whose `k` is the notebook's global, read when f is called. A compiled
cell is a function, so the same `def` inside it makes a closure over the cell's locals (a
*twin*): right while the cell is traced, since a closure reads the cell's latest binding
just as a global read does, but never the thing to bind in the notebook.

So each definition of the cell's own scope (a `def`, a `class`, a `lambda`, in any of its
blocks) records itself as it runs (`mark_definitions` rewrites it to call `defining` or
`defined`). At the end of the trace, `with_definitions` puts in the cell's result, in place
of each twin, a *recipe*: a node of the result tree whose children are what the definition
evaluated (defaults, annotations, decorators, a class's attributes and methods, an
instance's attributes; traced values among them are outputs of the program). Every run
rebuilds the result, and rebuilding a recipe makes the plain object anew, as each run of the
plain cell does: the function from the definition compiled at module level (`Definitions`),
with the notebook's namespace as its globals, its defaults, and its decorators applied; a
class by its metaclass from its methods made so; an instance of it by its attributes.

What cannot be made again so is refused at its line, and the cell runs as plain Python: a
decorator psc_jit cannot tell is free of effects, a class with a metaclass or an
`__init_subclass__` of its own, and functions made while tracing by other code (a closure a
helper returns, a partial of a cell's function): `refuse_made_while_tracing`.
"""
from __future__ import annotations

import abc
import ast
import contextvars
import copy
import dataclasses
import functools
import types
import weakref
from typing import Any

import numpy as np

from .. import tree_util
from ..ir import SourceInfo
from ..tracing import Tracer, UnsupportedError

FN = "__psc_fn"
RD = "__psc_rd"

# Code objects compiled for tracing (converted functions, the cell's function and every code
# object inside them): a function or class made from one was made while tracing.
TRACE_CODE: weakref.WeakSet = weakref.WeakSet()


def remember_trace_code(code: types.CodeType) -> None:
    TRACE_CODE.add(code)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            remember_trace_code(const)


# -- marking the cell's definitions -----------------------------------------------------------

def mark_definitions(cell: ast.FunctionDef) -> list[ast.AST]:
    """Rewrite (in place) each def, class and lambda of the cell function's own scope to
    record itself when it runs: `@d def f` becomes `@__psc_rd.defining(__psc_fn, i, d) def f`
    (one decorator, evaluated first as d was), `lambda` becomes `__psc_rd.defined(__psc_fn,
    i, lambda ...)`. Returns the definitions as written, i their position."""
    marker = _Marker()
    cell.body = [marker.visit(stmt) for stmt in cell.body]
    return marker.found


class _Marker(ast.NodeTransformer):
    def __init__(self):
        self.found: list[ast.AST] = []

    def _index(self, node) -> ast.Constant:
        self.found.append(copy.deepcopy(node))
        return ast.Constant(len(self.found) - 1)

    def _evaluated_here(self, node) -> None:
        """Lambdas among what a def or class evaluates where it stands are the cell's too."""
        for name in ("decorator_list", "bases"):
            if hasattr(node, name):
                setattr(node, name, [self.visit(n) for n in getattr(node, name)])
        if hasattr(node, "keywords"):
            node.keywords = [self.visit(k) for k in node.keywords]
        if hasattr(node, "args"):
            node.args.defaults = [self.visit(d) for d in node.args.defaults]
            node.args.kw_defaults = [d and self.visit(d) for d in node.args.kw_defaults]

    def _definition(self, node):
        index = self._index(node)
        self._evaluated_here(node)
        marker = _helper("defining", [ast.Name(FN, ast.Load()), index, *node.decorator_list])
        node.decorator_list = [ast.copy_location(marker, node)]
        return node

    visit_FunctionDef = visit_AsyncFunctionDef = visit_ClassDef = _definition

    def visit_Lambda(self, node):
        index = self._index(node)
        return ast.copy_location(_helper("defined", [ast.Name(FN, ast.Load()), index, node]),
                                 node)

    def _comprehension(self, node):
        return node          # (its lambdas close over its variables: not the cell's)

    visit_ListComp = visit_SetComp = visit_DictComp = visit_GeneratorExp = _comprehension


def _helper(name: str, args: list) -> ast.Call:
    func = ast.Attribute(value=ast.Name(RD, ast.Load()), attr=name, ctx=ast.Load())
    return ast.Call(func=func, args=args, keywords=[])


@dataclasses.dataclass(eq=False)
class Definitions:
    """The definitions of one cell, as written, and the namespace the cell runs in: the code
    of each as plain Python compiles it at the top level of a module."""
    nodes: list[ast.AST]
    filename: str
    namespace: dict

    def __post_init__(self):
        self._codes: dict[int, types.CodeType] = {}

    def source(self, index: int, decorator: int | None = None) -> SourceInfo:
        """Where definition `index` (or its decorator number `decorator`) stands."""
        node = self.nodes[index]
        if decorator is not None:
            node = node.decorator_list[decorator]
        return SourceInfo(self.filename, node.lineno, node.col_offset, node.end_lineno,
                          node.end_col_offset)

    def code(self, index: int) -> types.CodeType:
        found = self._codes.get(index)
        if found is None:
            found = self._codes[index] = _module_level_code(self.nodes[index], self.filename)
        return found


def _module_level_code(node: ast.AST, filename: str) -> types.CodeType:
    """The code object of one def, class body or lambda compiled at a module's top level."""
    node = copy.deepcopy(node)
    if isinstance(node, ast.Lambda):
        tree = ast.Expression(body=node)
        mode, name = "eval", "<lambda>"
    else:
        tree, mode, name = ast.Module(body=[node], type_ignores=[]), "exec", node.name
    module = compile(ast.fix_missing_locations(tree), filename, mode, dont_inherit=True)
    (code,) = [c for c in module.co_consts
               if isinstance(c, types.CodeType) and c.co_name == name]
    return code


# -- while tracing ----------------------------------------------------------------------------

@dataclasses.dataclass(eq=False)
class _Defined:
    definitions: Definitions
    index: int
    twin: Any                          # the function or class the cell's `def` made
    decorators: tuple
    namespace: dict | None             # a class's, before its decorators ran


_DEFINED: contextvars.ContextVar[dict | None] = contextvars.ContextVar("psc_defined",
                                                                      default=None)


def defining(info, index: int, *decorators):
    """The decorator a cell's def or class gets: it applies the definition's own decorators
    and records what the definition made (`with_definitions`)."""
    for k, decorator in enumerate(decorators):
        _check_decorator(decorator, info.definitions, index, k)

    def define(twin):
        namespace = _class_namespace(twin) if isinstance(twin, type) else None
        made = twin
        for decorator in reversed(decorators):
            made = decorator(made)
        _record(made, _Defined(info.definitions, index, twin, decorators, namespace))
        return made
    return define


def defined(info, index: int, fn):
    """A lambda of the cell, recorded as it is made."""
    _record(fn, _Defined(info.definitions, index, fn, (), None))
    return fn


def _record(made, defined_: _Defined) -> None:
    found = _DEFINED.get()
    if found is not None:
        found[id(made)] = (made, defined_)


def _class_namespace(cls: type) -> dict:
    return {k: v for k, v in vars(cls).items() if k not in ("__dict__", "__weakref__")}


# Decorators known to have no effect beyond the object they return: applied again on every
# run, as plain Python applies them.
_PURE_DECORATORS = (staticmethod, classmethod, property, functools.cache, functools.lru_cache,
                    functools.total_ordering, functools.cached_property, dataclasses.dataclass,
                    np.vectorize, abc.abstractmethod)
_PURE_MADE = {("functools", "lru_cache.<locals>.decorating_function"),
              ("dataclasses", "dataclass.<locals>.wrap")}


def _check_decorator(decorator, definitions: Definitions, index: int, k: int) -> None:
    if any(decorator is d for d in _PURE_DECORATORS) or (
            getattr(decorator, "__module__", None), getattr(decorator, "__qualname__", None)
    ) in _PURE_MADE:
        return
    name = definitions.nodes[index].name
    raise UnsupportedError(
        f"a decorator of `{name}`, defined in the cell: psc_jit cannot tell that it has no "
        "effects, and would apply it on every run", definitions.source(index, k),
        f"define `{name}` in a cell of its own, run as plain Python")


# -- the result: recipes in place of what the cell made ---------------------------------------

def with_definitions(fn):
    """fn (a cell as a function, traced) returning its result with each function, class and
    instance its definitions made replaced by a recipe that makes the plain one on every
    run."""
    @functools.wraps(fn)
    def cell(*args):
        token = _DEFINED.set({})
        try:
            result = fn(*args)
            return _Recipes(_DEFINED.get()).of(result)
        finally:
            _DEFINED.reset(token)
    return cell


_IN_PROGRESS = object()
_RESULT = "the result"


class _Recipes:
    """The recipes of one trace's result (`of`): each made object met again gets the same
    recipe, rebuilt as the same object."""

    def __init__(self, defined: dict):
        self.defined = defined
        self.memo: dict[int, Any] = {}
        self.classes = {id(made): made for made, d in defined.values()
                        if isinstance(d.twin, type)}

    def of(self, value, path: str = _RESULT):
        key = id(value)
        if key in self.memo:
            if self.memo[key] is _IN_PROGRESS:
                raise UnsupportedError(f"{path} holds an object the cell defines inside itself",
                                       None, _OWN_CELL)
            return self.memo[key]
        self.memo[key] = _IN_PROGRESS
        self.memo[key] = recipe = self._recipe(value, path)
        return recipe

    def _recipe(self, value, path: str):
        found = self.defined.get(id(value))
        if found is not None and found[0] is value:
            return self._definition(*found)
        cls = self.classes.get(id(type(value)))
        if cls is type(value):
            return self._instance(value, path)
        if type(value) in (list, tuple, dict) or tree_util._node_type(value) in (list, dict):
            return self._container(value, path)
        refuse_made_while_tracing(value, path)
        return value

    def _container(self, value, path: str):
        kind = tree_util._node_type(value)
        if kind is dict:
            items = {k: self.of(v, _key_path(path, k)) for k, v in value.items()}
            same = all(items[k] is v for k, v in value.items())
        else:
            items = [self.of(v, f"{path}[{i}]") for i, v in enumerate(value)]
            same = all(a is b for a, b in zip(items, value, strict=True))
        return value if same else kind(items)

    def _definition(self, made, defined_: _Defined):
        definitions, index = defined_.definitions, defined_.index
        code = definitions.code(index)
        name = getattr(definitions.nodes[index], "name", "<lambda>")
        decorators = tuple(self.of(d, f"a decorator of `{name}`") for d in defined_.decorators)
        if isinstance(defined_.twin, type):
            return self._class(defined_, code, decorators)
        return MadeFunction(self._function_parts(defined_.twin, code, name), decorators,
                            definitions)

    def _function_parts(self, twin, code, name: str) -> FunctionParts:
        return FunctionParts(code, twin.__doc__,
                             self.of(twin.__defaults__, f"the defaults of `{name}`"),
                             self.of(twin.__kwdefaults__, f"the defaults of `{name}`"),
                             self.of(dict(twin.__annotations__), f"the annotations of `{name}`"))

    def _class(self, defined_: _Defined, body: types.CodeType, decorators) -> MadeClass:
        twin, definitions = defined_.twin, defined_.definitions
        _check_class(twin, definitions.source(defined_.index))
        methods = _method_codes(body)
        namespace = {name: self._attribute(value, methods, twin, name)
                     for name, value in defined_.namespace.items()}
        namespace["__qualname__"] = body.co_qualname
        bases = tuple(self.of(b, f"a base of `{twin.__name__}`") for b in twin.__bases__)
        return MadeClass(twin.__name__, bases, namespace, decorators, definitions, type(twin))

    def _attribute(self, value, methods: dict, cls: type, name: str):
        """One entry of a class's namespace: its methods made from the class body's code."""
        where = f"`{cls.__name__}.{name}`"
        if isinstance(value, property):
            return MadeProperty(*(self._attribute(f, methods, cls, name) if f is not None
                                  else None for f in (value.fget, value.fset, value.fdel)),
                                value.__doc__)
        wrapper = type(value) if isinstance(value, _METHOD_WRAPPERS) else None
        func = getattr(value, "__func__", None) or getattr(value, "func", None) \
            if wrapper is not None else value
        if id(func) in self.defined:             # (a function the cell defined elsewhere)
            return self.of(value, where)
        if isinstance(func, types.FunctionType) and func.__code__ in TRACE_CODE:
            code = methods.get((func.__code__.co_name, func.__code__.co_firstlineno))
            if code is None:
                raise UnsupportedError(f"{where} is a function the class body did not define "
                                       "by one `def` of its own line", None, _OWN_CELL)
            return MadeMethod(self._function_parts(func, code, where), wrapper)
        if isinstance(value, type) and _made_while_tracing(value, 1) is not None:
            raise UnsupportedError(f"the class {where}, defined inside a class the cell "
                                   "defines", None, _OWN_CELL)
        return self.of(value, where)

    def _instance(self, value, path: str):
        cls = type(value)
        if "__slots__" in vars(cls) or cls.__new__ is not object.__new__ or \
                not hasattr(value, "__dict__"):
            raise UnsupportedError(f"{path} is an object of `{cls.__name__}` (defined in the "
                                   "cell) whose class makes its objects itself (__new__, "
                                   "__slots__)", None, _OWN_CELL)
        return MadeInstance(self.of(cls, path), {
            k: self.of(v, f"{path}.{k}") for k, v in vars(value).items()})


_METHOD_WRAPPERS = (staticmethod, classmethod, functools.cached_property)


def _key_path(path: str, key) -> str:
    """An item's path; an output of the cell (a name in the result's dict) by its name."""
    if path.startswith(_RESULT) and isinstance(key, str) and key.isidentifier():
        return f"`{key}`"
    return f"{path}[{key!r}]"


_OWN_CELL = "define it in a cell of its own, run as plain Python"


def _method_codes(body: types.CodeType) -> dict[tuple[str, int], types.CodeType]:
    """The functions a class body defines, by (name, first line); one name on one line twice
    is left out (which of them a method is cannot be told)."""
    found: dict[tuple[str, int], types.CodeType | None] = {}
    for const in body.co_consts:
        if isinstance(const, types.CodeType):
            key = (const.co_name, const.co_firstlineno)
            found[key] = None if key in found else const
    return {k: c for k, c in found.items() if c is not None}


def _check_class(twin: type, source: SourceInfo) -> None:
    """A class psc_jit can make again on every run: made by `type` (or abc.ABCMeta), with no
    `__init_subclass__` of a base's own (it would run at each making)."""
    if type(twin) not in (type, abc.ABCMeta):
        raise UnsupportedError(f"the class `{twin.__name__}` has the metaclass "
                               f"`{type(twin).__name__}`", source, _OWN_CELL)
    for base in twin.__mro__[1:]:
        if "__init_subclass__" in vars(base) and base is not object:
            raise UnsupportedError(f"the class `{twin.__name__}` has a base with its own "
                                   f"`__init_subclass__` ({base.__name__})", source, _OWN_CELL)


def refuse_made_while_tracing(value, path: str = _RESULT) -> None:
    """Refuse a value that holds a function or class made while tracing (by converted code:
    a closure a helper returned, a partial of a cell's function) or a traced value inside
    a function: it cannot be made again, as plain Python would, on every run."""
    found = _made_while_tracing(value, 3)
    if found is not None:
        raise UnsupportedError(
            f"{path} holds {found}, made while the code is traced: psc_jit cannot make it "
            "again on every run as plain Python does", None,
            "define functions with `def` or `lambda` at the cell's top level, or make this one "
            "in a cell of its own, run as plain Python")


def _made_while_tracing(value, depth: int) -> str | None:
    if depth < 0:
        return None
    if isinstance(value, types.FunctionType):
        if value.__code__ in TRACE_CODE:
            return f"the function `{value.__qualname__}`"
        inside = _closure_values(value) + list(value.__defaults__ or ())
        if any(isinstance(v, Tracer) for v in inside):
            return f"the function `{value.__qualname__}`, holding a traced value,"
        return None
    if isinstance(value, functools.partial):
        parts = [value.func, *value.args, *value.keywords.values()]
    elif isinstance(value, types.MethodType):
        parts = [value.__func__, value.__self__]
    elif isinstance(value, type):
        parts = [v for v in vars(value).values() if isinstance(v, types.FunctionType)]
    elif isinstance(getattr(value, "__dict__", None), dict) and \
            not isinstance(value, types.ModuleType):
        parts = list(vars(value).values())      # (a descriptor holding a function, ...)
    else:
        return None
    for part in parts:
        found = _made_while_tracing(part, depth - 1)
        if found is not None:
            return found
    return None


def _closure_values(fn: types.FunctionType) -> list:
    """What fn's closure cells hold (an empty cell holds nothing)."""
    values = []
    for cell in fn.__closure__ or ():
        try:
            values.append(cell.cell_contents)
        except ValueError:
            pass
    return values


# -- recipes: nodes of the result tree, rebuilt as the plain objects --------------------------

@dataclasses.dataclass(frozen=True)
class FunctionParts:
    """What makes a plain function: its code (compiled at module level) and what its `def`
    evaluated."""
    code: types.CodeType
    doc: str | None
    defaults: tuple | None
    kwdefaults: dict | None
    annotations: dict

    def make(self, namespace: dict, closure=None) -> types.FunctionType:
        fn = types.FunctionType(self.code, namespace, self.code.co_name, self.defaults, closure)
        fn.__kwdefaults__ = self.kwdefaults
        fn.__annotations__ = self.annotations
        fn.__doc__ = self.doc
        return fn


def _parts_children(parts: FunctionParts):
    return [parts.defaults, parts.kwdefaults, parts.annotations], (parts.code, parts.doc)


def _parts_of(aux, children) -> FunctionParts:
    return FunctionParts(aux[0], aux[1], *children)


@dataclasses.dataclass(eq=False)
class MadeFunction:
    """A function (or lambda) the cell defines: made anew, decorated, on every run."""
    parts: FunctionParts
    decorators: tuple
    definitions: Definitions        # (their namespace: the new function's globals)


@dataclasses.dataclass(eq=False)
class MadeMethod:
    """A function a cell's class body defines (in staticmethod or classmethod, or not)."""
    parts: FunctionParts
    wrapper: type | None


@dataclasses.dataclass(eq=False)
class MadeProperty:
    fget: Any
    fset: Any
    fdel: Any
    doc: str | None


@dataclasses.dataclass(eq=False)
class MadeClass:
    """A class the cell defines: made anew by its metaclass on every run."""
    name: str
    bases: tuple
    namespace: dict
    decorators: tuple
    definitions: Definitions
    metaclass: type


@dataclasses.dataclass(eq=False)
class MadeInstance:
    """An object of a class the cell defines, rebuilt by its attributes (as NumPy-holding
    objects of the result are: without calling its __init__)."""
    cls: Any
    attributes: dict


def _parts_children(parts: FunctionParts):
    return [parts.defaults, parts.kwdefaults, parts.annotations], (parts.code, parts.doc)


def _parts_of(aux, children) -> FunctionParts:
    return FunctionParts(aux[0], aux[1], *children)


def _function_children(made: MadeFunction):
    children, aux = _parts_children(made.parts)
    return children + [made.decorators], (aux, made.definitions)


def _make_function(aux, children):
    parts_aux, definitions = aux
    fn = _parts_of(parts_aux, children[:3]).make(definitions.namespace)
    for decorator in reversed(children[3]):
        fn = decorator(fn)
    return fn


class _PendingMethod:
    """A method rebuilt before its class: made with the class's `__class__` cell (`super()`)
    when the class is."""

    def __init__(self, parts: FunctionParts, wrapper):
        self.parts, self.wrapper = parts, wrapper

    def make(self, namespace: dict, class_cell):
        closure = (class_cell,) if self.parts.code.co_freevars == ("__class__",) else None
        fn = self.parts.make(namespace, closure)
        return self.wrapper(fn) if self.wrapper is not None else fn


class _PendingProperty:
    def __init__(self, fget, fset, fdel, doc):
        self.parts, self.doc = (fget, fset, fdel), doc

    def make(self, namespace: dict, class_cell):
        return property(*(p.make(namespace, class_cell) if p is not None else None
                          for p in self.parts), doc=self.doc)


def _make_class(aux, children):
    (name, definitions, metaclass), (bases, items, decorators) = aux, children
    class_cell = types.CellType()

    namespace = metaclass.__prepare__(name, bases)
    for key, value in items.items():
        pending = isinstance(value, (_PendingMethod, _PendingProperty))
        namespace[key] = value.make(definitions.namespace, class_cell) if pending else value
    namespace["__classcell__"] = class_cell
    cls = metaclass(name, bases, namespace)     # (the bases are resolved: the twin's own)
    for decorator in reversed(decorators):
        cls = decorator(cls)
    return cls


def _make_instance(aux, children):
    cls, attributes = children
    made = object.__new__(cls)
    vars(made).update(attributes)
    return made


def _register() -> None:
    tree_util.register_pytree_node(MadeFunction, _function_children, _make_function)
    tree_util.register_pytree_node(
        MadeMethod, lambda m: (_parts_children(m.parts)[0], (_parts_children(m.parts)[1],
                                                              m.wrapper)),
        lambda aux, children: _PendingMethod(_parts_of(aux[0], children), aux[1]))
    tree_util.register_pytree_node(
        MadeProperty, lambda p: ([p.fget, p.fset, p.fdel], p.doc),
        lambda doc, children: _PendingProperty(*children, doc))
    tree_util.register_pytree_node(
        MadeClass, lambda c: ([c.bases, c.namespace, c.decorators],
                              (c.name, c.definitions, c.metaclass)), _make_class)
    tree_util.register_pytree_node(
        MadeInstance, lambda i: ([i.cls, i.attributes], None), _make_instance)


_register()
