"""Parse XLA's optimized HLO module text (after fusion) into a fusion model.

The text is what `executable.hlo_modules()[0].to_string()` prints: stack-frame tables
(`FileNames`, `FunctionNames`, `FileLocations`, `StackFrames`), then computations, the
`ENTRY` one last. Every instruction of the ENTRY computation that does work becomes a
`Kernel`; a fusion's kernel reads its `calls=` computation for the fused ops. Each op keeps
the `op_name` its StableHLO op was lowered with (`e12:mul`, the IR equation's label) and a
`stack_frame_id` naming the cell line it came from, so kernels map back to IR equations and
source lines.

The parser is forgiving: lines it does not understand are skipped, and it never raises on
unexpected text; it returns what it understood.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Callable, Iterable, Iterator

__all__ = ["SourceLine", "Kernel", "FusionModel", "parse_optimized_hlo"]


@dataclass(frozen=True)
class SourceLine:
    file: str
    line: int
    column: int


@dataclass(frozen=True)
class Kernel:
    """One unit of work XLA runs: a fusion, or a single unfused instruction.

    `bytes_estimate` is the sum of the operand and result sizes computed from their shapes,
    and `flops_estimate` the result's element count times the number of arithmetic ops in
    `fused_ops` (for a kernel with a `body`: the sum over the body, one iteration or every
    branch once). Both are estimates, not XLA's cost analysis.
    """
    name: str
    kind: str
    shape: str
    fused_ops: tuple[str, ...]
    eqn_labels: tuple[str, ...]
    source_lines: tuple[SourceLine, ...]
    operand_shapes: tuple[str, ...]
    bytes_estimate: int
    flops_estimate: int
    body: tuple[Kernel, ...] = ()
    trip_count: int | None = None       # a loop's iterations, when XLA knows them


@dataclass(frozen=True)
class FusionModel:
    kernels: tuple[Kernel, ...]

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


def parse_optimized_hlo(text: str) -> FusionModel:
    module = _parse_module(text)
    return FusionModel(_computation_kernels(module, module.entry))


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
# The text model: instructions, computations, module
# ----------------------------------------------------------------------------------------

@dataclass(frozen=True)
class _Instruction:
    name: str
    shape: str                              # layouts dropped
    opcode: str
    operands: tuple[str, ...]               # `%x`, or `f32[4]{0} %x` in the long form
    attrs: tuple[tuple[str, str], ...]      # (key, raw value), in line order

    def attr(self, key: str) -> str | None:
        return next((value for k, value in self.attrs if k == key), None)


@dataclass(frozen=True)
class _Computation:
    name: str
    is_entry: bool
    instructions: tuple[_Instruction, ...]
    shapes: dict[str, str]                  # instruction name -> shape


@dataclass(frozen=True)
class _Module:
    computations: dict[str, _Computation]
    entry: str | None
    frame_sources: dict[int, SourceLine]    # stack_frame_id -> innermost source location


def _parse_module(text: str) -> _Module:
    lines = text.splitlines()
    computations = _parse_computations(lines)
    entries = [c.name for c in computations if c.is_entry] or [c.name for c in computations]
    return _Module(computations={c.name: c for c in computations},
                   entry=entries[0] if entries else None,
                   frame_sources=_frame_sources(_parse_tables(lines)))


# ----------------------------------------------------------------------------------------
# Splitting the text into computations
# ----------------------------------------------------------------------------------------

_HEADER = re.compile(r"^(?P<entry>ENTRY\s+)?%?(?P<name>[\w.\-]+)\s.*\{\s*$")


def _parse_computations(lines: list[str]) -> list[_Computation]:
    computations, header, body = [], None, []
    for line in lines:
        match = None if line[:1].isspace() else _HEADER.match(line)
        if match and not line.startswith("HloModule"):
            computations += _close(header, body)
            header, body = match, []
        elif header is not None and line.strip() == "}":
            computations += _close(header, body)
            header, body = None, []
        elif header is not None:
            body.append(line)
    return computations + _close(header, body)


def _close(header: re.Match | None, body: list[str]) -> list[_Computation]:
    if header is None:
        return []
    instructions = tuple(filter(None, map(_parse_instruction, body)))
    return [_Computation(name=header["name"], is_entry=bool(header["entry"]),
                         instructions=instructions,
                         shapes={inst.name: inst.shape for inst in instructions})]


# ----------------------------------------------------------------------------------------
# One instruction line: `[ROOT] %name = shape opcode(operands), key=value, ...`
# ----------------------------------------------------------------------------------------

_ASSIGNMENT = re.compile(r"^\s*(?:ROOT\s+)?%?(?P<name>[^\s=]+)\s*=\s*(?P<rest>\S.*)$")
_OPCODE = re.compile(r"\s*(?P<opcode>[\w\-]+)\(")
_COMMENT = re.compile(r"/\*.*?\*/")
_LAYOUT = re.compile(r"\{[^{}]*\}")


def _parse_instruction(line: str) -> _Instruction | None:
    assignment = _ASSIGNMENT.match(_COMMENT.sub("", line))
    if assignment is None:
        return None
    rest = assignment["rest"]
    shape_end = _first_top_level(rest, " ")
    opcode = _OPCODE.match(rest, shape_end)
    if opcode is None:
        return None
    operands_end = _first_top_level(rest, ")", opcode.end() - 1)    # the `(`'s closing `)`
    return _Instruction(name=assignment["name"], shape=_strip_layout(rest[:shape_end]),
                        opcode=opcode["opcode"],
                        operands=tuple(_split_top_level(rest[opcode.end():operands_end])),
                        attrs=_parse_attrs(rest[operands_end + 1:]))


def _parse_attrs(text: str) -> tuple[tuple[str, str], ...]:
    pairs = (part.partition("=") for part in _split_top_level(text))
    return tuple((key.strip(), value.strip()) for key, sep, value in pairs if sep)


def _strip_layout(shape: str) -> str:
    return _LAYOUT.sub("", shape).strip()


def _unquoted(text: str, start: int = 0) -> Iterator[tuple[int, str, int]]:
    """(index, char, depth) of each char outside string literals; a bracket has the depth
    outside it."""
    depth, quoted, escaped = 0, False, False
    for index in range(start, len(text)):
        char = text[index]
        if quoted:
            quoted = escaped or char != '"'
            escaped = not escaped and char == "\\"
            continue
        quoted = char == '"'
        depth -= char in ")]}"
        yield index, char, depth
        depth += char in "([{"


def _first_top_level(text: str, wanted: str, start: int = 0) -> int:
    """Index of the first `wanted` char outside brackets and strings (len(text) if none)."""
    found = (i for i, char, depth in _unquoted(text, start) if char == wanted and depth == 0)
    return next(found, len(text))


def _split_top_level(text: str) -> list[str]:
    cuts = [i for i, char, depth in _unquoted(text) if char == "," and depth == 0]
    bounds = zip([-1, *cuts], [*cuts, len(text)], strict=True)
    return [part for part in (text[a + 1:b].strip() for a, b in bounds) if part]


# ----------------------------------------------------------------------------------------
# Stack-frame tables and metadata
# ----------------------------------------------------------------------------------------

_TABLES = ("FileNames", "FunctionNames", "FileLocations", "StackFrames")
_TABLE_ROW = re.compile(r"^(\d+)\s+(.*)$")
_INT_FIELD = re.compile(r"(\w+)=(-?\d+)")
_OP_NAME = re.compile(r'\bop_name="((?:[^"\\]|\\.)*)"')
_FRAME_ID = re.compile(r"\bstack_frame_id=(\d+)")
_SOURCE_FILE = re.compile(r'\bsource_file="((?:[^"\\]|\\.)*)"')
_SOURCE_LINE = re.compile(r"\bsource_line=(\d+)")
_SOURCE_COLUMN = re.compile(r"\bsource_column=(\d+)")


def _parse_tables(lines: list[str]) -> dict[str, dict[int, str]]:
    """Each table's rows, `id -> raw text`; a table ends at the first line not a row."""
    tables: dict[str, dict[int, str]] = {}
    rows = None
    for line in lines:
        stripped = line.strip()
        row = _TABLE_ROW.match(stripped) if rows is not None else None
        if stripped in _TABLES:
            rows = tables.setdefault(stripped, {})
        elif row:
            rows[int(row[1])] = row[2]
        else:
            rows = None
    return tables


