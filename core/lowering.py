"""Lower a Graph to StableHLO text.

Every op is written in MLIR's generic form (`"stablehlo.add"(%a, %b) : (...) -> ...`), one
syntax for all of them, and carries a location naming its IR equation and the cell line it
came from: `loc("e12:mul"("cell_3":4:10))`. XLA keeps that name as `op_name` metadata through
fusion, which is how fused kernels are traced back to equations and source lines.
"""
from __future__ import annotations

import contextlib
import itertools
import re
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from .ir import Eqn, Graph, Literal, ShapedArray, distinct_part, is_splat, subgraphs

# Constants (values computed from literals only) are evaluated when a rule asks for them (XLA
# folds x + 0.0 to x: `add` needs to know), up to this many elements.
EVALUATE_CONSTANTS_UP_TO = 1 << 22
UNKNOWN_CONSTANT = None

_ELEMENT_TYPES = {
    "bool": "i1", "int8": "i8", "int16": "i16", "int32": "i32", "int64": "i64",
    "uint8": "ui8", "uint16": "ui16", "uint32": "ui32", "uint64": "ui64",
    "float16": "f16", "float32": "f32", "float64": "f64",
    "complex64": "complex<f32>", "complex128": "complex<f64>",
}


class LoweringError(Exception):
    pass


def element_type(dtype: np.dtype) -> str:
    try:
        return _ELEMENT_TYPES[np.dtype(dtype).name]
    except KeyError:
        raise LoweringError(f"XLA has no element type for NumPy dtype {np.dtype(dtype)}") from None


def tensor_type(aval: ShapedArray) -> str:
    dims = "".join(f"{d}x" for d in aval.shape)
    return f"tensor<{dims}{element_type(aval.dtype)}>"


def i64_array(values: Sequence[int]) -> str:
    """A DenseI64ArrayAttr: `array<i64: 1, 0>`."""
    values = list(values)
    return f"array<i64: {', '.join(map(str, values))}>" if values else "array<i64>"


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


# -- dense literals ---------------------------------------------------------------------------

def dense_attr(value: np.ndarray, aval: ShapedArray) -> str:
    """`dense<...> : tensor<...>` for a constant of the given abstract value (a splat is one
    element's text, whatever the shape: a scalar broadcast to it is never spelled out)."""
    arr = np.asarray(value, dtype=aval.dtype)
    if arr.shape != aval.shape:
        arr = np.broadcast_to(arr, aval.shape)
    return f"dense<{_dense_body(arr)}> : {tensor_type(aval)}"


def _dense_body(arr: np.ndarray) -> str:
    if not arr.size:
        return ""                      # dense<> : tensor<0x...>
    if is_splat(arr):
        return _scalar_text(distinct_part(arr).reshape(-1)[0])
    if arr.dtype == np.bool_:
        return _nested_bools(arr)
    flat = np.ascontiguousarray(arr).reshape(-1)
    little = flat.astype(flat.dtype.newbyteorder("<"))
    return '"0x' + little.tobytes().hex().upper() + '"'


def _nested_bools(arr: np.ndarray) -> str:
    if arr.ndim == 0:
        return "true" if arr else "false"
    return "[" + ", ".join(_nested_bools(a) for a in arr) + "]"


def _scalar_text(x: np.generic) -> str:
    if isinstance(x, np.bool_):
        return "true" if x else "false"
    if isinstance(x, np.integer):
        return str(int(x))
    if isinstance(x, np.complexfloating):
        return f"({_float_text(x.real)}, {_float_text(x.imag)})"
    return _float_text(x)


def _float_text(x: np.floating) -> str:
    if np.isfinite(x):
        text = repr(float(x))                  # MLIR wants 1.0e-12, not 1e-12
        return text if "." in text or "e" not in text else text.replace("e", ".0e")
    bits = np.array(x).view({2: np.uint16, 4: np.uint32, 8: np.uint64}[x.dtype.itemsize])
    return "0x" + format(int(bits), f"0{2 * x.dtype.itemsize}X")


