"""Whether a traced value comes out of XLA with NumPy's bits, operation for operation.

A print shows every digit of a float (`print(x.sum())` shows 17 of them), so a value that is
printed may only be computed where XLA:CPU gives the bits NumPy gives (printed.py). Most
operations do: moving data, comparing, selecting, integer arithmetic, and IEEE's correctly
rounded float operations (+, -, *, /, sqrt, rint) on their own. What does not, measured
against NumPy on a million random operands each:

- a float product that feeds a sum or difference: LLVM contracts the two into one fused
  multiply-add, rounded once instead of twice (`a * b + c` differs in 16% of elements);
- constants gathered by XLA's simplifier: `a + 0.1 + 0.2` becomes `a + 0.3` (30%), and
  `a * 0.1 * 0.3` and `a / b / c` (becoming `a / (b * c)`) likewise;
- sums of floats, added in another order than NumPy's pairwise sum;
- exp, log, tanh, powers and the rest: XLA's own approximations, not the C library's.

A sum of booleans or of small integers converted to floats is exact in any order (each
partial sum is an integer below 2**53), so `(x > 0).mean()` is exact. The check is
conservative: anything not known to be exact is not.
"""
from __future__ import annotations

from ..ir import Eqn, Var, subgraphs
from ..tracing import Trace

# Operations whose result is NumPy's bits given NumPy's operands, in any dtype.
EXACT = frozenset({
    "abs", "negative", "sign", "floor", "ceil", "rint", "sqrt", "equal", "not_equal", "less",
    "less_equal", "greater", "greater_equal", "logical_and", "logical_or", "logical_not",
    "logical_xor", "isnan", "isinf", "isfinite", "signbit", "bitwise_and", "bitwise_or",
    "bitwise_xor", "invert", "left_shift", "right_shift", "maximum", "minimum", "fmax", "fmin",
    "select", "copysign", "nextafter", "argmax", "argmin", "reduce_max", "reduce_min",
    "reduce_and", "reduce_or", "sort", "argsort", "cummax", "cummin", "real", "imag",
    "conjugate", "complex", "iota", "sharding_constraint", "dynamic_update_slice"})
# ... and those that only move data (looked through when asking what made an operand).
MOVES = frozenset({"broadcast_in_dim", "reshape", "transpose", "slice", "dynamic_slice",
                   "gather", "rev", "pad", "concatenate"})
# Exact on integers and booleans only (two's complement wraps alike).
INTEGER_EXACT = frozenset({"add", "subtract", "multiply", "floor_divide", "remainder", "power",
                           "reduce_sum", "reduce_prod", "cumsum", "cumprod", "dot_general",
                           "square"})
PRODUCTS = frozenset({"multiply", "square", "dot_general"})
SUMS = frozenset({"add", "subtract"})
MAX_EQUATIONS = 5000        # looked at behind one value; past it, it is taken as inexact
EXACT_INTEGERS = 2 ** 53


def inexact_reason(var: Var, trace: Trace, made: dict) -> str | None:
    """None when every operation behind `var` in `trace` (`made`: its `producers`) gives
    NumPy's bits; else what does not (`np.exp`, "a sum of floats", ...), in words."""
    found = inexact_equation(var, trace, made)
    return None if found is None else found[0]


def inexact_equation(var: Var, trace: Trace, made: dict) -> tuple[str, Eqn | None] | None:
    """None when every operation behind `var` gives NumPy's bits; else what does not, in
    words, and its equation (inside the loop or branch that holds it, for one in a body;
    None past MAX_EQUATIONS). A loop or branch is exact when every operation in its bodies
    is (its operands are looked at as any equation's)."""
    seen: set[int] = set()
    todo = [var]
    while todo:
        v = todo.pop()
        eqn = made.get(v)
        if eqn is None or eqn.id in seen:
            continue
        seen.add(eqn.id)
        if len(seen) > MAX_EQUATIONS:
            return f"more than {MAX_EQUATIONS} operations behind it", None
        found = _inexact_in(eqn, made, trace)
        if found is not None:
            return found
        todo += [a for a in eqn.inputs if isinstance(a, Var)]
    return None


def _inexact_in(eqn: Eqn, made: dict, trace: Trace, depth: int = 0):
    graphs = subgraphs(eqn)
    if not graphs:
        reason = _equation_reason(eqn, made, trace)
        return None if reason is None else (reason, eqn)
    if depth > 8:
        return f"the operation {eqn.prim.name}", eqn
    for graph in graphs:
        inner = {out: e for e in graph.eqns for out in e.outs}
        for e in graph.eqns:
            found = _inexact_in(e, inner, trace, depth + 1)
            if found is not None:
                return found
    return None


