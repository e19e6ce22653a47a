"""A rolled loop of scalar work written as C: the source of a host loop (`hostloops`).

A `while_loop` equation is taken when everything in it is scalar work on elements: the
carries and every value computed are single elements (any shape of size 1), and arrays are
only read one element at a time (`dynamic_slice`, `slice`) and written one element at a time
(`dynamic_update_slice`) in place. Nested loops become nested C loops. Anything else (a
vector operation, a primitive or dtype without a C rule here) refuses the loop, with the
reason, and it stays XLA's `while`.

Each C rule computes what the primitive's NumPy reference (`Primitive.impl`) computes, to the
bit: floats by single IEEE operations in the program's order (compiled without contraction
into fused multiply-adds), integers wrapping, and NumPy's own answers where C's differ or
are undefined (shifts by the width or more, integer division by zero, the most negative
number divided by -1). Values enter and leave as the loop's operands and results;
`tests/core/test_host_loops.py` checks every rule against NumPy on edge values.

In-place writes keep the program's meaning only while nothing reads an array's value from
before a write: each array is one buffer with one current value, and a read of any other
value of it (an older one) refuses the loop.
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

from ..ir import Eqn, Graph, Literal, ShapedArray, Var

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
"""


class Refused(Exception):
    """Why a loop is not a host loop (shown in the report)."""


def _ctype(aval: ShapedArray) -> str:
    try:
        return C_TYPES[aval.dtype.name]
    except KeyError:
        raise Refused(f"{aval.dtype} has no C type here") from None


def _literal(value, dtype: np.dtype) -> str:
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
        return f"({_ctype(out)})({a} {op} {b})"
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
        return f"{macro}({_ctype(out)}, {bits}, {a}, {b})"
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
    return f"({_ctype(out)})(-{a})"


def _abs(a, avals, out):
    if out.dtype.kind == "f":
        return f"({_ctype(out)})fabs({a})"
    if out.dtype.kind == "u" or out.dtype == np.bool_:
        return a
    return f"({_ctype(out)})({a} < 0 ? -{a} : {a})"


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


def _int_extremum(op: str):
    return _ints_only(lambda a, b, avals, out: f"({_ctype(out)})({a} {op} {b} ? {a} : {b})")


def _convert(a, avals, out):
    src, dst = avals[0].dtype, out.dtype
    if src == dst:
        return a
    if dst == np.bool_:
        return f"(uint8_t)({a} != 0)"
    if src.kind == "f" and dst.kind in "iu":
        raise Refused("a float converted to an integer stays XLA's")
    return f"({_ctype(out)})({a})"


def _logical(op: str):
    return lambda a, b, avals, out: f"(uint8_t)(({a} != 0) {op} ({b} != 0))"


def _invert(a, avals, out):
    if out.dtype == np.bool_:
        return f"(uint8_t)!{a}"
    return f"({_ctype(out)})(~{a})"


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
    "maximum": _int_extremum(">="), "minimum": _int_extremum("<="),
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

# Primitives that only rename a single element.
_RENAMES = {"reshape", "broadcast_in_dim", "squeeze", "expand_dims"}


# -- the emitter ------------------------------------------------------------------------------

@dataclass(eq=False)
class _Buffer:
    """An array the loop reads or writes in place: a C pointer, and the vars holding its
    current value (a read of another value of it, one from before a write, refuses the
    loop)."""
    pointer: str
    aval: ShapedArray
    values: set[int]        # the vars that hold its current value
    writable: bool

    def offset(self, indices: Sequence[str]) -> str:
        strides = np.cumprod((1,) + self.aval.shape[:0:-1])[::-1]
        terms = [f"psc_clamp((int64_t)({i}), {d - 1}) * {int(s)}"
                 for i, d, s in zip(indices, self.aval.shape, strides, strict=True)]
        return " + ".join(terms) if terms else "0"


