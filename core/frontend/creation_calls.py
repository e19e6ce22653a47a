"""The rolling pass's rewrite of calls that make arrays, and of calls of Python's numeric
functions (float, int, max, min, math.*: see `python_scalars`).

`np.zeros(n)` does not see a tracer, so NumPy's dispatch never hands it to psc_jit: its result
would be a plain NumPy array, and writing a traced value into it would fail. The pass rewrites
every call of a function named like a NumPy creation function,

    np.zeros(n)   ->   __psc_rt.create(np.zeros, n)

and `runtime.create` decides when it runs: while tracing, and if the callee is NumPy's own
function, the array is made traced (see `numpy.creation`); anything else is called as written.
The name is only a first filter: `d.copy()` or a user's own `zeros` pass through unchanged.
"""
from __future__ import annotations

import ast
import math

CREATION_NAMES = frozenset({
    "zeros", "ones", "empty", "full", "zeros_like", "ones_like", "empty_like", "full_like",
    "ndarray", "arange", "eye", "identity", "tri", "copy", "array", "asarray", "asanyarray",
    "ascontiguousarray"})

# ... and the calls of Python's numeric functions, which would ask a traced scalar for a
# Python number (python_scalars.py): the builtins by name, math's functions by name too
# (`math.sqrt`, `from math import sqrt`)
SCALAR_NAMES = frozenset({"bool", "float", "int", "max", "min"})
MATH_NAMES = frozenset(name for name in dir(math) if not name.startswith("_"))


def wrap_creation_calls(stmts: list[ast.stmt], rt: str) -> list[ast.stmt]:
    """The statements with creation calls routed through `{rt}.create` (nested functions are
    left alone: the pass rewrites each function on its own)."""
    wrapper = _CreationCalls(rt)
    return [wrapper.visit(stmt) for stmt in stmts]


class _CreationCalls(ast.NodeTransformer):
    def __init__(self, rt: str):
        self.rt = rt

    def visit_FunctionDef(self, node):
        return node

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_Call(self, node: ast.Call):
        self.generic_visit(node)
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
        if name in CREATION_NAMES:
            helper = "create"
        elif name in SCALAR_NAMES or name in MATH_NAMES:
            helper = "python_scalar"
        else:
            return node
        route = ast.Attribute(value=ast.Name(self.rt, ast.Load()), attr=helper, ctx=ast.Load())
        return ast.copy_location(ast.Call(func=route, args=[func, *node.args],
                                          keywords=node.keywords), node)
