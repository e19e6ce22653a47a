"""The IR: typed variables, literals, equations of primitives, and graphs (like a jaxpr).

Graphs are immutable values. `Var` compares by identity; `ShapedArray` by value (it is part
of cache keys). Every equation carries the source location of the NumPy call that made it.
"""
from __future__ import annotations

import dataclasses
import html
import itertools
from dataclasses import dataclass, field
from typing import Any

import numpy as np

_SHORT_DTYPE = {
    "bool": "bool", "int8": "i8", "int16": "i16", "int32": "i32", "int64": "i64",
    "uint8": "u8", "uint16": "u16", "uint32": "u32", "uint64": "u64",
    "float16": "f16", "float32": "f32", "float64": "f64",
    "complex64": "c64", "complex128": "c128",
}


def dtype_short(dtype: np.dtype) -> str:
    return _SHORT_DTYPE.get(np.dtype(dtype).name, np.dtype(dtype).name)


@dataclass(frozen=True)
class ShapedArray:
    """The abstract value of an array: shape, dtype, and whether its type is weak.

    A weak type comes from a Python scalar (NEP 50): it takes the dtype of whatever
    array it meets.
    """
    shape: tuple[int, ...]
    dtype: np.dtype
    weak_type: bool = False

    def __post_init__(self):
        object.__setattr__(self, "shape", tuple(int(d) for d in self.shape))
        object.__setattr__(self, "dtype", np.dtype(self.dtype))

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))

    @property
    def nbytes(self) -> int:
        return self.size * self.dtype.itemsize

    def update(self, **changes) -> ShapedArray:
        return dataclasses.replace(self, **changes)

    def str_short(self) -> str:
        weak = "~" if self.weak_type else ""
        return f"{dtype_short(self.dtype)}{weak}[{','.join(map(str, self.shape))}]"

    __str__ = str_short


def aval_of(value: Any) -> ShapedArray:
    """The abstract value of a concrete NumPy value or Python scalar."""
    if isinstance(value, (bool, int, float, complex)) and not isinstance(value, np.generic):
        return ShapedArray((), np.result_type(value), weak_type=True)
    arr = np.asarray(value)
    return ShapedArray(arr.shape, arr.dtype)


@dataclass(frozen=True)
class SourceInfo:
    """Where an equation came from: the file (a cell's name), line and column."""
    file: str
    line: int
    column: int = 0
    end_line: int | None = None
    end_column: int | None = None
    function: str = ""

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.column}"


_var_ids = itertools.count()


@dataclass(eq=False)
class Var:
    aval: ShapedArray
    id: int = field(default_factory=lambda: next(_var_ids))

    def __repr__(self) -> str:
        return f"Var({self.id}: {self.aval})"


@dataclass(eq=False)
class Literal:
    """A constant operand: a NumPy scalar or array baked into the graph."""
    value: np.ndarray
    aval: ShapedArray

    @staticmethod
    def of(value: Any, dtype: np.dtype | None = None, weak_type: bool = False) -> Literal:
        arr = np.asarray(value, dtype=dtype)
        return Literal(arr, ShapedArray(arr.shape, arr.dtype, weak_type))

    def __repr__(self) -> str:
        return f"Literal({self.value!r})"


Atom = Var | Literal


def distinct_part(value: np.ndarray) -> np.ndarray:
    """The smallest view of `value` holding all of its elements: each axis NumPy broadcast it
    along (stride 0) cut to one element. A constant broadcast to a large shape is known by
    its few elements, never spelled out at its full size."""
    value = np.asarray(value)
    cut = tuple(slice(0, 1) if stride == 0 and n > 1 else slice(None)
                for stride, n in zip(value.strides, value.shape, strict=True))
    return value[cut]


SPLAT_CHUNK = 1 << 16       # elements compared at a time (a bounded temporary)


def is_splat(value: np.ndarray) -> bool:
    """Whether all elements are bit-identical (NaN payloads and -0.0 kept apart), looking at
    a bounded number of elements at a time."""
    flat = distinct_part(value).reshape(-1)
    if flat.size <= 1:
        return True
    first = flat[:1].view(np.uint8)
    for start in range(0, flat.size, SPLAT_CHUNK):
        chunk = np.ascontiguousarray(flat[start:start + SPLAT_CHUNK]).view(np.uint8)
        if not (chunk.reshape(-1, first.size) == first).all():
            return False
    return True


