"""Large misaligned inputs read in place, without a copy.

The CPU client reads an input in place only when its data starts on a 64-byte boundary
(hostmemory.ALIGNMENT; checked on jaxlib 0.10.2: an array 8, 16, 32 or 48 bytes past one is
copied). NumPy's own allocations are 16-byte aligned, and a `psc_jit.jit` user never loads
the magic's aligned allocator, so every large input was copied on every call: a memcpy of the
whole input, as much memory traffic again as an elementwise program's own (bench/loops.py's
go_fast, `a + trace` over 8 MB: 0.71x NumPy).

Instead the program is given the input from the boundary before its data: a 1-d array of the
input's elements and the few before them (`widened`), which starts aligned and is read in
place; a variant of the program (`offset_module`) slices those leading elements off and
reshapes the rest, which XLA fuses into the program's reads (no copy). The bytes before the
array lie on the page of its first byte (they are fewer than 64), so they are mapped memory,
and the program never reads them. The variant's program depends on each input's offset,
so it is compiled once per combination of offsets (`Executable` keeps them).

A slice is fused into the reads of an elementwise program, but an operand of a loop or of a
custom call is a whole buffer, so XLA would copy the slice. An input that only host loops
read (C kernels through XLA's FFI, hostloops.py) is handed to them whole instead, with each
operand's count of leading elements as one more operand; the C adds it to the operand's
address (`_host_loops_read_whole`).
"""
from __future__ import annotations

import ctypes
import re

import numpy as np

from ..ir import ShapedArray
from ..lowering import i64_array, tensor_type
from .errors import XlaError
from .hostloops import PREFIX
from .hostmemory import ALIGNMENT

try:        # core/compile/_host_memory.c, when it was built (else `offsets` and `widened`)
    from ._host_memory import from_boundaries
except ImportError:
    from_boundaries = None

INNER = "psc_unaligned_inner"       # the original main, called by the variant's main
# Only inputs this large are read from their boundary: below it the staged copy costs a few
# microseconds, and a small array's offset changes from one allocation to the next (a fresh
# copy per call, as a loop's updated vector gets, would compile a variant per offset)
READ_IN_PLACE_FROM_BYTES = 1 << 18
MAX_VARIANTS = 4    # per program: NumPy's large allocations keep one offset (16 bytes past a
#                     page), so a few cover a session; past them inputs are copied again


def element_offset(x, aval: ShapedArray) -> int | None:
    """How many elements x's data starts past the ALIGNMENT boundary before it (0: aligned);
    None when x cannot be read from that boundary (not a C-contiguous array of the slot's
    type, or its data not on a multiple of its item size)."""
    if type(x) is not np.ndarray or not x.flags.c_contiguous or x.dtype != aval.dtype or \
            x.shape != aval.shape:
        return None
    past = x.ctypes.data % ALIGNMENT
    if past % x.dtype.itemsize:
        return None
    return past // x.dtype.itemsize


def widened(x: np.ndarray, offset: int) -> np.ndarray:
    """x's elements and the `offset` elements before them, as a 1-d array starting on the
    ALIGNMENT boundary (a view of x's memory that keeps x alive)."""
    if not offset:
        return x
    itemsize = x.dtype.itemsize
    memory = (ctypes.c_char * ((x.size + offset) * itemsize)).from_address(
        x.ctypes.data - offset * itemsize)
    memory.owner = x            # (the view keeps `memory`, and so x, alive)
    return np.frombuffer(memory, x.dtype)


def widened_aval(aval: ShapedArray, offset: int) -> ShapedArray:
    return ShapedArray((aval.size + offset,), aval.dtype) if offset else aval


def offset_module(text: str, in_avals, out_avals, offsets) -> str:
    """The StableHLO module `text` (one `main`, as core/lowering.py writes it) taking each
    input with `offsets[k]` elements before it as a 1-d array: its main renamed INNER and
    called by a new main that slices the leading elements off and restores the shapes."""
    header = "  func.func public @main("
    if text.count(header) != 1 or not out_avals:
        raise ValueError("a module with one public main, and results")
    inner = text.replace(header, f"  func.func private @{INNER}(")
    inner, whole = _host_loops_read_whole(inner, in_avals, offsets)
    params, lines, args = [], [], []
    for k, (aval, offset) in enumerate(zip(in_avals, offsets, strict=True)):
        outer = widened_aval(aval, offset)
        params.append(f"%arg{k}: {tensor_type(outer)}")
        if not offset or k in whole:
            args.append(f"%arg{k}")
            continue
        flat = ShapedArray((aval.size,), aval.dtype)
        lines.append(f'    %s{k} = "stablehlo.slice"(%arg{k}) {{start_indices = '
                     f"{i64_array([offset])}, limit_indices = {i64_array([outer.size])}, "
                     f"strides = {i64_array([1])}}} : ({tensor_type(outer)}) -> "
                     f"{tensor_type(flat)}")
        lines.append(f'    %r{k} = "stablehlo.reshape"(%s{k}) : ({tensor_type(flat)}) -> '
                     f"{tensor_type(aval)}")
        args.append(f"%r{k}")
    ins = ", ".join(tensor_type(widened_aval(a, o) if k in whole else a)
                    for k, (a, o) in enumerate(zip(in_avals, offsets, strict=True)))
    outs = ", ".join(tensor_type(a) for a in out_avals)
    results = ", ".join(f"%out#{k}" for k in range(len(out_avals))) if len(out_avals) > 1 \
        else "%out"
    call = (f"    %out{':' + str(len(out_avals)) if len(out_avals) > 1 else ''} = "
            f"func.call @{INNER}({', '.join(args)}) : ({ins}) -> ({outs})")
    main = [f"  func.func public @main({', '.join(params)}) -> ({outs}) {{", *lines, call,
            f'    "func.return"({results}) : ({outs}) -> ()', "  }"]
    first_line_end = inner.index("\n") + 1
    return inner[:first_line_end] + "\n".join(main) + "\n" + inner[first_line_end:]