# -- signed integers wrap around, as in NumPy ------------------------------------------------
# XLA's algebraic simplifier takes x * x and abs(x) of signed integers as never negative (as
# if they could not wrap around): it folds `x * x >= 0` to true, `abs(x) < 0` to false and
# abs(x * x) to x * x, and drops the negative branch of floor division by a constant. NumPy's
# int32 677**4 and abs(-2**31) are negative. Signed multiplies are emitted on the unsigned
# type of the same width (the same bits: a two's complement product's low half does not
# depend on signedness; the conversions are free) and abs as a select, which the simplifier
# cannot see through.

def _wrapping_multiply(ctx, operands, aval, aval_out):
    unsigned = aval.update(dtype=np.dtype(f"u{aval.dtype.itemsize}"))
    x, y = (ctx.unary("stablehlo.convert", v, aval, unsigned) for v in operands)
    product = ctx.op("stablehlo.multiply", [x, y], [unsigned, unsigned], [unsigned])[0]
    return ctx.unary("stablehlo.convert", product, unsigned, aval_out)


def _wrapping_abs(ctx, operands, aval, aval_out):
    (x,) = operands
    negative = ctx.compare("LT", x, ctx.constant(np.zeros((), aval.dtype), aval), aval)
    return ctx.select(negative, ctx.unary("stablehlo.negate", x, aval), x, aval_out)


_WRAPPING = {"stablehlo.multiply": _wrapping_multiply, "stablehlo.abs": _wrapping_abs}


# -- the context that lowering rules write into -----------------------------------------------

