"""The C of host loops' scalar work: C types, literals and one rule per primitive.

Each rule (`SCALAR_RULES[name](operand expressions..., operand avals, out aval)`) is a C
expression computing what the primitive's NumPy reference (`Primitive.impl`) computes on one
element, to the bit: floats by single IEEE operations (the C is compiled without contraction
into fused multiply-adds), integers wrapping, and NumPy's own answers where C's differ or are
undefined (shifts by the width or more, integer division by zero, the most negative number
divided by -1, `+` and `*` on bools). A rule raises `Refused` where it has no exact form;
tests/core/compile/test_host_loops.py checks every rule against NumPy on edge values.
"""
from __future__ import annotations

import numpy as np

from ..ir import ShapedArray

C_TYPES = {"bool": "uint8_t", "int8": "int8_t", "int16": "int16_t", "int32": "int32_t",
           "int64": "int64_t", "uint8": "uint8_t", "uint16": "uint16_t", "uint32": "uint32_t",
           "uint64": "uint64_t", "float32": "float", "float64": "double"}

# Helpers the rules call: NumPy's answers where C has none or another.
PRELUDE = r"""
#include <math.h>
#include <stdint.h>
#include <string.h>

static inline double psc_f64(uint64_t bits) { double v; memcpy(&v, &bits, 8); return v; }
static inline float psc_f32(uint32_t bits) { float v; memcpy(&v, &bits, 4); return v; }
static inline int64_t psc_clamp(int64_t i, int64_t hi) { return i < 0 ? 0 : (i > hi ? hi : i); }
#define PSC_SHL(T, BITS, a, b) ((T)((uint64_t)(b) < (BITS) ? (T)((a) << (b)) : (T)0))
#define PSC_SHR(T, BITS, a, b) ((T)((uint64_t)(b) < (BITS) ? (T)((a) >> (b)) : (T)((a) < 0 ? -1 : 0)))
#define PSC_INT_DIVISION(N, T, MIN)                                                    \
    static inline T psc_floordiv_##N(T a, T b) {                                       \
        if (b == 0) return 0;                                                          \
        if (a == (T)(MIN) && b == (T)-1) return (T)(MIN);                              \
        T q = (T)(a / b);                                                              \
        return (a % b != 0 && ((a < 0) != (b < 0))) ? (T)(q - 1) : q;                  \
    }                                                                                  \
    static inline T psc_rem_##N(T a, T b) {                                            \
        if (b == 0 || (a == (T)(MIN) && b == (T)-1)) return 0;                         \
        T r = (T)(a % b);                                                              \
        return (r != 0 && ((r < 0) != (b < 0))) ? (T)(r + b) : r;                      \
    }
PSC_INT_DIVISION(int8, int8_t, INT8_MIN)
PSC_INT_DIVISION(int16, int16_t, INT16_MIN)
PSC_INT_DIVISION(int32, int32_t, INT32_MIN)
PSC_INT_DIVISION(int64, int64_t, INT64_MIN)
PSC_INT_DIVISION(uint8, uint8_t, 0)
PSC_INT_DIVISION(uint16, uint16_t, 0)
PSC_INT_DIVISION(uint32, uint32_t, 0)
PSC_INT_DIVISION(uint64, uint64_t, 0)

/* NumPy's pairwise summation (its pairwise_sum of the add loops), n elements `s` apart: under
 * 8 one by one; up to 128 in 8 running sums combined as ((0+1)+(2+3))+((4+5)+(6+7)), then the
 * rest one by one; beyond, the halves (the first a multiple of 8) summed so and added. The
 * `dot` form sums the products a[i] * b[i] in the same order. */
#define PSC_PAIRWISE(N, T, ELEM, PARAMS, ARGS, SHIFT)                                  \
    static T N(PARAMS, int64_t n) {                                                    \
        if (n < 8) {                                                                   \
            T res = 0;                                                                 \
            for (int64_t i = 0; i < n; i++) res += ELEM(i);                            \
            return res;                                                                \
        }                                                                              \
        if (n <= 128) {                                                                \
            T r[8];                                                                    \
            for (int j = 0; j < 8; j++) r[j] = ELEM(j);                                \
            int64_t i;                                                                 \
            for (i = 8; i < n - (n % 8); i += 8)                                       \
                for (int j = 0; j < 8; j++) r[j] += ELEM(i + j);                       \
            T res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7])); \
            for (; i < n; i++) res += ELEM(i);                                         \
            return res;                                                                \
        }                                                                              \
        int64_t n2 = n / 2;                                                            \
        n2 -= n2 % 8;                                                                  \
        return N(ARGS, n2) + N(SHIFT(n2), n - n2);                                     \
    }
#define PSC_SUM_ELEM(i) a[(i) * s]
#define PSC_SUM_SHIFT(m) a + (m) * s, s
#define PSC_DOT_ELEM(i) (a[(i) * sa] * b[(i) * sb])
#define PSC_DOT_SHIFT(m) a + (m) * sa, sa, b + (m) * sb, sb
#define PSC_COMMA ,
PSC_PAIRWISE(psc_sum_float64, double, PSC_SUM_ELEM, const double *a PSC_COMMA int64_t s,
             a PSC_COMMA s, PSC_SUM_SHIFT)
PSC_PAIRWISE(psc_sum_float32, float, PSC_SUM_ELEM, const float *a PSC_COMMA int64_t s,
             a PSC_COMMA s, PSC_SUM_SHIFT)
PSC_PAIRWISE(psc_dot_float64, double, PSC_DOT_ELEM,
             const double *a PSC_COMMA int64_t sa PSC_COMMA const double *b PSC_COMMA int64_t sb,
             a PSC_COMMA sa PSC_COMMA b PSC_COMMA sb, PSC_DOT_SHIFT)
PSC_PAIRWISE(psc_dot_float32, float, PSC_DOT_ELEM,
             const float *a PSC_COMMA int64_t sa PSC_COMMA const float *b PSC_COMMA int64_t sb,
             a PSC_COMMA sa PSC_COMMA b PSC_COMMA sb, PSC_DOT_SHIFT)
"""


