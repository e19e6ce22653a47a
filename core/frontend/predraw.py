"""A host loop's random draws made before it, so that the loop itself can roll.

A `for` over `range(...)` whose only host steps are random draws runs on the host, pass by
pass (regions.py). When every pass is known to run (a fixed trip count, no `break`,
`continue` or `return`), each draw made by its own generator once per pass, and the draws'
arguments the same on every pass, one draw of size `(passes, *shape)` before the loop gives
the numbers of all the passes, in order, and leaves the generator where the passes would,
for the methods in PREDRAWABLE (tests/core/frontend/test_predraw.py checks each, over the
bit generators, seeds, sizes and dtypes). The loop is then one region: `for i in
range(a, b, c)` with each draw read from its row of the numbers drawn before. When that
region cannot be compiled, the generators are put back as they were before the draws and
the loop runs pass by pass.

`predraw_of(stmt, body_plan)` is the static part (from the AST and the body's plan);
`PreDraw.draw(namespace, passes)` the run-time part: it checks the generators and the
arguments it finds, and draws, or says why not (then nothing was drawn).
"""
from __future__ import annotations

import ast
import functools
import inspect
from dataclasses import dataclass

import numpy as np

from .cell import assigned_names
from .hoist import DRAW_METHODS

# Methods whose draw of size (n, *shape) equals n draws of size shape in order, in values
# and in the generator's state after them. Not here: `choice` and `permutation` (one draw is
# not a row of independent picks), the draws of vectors (`multivariate_normal`, ...) and the
# ones not checked, nor the integers of 8 or 16 bits and bools (NumPy buffers
# their bits within one call, so a batched draw and n draws differ).
PREDRAWABLE = DRAW_METHODS - {"choice", "permutation", "multivariate_normal", "dirichlet",
                              "multinomial", "noncentral_chisquare", "noncentral_f",
                              "random_integers"}
_DIMENSIONS = frozenset({"rand", "randn"})       # legacy: the shape as positional arguments
_INTEGERS = frozenset({"integers", "randint"})   # only of 32 or 64 bits
PREFIX = "__psc_draw"       # the names the numbers and the range are bound to for the region
MAX_NUMBERS = 1 << 24       # drawn before a loop at most (128 MiB of float64); more: per pass
_IMMUTABLE = (int, float, complex, bool, str, type(None), np.generic, np.dtype, type)
_CONDITIONAL = (ast.IfExp, ast.BoolOp, ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp,
                ast.GeneratorExp, ast.NamedExpr, ast.Await, ast.Yield, ast.YieldFrom)


@dataclass(frozen=True)
class Draw:
    """A draw call of the loop's body: where it is, and its generator's and arguments' text."""
    at: tuple                   # (lineno, col_offset, end_lineno, end_col_offset)
    owner: str                  # `rng`, `np.random`
    method: str
    args: tuple[str, ...]       # the arguments' source, `*`/`**` not allowed
    keywords: tuple[tuple[str, str], ...]
    name: str                   # the name its numbers are bound to

    def describe(self) -> str:
        return f"line {self.at[0]} `{self.owner}.{self.method}`"


@dataclass(frozen=True)
class PreDraw:
    """How a host `for` loop rolls with its draws made before it (see the module)."""
    target: str
    draws: tuple[Draw, ...]

    def describe(self) -> str:
        return ", ".join(draw.describe() for draw in self.draws)

    def apply(self, stmts: list) -> list:
        """The loop (`stmts`: the one `for`, freshly parsed) over the range bound before it,
        each draw read from the numbers drawn before it."""
        loop = stmts[0]
        bounds = [ast.Name(f"{PREFIX}_{part}", ast.Load()) for part in ("start", "stop", "step")]
        loop.iter = ast.copy_location(ast.Call(ast.Name("range", ast.Load()), bounds, []),
                                      loop.iter)
        loop.body = [_Replace(self).visit(stmt) for stmt in loop.body]
        ast.fix_missing_locations(loop)
        return stmts

    def draw(self, namespace: dict, passes: range):
        """(names to bind for the region, a function putting the generators back), or a
        string saying why the numbers are not drawn before the loop (nothing drawn then)."""
        if type(passes) is not range or len(passes) == 0:
            return "its iterable is not a non-empty range"
        calls = []
        for draw in self.draws:
            call = _batched_call(draw, namespace, len(passes))
            if isinstance(call, str):
                return call
            calls.append(call)
        owners = [owner for owner, _, _ in calls]
        if len({id(_bits_of(owner)) for owner in owners}) < len(owners):
            return "two of its draws use one generator (their numbers interleave)"
        if sum(size for _, _, size in calls) > MAX_NUMBERS:
            return f"the numbers of all its passes are more than {MAX_NUMBERS:,}"
        return _made(self.draws, calls, owners, passes)