class LoweringContext:
    """Collects lines of one function body; rules call `op` to emit ops with locations."""

    def __init__(self, module: ModuleBuilder, indent: int = 4):
        self.module = module
        self.lines: list[str] = []
        self.indent = indent
        self.eqn: Eqn | None = None

    # the equation being lowered ----------------------------------------------------------
    @property
    def avals_in(self) -> list[ShapedArray]:
        return [a.aval for a in self.eqn.inputs]

    @property
    def avals_out(self) -> list[ShapedArray]:
        return [v.aval for v in self.eqn.outs]

    def fresh(self, prefix: str = "v") -> str:
        return f"%{prefix}{next(self.module.ids)}"

    def loc(self) -> str:
        if self.eqn is None:
            return ""
        src = self.eqn.source
        inner = f"({_quote(src.file)}:{src.line}:{src.column})" if src else ""
        return f" loc({_quote(self.module.labels[self.eqn.id])}{inner})"

    def op(self, name: str, operands: Sequence[str], in_avals: Sequence[ShapedArray],
           out_avals: Sequence[ShapedArray], attrs: dict | None = None,
           regions: Sequence[str] = ()) -> list[str]:
        """Emit one op in generic form; return the names of its results."""
        if name in _WRAPPING and in_avals[0].dtype.kind == "i":
            return [_WRAPPING[name](self, operands, in_avals[0], out_avals[0])]
        result = self.fresh()
        outs = [result] if len(out_avals) == 1 else [f"{result}#{i}" for i in range(len(out_avals))]
        lhs = "" if not out_avals else (result if len(out_avals) == 1 else f"{result}:{len(out_avals)}") + " = "
        attr_text = ""
        if attrs:
            attr_text = " {" + ", ".join(f"{k} = {v}" for k, v in attrs.items()) + "}"
        region_text = f" ({', '.join(regions)})" if regions else ""
        ins = ", ".join(tensor_type(a) for a in in_avals)
        res = ", ".join(tensor_type(a) for a in out_avals)
        res = res if len(out_avals) == 1 else f"({res})"
        self.emit(f'{lhs}"{name}"({", ".join(operands)}){region_text}{attr_text} : ({ins}) -> {res}{self.loc()}')
        return outs

    def emit(self, line: str) -> None:
        self.lines.append(" " * self.indent + line)

    def unary(self, name: str, x: str, aval_in: ShapedArray, aval_out: ShapedArray | None = None,
              attrs: dict | None = None) -> str:
        return self.op(name, [x], [aval_in], [aval_out or aval_in], attrs)[0]

    def binary(self, name: str, x: str, y: str, aval: ShapedArray,
               aval_out: ShapedArray | None = None) -> str:
        return self.op(name, [x, y], [aval, aval], [aval_out or aval])[0]

    def compare(self, direction: str, x: str, y: str, aval: ShapedArray) -> str:
        """`x <direction> y` (EQ, NE, LT, LE, GT, GE) elementwise: a bool of aval's shape."""
        out = aval.update(dtype=np.dtype(bool), weak_type=False)
        attrs = {"comparison_direction": f"#stablehlo<comparison_direction {direction}>"}
        return self.op("stablehlo.compare", [x, y], [aval, aval], [out], attrs)[0]

    def select(self, pred: str, on_true: str, on_false: str, aval: ShapedArray) -> str:
        """on_true where pred, else on_false (pred: a bool of aval's shape)."""
        pred_aval = aval.update(dtype=np.dtype(bool), weak_type=False)
        return self.op("stablehlo.select", [pred, on_true, on_false], [pred_aval, aval, aval],
                       [aval])[0]

    def constant(self, value, aval: ShapedArray) -> str:
        """A constant of `aval`; one that is a single value repeated (a splat) is that scalar
        broadcast in the program, so that neither the lowering nor XLA (which makes a literal
        of every constant it is given, and keeps it in the executable) holds it at its size."""
        if aval.shape and aval.size > 1 and is_splat(np.asarray(value)):
            scalar = aval.update(shape=())
            one = distinct_part(np.asarray(value, aval.dtype)).reshape(-1)[:1].reshape(())
            return self.op("stablehlo.broadcast_in_dim", [self.constant(one, scalar)], [scalar],
                           [aval], {"broadcast_dimensions": i64_array([])})[0]
        return self.op("stablehlo.constant", [], [], [aval], {"value": dense_attr(value, aval)})[0]

    def ffi_call(self, target: str, operands: Sequence[str], in_avals: Sequence[ShapedArray],
                 out_avals: Sequence[ShapedArray],
                 aliases: dict[int, int] | None = None) -> list[str]:
        """A call of a typed-FFI custom call target (api_version 4) whose operands and results
        are all row-major, with no attributes (psc_jit's own C kernels); `aliases`
        {result: operand}: the result is written in the operand's buffer (XLA copies the
        operand first where it is still needed)."""
        def layouts(avals):
            return "[" + ", ".join(f"dense<{list(range(a.ndim - 1, -1, -1))}> : "
                                   f"tensor<{a.ndim}xindex>" for a in avals) + "]"
        attrs = {"call_target_name": f'"{target}"', "api_version": "4 : i32",
                 "backend_config": "{}", "operand_layouts": layouts(in_avals),
                 "result_layouts": layouts(out_avals)}
        if aliases:
            attrs["output_operand_aliases"] = "[" + ", ".join(
                "#stablehlo.output_operand_alias<output_tuple_indices = "
                f"{[out] if len(out_avals) > 1 else []}, operand_index = {operand}, "
                "operand_tuple_indices = []>" for out, operand in aliases.items()) + "]"
        return self.op("stablehlo.custom_call", operands, in_avals, out_avals, attrs)

    def region(self, arg_avals: Sequence[ShapedArray], body) -> str:
        """A region `{ ^bb0(args): ... }`; `body(sub_ctx, arg_names)` returns the values to yield."""
        sub = LoweringContext(self.module, self.indent + 4)
        sub.eqn = self.eqn
        names = [sub.fresh("r") for _ in arg_avals]
        results = body(sub, names)
        ret_avals = [aval for _, aval in results]
        sub.op("stablehlo.return", [n for n, _ in results], ret_avals, [])
        args = ", ".join(f"{n}: {tensor_type(a)}" for n, a in zip(names, arg_avals, strict=True))
        pad = " " * (self.indent + 2)
        return "{\n" + pad + f"^bb0({args}):\n" + "\n".join(sub.lines) + "\n" + " " * self.indent + "}"

    def scalar_region(self, dtype: np.dtype, op_name: str, n_args: int = 2) -> str:
        """A region applying a binary op to scalars of one dtype (the body of a reduce)."""
        aval = ShapedArray((), dtype)

        def body(sub, args):
            return [(sub.op(op_name, args, [aval] * n_args, [aval])[0], aval)]
        return self.region([aval] * n_args, body)

    def lower_graph(self, graph: Graph, in_names: Sequence[str]) -> list[str]:
        """Lower a (sub-)graph inline given names for its inputs; return names of its outputs."""
        env: dict[int, str] = {}
        for var, name in zip(graph.in_vars, in_names, strict=True):
            env[var.id] = name
        saved = self.eqn
        for eqn in graph.eqns:
            self.eqn = eqn
            ins = [self.atom(a, env) for a in eqn.inputs]
            outs = eqn.prim.lowering(self, *ins, **eqn.params)
            for var, name in zip(eqn.outs, outs, strict=True):
                env[var.id] = name
            self.module.track_constants(eqn)
        self.eqn = saved
        return [self.atom(a, env) for a in graph.out_atoms]

    def is_constant(self, i: int) -> bool:
        """Whether input i of the equation being lowered is computed from literals only (XLA
        sees it as a constant and folds what it can)."""
        return self.module.is_constant(self.eqn.inputs[i])

    def constant_value(self, i: int) -> np.ndarray | None:
        """The value of constant input i (None if it is too large to evaluate here)."""
        return self.module.constant_value(self.eqn.inputs[i])

    def atom(self, atom, env: dict[int, str]) -> str:
        if isinstance(atom, Literal):
            return self.constant(atom.value, atom.aval)
        return env[atom.id]