def _frame_sources(tables: dict[str, dict[int, str]]) -> dict[int, SourceLine]:
    files = {i: _unquote(text) for i, text in tables.get("FileNames", {}).items()}
    locations = {i: _int_fields(text) for i, text in tables.get("FileLocations", {}).items()}
    sources = {}
    for frame_id, text in tables.get("StackFrames", {}).items():
        location = locations.get(_int_fields(text).get("file_location_id"), {})
        source = _location_source(location, files)
        if source is not None:
            sources[frame_id] = source
    return sources


def _location_source(location: dict[str, int], files: dict[int, str]) -> SourceLine | None:
    file = files.get(location.get("file_name_id"))
    if file is None or "line" not in location:
        return None
    return SourceLine(file, location["line"], location.get("column", 0))


def _int_fields(text: str) -> dict[str, int]:
    return {key: int(value) for key, value in _INT_FIELD.findall(text)}


def _unquote(text: str) -> str:
    text = text.strip()
    if len(text) >= 2 and text[0] == text[-1] == '"':
        text = re.sub(r"\\(.)", r"\1", text[1:-1])
    return text


def _labels(inst: _Instruction) -> tuple[str, ...]:
    """The equation labels of an op: the last part of a scoped `e7:while/e6:mul` op_name;
    XLA joins the names of ops it merged with `;` (`e1:multiply;e0:broadcast_in_dim`)."""
    match = _OP_NAME.search(inst.attr("metadata") or "")
    if not match:
        return ()
    names = _unquote(f'"{match[1]}"').split(";")
    return tuple(label for name in names if (label := name.strip().rsplit("/", 1)[-1]))