def _made(draws, calls, owners, passes):
    """Make the draws (see PreDraw.draw). One that raises (its arguments are wrong) is not
    made: the generators are put back and the loop runs pass by pass, raising it where
    plain Python does, after what its first pass does before the draw."""
    states = [(owner, generator_state(owner)) for owner in owners]
    names = {f"{PREFIX}_start": passes.start, f"{PREFIX}_stop": passes.stop,
             f"{PREFIX}_step": passes.step}
    try:
        for draw, (_, make, _) in zip(draws, calls, strict=True):
            names[draw.name] = make()
    except Exception as err:
        put_back_states(states)
        return f"{type(err).__name__} drawing them"
    except BaseException:
        put_back_states(states)
        raise
    return names, lambda: put_back_states(states)


class _Replace(ast.NodeTransformer):
    """Each draw call of the body becomes `<its numbers>[(target - start) // step]`."""

    def __init__(self, predraw: PreDraw):
        self.by_place = {draw.at: draw for draw in predraw.draws}
        self.target = predraw.target

    def visit_Call(self, node):
        draw = self.by_place.get(_place(node))
        if draw is None:
            return self.generic_visit(node)
        offset = ast.BinOp(ast.Name(self.target, ast.Load()), ast.Sub(),
                           ast.Name(f"{PREFIX}_start", ast.Load()))
        index = ast.BinOp(offset, ast.FloorDiv(), ast.Name(f"{PREFIX}_step", ast.Load()))
        return ast.copy_location(ast.Subscript(ast.Name(draw.name, ast.Load()), index,
                                               ast.Load()), node)


def _place(node) -> tuple:
    return (node.lineno, node.col_offset, node.end_lineno, node.end_col_offset)


# -- the static part --------------------------------------------------------------------------

def predraw_of(stmt, body_plan: tuple, host_step_type, region_type) -> PreDraw | None:
    """The PreDraw of a host `for` loop, or None when its draws cannot be made before it: it
    loops over `range(...)` with a plain name, has no `else`, and its body's host steps (no
    host blocks) are statements whose draws are calls of PREDRAWABLE methods, made once each
    on every pass, with a generator and arguments the loop does not rebind."""
    if not (isinstance(stmt, ast.For) and isinstance(stmt.target, ast.Name)
            and _is_range(stmt.iter) and not stmt.orelse):
        return None
    if not body_plan or not all(isinstance(part, (host_step_type, region_type))
                                for part in body_plan):
        return None
    rebound = set(assigned_names(stmt.body)) | {stmt.target.id}
    steps = [stmt.body[part.index] for part in body_plan if isinstance(part, host_step_type)]
    draws: list[Draw] = []
    for step in steps:
        found = _draws_of(step, rebound, len(draws))
        if not found:
            return None
        draws += found
    if not draws or stmt.target.id in {d.owner.split(".")[0] for d in draws}:
        return None
    return PreDraw(stmt.target.id, tuple(draws))


def _is_range(node) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and \
        node.func.id == "range" and not node.keywords and 1 <= len(node.args) <= 3 and \
        not any(isinstance(a, ast.Starred) for a in node.args)


def _draws_of(stmt, rebound: set, first: int) -> list[Draw]:
    """The draws of one host step, or [] when one of its calls of a generator is not a draw
    that can be made before the loop, or a draw is evaluated only sometimes (inside `x if c
    else y`, `and`, a comprehension or a lambda). Its other calls are the region's: where
    one cannot be compiled, the loop runs pass by pass."""
    if isinstance(stmt, (ast.For, ast.While, ast.If, ast.With, ast.Try, ast.FunctionDef,
                         ast.ClassDef, ast.Delete)):
        return []
    if any(isinstance(node, _CONDITIONAL) for node in ast.walk(stmt)):
        return []
    calls = [node for node in ast.walk(stmt) if isinstance(node, ast.Call)]
    draws = []
    for call in calls:
        draw = _draw(call, rebound, first + len(draws))
        if draw is not None:
            draws.append(draw)
    owners = {draw.owner for draw in draws} | {"np.random", "numpy.random"}
    drawn = {draw.at for draw in draws}
    for call in calls:
        if _place(call) not in drawn and isinstance(call.func, ast.Attribute) and \
                ast.unparse(call.func.value) in owners:
            return []       # (`rng.choice(...)`, `np.random.seed(i)`: made on every pass)
    return draws