class ModuleBuilder:
    def __init__(self, name: str, graph: Graph, targets: frozenset[str] = frozenset(),
                 host_loops: dict[int, str] | None = None):
        self.name = name
        self.targets = targets      # custom call targets beyond jaxlib's own the program may call
        self.host_loops = host_loops or {}      # while_loop equation id -> its host loop target
        self.labels = graph.labels()
        self.ids = itertools.count()     # SSA names restart per module: same graph, same text
        self.constants: dict[int, tuple[Eqn, int]] = {}   # var id -> (its equation, output)
        self.values: dict[int, np.ndarray | None] = {}    # var id -> value (None: too large)
        self.mesh_axes: tuple[str, ...] = ()    # the axes of a partitioned program's mesh
        self.mesh_name = ""                     # ... and its Shardy symbol
        self.transposed: dict[int, str] = {}    # var id -> its transposed copy, made before
        #                                         the loop whose body is being lowered

    @contextlib.contextmanager
    def transposed_copies(self, copies: dict[int, str]):
        """While a loop body is lowered: {var id: name of its transposed copy} (see
        primitives.contraction.transposed_consts)."""
        saved = dict(self.transposed)
        self.transposed.update(copies)
        try:
            yield
        finally:
            self.transposed = saved

    def transposed_copy(self, atom) -> str | None:
        return None if isinstance(atom, Literal) else self.transposed.get(atom.id)

    def track_constants(self, eqn: Eqn) -> None:
        """Record the outputs of an equation of constants (computed from literals only)."""
        if not subgraphs(eqn) and all(self.is_constant(a) for a in eqn.inputs):
            for i, var in enumerate(eqn.outs):
                self.constants[var.id] = (eqn, i)

    def is_constant(self, atom) -> bool:
        return isinstance(atom, Literal) or atom.id in self.constants

    def constant_value(self, atom) -> np.ndarray | None:
        """The value of a constant, evaluated on first use (None: too large to evaluate). It
        may be a read-only broadcast view (`ir.distinct_part` gives its elements)."""
        if isinstance(atom, Literal):
            return np.asarray(atom.value)
        if atom.id not in self.values:
            eqn, index = self.constants[atom.id]
            self.values[atom.id] = self._evaluate(eqn)[index]
        return self.values[atom.id]

    def _evaluate(self, eqn: Eqn) -> list[np.ndarray | None]:
        """An equation of constants on their values. A broadcast is a view, and an elementwise
        equation runs on its operands' distinct elements (see `_evaluate_elementwise`): a
        scalar broadcast to the shape of a gigabyte input costs nothing here."""
        inputs = [self.constant_value(a) for a in eqn.inputs]
        if any(v is None for v in inputs):
            return [UNKNOWN_CONSTANT] * len(eqn.outs)
        if eqn.prim.name == "broadcast_in_dim":
            return [_broadcast_view(inputs[0], **eqn.params)]
        if eqn.prim.ufuncs:
            return _evaluate_elementwise(eqn, inputs)
        if sum(np.prod(v.aval.shape, dtype=int) for v in eqn.outs) > EVALUATE_CONSTANTS_UP_TO:
            return [UNKNOWN_CONSTANT] * len(eqn.outs)
        with np.errstate(all="ignore"):
            result = eqn.prim.impl(*inputs, **eqn.params)
        return [np.asarray(r) for r in (result if eqn.prim.multiple_results else [result])]


