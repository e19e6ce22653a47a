"""Loop rolling's expression rewrites (see `rewrite`): what decides a branch or a loop, and
the expressions whose meaning depends on a truth value, become calls of `runtime`'s helpers,
which evaluate them on traced values too: `and`, `or` and `not` (in a test and as values),
conditional expressions, chained comparisons, `assert` and `raise`.
"""
from __future__ import annotations

import ast

RT = "__psc_rt"     # the name the rewritten code calls `runtime` by


def assert_call(stmt: ast.Assert) -> ast.stmt:
    """`assert test, msg` -> `__psc_rt.assert_(test, lambda: msg)`: a traced test is checked by
    the run (runtime.assert_)."""
    args = [rewrite_test(stmt.test)]
    if stmt.msg is not None:
        args.append(ast.Lambda(args=no_args(), body=stmt.msg))
    call = ast.Call(func=rt_attr("assert_"), args=args, keywords=[])
    return ast.copy_location(ast.Expr(ast.copy_location(call, stmt)), stmt)


def raise_call(stmt: ast.Raise) -> ast.stmt:
    """`raise E(msg)` -> `raise __psc_rt.error(lambda: E(msg), lambda: E, 'msg')`: an error
    whose message formats a traced value is still raised, by the run (runtime.error)."""
    exc = stmt.exc
    text = ", ".join(ast.unparse(a) for a in exc.args)
    call = ast.Call(func=rt_attr("error"), args=[
        ast.Lambda(args=no_args(), body=exc), ast.Lambda(args=no_args(), body=exc.func),
        ast.Constant(text)], keywords=[])
    new = ast.Raise(exc=ast.copy_location(call, exc), cause=stmt.cause)
    return ast.copy_location(new, stmt)


def rewrite_test(test: ast.expr) -> ast.expr:
    """`a and b`, `a or b`, `not a` in a test: evaluated on traced values too."""
    if isinstance(test, ast.BoolOp):
        op = "and_" if isinstance(test.op, ast.And) else "or_"
        thunks = [ast.Lambda(args=no_args(), body=rewrite_test(v)) for v in test.values[1:]]
        call = ast.Call(func=rt_attr(op), args=[rewrite_test(test.values[0])] + thunks,
                        keywords=[])
        return ast.copy_location(call, test)
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        call = ast.Call(func=rt_attr("not_"), args=[rewrite_test(test.operand)], keywords=[])
        return ast.copy_location(call, test)
    return test


class IfExpressions(ast.NodeTransformer):
    """`a if test else b` -> `__psc_rt.if_exp(test, lambda: a, lambda: b)`: a traced test
    traces both (runtime.if_exp). Nested functions are rewritten on their own."""

    def visit_FunctionDef(self, node):
        return node

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_If(self, node):
        """A test keeps its own `and`, `or` and `not`: only its truth counts (`rewrite_test`)."""
        _mark_tests(node.test)
        return self.generic_visit(node)

    visit_While = visit_Assert = visit_If

    def visit_BoolOp(self, node: ast.BoolOp):
        self.generic_visit(node)
        if getattr(node, "psc_test", False) or _binds_inside(node):
            return node
        helper = "and_value" if isinstance(node.op, ast.And) else "or_value"
        thunks = [ast.Lambda(args=no_args(), body=v) for v in node.values[1:]]
        call = ast.Call(func=rt_attr(helper), args=[node.values[0], *thunks], keywords=[])
        return ast.copy_location(call, node)

    def visit_UnaryOp(self, node: ast.UnaryOp):
        self.generic_visit(node)
        if not isinstance(node.op, ast.Not) or getattr(node, "psc_test", False):
            return node
        return ast.copy_location(ast.Call(func=rt_attr("not_value"), args=[node.operand],
                                          keywords=[]), node)

    def visit_Compare(self, node: ast.Compare):
        self.generic_visit(node)
        if len(node.ops) < 2 or _binds_inside(node):
            return node
        rest = []
        for op, right in zip(node.ops, node.comparators, strict=True):
            rest += [ast.Constant(type(op).__name__), ast.Lambda(args=no_args(), body=right)]
        call = ast.Call(func=rt_attr("compare_chain"), args=[node.left, *rest], keywords=[])
        return ast.copy_location(call, node)

    def visit_IfExp(self, node: ast.IfExp):
        _mark_tests(node.test)
        self.generic_visit(node)
        if _binds_inside(node):
            return node
        thunks = [ast.Lambda(args=no_args(), body=b) for b in (node.body, node.orelse)]
        call = ast.Call(func=rt_attr("if_exp"), args=[rewrite_test(node.test), *thunks],
                        keywords=[])
        return ast.copy_location(call, node)


def _binds_inside(node) -> bool:
    """Whether the expression has parts a lambda would change the meaning of."""
    return any(isinstance(n, (ast.NamedExpr, ast.Yield, ast.YieldFrom, ast.Await))
               for n in ast.walk(node))


def _mark_tests(test) -> None:
    """Mark the `and`/`or` of a test (through `not` and other `and`/`or`): left to
    `rewrite_test`, which asks only their truth."""
    if isinstance(test, ast.BoolOp):
        test.psc_test = True
        for value in test.values:
            _mark_tests(value)
    elif isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        test.psc_test = True
        _mark_tests(test.operand)


def no_args() -> ast.arguments:
    return ast.arguments(posonlyargs=[], args=[], kwonlyargs=[], kw_defaults=[], defaults=[])


def rt_attr(name: str) -> ast.Attribute:
    return ast.Attribute(value=ast.Name(RT, ast.Load()), attr=name, ctx=ast.Load())
