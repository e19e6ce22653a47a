"""A rolled loop written as C: the source of a host loop (`hostloops`).

A `while_loop` equation is taken when every equation in it has a C form here: scalar work by
the rules of `c_rules`, and array work of static shapes (elementwise operations, broadcasts,
slices, gathers and scatters, reductions, products: `c_arrays`) as C loops over the elements.
Nested loops become nested C loops. Anything else (a primitive without a C form, complex
numbers, an array of more than MAX_ARRAY_ELEMENTS made per pass) refuses the loop, with the
reason, and it stays XLA's `while`.

Values. A scalar (any shape of one element) is a C local. An array is a view (a shape) of a
*storage*: a C pointer to row-major elements, either an operand of the loop or scratch memory
the handler allocates once for all the arrays the loop computes. Arrays are written in place
(`dynamic_update_slice`), which keeps the program's meaning only while nothing reads a value
of the array from before the write: a storage knows which vars hold its current value, and a
read of any other var of it refuses the loop.

Elementwise operations, slices, broadcasts, iotas and concatenations make *formulas*
(c_values.Lazy): an element as C text of its index, computed inside the loop of the equation
that reads it, so a chain of them is one C loop. A formula is written to scratch memory where
two equations read it, where its text grows long, where a rule needs its address (sums,
products), and before a write in place to a storage it reads (`before_write`).
"""
from __future__ import annotations

import contextlib
import itertools
from dataclasses import dataclass, field
from typing import Callable, Sequence

import numpy as np

from ..ir import Eqn, Graph, Literal, ShapedArray, Var
from .c_arrays import ARRAY_RULES
from .c_values import Array, Lazy, Storage
from .c_rules import PRELUDE, SCALAR_RULES, Refused, ctype, expression, literal

SCRATCH_BYTES = 64 << 20      # arrays a loop computes, at most (a larger need refuses it)
# The largest array a host loop computes per pass, in memory or as a formula (c_values.Lazy).
# Past a few hundred elements XLA's fused, vectorised kernels were the faster. bench/loops.py
# (`--batches 5`), host loops against XLA's, one run: syrk's rows of 70 14x NumPy against
# 10x, gramschmidt's columns of 70 20x against 16x, symm 24x against 10x; jacobi_1d's rows of
# 398 8.4x against 9.3x, jacobi_2d 4.6x against 6.5x (each array written whole, one equation
# at a time, before formulas: 64 was the best limit then).
MAX_ARRAY_ELEMENTS = 256
MAX_FORMULA = 600           # characters of one element's C text kept as a formula (Lazy)
_RENAMES = {"reshape", "broadcast_in_dim", "squeeze", "expand_dims"}   # of one element
_ALWAYS_ARRAY_RULES = {"dynamic_slice", "slice", "dynamic_update_slice",    # scalars too
                       "reduce_sum", "reduce_prod", "reduce_max", "reduce_min",
                       "reduce_and", "reduce_or"}


