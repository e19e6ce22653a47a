"""XLA's optimized HLO module (after fusion) as a fusion model: the kernels a run runs.

The module's text is read by `hlo_text`. Every instruction of the ENTRY computation that does work becomes a
`Kernel`; a fusion's kernel reads its `calls=` computation for the fused ops. Each op keeps
the `op_name` its StableHLO op was lowered with (`e12:mul`, the IR equation's label) and a
`stack_frame_id` naming the cell line it came from, so kernels map back to IR equations and
source lines. Each kernel also says which kernels made its operands (the edges of the
after-fusion graph, from the optimized module itself) and its floating-point operations
(XLA's cost analysis of the kernel alone, `kernel_cost`).

Like the text model, the kernels never raise on unexpected text: they are what was
understood.
"""
from __future__ import annotations

import dataclasses
import math
import re
from dataclasses import dataclass
from typing import Callable, Iterable, Iterator

from .hlo_text import (Computation, HloText, Instruction, SourceLine, labels_of, parse_module,
                       source_of, strip_layout, unquote)
from .kernel_cost import CostFunction, custom_call_flops, kernel_module_text

__all__ = ["SourceLine", "Kernel", "FusionModel", "parse_optimized_hlo"]


@dataclass(frozen=True)
class Kernel:
    """One unit of work XLA runs: a fusion, or a single unfused instruction.

    `bytes_estimate` is the sum of the operand and result sizes computed from their shapes.
    `flops` is what one run of the kernel counts in XLA's cost analysis of the kernel alone
    (`kernel_cost`; a custom call of psc_jit's counted from its shapes; a loop its body's
    count times its iterations), or, parsed without XLA, an estimate: the result's element
    count times the number of arithmetic ops in `fused_ops`. None: not known (a loop whose
    iterations are not known before it runs). `inputs` says where its operands come from:
    the names of the kernels that made them, or `parameter N` (the program's N-th input).
    """
    name: str
    kind: str
    shape: str
    fused_ops: tuple[str, ...]
    eqn_labels: tuple[str, ...]
    source_lines: tuple[SourceLine, ...]
    operand_shapes: tuple[str, ...]
    bytes_estimate: int
    flops: float | None
    body: tuple[Kernel, ...] = ()
    trip_count: int | None = None       # a loop's iterations, when XLA knows them
    inputs: tuple[str, ...] = ()        # kernel names, or `parameter N`
    transcendentals: float = 0.0        # exp, log, tanh, ... (XLA counts them apart)
    thunk: str | None = None            # the runtime thunk running it, when not its own name


@dataclass(frozen=True)
class FusionModel:
    kernels: tuple[Kernel, ...]
    outputs: tuple[tuple[str, ...], ...] = ()   # per program output: the kernels making it

    @property
    def flops(self) -> float | None:
        """One run's floating-point operations: its kernels' (None when one is unknown)."""
        counts = [kernel.flops for kernel in self.kernels]
        return None if None in counts else float(sum(counts))

    def all_kernels(self) -> Iterator[Kernel]:
        """Every kernel, each followed by the kernels of its body (depth first)."""
        for kernel in self.kernels:
            yield from _walk(kernel)

    def eqn_to_kernels(self) -> dict[str, tuple[str, ...]]:
        """IR equation label (`e1:mul`) -> names of the kernels it went into."""
        return _index(self.all_kernels(), lambda kernel: kernel.eqn_labels)

    def line_to_kernels(self) -> dict[tuple[str, int], tuple[str, ...]]:
        """(file, line) -> names of the kernels holding ops from that line."""
        return _index(self.all_kernels(), _kernel_lines)


def parse_optimized_hlo(text: str, cost: CostFunction | None = None) -> FusionModel:
    """The kernels of a module's text; `cost` (`xla.module_cost`) counts each one's flops
    (without it they are estimated)."""
    module = parse_module(text, cost)
    return FusionModel(_computation_kernels(module, module.entry),
                       _entry_outputs(module))


def _walk(kernel: Kernel) -> Iterator[Kernel]:
    yield kernel
    for inner in kernel.body:
        yield from _walk(inner)


def _kernel_lines(kernel: Kernel) -> Iterator[tuple[str, int]]:
    return ((source.file, source.line) for source in kernel.source_lines)


def _index(kernels: Iterable[Kernel], keys_of: Callable) -> dict:
    index: dict = {}
    for kernel in kernels:
        for key in keys_of(kernel):
            names = index.setdefault(key, [])
            if kernel.name not in names:
                names.append(kernel.name)
    return {key: tuple(names) for key, names in index.items()}