def producers(trace: Trace) -> dict:
    """The equation that made each variable of `trace` and the traces around it."""
    made = {}
    chain = []
    while trace is not None:
        chain.append(trace)
        trace = trace.parent
    for t in reversed(chain):
        for eqn in t.eqns:
            for out in eqn.outs:
                made[out] = eqn
    return made


def _equation_reason(eqn, made, trace) -> str | None:
    name = eqn.prim.name
    if name in EXACT or name in MOVES:
        return None
    kinds = {a.aval.dtype.kind for a in (*eqn.inputs, *eqn.outs)}
    if name in INTEGER_EXACT and kinds <= set("iub"):
        return None
    if name == "convert_element_type":
        float_in = eqn.inputs[0].aval.dtype.kind in "fc"
        return "a float converted to an integer" if float_in and \
            eqn.outs[0].aval.dtype.kind in "iub" else None
    if name == "scatter":       # (sets move data; adds are sums)
        return None if eqn.params.get("mode") != "add" or kinds <= set("iub") else \
            "a sum of floats (XLA adds in another order than NumPy)"
    if name == "reduce_sum":
        return None if _sums_small_integers(eqn, made) else "a sum of floats (XLA adds " \
            "in another order than NumPy)"
    if name in ("multiply", "square"):
        return _gathers_constants(eqn, made, trace, ("multiply", "divide"))
    if name == "divide":
        numerator = _origin(eqn.inputs[0], made)
        if numerator is not None and numerator.prim.name == "divide":
            return "a quotient divided again (XLA divides once by the product)"
        return _gathers_constants(eqn, made, trace, ("multiply", "divide"))
    if name in SUMS:
        for operand in eqn.inputs:
            if any(o.prim.name in PRODUCTS for o in _origins(operand, made)):
                return "a product added to another value (XLA fuses them into one " \
                    "multiply-add, rounded once)"
        return _gathers_constants(eqn, made, trace, tuple(SUMS))
    return f"np.{name}" if name in _NUMPY_NAMED else f"the operation {name}"


_NUMPY_NAMED = frozenset({"exp", "log", "tanh", "sin", "cos", "tan", "power", "exp2", "expm1",
                          "log1p", "log2", "log10", "arctan", "arctan2", "cumsum", "cumprod",
                          "cbrt", "hypot", "sinh", "cosh", "arcsin", "arccos", "arcsinh",
                          "arccosh", "arctanh", "remainder", "floor_divide", "fmod"})


def _gathers_constants(eqn, made, trace, kin: tuple[str, ...]) -> str | None:
    """A reason when XLA's simplifier could fold this operation's constant operand into the
    constant of the operation making its other operand (`(a + 0.1) + 0.2`)."""
    constant = [trace.known_value(a) is not None for a in eqn.inputs]
    if not any(constant):
        return None
    for operand, is_constant in zip(eqn.inputs, constant, strict=True):
        if is_constant:
            continue
        origin = _origin(operand, made, through=("negative",))
        if origin is not None and origin.prim.name in kin and \
                any(trace.known_value(a) is not None for a in origin.inputs):
            return "two constants in a row (XLA combines them first)"
    return None


def _sums_small_integers(eqn, made) -> bool:
    """A float sum of booleans or small integers converted to floats: exact in any order."""
    origin = _origin(eqn.inputs[0], made)
    if origin is None or origin.prim.name != "convert_element_type":
        return False
    source = origin.inputs[0].aval
    count = max(1, eqn.inputs[0].aval.size)
    if source.dtype.kind == "b":
        largest = 1
    elif source.dtype.kind in "iu":
        largest = 2 ** (8 * source.dtype.itemsize)
    else:
        return False
    return count * largest < EXACT_INTEGERS


def _origins(atom, made) -> list:
    """The equations whose values can reach `atom` past operations that move data, negate
    or select (where XLA could still fuse a product into a sum)."""
    found, todo, seen = [], [atom], set()
    while todo and len(seen) < 256:
        atom = todo.pop()
        eqn = made.get(atom) if isinstance(atom, Var) else None
        if eqn is None or eqn.id in seen:
            continue
        seen.add(eqn.id)
        if eqn.prim.name in MOVES or eqn.prim.name in ("negative", "select"):
            todo += eqn.inputs
        else:
            found.append(eqn)
    return found


def _origin(atom, made, through: tuple[str, ...] = ()):
    """The equation that computed `atom`'s values, past operations that only move data (and
    those in `through`); None for an input or a constant."""
    for _ in range(64):
        if not isinstance(atom, Var):
            return None
        eqn = made.get(atom)
        if eqn is None:
            return None
        name = eqn.prim.name
        if (name in MOVES or name in through) and eqn.inputs and name != "concatenate":
            atom = eqn.inputs[0]
            continue
        return eqn
    return None