@dataclass
class _Emitter:
    lines: list[str] = field(default_factory=list)
    depth: int = 1
    scalars: dict[int, str] = field(default_factory=dict)     # var id -> C expression
    arrays: dict[int, _Buffer] = field(default_factory=dict)  # var id -> its buffer
    names: itertools.count = field(default_factory=itertools.count)

    def emit(self, line: str) -> None:
        self.lines.append("    " * self.depth + line)

    def fresh(self) -> str:
        return f"v{next(self.names)}"

    def declare(self, aval: ShapedArray, expr: str) -> str:
        name = self.fresh()
        self.emit(f"{_ctype(aval)} {name} = {expr};")
        return name

    # values
    def scalar(self, atom) -> str:
        if isinstance(atom, Literal):
            if atom.aval.size != 1:
                raise Refused("an array constant in the loop")
            return _literal(atom.value, atom.aval.dtype)
        if atom.id in self.arrays:
            raise Refused("an array used as a value")
        return self.scalars[atom.id]

    def array(self, atom) -> _Buffer:
        if isinstance(atom, Literal) or atom.id not in self.arrays:
            raise Refused("an element read from something other than an array operand")
        buffer = self.arrays[atom.id]
        if atom.id not in buffer.values:
            raise Refused("a read of an array's value from before a write to it")
        return buffer

    def bind(self, var: Var, value) -> None:
        if isinstance(value, _Buffer):
            value.values.add(var.id)
            self.arrays[var.id] = value
        else:
            self.scalars[var.id] = value

    # graphs
    def graph(self, graph: Graph, inputs: Sequence) -> list:
        for var, value in zip(graph.in_vars, inputs, strict=True):
            self.bind(var, value)
        for eqn in graph.eqns:
            self.equation(eqn)
        return [self.arrays[a.id] if isinstance(a, Var) and a.id in self.arrays
                else self.scalar(a) for a in graph.out_atoms]

    def equation(self, eqn: Eqn) -> None:
        name = eqn.prim.name
        if name == "while_loop":
            return self.loop(eqn)
        out = eqn.outs[0]
        if out.aval.size != 1 and name != "dynamic_update_slice":
            raise Refused(f"`{name}` makes an array of {out.aval.size} elements")
        if name in ("dynamic_slice", "slice") and eqn.inputs[0].aval.size == 1:
            self.bind(out, self.scalar(eqn.inputs[0]))
        elif name == "dynamic_slice":
            buffer = self.array(eqn.inputs[0])
            place = buffer.offset([self.scalar(i) for i in eqn.inputs[1:]])
            self.bind(out, self.declare(out.aval, f"{buffer.pointer}[{place}]"))
        elif name == "slice":
            buffer = self.array(eqn.inputs[0])
            place = buffer.offset([str(i) for i in eqn.params["start_indices"]])
            self.bind(out, self.declare(out.aval, f"{buffer.pointer}[{place}]"))
        elif name == "dynamic_update_slice":
            self.update(eqn)
        elif name in _RENAMES:
            self.bind(out, self.scalar(eqn.inputs[0]))
        elif name == "select":
            pred, on_true, on_false = (self.scalar(a) for a in eqn.inputs)
            self.bind(out, self.declare(out.aval, f"{pred} ? {on_true} : {on_false}"))
        elif name in SCALAR_RULES:
            if out.aval.dtype.kind == "c" or out.aval.dtype == np.float16:
                raise Refused(f"{out.aval.dtype} has no C type here")
            if eqn.params and name != "convert_element_type":
                raise Refused(f"`{name}` with parameters {sorted(eqn.params)}")
            avals = [a.aval for a in eqn.inputs]
            for aval in avals:
                _ctype(aval)
            expr = SCALAR_RULES[name](*(self.scalar(a) for a in eqn.inputs), avals, out.aval)
            self.bind(out, self.declare(out.aval, expr))
        else:
            raise Refused(f"`{name}` has no C rule")

    def update(self, eqn: Eqn) -> None:
        target, update, *starts = eqn.inputs
        if update.aval.size != 1:
            raise Refused("a write of more than one element")
        if target.aval.size == 1:            # the whole of a one-element value
            self.bind(eqn.outs[0], self.scalar(update))
            return
        buffer = self.array(target)
        if not buffer.writable:
            raise Refused("a write to an array the loop only reads")
        value = self.scalar(update)
        self.emit(f"{buffer.pointer}[{buffer.offset([self.scalar(s) for s in starts])}] = "
                  f"{value};")
        buffer.values = {eqn.outs[0].id}
        self.arrays[eqn.outs[0].id] = buffer

    def loop(self, eqn: Eqn, prepared: Sequence | None = None) -> list:
        p = eqn.params
        n_cond, n_body = p["cond_nconsts"], p["body_nconsts"]
        inputs = list(prepared) if prepared is not None else [
            self.array(a) if isinstance(a, Var) and a.id in self.arrays else self.scalar(a)
            for a in eqn.inputs]
        cond_consts, body_consts = inputs[:n_cond], inputs[n_cond:n_cond + n_body]
        inits = inputs[n_cond + n_body:]
        read = [c for c in cond_consts + body_consts if isinstance(c, _Buffer)]
        carries: list = []
        for value, var in zip(inits, p["body_graph"].in_vars[n_body:], strict=True):
            if isinstance(value, _Buffer):
                if any(c is value for c in carries):
                    raise Refused("one array carried twice")
                if not value.writable:
                    raise Refused("a write to an array the loop only reads")
                if any(r is value for r in read):
                    raise Refused("an array the loop both updates and reads as it was")
                carries.append(value)
            else:
                carries.append(self.declare(var.aval, value))
        self.emit("for (;;) {")
        self.depth += 1
        (go,) = self.graph(p["cond_graph"], cond_consts + carries)
        self.emit(f"if (!({go})) break;")
        outs = self.graph(p["body_graph"], body_consts + carries)
        moves = []
        for out, carry, var in zip(outs, carries, p["body_graph"].out_atoms, strict=True):
            if isinstance(carry, _Buffer):
                if out is not carry or var.id not in carry.values:
                    raise Refused("an array carry that is not updated in place")
            elif isinstance(out, _Buffer):
                raise Refused("an array where a scalar is carried")
            else:
                moves.append((carry, self.declare(var.aval, out)))
        for carry, temp in moves:
            self.emit(f"{carry} = {temp};")
        self.depth -= 1
        self.emit("}")
        for var, carry in zip(eqn.outs, carries, strict=True):
            self.bind(var, carry)
        return carries