# ----------------------------------------------------------------------------------------
# Kernels
# ----------------------------------------------------------------------------------------

# XLA:CPU's mark on a call that runs a small while loop as one compiled function (a thunk of
# its own, named after the call: core/compile/backend_options.py).
SMALL_CALL = "xla_cpu_small_call"

_NO_WORK = frozenset({
    "parameter", "constant", "tuple", "get-tuple-element", "bitcast", "copy-start",
    "copy-done", "opt-barrier", "after-all", "add-dependency",
})
_CALLEE_ATTRS = frozenset({
    "calls", "to_apply", "condition", "body", "branch_computations", "called_computations",
    "true_computation", "false_computation",
})
_HAS_BODY = frozenset({"while", "conditional"})
_ARITHMETIC = frozenset({
    "abs", "add", "and", "atan2", "cbrt", "ceil", "clamp", "clz", "compare", "complex",
    "convolution", "cosine", "divide", "dot", "erf", "exponential", "exponential-minus-one",
    "floor", "imag", "is-finite", "log", "log-plus-one", "logistic", "map", "maximum",
    "minimum", "multiply", "negate", "not", "or", "popcnt", "power", "real", "reduce",
    "reduce-window", "remainder", "round-nearest-afz", "round-nearest-even", "rsqrt",
    "select", "shift-left", "shift-right-arithmetic", "shift-right-logical", "sign", "sine",
    "sqrt", "subtract", "tan", "tanh", "xor",
})
_CALLEE_NAME = re.compile(r"%?([\w.\-]+)")


Bindings = dict[int, tuple[str, ...]]      # a computation's parameter -> where it comes from


def _computation_kernels(module: HloText, name: str | None,
                         path: frozenset[str] = frozenset(),
                         params: Bindings | None = None) -> tuple[Kernel, ...]:
    """The kernels of a computation's instructions, in order. `path` guards against cycles;
    `params` says where its parameters come from (the entry's: `parameter N`)."""
    computation = module.computations.get(name)
    if computation is None or name in path:
        return ()
    inner_path = path | {name}
    return tuple(kernel for inst in computation.instructions
                 for kernel in _instruction_kernels(module, computation, inst, inner_path,
                                                    params))


def _instruction_kernels(module: HloText, computation: Computation, inst: Instruction,
                         path: frozenset[str], params: Bindings | None) -> tuple[Kernel, ...]:
    if inst.opcode in _NO_WORK:
        return ()
    if inst.opcode == "call":       # XLA:CPU wraps e.g. a while loop in a call: see through it
        kernels = _callees_kernels(module, inst, path, _call_bindings(module, computation, inst,
                                                                     params))
        if SMALL_CALL in (inst.attr("frontend_attributes") or ""):
            return tuple(dataclasses.replace(k, thunk=inst.name) for k in kernels)
        return kernels
    return (_kernel(module, computation, inst, path, params),)


def _callees_kernels(module: HloText, inst: Instruction, path: frozenset[str],
                     params: Bindings | None = None) -> tuple[Kernel, ...]:
    """The kernels of the computations `inst` calls (a loop's body's parameters come from
    the loop itself, so they are bound to nothing)."""
    return tuple(kernel for callee in _callees(inst)
                 for kernel in _computation_kernels(module, callee, path, params or {}))


def _kernel(module: HloText, computation: Computation, inst: Instruction,
            path: frozenset[str], params: Bindings | None = None) -> Kernel:
    body = _callees_kernels(module, inst, path) if inst.opcode in _HAS_BODY else ()
    fused_ops = _fused_ops(module, inst)
    operand_shapes = _operand_shapes(computation, inst)
    reached = _with_callees(module, inst)
    trip_count = _trip_count(inst)
    flops, transcendentals = _kernel_flops(module, computation, inst, fused_ops, body,
                                           trip_count)
    return Kernel(
        name=inst.name, kind=_kind(inst), shape=inst.shape, fused_ops=fused_ops,
        eqn_labels=_distinct(label for i in reached for label in labels_of(i)),
        source_lines=_sorted_sources(source_of(module, i) for i in reached),
        operand_shapes=operand_shapes,
        bytes_estimate=sum(map(_shape_bytes, (*operand_shapes, inst.shape))),
        flops=flops, body=body, trip_count=trip_count,
        inputs=_distinct(source for operand in inst.operands
                         for source in _sources(module, computation, operand, params)),
        transcendentals=transcendentals,
    )


