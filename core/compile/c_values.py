"""The values of a host loop's C (loop_c.py): a storage (elements in memory), an array (a
row-major view of a storage) and a lazy array (a formula, not in memory)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Sequence

import numpy as np

from ..ir import ShapedArray
from .c_rules import Refused


@dataclass(eq=False)
class Storage:
    """Elements the loop reads or writes in place: a C pointer, and the vars holding its
    current value."""
    pointer: str
    dtype: np.dtype
    writable: bool
    values: set[int] = field(default_factory=set)


@dataclass(eq=False)
class Array:
    """An array value: a row-major view of a storage."""
    storage: Storage
    aval: ShapedArray

    @property
    def shape(self) -> tuple[int, ...]:
        return self.aval.shape

    def offset(self, indices: Sequence[str]) -> str:
        strides = np.cumprod((1,) + self.shape[:0:-1])[::-1] if self.shape else []
        terms = [f"({i}) * {int(s)}" if s != 1 else f"({i})"
                 for i, s in zip(indices, strides, strict=True)]
        return " + ".join(terms) if terms else "0"

    def at(self, indices: Sequence[str]) -> str:
        return f"{self.storage.pointer}[{self.offset(indices)}]"


@dataclass(eq=False)
class Lazy:
    """An array value kept as a formula, not written anywhere: its element at an index (C
    index expressions, outermost first) as a C expression, computed where an equation reads
    it. So a chain of elementwise operations, slices and broadcasts is one C loop, where
    each would write an array of its own. `reads`: the storages it reads, each with the var
    whose value it reads there (checked again where it is read)."""
    aval: ShapedArray
    element: Callable[[list[str]], str]
    reads: tuple = ()

    @property
    def shape(self) -> tuple[int, ...]:
        return self.aval.shape

    def at(self, indices: Sequence[str]) -> str:
        for storage, var_id in self.reads:
            if var_id not in storage.values:
                raise Refused("a read of an array's value from before a write to it")
        return f"({self.element(list(indices))})"

    def reads_from(self, storage: Storage) -> bool:
        return any(s is storage for s, _ in self.reads)