class OffsetVariants:
    """The variants of one program by the offsets of its large inputs, each compiled the
    second time a call brings those offsets (a program called once with a misaligned input
    keeps the staged copy, cheaper than a compile). `compile_fn(text, in_avals)` compiles
    one; a variant that cannot be made leaves those offsets to the staged copy."""

    def __init__(self, text: str, in_avals, out_avals, compile_fn):
        self.text, self.in_avals, self.out_avals = text, tuple(in_avals), tuple(out_avals)
        self.large = [a.nbytes >= READ_IN_PLACE_FROM_BYTES for a in self.in_avals]
        self.compile_fn = compile_fn
        self.seen: set[tuple[int, ...]] = set()
        self.variants: dict[tuple[int, ...], object] = {}

    def offsets(self, arrays) -> tuple[int, ...] | None:
        """Each large input's element offset (0 for the others); None when all are aligned
        or one cannot be read from its boundary."""
        offsets = []
        for x, aval, large in zip(arrays, self.in_avals, self.large, strict=True):
            offset = element_offset(x, aval) if large else 0
            if offset is None:
                return None
            offsets.append(offset)
        return tuple(offsets) if any(offsets) else None

    def read_in_place(self, arrays) -> frozenset[int]:
        """The positions of the inputs a variant made for these arrays reads in place."""
        offsets = self.offsets(arrays)
        if offsets is None or self.variants.get(offsets) is None:
            return frozenset()
        return frozenset(k for k, offset in enumerate(offsets) if offset)

    def call(self, arrays, marks: list | None = None):
        """The outputs of the variant for these arrays' offsets, run on them in place; None
        when there is none (yet) for them. `marks`: as `Executable.execute` takes them."""
        views = None
        if from_boundaries is not None:     # (offsets and views at once, in C)
            found = from_boundaries(arrays, self.large)
            if found is None:
                return None
            offsets, views = found
        else:
            offsets = self.offsets(arrays)
            if offsets is None:
                return None
        if offsets not in self.variants:
            if len(self.variants) >= MAX_VARIANTS:
                return None
            if offsets not in self.seen:
                self.seen.add(offsets)
                return None
            self.variants[offsets] = self.variant(offsets)
        variant = self.variants[offsets]
        if variant is None:
            return None
        if views is None:
            views = [widened(x, o) for x, o in zip(arrays, offsets, strict=True)]
        return variant.execute(views, marks)

    def variant(self, offsets):
        """The variant for these offsets; None when it cannot be made, or when XLA copies a
        widened input whole before using it (a loop reading it, which takes its operand as it
        is): that copy costs what the staged one does, or more."""
        try:
            text = offset_module(self.text, self.in_avals, self.out_avals, offsets)
            avals = [widened_aval(a, o) for a, o in zip(self.in_avals, offsets, strict=True)]
            variant = self.compile_fn(text, avals)
        except (ValueError, XlaError):
            return None
        return None if copies_an_input(variant.hlo_text()) else variant


# -- host loops: a large input only they read is handed to them whole, with its offset ----------

_CUSTOM_CALL = re.compile(r'^(\s*)(%[\w#:]+) = "stablehlo.custom_call"\((.*?)\) \{(.*)\} : '
                          r'\((.*?)\) -> (.*)$')
_ALIASED = re.compile(r"operand_index = (\d+)")
_FLAT_LAYOUT = "dense<[0]> : tensor<1xindex>"