class Refused(Exception):
    """Why a loop is not a host loop (shown in the report)."""


def ctype(aval: ShapedArray) -> str:
    try:
        return C_TYPES[aval.dtype.name]
    except KeyError:
        raise Refused(f"{aval.dtype} has no C type here") from None


def literal(value, dtype: np.dtype) -> str:
    value = np.asarray(value, dtype).reshape(())
    if dtype.kind == "f":
        if dtype == np.float64:
            return f"psc_f64(0x{int(value.view(np.uint64)):016x}ULL)"
        if dtype == np.float32:
            return f"psc_f32(0x{int(value.view(np.uint32)):08x}U)"
        raise Refused(f"{dtype} has no C type here")
    if dtype == np.bool_:
        return "1" if bool(value) else "0"
    if dtype.kind == "u":
        return f"({C_TYPES[dtype.name]}){int(value)}ULL"
    number = int(value)
    if number == -(1 << 63):
        return "(int64_t)(-9223372036854775807LL - 1)"
    return f"({C_TYPES[dtype.name]}){number}LL"


# -- the scalar rules: (C expression of the operands' C expressions, avals in, aval out) -----

_BOOL_OPS = {"+": "|", "*": "&", "&": "&", "|": "|", "^": "^"}    # NumPy's on bools


def _binary(op: str):
    def rule(a, b, avals, out):
        if out.dtype == np.bool_:
            if op not in _BOOL_OPS:
                raise Refused(f"`{op}` on bools")
            return f"(uint8_t)({a} {_BOOL_OPS[op]} {b})"
        return f"({ctype(out)})({a} {op} {b})"
    return rule


def _compare(op: str):
    return lambda a, b, avals, out: f"(uint8_t)({a} {op} {b})"


def _ints_only(rule):
    def checked(*args):
        avals = args[-2]
        if any(a.dtype.kind == "f" for a in avals):
            raise Refused("this operation on floats stays XLA's")
        return rule(*args)
    return checked


def _shift(macro: str):
    def rule(a, b, avals, out):
        bits = out.dtype.itemsize * 8
        return f"{macro}({ctype(out)}, {bits}, {a}, {b})"
    return _ints_only(rule)


def _int_division(function: str):
    def rule(a, b, avals, out):
        if out.dtype.kind not in "iu":
            raise Refused(f"{function} of {out.dtype} stays XLA's")
        return f"psc_{function}_{out.dtype.name}({a}, {b})"
    return rule