# ----------------------------------------------------------------------------------------
# Where a kernel's operands come from: through bitcasts, tuples and calls to the kernels
# that made them, or to the program's parameters
# ----------------------------------------------------------------------------------------

def _operand_name(operand: str) -> str:
    return operand.rpartition(" ")[2].lstrip("%")


def _sources(module: HloText, computation: Computation, operand: str,
             params: Bindings | None, depth: int = 0) -> tuple[str, ...]:
    inst = computation.by_name.get(_operand_name(operand))
    if inst is None or depth > 64:
        return ()
    if inst.opcode == "parameter":
        index = int(inst.operands[0]) if inst.operands and inst.operands[0].isdigit() else -1
        if params is None:                              # the entry: the program's input
            return (f"parameter {index}",)
        return params.get(index, ())
    if inst.opcode == "constant":
        return ()
    if inst.opcode in _NO_WORK:
        return tuple(source for inner in inst.operands
                     for source in _sources(module, computation, inner, params, depth + 1))
    if inst.opcode == "call":
        callee = module.computations.get(next(iter(_callees(inst)), None))
        root = next((i for i in callee.instructions if i.is_root), callee.instructions[-1]) \
            if callee and callee.instructions else None
        if root is None:
            return ()
        bindings = _call_bindings(module, computation, inst, params)
        return _sources(module, callee, root.name, bindings, depth + 1)
    return (inst.name,)


def _call_bindings(module: HloText, computation: Computation, inst: Instruction,
                   params: Bindings | None) -> Bindings:
    """A call's callee parameters bound to where the call's operands come from."""
    return {i: _sources(module, computation, operand, params)
            for i, operand in enumerate(inst.operands)}


def _entry_outputs(module: HloText) -> tuple[tuple[str, ...], ...]:
    """Per program output, the kernels that make it (a tuple ROOT: one per element)."""
    entry = module.computations.get(module.entry)
    if entry is None or not entry.instructions:
        return ()
    root = next((inst for inst in entry.instructions if inst.is_root), entry.instructions[-1])
    if root.opcode == "tuple":
        return tuple(_sources(module, entry, operand, None) for operand in root.operands)
    return (_sources(module, entry, root.name, None),)


# ----------------------------------------------------------------------------------------
# Flops: XLA's cost analysis of each kernel alone (see kernel_cost)
# ----------------------------------------------------------------------------------------

def _kernel_flops(module: HloText, computation: Computation, inst: Instruction,
                  fused_ops: tuple[str, ...], body: tuple[Kernel, ...],
                  trip_count: int | None) -> tuple[float | None, float]:
    """(flops, transcendentals) of one run of the kernel."""
    if body:
        counts = [kernel.flops for kernel in body]
        if None in counts or (inst.opcode == "while" and trip_count is None):
            return None, 0.0
        trips = trip_count if inst.opcode == "while" else 1
        return trips * float(sum(counts)), trips * sum(k.transcendentals for k in body)
    if inst.opcode == "custom-call":
        target = unquote(inst.attr("custom_call_target") or "")
        return custom_call_flops(target, _operand_shapes(computation, inst), inst.shape), 0.0
    if module.cost is None:
        return float(_flops(inst.shape, fused_ops, body)), 0.0
    return _xla_flops(module, computation, inst)


def _xla_flops(module: HloText, computation: Computation, inst: Instruction
               ) -> tuple[float | None, float]:
    text = kernel_module_text(inst.name, inst.opcode, inst.shape,
                              _operand_shapes(computation, inst), inst.attrs,
                              (module.computations[name].text
                               for name in _called_computations(module, inst)))
    try:
        cost = module.cost(text)
    except Exception:       # XLA could not read the kernel alone: its count is not known
        return None, 0.0
    return cost.get("flops", 0.0), cost.get("transcendentals", 0.0)


def _called_computations(module: HloText, inst: Instruction,
                         path: frozenset[str] = frozenset()) -> list[str]:
    """The computations an instruction calls, transitively, each after those it calls."""
    order: list[str] = []
    for callee in _callees(inst):
        computation = module.computations.get(callee)
        if computation is None or callee in path:
            continue
        for inner in computation.instructions:
            order += [n for n in _called_computations(module, inner, path | {callee})
                      if n not in order]
        if callee not in order:
            order.append(callee)
    return order