@dataclass(frozen=True, eq=False)
class Eqn:
    prim: Any                       # a Primitive (core.registry)
    inputs: tuple[Atom, ...]
    params: dict[str, Any]
    outs: tuple[Var, ...]
    source: SourceInfo | None = None
    id: int = field(default_factory=lambda: next(_eqn_ids))



_eqn_ids = itertools.count()


@dataclass(frozen=True, eq=False)
class Graph:
    in_vars: tuple[Var, ...]
    eqns: tuple[Eqn, ...]
    out_atoms: tuple[Atom, ...]

    @property
    def in_avals(self) -> tuple[ShapedArray, ...]:
        return tuple(v.aval for v in self.in_vars)

    @property
    def out_avals(self) -> tuple[ShapedArray, ...]:
        return tuple(a.aval for a in self.out_atoms)

    def all_eqns(self):
        """Every equation, those of sub-graphs (loop bodies, branches) included."""
        for eqn in self.eqns:
            yield eqn
            for sub in subgraphs(eqn):
                yield from sub.all_eqns()

    def labels(self) -> dict[int, str]:
        """`e12:mul` for every equation (by id): its position in `all_eqns`, and its primitive.
        Lowered ops carry these names, so the same graph always lowers to the same text."""
        return {eqn.id: f"e{n}:{eqn.prim.name}" for n, eqn in enumerate(self.all_eqns())}

    def __str__(self) -> str:
        return pp_graph(self)

    def _repr_html_(self) -> str:
        return f"<pre>{html.escape(str(self))}</pre>"


def subgraphs(eqn: Eqn) -> list[Graph]:
    """The sub-graphs an equation holds in its params (bodies of loops and branches)."""
    found = []
    for value in eqn.params.values():
        if isinstance(value, Graph):
            found.append(value)
        elif isinstance(value, tuple):
            found.extend(v for v in value if isinstance(v, Graph))
    return found


# -- printing ---------------------------------------------------------------------------------

class _Names:
    def __init__(self):
        self.names: dict[int, str] = {}

    def __call__(self, atom: Atom) -> str:
        if isinstance(atom, Literal):
            return _literal_str(atom)
        if atom.id not in self.names:
            self.names[atom.id] = _letters(len(self.names))
        return self.names[atom.id]


def _letters(n: int) -> str:
    s = ""
    n += 1
    while n:
        n, r = divmod(n - 1, 26)
        s = chr(ord("a") + r) + s
    return s


def _literal_str(lit: Literal) -> str:
    if lit.value.ndim == 0:
        return f"{lit.value.item()!r}:{dtype_short(lit.aval.dtype)}"
    return f"const<{lit.aval}>"


def _param_str(value: Any) -> str:
    if isinstance(value, Graph):
        return "{graph}"
    if isinstance(value, np.dtype):
        return dtype_short(value)
    return repr(value)


def pp_graph(graph: Graph, names: _Names | None = None, indent: int = 0) -> str:
    names = names or _Names()
    pad = " " * indent
    ins = " ".join(f"{names(v)}:{v.aval}" for v in graph.in_vars)
    lines = [f"{pad}{{ lambda {ins} ."]
    for eqn in graph.eqns:
        lines.append(pad + "  " + pp_eqn(eqn, names, indent + 2))
    outs = ", ".join(names(a) for a in graph.out_atoms)
    lines.append(f"{pad}  in ({outs}) }}")
    return "\n".join(lines)


def pp_eqn(eqn: Eqn, names: _Names, indent: int = 0) -> str:
    outs = " ".join(f"{names(v)}:{v.aval}" for v in eqn.outs)
    plain = {k: v for k, v in eqn.params.items() if not _holds_graph(v)}
    params = ",".join(f"{k}={_param_str(v)}" for k, v in plain.items())
    params = f"[{params}]" if params else ""
    args = " ".join(names(a) for a in eqn.inputs)
    where = f"    # line {eqn.source.line}" if eqn.source else ""
    text = f"{outs} = {eqn.prim.name}{params} {args}{where}"
    for key, value in eqn.params.items():
        for sub in (value if isinstance(value, tuple) else (value,)):
            if isinstance(sub, Graph):
                text += f"\n{' ' * (indent + 2)}{key}=\n" + pp_graph(sub, names, indent + 4)
    return text


def _holds_graph(value: Any) -> bool:
    return isinstance(value, Graph) or (
        isinstance(value, tuple) and any(isinstance(v, Graph) for v in value))