def _divide(a, b, avals, out):
    if out.dtype.kind != "f" or any(x.dtype != out.dtype for x in avals):
        raise Refused("true division of integers stays XLA's")
    return f"({a} / {b})"


def _negative(a, avals, out):
    if out.dtype == np.bool_:
        raise Refused("negative of a bool")
    return f"({ctype(out)})(-{a})"


def _abs(a, avals, out):
    if out.dtype.kind == "f":
        return f"({ctype(out)})fabs({a})"
    if out.dtype.kind == "u" or out.dtype == np.bool_:
        return a
    return f"({ctype(out)})({a} < 0 ? -{a} : {a})"


def _float_fn(name: str):
    def rule(a, avals, out):
        if out.dtype.kind != "f":
            return a                       # floor, ceil and rint of an integer: itself
        suffix = "f" if out.dtype == np.float32 else ""
        return f"{name}{suffix}({a})"
    return rule


def _sqrt(a, avals, out):
    if out.dtype.kind != "f" or avals[0].dtype != out.dtype:
        raise Refused("sqrt of an integer stays XLA's")
    return f"sqrt{'f' if out.dtype == np.float32 else ''}({a})"


def _extremum(op: str):
    """np.maximum / np.minimum: a NaN operand wins (the first if both are), and of two equal
    numbers (0.0 and -0.0) the second."""
    def rule(a, b, avals, out):
        chosen = f"({a} {op} {b} ? {a} : {b})"
        if out.dtype.kind == "f":
            return f"(isnan({a}) ? {a} : (isnan({b}) ? {b} : {chosen}))"
        return f"({ctype(out)}){chosen}"
    return rule


def _convert(a, avals, out):
    src, dst = avals[0].dtype, out.dtype
    if src == dst:
        return a
    if dst == np.bool_:
        return f"(uint8_t)({a} != 0)"
    if src.kind == "f" and dst.kind in "iu":
        raise Refused("a float converted to an integer stays XLA's")
    return f"({ctype(out)})({a})"


def _logical(op: str):
    return lambda a, b, avals, out: f"(uint8_t)(({a} != 0) {op} ({b} != 0))"


def _invert(a, avals, out):
    if out.dtype == np.bool_:
        return f"(uint8_t)!{a}"
    return f"({ctype(out)})(~{a})"


def _float_predicate(fn: str, int_value: str):
    def rule(a, avals, out):
        return f"(uint8_t)({fn}({a}) != 0)" if avals[0].dtype.kind == "f" else int_value
    return rule


SCALAR_RULES = {
    "add": _binary("+"), "subtract": _binary("-"), "multiply": _binary("*"),
    "divide": _divide,
    "floor_divide": _int_division("floordiv"),
    "remainder": _int_division("rem"),
    "negative": _negative, "abs": _abs, "sqrt": _sqrt,
    "floor": _float_fn("floor"), "ceil": _float_fn("ceil"), "rint": _float_fn("rint"),
    "maximum": _extremum(">"), "minimum": _extremum("<"),
    "equal": _compare("=="), "not_equal": _compare("!="), "less": _compare("<"),
    "less_equal": _compare("<="), "greater": _compare(">"), "greater_equal": _compare(">="),
    "logical_and": _logical("&&"), "logical_or": _logical("||"), "logical_xor": _logical("!="),
    "logical_not": lambda a, avals, out: f"(uint8_t)({a} == 0)",
    "bitwise_and": _binary("&"), "bitwise_or": _binary("|"), "bitwise_xor": _binary("^"),
    "invert": _invert,
    "left_shift": _shift("PSC_SHL"), "right_shift": _shift("PSC_SHR"),
    "convert_element_type": _convert,
    "isnan": _float_predicate("isnan", "0"), "isinf": _float_predicate("isinf", "0"),
    "isfinite": _float_predicate("isfinite", "1"),
}


def expression(eqn, operands) -> str:
    """The C expression of an elementwise equation (a scalar rule, or `select`) on its
    operands' C expressions; raises Refused."""
    name = eqn.prim.name
    if name == "select":
        return f"{operands[0]} ? {operands[1]} : {operands[2]}"
    if eqn.params and name != "convert_element_type":
        raise Refused(f"`{name}` with parameters {sorted(eqn.params)}")
    return SCALAR_RULES[name](*operands, [a.aval for a in eqn.inputs], eqn.outs[0].aval)