_TRIP_COUNT = re.compile(r'"known_trip_count"\s*:\s*\{\s*"n"\s*:\s*"?(\d+)')


def _trip_count(inst: Instruction) -> int | None:
    """A while loop's iteration count, from XLA's `known_trip_count` (None: unknown)."""
    found = _TRIP_COUNT.search(inst.attr("backend_config") or "") \
        if inst.opcode == "while" else None
    return int(found[1]) if found else None


def _kind(inst: Instruction) -> str:
    if inst.opcode != "fusion":
        return inst.opcode
    kind = (inst.attr("kind") or "fusion").lower()
    return kind[1:] if kind.startswith("k") else kind


def _callees(inst: Instruction) -> tuple[str, ...]:
    return tuple(name for key, value in inst.attrs if key in _CALLEE_ATTRS
                 for name in _CALLEE_NAME.findall(value))


def _fused_ops(module: HloText, inst: Instruction) -> tuple[str, ...]:
    if inst.opcode != "fusion":
        return (inst.opcode,)
    fused = module.computations.get(next(iter(_callees(inst)), None))
    instructions = fused.instructions if fused else ()
    return tuple(i.opcode for i in instructions if i.opcode not in _NO_WORK)


def _with_callees(module: HloText, inst: Instruction,
                  path: frozenset[str] = frozenset()) -> list[Instruction]:
    """The instructions of every computation `inst` calls, transitively, then `inst`:
    called computations are read before their caller, so a fusion reads in program order."""
    reached = []
    for callee in _callees(inst):
        computation = module.computations.get(callee)
        if computation is None or callee in path:
            continue
        for inner in computation.instructions:
            reached += _with_callees(module, inner, path | {callee})
    return [*reached, inst]


def _distinct(items: Iterable) -> tuple:
    return tuple(dict.fromkeys(item for item in items if item is not None))


def _sorted_sources(sources: Iterable[SourceLine | None]) -> tuple[SourceLine, ...]:
    distinct = {source for source in sources if source is not None}
    return tuple(sorted(distinct, key=lambda source: (source.file, source.line, source.column)))


def _operand_shapes(computation: Computation, inst: Instruction) -> tuple[str, ...]:
    shapes = (_operand_shape(computation, operand) for operand in inst.operands)
    return tuple(shape for shape in shapes if shape)


def _operand_shape(computation: Computation, operand: str) -> str | None:
    """`%x` is looked up in the computation; the long form `f32[4]{0} %x` carries it."""
    shape, _, name = operand.rpartition(" ")
    return strip_layout(shape) if shape.strip() else computation.shapes.get(name.lstrip("%"))


def _flops(shape: str, fused_ops: tuple[str, ...], body: tuple[Kernel, ...]) -> int:
    """Without XLA: the result's elements times the arithmetic ops fused (an estimate)."""
    return _element_count(shape) * sum(op in _ARITHMETIC for op in fused_ops)


# ----------------------------------------------------------------------------------------
# Shapes: `f64[1000,1000]`, `pred[]`, `(s64[], f32[8]{0})`
# ----------------------------------------------------------------------------------------

_ARRAY = re.compile(r"\b([a-z][a-z0-9]*)\[([^\]]*)\]")
_ELEMENT_BYTES = {
    "pred": 1, "s8": 1, "u8": 1, "s16": 2, "u16": 2, "f16": 2, "bf16": 2,
    "s32": 4, "u32": 4, "f32": 4, "s64": 8, "u64": 8, "f64": 8, "c64": 8, "c128": 16,
}


def _arrays(shape: str) -> list[tuple[str, int]]:
    """(element type, element count) of every array in a shape (several in a tuple)."""
    return [(dtype, math.prod(map(_dimension, dims.split(",")))) if dims.strip() else (dtype, 1)
            for dtype, dims in _ARRAY.findall(shape)]


def _dimension(text: str) -> int:
    digits = text.strip().removeprefix("<=")     # a dynamic dimension counts at its bound
    return int(digits) if digits.isdigit() else 0


def _element_bytes(dtype: str) -> int:
    if dtype in _ELEMENT_BYTES:
        return _ELEMENT_BYTES[dtype]
    return 1 if re.fullmatch(r"f8\w*|f4\w*|[su][124]", dtype) else 0   # sub-byte: rounded up


def _element_count(shape: str) -> int:
    return sum(count for _, count in _arrays(shape))


def _shape_bytes(shape: str) -> int:
    return sum(count * _element_bytes(dtype) for dtype, count in _arrays(shape))
