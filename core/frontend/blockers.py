"""What keeps a loop or branch body from becoming a function of its names (`find_blocker`:
`return`, `yield`, `global`, an attribute set, ...), and the two exits the rolling pass
writes away: `continue` as the rest of the body under `else` (`drop_continue`) and `break` as
a flag the loop's test asks (`drop_break`; see rewrite.break_loop).
"""
from __future__ import annotations

import ast
import copy


_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)


HINTS = {
    "break": "put the exit test in the loop's condition: `while i < n and not done:`",
    "continue": "put the rest of the body under `if not ...:` instead of `continue`",
    "return": "assign the result to a name and return after the loop or branch",
    "yield": "collect the values in a preallocated array instead of yielding them",
    "del": "rebind the name instead of deleting it",
    "except ... as": "catch the error outside the loop or branch, or without `as` (Python "
                     "deletes the name after the handler)",
    "global": "return the value from the cell instead of rebinding a global",
    "attribute": "keep the value in a local name and set the attribute after the loop",
}


def find_blocker(stmts, loop: bool) -> tuple[str, str]:
    """What keeps these statements from becoming a function of their names: (reason, hint)."""
    def visit(node, depth) -> tuple[str, str]:
        if isinstance(node, _SCOPES):
            return ("", "")
        found = _blocking_node(node, depth, loop)
        if found:
            return found, HINTS[found.split("`")[1]]
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
    if isinstance(node, ast.ExceptHandler) and node.name:
        return "it uses `except ... as`"
    if isinstance(node, (ast.Global, ast.Nonlocal)):
        return "it uses `global`"
    if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
        return f"it sets an `attribute` ({ast.unparse(node)})"
    return ""


def drop_continue(stmts: list[ast.stmt]) -> list[ast.stmt]:
    """`if c: continue` (at any depth of ifs) becomes the rest of the body under `else`."""
    out: list[ast.stmt] = []
    for k, stmt in enumerate(stmts):
        if isinstance(stmt, ast.Continue):
            return out
        if isinstance(stmt, ast.If) and _inside_ifs(stmt, ast.Continue):
            rest = stmts[k + 1:]
            new = ast.If(test=stmt.test, body=drop_continue(stmt.body + rest) or [ast.Pass()],
                         orelse=drop_continue(stmt.orelse + copy.deepcopy(rest)))
            out.append(ast.copy_location(new, stmt))
            return out
        out.append(stmt)
    return out


def drop_break(stmts: list[ast.stmt], flag: str) -> list[ast.stmt] | None:
    """The body of a loop that uses `break` (reached through `if`s only) with each `break`
    setting `flag` and what follows it run under `if not flag:`; None when the body has no
    such `break`, or one elsewhere (in a `with` or `try`)."""
    found = [False]

    def drop(block: list[ast.stmt]) -> list[ast.stmt] | None:
        out: list[ast.stmt] = []
        for k, stmt in enumerate(block):
            if isinstance(stmt, ast.Break):
                found[0] = True
                out.append(ast.copy_location(ast.Assign(
                    targets=[ast.Name(flag, ast.Store())], value=ast.Constant(True)), stmt))
                return out
            if isinstance(stmt, ast.If) and _inside_ifs(stmt, ast.Break):
                body, orelse = drop(stmt.body), drop(stmt.orelse)
                if body is None or orelse is None:
                    return None
                out.append(ast.copy_location(ast.If(test=stmt.test, body=body or [ast.Pass()],
                                                    orelse=orelse), stmt))
                rest = drop(block[k + 1:])
                if rest is None:
                    return None
                if rest:
                    guard = ast.copy_location(ast.If(test=ast.UnaryOp(
                        op=ast.Not(), operand=ast.Name(flag, ast.Load())), body=rest, orelse=[]),
                        block[k + 1])
                    guard.psc_text = f"if {ast.unparse(stmt.test)}: break"   # (for messages)
                    out.append(guard)
                return out
            if find_blocker([stmt], loop=True)[0] == "it uses `break`":
                return None                     # a break inside a `with` or `try`
            out.append(stmt)
        return out

    dropped = drop(copy.deepcopy(stmts))
    return dropped if dropped is not None and found[0] else None


def _inside_ifs(node, kind: type) -> bool:
    """Whether a `break` or `continue` (kind) of the current loop is inside node's ifs."""
    if isinstance(node, kind):
        return True
    if isinstance(node, ast.If):
        return any(_inside_ifs(s, kind) for s in node.body + node.orelse)
    return False