def _source(module: _Module, inst: _Instruction) -> SourceLine | None:
    metadata = inst.attr("metadata") or ""
    frame = _FRAME_ID.search(metadata)
    if frame and int(frame[1]) in module.frame_sources:
        return module.frame_sources[int(frame[1])]
    file, line = _SOURCE_FILE.search(metadata), _SOURCE_LINE.search(metadata)
    if file is None or line is None:
        return None
    column = _SOURCE_COLUMN.search(metadata)
    return SourceLine(_unquote(f'"{file[1]}"'), int(line[1]), int(column[1]) if column else 0)


# ----------------------------------------------------------------------------------------
# Kernels
# ----------------------------------------------------------------------------------------

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


def _computation_kernels(module: _Module, name: str | None,
                         path: frozenset[str] = frozenset()) -> tuple[Kernel, ...]:
    """The kernels of a computation's instructions, in order. `path` guards against cycles."""
    computation = module.computations.get(name)
    if computation is None or name in path:
        return ()
    inner_path = path | {name}
    return tuple(kernel for inst in computation.instructions
                 for kernel in _instruction_kernels(module, computation, inst, inner_path))


def _instruction_kernels(module: _Module, computation: _Computation, inst: _Instruction,
                         path: frozenset[str]) -> tuple[Kernel, ...]:
    if inst.opcode in _NO_WORK:
        return ()
    if inst.opcode == "call":       # XLA:CPU wraps e.g. a while loop in a call: see through it
        return _callees_kernels(module, inst, path)
    return (_kernel(module, computation, inst, path),)


def _callees_kernels(module: _Module, inst: _Instruction,
                     path: frozenset[str]) -> tuple[Kernel, ...]:
    return tuple(kernel for callee in _callees(inst)
                 for kernel in _computation_kernels(module, callee, path))


def _kernel(module: _Module, computation: _Computation, inst: _Instruction,
            path: frozenset[str]) -> Kernel:
    body = _callees_kernels(module, inst, path) if inst.opcode in _HAS_BODY else ()
    fused_ops = _fused_ops(module, inst)
    operand_shapes = _operand_shapes(computation, inst)
    reached = _with_callees(module, inst)
    return Kernel(
        name=inst.name, kind=_kind(inst), shape=inst.shape, fused_ops=fused_ops,
        eqn_labels=_distinct(label for i in reached for label in _labels(i)),
        source_lines=_sorted_sources(_source(module, i) for i in reached),
        operand_shapes=operand_shapes,
        bytes_estimate=sum(map(_shape_bytes, (*operand_shapes, inst.shape))),
        flops_estimate=_flops(inst.shape, fused_ops, body),
        body=body, trip_count=_trip_count(inst),
    )


_TRIP_COUNT = re.compile(r'"known_trip_count"\s*:\s*\{\s*"n"\s*:\s*"?(\d+)')


def _trip_count(inst: _Instruction) -> int | None:
    """A while loop's iteration count, from XLA's `known_trip_count` (None: unknown)."""
    found = _TRIP_COUNT.search(inst.attr("backend_config") or "") \
        if inst.opcode == "while" else None
    return int(found[1]) if found else None


def _kind(inst: _Instruction) -> str:
    if inst.opcode != "fusion":
        return inst.opcode
    kind = (inst.attr("kind") or "fusion").lower()
    return kind[1:] if kind.startswith("k") else kind


def _callees(inst: _Instruction) -> tuple[str, ...]:
    return tuple(name for key, value in inst.attrs if key in _CALLEE_ATTRS
                 for name in _CALLEE_NAME.findall(value))


def _fused_ops(module: _Module, inst: _Instruction) -> tuple[str, ...]:
    if inst.opcode != "fusion":
        return (inst.opcode,)
    fused = module.computations.get(next(iter(_callees(inst)), None))
    instructions = fused.instructions if fused else ()
    return tuple(i.opcode for i in instructions if i.opcode not in _NO_WORK)


def _with_callees(module: _Module, inst: _Instruction,
                  path: frozenset[str] = frozenset()) -> list[_Instruction]:
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


def _operand_shapes(computation: _Computation, inst: _Instruction) -> tuple[str, ...]:
    shapes = (_operand_shape(computation, operand) for operand in inst.operands)
    return tuple(shape for shape in shapes if shape)


def _operand_shape(computation: _Computation, operand: str) -> str | None:
    """`%x` is looked up in the computation; the long form `f32[4]{0} %x` carries it."""
    shape, _, name = operand.rpartition(" ")
    return _strip_layout(shape) if shape.strip() else computation.shapes.get(name.lstrip("%"))


def _flops(shape: str, fused_ops: tuple[str, ...], body: tuple[Kernel, ...]) -> int:
    if body:
        return sum(kernel.flops_estimate for kernel in body)
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