def _host_loops_read_whole(inner: str, in_avals, offsets) -> tuple[str, frozenset[int]]:
    """`inner` (the program's main, renamed) with each misaligned input that only host loops
    read (hostloops.py: C through XLA's FFI, which reads its operands where they are) given
    to them whole, as the widened 1-d array, and the count of elements before each operand
    as one more operand (loop_c.loop_source adds it to the operand's address); and those
    inputs' positions. A slice of the input (as the other inputs get) would be a copy of it:
    a custom call takes its operands as whole buffers."""
    lines = inner.split("\n")
    start = next(i for i, line in enumerate(lines) if f"@{INNER}(" in line)
    end = next(i for i in range(start + 1, len(lines)) if lines[i] == "  }")
    uses: dict[int, list[int]] = {}
    for k, offset in enumerate(offsets):
        if offset:
            name = re.compile(rf"%arg{k}(?!\d)")
            uses[k] = [i for i in range(start + 1, end) if name.search(lines[i])]
    whole = frozenset(k for k, found in uses.items()
                      if found and all(_only_read_by_host_loop(lines[i], k) for i in found))
    for i in sorted({i for k in whole for i in uses[k]}, reverse=True):
        lines[i:i + 1] = _with_operands_whole(lines[i], i, whole, in_avals, offsets)
    for k in whole:
        lines[start] = lines[start].replace(
            f"%arg{k}: {tensor_type(in_avals[k])}",
            f"%arg{k}: {tensor_type(widened_aval(in_avals[k], offsets[k]))}")
    return "\n".join(lines), whole


def _only_read_by_host_loop(line: str, k: int) -> bool:
    match = _CUSTOM_CALL.match(line)
    if match is None or f'call_target_name = "{PREFIX}' not in match.group(4):
        return False
    operands = match.group(3).split(", ")
    positions = {p for p, name in enumerate(operands) if name == f"%arg{k}"}
    aliased = {int(n) for n in _ALIASED.findall(match.group(4))}
    outside = re.sub(r"\(.*?\) \{", "", line, count=1)   # (the operand list)
    return bool(positions) and not positions & aliased and \
        re.search(rf"%arg{k}(?!\d)", outside) is None


def _with_operands_whole(line: str, number: int, whole, in_avals, offsets) -> list[str]:
    """The custom call's line with its operands of `whole` widened, and before it the
    constant it takes last: each operand's count of elements before its own."""
    indent, results, operands, attrs, types, rest = _CUSTOM_CALL.match(line).groups()
    operands, types = operands.split(", "), types.split(", ")
    head, tail = attrs.split("operand_layouts = [", 1)
    layouts, tail = _split_list(tail)
    before = [0] * len(operands)
    for p, name in enumerate(operands):
        k = int(name[4:]) if re.fullmatch(r"%arg\d+", name) else None
        if k in whole:
            types[p] = tensor_type(widened_aval(in_avals[k], offsets[k]))
            layouts[p] = _FLAT_LAYOUT
            before[p] = offsets[k]
    counts = f"tensor<{len(before)}xi64>"
    name = f"%psc_before{number}"
    constant = (f'{indent}{name} = "stablehlo.constant"() {{value = dense<{before}> : '
                f"{counts}}} : () -> {counts}")
    call = (f'{indent}{results} = "stablehlo.custom_call"({", ".join(operands + [name])}) '
            f'{{{head}operand_layouts = [{", ".join(layouts + [_FLAT_LAYOUT])}]{tail}}} : '
            f'({", ".join(types + [counts])}) -> {rest}')
    return [constant, call]


def _split_list(text: str) -> tuple[list[str], str]:
    """The items of a bracketed list whose `[` was just read, split at its top-level commas,
    and the text after its `]`."""
    items, depth, item = [], 0, ""
    for i, char in enumerate(text):
        if char == "]" and depth == 0:
            items.append(item.strip())
            return [x for x in items if x], text[i + 1:]
        depth += {"[": 1, "<": 1, "]": -1, ">": -1}.get(char, 0)
        if char == "," and depth == 0:
            items.append(item.strip())
            item = ""
        else:
            item += char
    raise ValueError("an unclosed list")


_COMPUTATION = re.compile(r"^%?([\w.\-]+) \(.*\) -> .* \{$")
_OPCODE = re.compile(r"= \S+(?: \S+)? ([a-z][\w\-]*)\(")
_CALLS = re.compile(r"calls=%([\w.\-]+)")
_ONLY_MOVES = frozenset({"parameter", "slice", "bitcast", "reshape", "copy", "tuple",
                         "get-tuple-element"})


def copies_an_input(hlo: str) -> bool:
    """Whether optimized HLO holds a fusion that only slices and reshapes a parameter (the
    widened input copied whole, where a variant meant to read it in place)."""
    bodies: dict[str, set[str]] = {}
    name = None
    for line in hlo.splitlines():
        header = _COMPUTATION.match(line)
        if header:
            name = header.group(1)
            bodies[name] = set()
        elif line.startswith("}"):
            name = None
        elif name is not None:
            op = _OPCODE.search(line)
            if op:
                bodies[name].add(op.group(1))
    copying = {n for n, ops in bodies.items() if "slice" in ops and ops <= _ONLY_MOVES}
    return not copying.isdisjoint(_CALLS.findall(hlo))
