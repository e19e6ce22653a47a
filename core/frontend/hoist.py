"""Random draws taken out of the statement that uses them: the draw is the host step, the
rest of the statement is compiled.

In `b = a + np.random.normal(size=3)` only the draw must run on the host. It runs there, as
its own host step, binding its numbers to a name of psc_jit's (`__psc_hoist0`), and the
statement is compiled with that name in the draw's place, in the region that follows, so
the numbers are NumPy's and enter the program as an input. That changes nothing plain Python
would do only when nothing the statement evaluates before the draw can act or fail: before
each draw it may only read names and attributes (`a`, `np.random`), and the host step reads
them first (one that is not bound makes it run the statement as it is, failing as plain
Python fails). Draws inside `x if c else y`, `and`/`or`, a comprehension or a lambda, which
Python evaluates only sometimes, stay in their statement.
"""
from __future__ import annotations

import ast
import copy
from dataclasses import dataclass

from .cell import impure_findings

# The methods of NumPy's generators (Generator, RandomState, and np.random's functions) that
# return new numbers and change nothing but the generator's state.
DRAW_METHODS = frozenset({
    "random", "random_sample", "rand", "randn", "standard_normal", "normal", "uniform",
    "exponential", "standard_exponential", "gamma", "standard_gamma", "beta", "lognormal",
    "laplace", "logistic", "gumbel", "rayleigh", "weibull", "pareto", "power", "chisquare",
    "standard_t", "standard_cauchy", "f", "wald", "triangular", "vonmises", "poisson",
    "binomial", "negative_binomial", "geometric", "hypergeometric", "zipf", "logseries",
    "integers", "randint", "choice", "permutation", "multivariate_normal", "dirichlet",
    "multinomial", "noncentral_chisquare", "noncentral_f", "random_integers",
})
PREFIX = "__psc_hoist"
_SOMETIMES = (ast.IfExp, ast.BoolOp, ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp,
              ast.GeneratorExp, ast.NamedExpr, ast.Await, ast.Yield, ast.YieldFrom)
_READS = (ast.Name, ast.Attribute, ast.Constant, ast.expr_context, ast.operator, ast.unaryop,
          ast.cmpop, ast.boolop)


@dataclass(frozen=True)
class Hoist:
    """The draws of one statement, taken out of it: where each is, the text of each, and the
    reads the statement makes before them (checked first)."""
    places: tuple[tuple, ...]       # (lineno, col_offset, end_lineno, end_col_offset) each
    draws: tuple[str, ...]          # each draw's source
    reads: tuple[str, ...]          # the names and attributes read before a draw

    def names(self) -> tuple[str, ...]:
        return tuple(f"{PREFIX}{k}" for k in range(len(self.places)))

    def apply(self, stmts: list) -> list:
        """The statements (freshly parsed) with the first one's draws read from their names."""
        by_place = dict(zip(self.places, self.names(), strict=True))
        stmts[0] = _ByName(by_place).visit(stmts[0])
        ast.fix_missing_locations(stmts[0])
        return stmts


class _ByName(ast.NodeTransformer):
    def __init__(self, by_place: dict):
        self.by_place = by_place

    def visit_Call(self, node):
        name = self.by_place.get(_place(node))
        if name is None:
            return self.generic_visit(node)
        return ast.copy_location(ast.Name(name, ast.Load()), node)


def _place(node) -> tuple:
    return (node.lineno, node.col_offset, node.end_lineno, node.end_col_offset)


def hoist_of(stmt, filename: str, computes) -> Hoist | None:
    """The Hoist of a statement whose only host steps are draws, or None: an assignment or an
    expression statement that computes something besides its draws (`computes`: regions.py's
    test), each draw called as `<generator>.<method>(...)` where Python always evaluates it,
    and nothing evaluated before a draw but reads of names and attributes."""
    if not isinstance(stmt, (ast.Assign, ast.AugAssign, ast.Expr)):
        return None
    draws = [node for node in ast.walk(stmt) if _is_draw(node)]
    outermost = [d for d in draws if not any(d is not o and _inside(d, o) for o in draws)]
    if not outermost or any(isinstance(n, _SOMETIMES) for n in ast.walk(stmt)):
        return None
    findings = impure_findings(ast.Module(body=[stmt], type_ignores=[]), filename)
    drawn_lines = {d.lineno for d in outermost}
    if any(f.line not in drawn_lines or "random" not in f.reason for f in findings):
        return None
    reads = _reads_before(stmt, outermost)
    if reads is None:
        return None
    hoist = Hoist(tuple(_place(d) for d in outermost), tuple(ast.unparse(d) for d in outermost),
                  tuple(dict.fromkeys(reads)))
    rest = hoist.apply([copy.deepcopy(stmt)])
    if not computes(rest) and not any(isinstance(n, ast.Subscript) for n in ast.walk(rest[0])):
        return None         # (`x = rng.normal(size=3)`: nothing left to compile)
    return hoist


def _is_draw(node) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
        node.func.attr in DRAW_METHODS


def _inside(node, outer) -> bool:
    return any(n is node for n in ast.walk(outer))


def _reads_before(stmt, draws) -> list[str] | None:
    """The sources of the names and attributes the statement reads before its last draw, or
    None when it evaluates anything else before one (a call, an item, an operation: each
    could act or fail before the draw in plain Python). The draws themselves run in the
    host step, in the statement's order."""
    inside = {id(n) for d in draws for n in ast.walk(d)}
    order = list(_completion_order(stmt))
    head = [stmt.target] if isinstance(stmt, ast.AugAssign) else []     # (read first)
    if head and not isinstance(stmt.target, (ast.Name, ast.Attribute)):
        return None
    last_done = max(i for i, n in enumerate(order) if id(n) in inside)
    reads = []
    for node in order[:last_done]:
        if id(node) in inside:
            continue
        if not isinstance(node, _READS):
            return None
        if isinstance(node, (ast.Name, ast.Attribute)) and isinstance(node.ctx, ast.Load):
            reads.append(ast.unparse(node))
    return [ast.unparse(n) for n in head] + reads


def _completion_order(node):
    """The nodes of an expression or statement in the order Python finishes evaluating them."""
    for child in _evaluation_order(node):
        yield from _completion_order(child)
    yield node


def _evaluation_order(node) -> list:
    if isinstance(node, ast.Assign):
        return [node.value, *node.targets]
    if isinstance(node, ast.Dict):
        return [x for pair in zip(node.keys, node.values, strict=True) for x in pair
                if x is not None]
    return list(ast.iter_child_nodes(node))
