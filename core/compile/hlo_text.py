"""XLA's HLO module text as a model: computations of instructions (name, shape, opcode,
operands, attributes), and the stack-frame tables that map each op back to its source line.

The text is what `executable.hlo_modules()[0].to_string()` prints: stack-frame tables
(`FileNames`, `FunctionNames`, `FileLocations`, `StackFrames`), then computations, the
`ENTRY` one last. The parser is forgiving: lines it does not understand are skipped, and it
never raises on unexpected text; it returns what it understood. `kernels` reads the model.
"""
from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Callable, Iterator

__all__ = ["SourceLine", "Instruction", "Computation", "HloText", "parse_module", "labels_of",
           "source_of", "unquote", "strip_layout"]


@dataclass(frozen=True)
class SourceLine:
    file: str
    line: int
    column: int


# ----------------------------------------------------------------------------------------
# The text model: instructions, computations, module
# ----------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Instruction:
    name: str
    shape: str                              # layouts dropped
    opcode: str
    operands: tuple[str, ...]               # `%x`, or `f32[4]{0} %x` in the long form
    attrs: tuple[tuple[str, str], ...]      # (key, raw value), in line order
    is_root: bool = False

    def attr(self, key: str) -> str | None:
        return next((value for k, value in self.attrs if k == key), None)


@dataclass(frozen=True)
class Computation:
    name: str
    is_entry: bool
    instructions: tuple[Instruction, ...]
    shapes: dict[str, str]                  # instruction name -> shape
    text: str = ""                          # as written (for a kernel's module of its own)

    @functools.cached_property
    def by_name(self) -> dict[str, Instruction]:
        return {inst.name: inst for inst in self.instructions}


@dataclass(frozen=True)
class HloText:
    computations: dict[str, Computation]
    entry: str | None
    frame_sources: dict[int, SourceLine]    # stack_frame_id -> innermost source location
    cost: Callable[[str], dict] | None = None     # prices a kernel's module (kernels)


def parse_module(text: str, cost: Callable[[str], dict] | None = None) -> HloText:
    lines = text.splitlines()
    computations = _parse_computations(lines)
    entries = [c.name for c in computations if c.is_entry] or [c.name for c in computations]
    return HloText(computations={c.name: c for c in computations},
                   entry=entries[0] if entries else None,
                   frame_sources=_frame_sources(_parse_tables(lines)), cost=cost)


# ----------------------------------------------------------------------------------------
# Splitting the text into computations
# ----------------------------------------------------------------------------------------

_HEADER = re.compile(r"^(?P<entry>ENTRY\s+)?%?(?P<name>[\w.\-]+)\s.*\{\s*$")


def _parse_computations(lines: list[str]) -> list[Computation]:
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


def _close(header: re.Match | None, body: list[str]) -> list[Computation]:
    if header is None:
        return []
    instructions = tuple(filter(None, map(_parse_instruction, body)))
    return [Computation(name=header["name"], is_entry=bool(header["entry"]),
                         instructions=instructions,
                         shapes={inst.name: inst.shape for inst in instructions},
                         text="\n".join([header.string, *body, "}"]))]


# ----------------------------------------------------------------------------------------
# One instruction line: `[ROOT] %name = shape opcode(operands), key=value, ...`
# ----------------------------------------------------------------------------------------

_ASSIGNMENT = re.compile(r"^\s*(?P<root>ROOT\s+)?%?(?P<name>[^\s=]+)\s*=\s*(?P<rest>\S.*)$")
_OPCODE = re.compile(r"\s*(?P<opcode>[\w\-]+)\(")
_COMMENT = re.compile(r"/\*.*?\*/")
_LAYOUT = re.compile(r"\{[^{}]*\}")


def _parse_instruction(line: str) -> Instruction | None:
    assignment = _ASSIGNMENT.match(_COMMENT.sub("", line))
    if assignment is None:
        return None
    rest = assignment["rest"]
    shape_end = _first_top_level(rest, " ")
    opcode = _OPCODE.match(rest, shape_end)
    if opcode is None:
        return None
    operands_end = _first_top_level(rest, ")", opcode.end() - 1)    # the `(`'s closing `)`
    return Instruction(name=assignment["name"], shape=strip_layout(rest[:shape_end]),
                        opcode=opcode["opcode"],
                        operands=tuple(_split_top_level(rest[opcode.end():operands_end])),
                        attrs=_parse_attrs(rest[operands_end + 1:]),
                        is_root=bool(assignment["root"]))


def _parse_attrs(text: str) -> tuple[tuple[str, str], ...]:
    pairs = (part.partition("=") for part in _split_top_level(text))
    return tuple((key.strip(), value.strip()) for key, sep, value in pairs if sep)


def strip_layout(shape: str) -> str:
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
    files = {i: unquote(text) for i, text in tables.get("FileNames", {}).items()}
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


def unquote(text: str) -> str:
    text = text.strip()
    if len(text) >= 2 and text[0] == text[-1] == '"':
        text = re.sub(r"\\(.)", r"\1", text[1:-1])
    return text


def labels_of(inst: Instruction) -> tuple[str, ...]:
    """The equation labels of an op: the last part of a scoped `e7:while/e6:mul` op_name;
    XLA joins the names of ops it merged with `;` (`e1:multiply;e0:broadcast_in_dim`)."""
    match = _OP_NAME.search(inst.attr("metadata") or "")
    if not match:
        return ()
    names = unquote(f'"{match[1]}"').split(";")
    return tuple(label for name in names if (label := name.strip().rsplit("/", 1)[-1]))


def source_of(module: HloText, inst: Instruction) -> SourceLine | None:
    metadata = inst.attr("metadata") or ""
    frame = _FRAME_ID.search(metadata)
    if frame and int(frame[1]) in module.frame_sources:
        return module.frame_sources[int(frame[1])]
    file, line = _SOURCE_FILE.search(metadata), _SOURCE_LINE.search(metadata)
    if file is None or line is None:
        return None
    column = _SOURCE_COLUMN.search(metadata)
    return SourceLine(unquote(f'"{file[1]}"'), int(line[1]), int(column[1]) if column else 0)