def _evaluate_elementwise(eqn: Eqn, inputs: list[np.ndarray]) -> list[np.ndarray | None]:
    """An elementwise equation on the distinct parts of its operands (NumPy broadcasts them
    against each other), its results broadcast back to their shapes as views."""
    parts = [distinct_part(v) for v in inputs]
    size = np.prod(np.broadcast_shapes(*(p.shape for p in parts)), dtype=int)
    if size > EVALUATE_CONSTANTS_UP_TO:
        return [UNKNOWN_CONSTANT] * len(eqn.outs)
    with np.errstate(all="ignore"):
        result = eqn.prim.impl(*parts, **eqn.params)
    results = result if eqn.prim.multiple_results else [result]
    return [np.broadcast_to(np.asarray(r), v.aval.shape) for r, v in
            zip(results, eqn.outs, strict=True)]


def _broadcast_view(x: np.ndarray, *, shape, broadcast_dimensions) -> np.ndarray:
    """broadcast_in_dim of a known value, as a view (no memory of its own)."""
    expanded = [1] * len(shape)
    for d, target in zip(np.shape(x), broadcast_dimensions, strict=True):
        expanded[target] = d
    return np.broadcast_to(np.reshape(x, expanded), shape)


@dataclass(frozen=True)
class Partitioning:
    """A program for `partitions` devices: the Shardy mesh it declares, and per argument and
    result its sharding attribute (None: XLA chooses a result's)."""
    partitions: int
    mesh: str               # its declaration (`sdy.mesh @mesh = <["data"=4]>`), or ""
    in_shardings: tuple[str, ...]
    out_shardings: tuple[str | None, ...]


def lower(graph: Graph, name: str = "psc_jit", targets: frozenset[str] = frozenset(),
          partitioning: Partitioning | None = None,
          host_loops: dict[int, str] | None = None) -> str:
    """The StableHLO module text of a graph; its `main` takes and returns the graph's values.
    `targets`: the custom call targets of psc_jit's own the lowering may use (matrix-vector
    products by BLAS, core/compile/_blas_calls.c), where they are there. `partitioning`:
    a program for several devices, its arguments and results sharded as it says.
    `host_loops` {while_loop equation id: target}: loops that run as C (compile/hostloops)."""
    module = ModuleBuilder(name, graph, targets, host_loops)
    if partitioning is not None and partitioning.mesh:
        module.mesh_name = partitioning.mesh.split("@")[1].split()[0]
        module.mesh_axes = tuple(re.findall(r'"([^"]+)"=', partitioning.mesh))
    ctx = LoweringContext(module)
    args = [f"%arg{i}" for i in range(len(graph.in_vars))]
    outs = ctx.lower_graph(graph, args)
    ctx.eqn = None
    ctx.emit(f'"func.return"({", ".join(outs)}) : ({", ".join(tensor_type(a) for a in graph.out_avals)}) -> ()')
    part = partitioning or Partitioning(1, "", ("",) * len(args), (None,) * len(graph.out_avals))
    params = ", ".join(f"{n}: {tensor_type(v.aval)}{_sharding_attr(s)}" for n, v, s in
                       zip(args, graph.in_vars, part.in_shardings, strict=True))
    results = ", ".join(f"{tensor_type(a)}{_sharding_attr(s)}" for a, s in
                        zip(graph.out_avals, part.out_shardings, strict=True))
    header = [
        f"module @{_symbol(name)} attributes {{mhlo.num_partitions = {part.partitions} : i32, mhlo.num_replicas = 1 : i32}} {{",
        *([f"  {part.mesh}"] if part.mesh else []),
        f"  func.func public @main({params}) -> ({results}) {{",
    ]
    return "\n".join(header + ctx.lines + ["  }", "}", ""])


def _sharding_attr(sharding: str | None) -> str:
    return f" {{sdy.sharding = {sharding}}}" if sharding else ""


def _symbol(name: str) -> str:
    cleaned = "".join(c if c.isalnum() or c == "_" else "_" for c in name)
    return cleaned if cleaned and not cleaned[0].isdigit() else f"m_{cleaned}"