def loop_source(eqn: Eqn, function: str) -> str:
    """The C source of `function(XLA_FFI_CallFrame *)`, the XLA FFI handler running the
    `while_loop` equation `eqn` (operands: its inputs; results: its outputs, each array
    result aliased to its initial value's operand); raises Refused."""
    p = eqn.params
    n_consts = p["cond_nconsts"] + p["body_nconsts"]
    emitter = _Emitter(depth=1)
    body: list = []
    for k, atom in enumerate(eqn.inputs):
        if isinstance(atom, Literal) and atom.aval.size != 1:
            raise Refused("an array constant operand")
        if isinstance(atom, Literal):
            body.append(emitter.declare(atom.aval, _literal(atom.value, atom.aval.dtype)))
            continue
        if atom.aval.size == 1:
            body.append(emitter.declare(atom.aval, f"*(const {_ctype(atom.aval)} *)args[{k}]"))
            continue
        carried = k >= n_consts
        if carried and sum(a is atom for a in eqn.inputs) > 1:
            raise Refused("an array the loop both carries and reads as it was")
        pointer = emitter.fresh()
        source = f"rets[{k - n_consts}]" if carried else f"args[{k}]"
        qualifier = "" if carried else "const "
        emitter.emit(f"{qualifier}{_ctype(atom.aval)} *{pointer} = "
                     f"({qualifier}{_ctype(atom.aval)} *){source};")
        body.append(_Buffer(pointer, atom.aval, {atom.id}, carried))
    for atom in eqn.inputs:
        _ctype(atom.aval)
    carries = emitter.loop(eqn, body)
    for k, (carry, var) in enumerate(zip(carries, eqn.outs, strict=True)):
        if not isinstance(carry, _Buffer):
            emitter.emit(f"*({_ctype(var.aval)} *)rets[{k}] = {carry};")
    copies = "\n".join(
        f"    if (rets[{k}] != args[{n_consts + k}]) memcpy(rets[{k}], args[{n_consts + k}], "
        f"{var.aval.nbytes});"
        for k, var in enumerate(eqn.outs) if var.aval.size != 1)
    n_in, n_out = len(eqn.inputs), len(eqn.outs)
    return f"""{PRELUDE}
#include "_ffi_handler.h"

static void
run(void **args, void **rets)
{{
{chr(10).join(emitter.lines)}
}}

XLA_FFI_Error *
{function}(XLA_FFI_CallFrame *frame)
{{
    if (!runs(frame)) {{
        return NULL;
    }}
    if (frame->args.size != {n_in} || frame->rets.size != {n_out}) {{
        return failure(frame, "{function}: called with other operands than it was made for");
    }}
    void *args[{max(n_in, 1)}], *rets[{max(n_out, 1)}];
    for (int64_t k = 0; k < {n_in}; k++) {{
        args[k] = ((XLA_FFI_Buffer *)frame->args.args[k])->data;
    }}
    for (int64_t k = 0; k < {n_out}; k++) {{
        rets[k] = ((XLA_FFI_Buffer *)frame->rets.rets[k])->data;
    }}
{copies}
    run(args, rets);
    return NULL;
}}
"""