def _draw(call: ast.Call, rebound: set, number: int) -> Draw | None:
    func = call.func
    if not (isinstance(func, ast.Attribute) and func.attr in PREDRAWABLE):
        return None
    if not _invariant(func.value, rebound) or any(
            isinstance(a, ast.Starred) or not _invariant(a, rebound) for a in call.args) or \
            any(k.arg is None or not _invariant(k.value, rebound) for k in call.keywords):
        return None
    return Draw(_place(call), ast.unparse(func.value), func.attr,
                tuple(ast.unparse(a) for a in call.args),
                tuple((k.arg, ast.unparse(k.value)) for k in call.keywords),
                f"{PREFIX}{number}")


def _invariant(node, rebound: set) -> bool:
    """Whether the expression has the same value on every pass: names, attributes, items,
    constants and operators, no call, of names the loop does not rebind."""
    allowed = (ast.Name, ast.Attribute, ast.Subscript, ast.Constant, ast.Tuple, ast.BinOp,
               ast.UnaryOp, ast.Load, ast.operator, ast.unaryop, ast.Slice)
    return all(isinstance(n, allowed) and not (isinstance(n, ast.Name) and n.id in rebound)
               for n in ast.walk(node))


# -- the run-time part ------------------------------------------------------------------------

def _batched_call(draw: Draw, namespace: dict, passes: int):
    """(the generator, a function making the draw for every pass, how many numbers it makes),
    or why not."""
    try:
        owner_value = eval(_code(draw.owner), namespace)
        args = [eval(_code(a), namespace) for a in draw.args]
        keywords = {k: eval(_code(v), namespace) for k, v in draw.keywords}
    except Exception as err:     # (the loop's own pass raises it, at its line)
        return f"{draw.describe()}: {type(err).__name__}"
    method = getattr(owner_value, draw.method, None)
    owner = getattr(method, "__self__", None)
    if not isinstance(owner, (np.random.Generator, np.random.RandomState)):
        return f"{draw.describe()} is not a method of a NumPy generator"
    values = list(args) + list(keywords.values())
    if not all(_immutable(v) for v in values):
        return f"{draw.describe()}: an argument that is not a number, a shape or a dtype"
    if draw.method in _DIMENSIONS:
        if not args or keywords or not all(_is_int(a) for a in args):
            return f"{draw.describe()}: no shape"
        return owner, lambda: method(passes, *args), passes * _count(args)
    return _sized_call(draw, owner, method, args, keywords, passes)


@functools.lru_cache(maxsize=256)
def _code(expression: str):
    return compile(expression, "<psc_jit draw>", "eval")


@functools.lru_cache(maxsize=256)
def _signature(kind: type, method: str) -> inspect.Signature:
    return inspect.signature(getattr(kind, method))


def _sized_call(draw, owner, method, args, keywords, passes):
    try:
        bound = _signature(type(owner), draw.method).bind(None, *args, **keywords)
    except (TypeError, ValueError):
        return f"{draw.describe()}: its arguments do not bind"
    size = bound.arguments.get("size")
    shape = (size,) if _is_int(size) else size
    if not (isinstance(shape, tuple) and all(_is_int(s) for s in shape)) or \
            bound.arguments.get("out") is not None:
        return f"{draw.describe()}: no size, or an `out`"
    if draw.method in _INTEGERS and not _wide_integers(bound.arguments.get("dtype", np.int64)):
        return f"{draw.describe()}: integers of fewer than 32 bits"
    bound.arguments["size"] = (passes, *shape)
    return owner, lambda: method(*bound.args[1:], **bound.kwargs), passes * _count(shape)


def _count(shape) -> int:
    count = 1
    for extent in shape:
        count *= int(extent)
    return count


def _wide_integers(dtype) -> bool:
    try:
        dtype = np.dtype(dtype)
    except TypeError:
        return False
    return dtype.kind in "iu" and dtype.itemsize >= 4


def _is_int(value) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool)


def _immutable(value) -> bool:
    if isinstance(value, tuple):
        return all(_immutable(v) for v in value)
    return isinstance(value, _IMMUTABLE)


def _bits_of(owner):
    return owner.bit_generator if isinstance(owner, np.random.Generator) else \
        owner._bit_generator


def generator_state(owner):
    if isinstance(owner, np.random.Generator):
        return owner.bit_generator.state
    return owner.get_state(legacy=False)


def put_back_states(states) -> None:
    """Put (generator, state) pairs back, the last first."""
    for owner, state in reversed(states):
        if isinstance(owner, np.random.Generator):
            owner.bit_generator.state = state
        else:
            owner.set_state(state)