@dataclass
class Emitter:
    lines: list[str] = field(default_factory=list)
    depth: int = 1
    scalars: dict[int, str] = field(default_factory=dict)     # var id -> C expression
    arrays: dict[int, Array] = field(default_factory=dict)    # var id -> its array
    names: itertools.count = field(default_factory=itertools.count)
    scratch: int = 0                                          # bytes handed out
    uses: dict[int, int] = field(default_factory=dict)        # var id -> equations reading it
    pending: dict[int, Var] = field(default_factory=dict)     # vars of formulas not read yet

    def emit(self, line: str) -> None:
        self.lines.append("    " * self.depth + line)

    def fresh(self, prefix: str = "v") -> str:
        return f"{prefix}{next(self.names)}"

    def declare(self, aval: ShapedArray, expr: str) -> str:
        name = self.fresh()
        self.emit(f"{ctype(aval)} {name} = {expr};")
        return name

    @contextlib.contextmanager
    def block(self, header: str):
        self.emit(header + " {")
        self.depth += 1
        try:
            yield
        finally:
            self.depth -= 1
            self.emit("}")

    @contextlib.contextmanager
    def loops(self, shape: Sequence[int]):
        """Nested C loops over `shape`, yielding their index names (outermost first)."""
        with contextlib.ExitStack() as stack:
            names = []
            for n in shape:
                name = self.fresh("i")
                stack.enter_context(self.block(
                    f"for (int64_t {name} = 0; {name} < {int(n)}; {name}++)"))
                names.append(name)
            yield names

    def new_array(self, aval: ShapedArray) -> Array:
        """Scratch memory for an array the loop computes (64-byte aligned)."""
        c = ctype(aval)
        _within_limit(aval)
        start = -(-self.scratch // 64) * 64
        self.scratch = start + aval.nbytes
        if self.scratch > SCRATCH_BYTES:
            raise Refused(f"its arrays need more than {SCRATCH_BYTES >> 20} MiB")
        name = self.fresh("a")
        self.emit(f"{c} *restrict {name} = ({c} *)(scratch + {start});")
        return Array(Storage(name, aval.dtype, True), aval)

    # values
    def is_array(self, atom) -> bool:
        return atom.aval.size != 1

    def scalar(self, atom) -> str:
        if isinstance(atom, Literal):
            if atom.aval.size != 1:
                raise Refused("an array constant in the loop")
            return literal(atom.value, atom.aval.dtype)
        if atom.id in self.arrays:
            raise Refused("an array used as a value")
        return self.scalars[atom.id]

    def array(self, atom) -> Array:
        """An array operand in memory (a lazy one is written to scratch memory first)."""
        if not isinstance(atom, Literal) and isinstance(self.arrays.get(atom.id), Lazy):
            self.pending.pop(atom.id, None)
            self.bind(atom, self.materialize(self.arrays[atom.id]))
        if isinstance(atom, Literal):
            value = np.asarray(atom.value)
            if value.size > 4096:
                raise Refused("a large array constant in the loop")
            out = self.new_array(atom.aval.update(weak_type=False))
            for k, v in enumerate(value.reshape(-1)):
                self.emit(f"{out.storage.pointer}[{k}] = {literal(v, value.dtype)};")
            return out
        array = self.arrays[atom.id]
        if atom.id not in array.storage.values:
            raise Refused("a read of an array's value from before a write to it")
        return array

    def readable(self, atom):
        """An array operand as it is: in memory (an Array) or a formula (a Lazy)."""
        if not isinstance(atom, Literal) and isinstance(self.arrays.get(atom.id), Lazy):
            self.pending.pop(atom.id, None)
            return self.arrays[atom.id]
        return self.array(atom)

    def reads_of(self, atom) -> tuple:
        """The storages an operand reads (for a Lazy made of it), with the vars read there."""
        if isinstance(atom, Literal) or not self.is_array(atom):
            return ()
        value = self.arrays[atom.id]
        return value.reads if isinstance(value, Lazy) else ((value.storage, atom.id),)

    def lazy(self, out: Var, element: Callable[[list[str]], str], operands) -> None:
        """Bind `out` to the formula `element` of `operands`: written to memory at once when
        more than one equation reads it, or when its element's C text grows past
        MAX_FORMULA (each reader would compute it again)."""
        _within_limit(out.aval)
        value = Lazy(out.aval, element, tuple(r for a in operands for r in self.reads_of(a)))
        sample = value.at([f"i{d}" for d in range(out.aval.ndim)])
        if self.uses.get(out.id, 0) > 1 or len(sample) > MAX_FORMULA:
            self.bind(out, self.materialize(value))
            return
        self.arrays[out.id], self.pending[out.id] = value, out

    def materialize(self, value: Lazy) -> Array:
        target = self.new_array(value.aval)
        with self.loops(value.aval.shape) as idx:
            self.emit(f"{target.at(idx)} = {value.at(idx)};")
        return target

    def before_write(self, storage: Storage) -> None:
        """Write to memory the formulas not read yet that read `storage`, which an equation
        is about to change in place: those read later, and the equation's own operands (it
        writes element by element, and a formula would read what it already wrote)."""
        for var in list(self.pending.values()):
            if self.arrays[var.id].reads_from(storage):
                self.array(var)

    def bind(self, var: Var, value) -> None:
        if isinstance(value, Array):
            value.storage.values.add(var.id)
            self.arrays[var.id] = value if value.aval == var.aval else Array(value.storage,
                                                                             var.aval)
        else:
            self.scalars[var.id] = value

    def written(self, var: Var, array: Array) -> None:
        """`var` is the value of `array`'s storage after a write to it."""
        array.storage.values = {var.id}
        self.arrays[var.id] = Array(array.storage, var.aval)

    def value(self, atom):
        return self.array(atom) if self.is_array(atom) else self.scalar(atom)

    # graphs
    def graph(self, graph: Graph, inputs: Sequence) -> list:
        for atom in [a for eqn in graph.eqns for a in eqn.inputs] + list(graph.out_atoms):
            if isinstance(atom, Var):
                self.uses[atom.id] = self.uses.get(atom.id, 0) + 1
        for var, value in zip(graph.in_vars, inputs, strict=True):
            self.bind(var, value)
        for eqn in graph.eqns:
            self.equation(eqn)
        return [self.value(a) for a in graph.out_atoms]

    def equation(self, eqn: Eqn) -> None:
        name = eqn.prim.name
        if name == "while_loop":
            self.loop(eqn)
            return
        if any(a.aval.dtype.kind == "c" or a.aval.dtype == np.float16
               for a in (*eqn.inputs, *eqn.outs)):
            raise Refused(f"`{name}` on {eqn.outs[0].aval.dtype} (no C type here)")
        out = eqn.outs[0]
        if name in _ALWAYS_ARRAY_RULES or (name in ARRAY_RULES and (
                self.is_array(out) or any(self.is_array(a) for a in eqn.inputs))):
            ARRAY_RULES[name](self, eqn)
        elif name in _RENAMES:
            self.bind(out, self.scalar(eqn.inputs[0]))
        elif name == "select" or name in SCALAR_RULES:
            expr = expression(eqn, [self.scalar(a) for a in eqn.inputs])
            self.bind(out, self.declare(out.aval, expr))
        else:
            raise Refused(f"`{name}` has no C form")

    def loop(self, eqn: Eqn, prepared: Sequence | None = None) -> list:
        p = eqn.params
        n_cond, n_body = p["cond_nconsts"], p["body_nconsts"]
        inputs = list(prepared) if prepared is not None else [self.value(a) for a in eqn.inputs]
        cond_consts, body_consts = inputs[:n_cond], inputs[n_cond:n_cond + n_body]
        read = {id(c.storage) for c in cond_consts + body_consts if isinstance(c, Array)}
        carries: list = []
        for value, var in zip(inputs[n_cond + n_body:], p["body_graph"].in_vars[n_body:],
                              strict=True):
            if isinstance(value, Array):
                taken = {id(c.storage) for c in carries if isinstance(c, Array)}
                if id(value.storage) in read | taken or not value.storage.writable:
                    if prepared is not None:
                        raise Refused("an array the loop both updates and reads as it was")
                    value = self.copy(value)       # the loop's own copy, as XLA's would be
                carries.append(value)
            else:
                carries.append(self.declare(var.aval, value))
        with self.block("for (;;)"):
            (go,) = self.graph(p["cond_graph"], cond_consts + carries)
            self.emit(f"if (!({go})) break;")
            outs = self.graph(p["body_graph"], body_consts + carries)
            self.carry_over(outs, carries, p["body_graph"].out_atoms)
        for var, carry in zip(eqn.outs, carries, strict=True):
            if isinstance(carry, Array):
                self.written(var, carry)
            else:
                self.bind(var, carry)
        return carries

    def carry_over(self, outs, carries, atoms) -> None:
        """Assign the body's results to the carries, all read before any is assigned."""
        moves, copies = [], []
        for out, carry, atom in zip(outs, carries, atoms, strict=True):
            if isinstance(carry, Array):
                if not isinstance(out, Array):
                    raise Refused("a scalar where an array is carried")
                if out.storage is carry.storage:
                    if atom.id not in carry.storage.values:
                        raise Refused("an array carry read from before a write to it")
                    continue
                if any(out.storage is c.storage for c in carries if isinstance(c, Array)):
                    raise Refused("arrays carried into each other's places")
                copies.append((carry, out))
            elif isinstance(out, Array):
                raise Refused("an array where a scalar is carried")
            else:
                moves.append((carry, self.declare(atom.aval, out)))
        for carry, out in copies:
            self.emit(f"memcpy({carry.storage.pointer}, {out.storage.pointer}, "
                      f"{carry.aval.nbytes});")
        for carry, temp in moves:
            self.emit(f"{carry} = {temp};")

    def copy(self, array: Array) -> Array:
        out = self.new_array(array.aval)
        self.emit(f"memcpy({out.storage.pointer}, {array.storage.pointer}, "
                  f"{array.aval.nbytes});")
        return out


def _within_limit(aval: ShapedArray) -> None:
    if aval.size > MAX_ARRAY_ELEMENTS:
        raise Refused(f"an array of {aval.size} elements made per pass (XLA's fused "
                      f"kernels are faster past {MAX_ARRAY_ELEMENTS})")


def loop_source(eqn: Eqn, function: str) -> str:
    """The C source of `function(XLA_FFI_CallFrame *)`, the XLA FFI handler running the
    `while_loop` equation `eqn` (operands: its inputs; results: its outputs, each array
    result aliased to its initial value's operand); raises Refused. A call may add one more
    operand, an int64 vector of how many elements each operand's buffer holds before the
    operand's own (offsets.py: a large misaligned input read in place)."""
    p = eqn.params
    n_consts = p["cond_nconsts"] + p["body_nconsts"]
    emitter = Emitter(depth=1)
    body: list = []
    for k, atom in enumerate(eqn.inputs):
        ctype(atom.aval)
        if isinstance(atom, Literal) and atom.aval.size == 1:
            body.append(emitter.declare(atom.aval, literal(atom.value, atom.aval.dtype)))
            continue
        if atom.aval.size == 1:
            body.append(emitter.declare(atom.aval, f"*(const {ctype(atom.aval)} *)args[{k}]"))
            continue
        carried = k >= n_consts
        if carried and sum(a is atom for a in eqn.inputs) > 1:
            raise Refused("an array the loop both carries and reads as it was")
        pointer = emitter.fresh("p")   # (restrict: XLA hands distinct buffers, except one
        #                                  array read twice, and an array read is not written)
        source = f"rets[{k - n_consts}]" if carried else f"args[{k}]"
        qualifier = "" if carried else "const "
        emitter.emit(f"{qualifier}{ctype(atom.aval)} *restrict {pointer} = "
                     f"({qualifier}{ctype(atom.aval)} *){source};")
        held = set() if isinstance(atom, Literal) else {atom.id}     # a constant operand
        body.append(Array(Storage(pointer, atom.aval.dtype, carried, held), atom.aval))
    carries = emitter.loop(eqn, body)
    for k, (carry, var) in enumerate(zip(carries, eqn.outs, strict=True)):
        if not isinstance(carry, Array):
            emitter.emit(f"*({ctype(var.aval)} *)rets[{k}] = {carry};")
    copies = "\n".join(
        f"    if (rets[{k}] != args[{n_consts + k}]) memcpy(rets[{k}], args[{n_consts + k}], "
        f"{var.aval.nbytes});"
        for k, var in enumerate(eqn.outs) if var.aval.size != 1)
    n_in, n_out = len(eqn.inputs), len(eqn.outs)
    itemsizes = ", ".join(str(a.aval.dtype.itemsize) for a in eqn.inputs) or "0"
    scratch = emitter.scratch
    return f"""{PRELUDE}
#include <stdlib.h>
#include "_ffi_handler.h"

static void
run(void **args, void **rets, char *scratch)
{{
{chr(10).join(emitter.lines)}
}}

XLA_FFI_Error *
{function}(XLA_FFI_CallFrame *frame)
{{
    if (!runs(frame)) {{
        return NULL;
    }}
    if ((frame->args.size != {n_in} && frame->args.size != {n_in + 1}) ||
            frame->rets.size != {n_out}) {{
        return failure(frame, "{function}: called with other operands than it was made for");
    }}
    void *args[{max(n_in, 1)}], *rets[{max(n_out, 1)}];
    for (int64_t k = 0; k < {n_in}; k++) {{
        args[k] = ((XLA_FFI_Buffer *)frame->args.args[k])->data;
    }}
    if (frame->args.size == {n_in + 1}) {{   /* each operand's elements before its own */
        static const int64_t itemsize[{max(n_in, 1)}] = {{{itemsizes}}};
        const int64_t *before = ((XLA_FFI_Buffer *)frame->args.args[{n_in}])->data;
        for (int64_t k = 0; k < {n_in}; k++) {{
            args[k] = (char *)args[k] + before[k] * itemsize[k];
        }}
    }}
    for (int64_t k = 0; k < {n_out}; k++) {{
        rets[k] = ((XLA_FFI_Buffer *)frame->rets.rets[k])->data;
    }}
{copies}
    char *scratch = {"NULL" if not scratch else f"aligned_alloc(64, {-(-scratch // 64) * 64})"};
    if ({int(bool(scratch))} && scratch == NULL) {{
        return failure(frame, "{function}: out of memory for its {scratch} bytes of arrays");
    }}
    run(args, rets, scratch);
    free(scratch);
    return NULL;
}}
"""
