"""The two shapes jaxlib's C++ dispatcher reads (compile/xla/ makes them and hands them over;
no jaxlib import here): the FastPath it keeps per call signature, and the one pytree node of
a call's results."""
from __future__ import annotations

from typing import Any, Callable, NamedTuple


class FastPath(NamedTuple):
    """What jaxlib's C++ dispatcher keeps per call signature (the fields it reads, by name)."""
    xla_executable: Any
    out_pytree_def: Any
    in_shardings: list
    out_shardings: list
    out_avals: list
    out_committed: list
    kept_var_bitvec: list
    in_device_local_layouts: list
    const_args: list


class Finished:
    """The dispatcher's one pytree node: children a run's results, aux data the callable
    (`finish`) the dispatcher calls on them through `operator.call` to make the return value."""
    __slots__ = ("count", "finish")

    def __init__(self, count: int, finish: Callable[[tuple], Any]):
        self.count = count
        self.finish = finish

    def parts(self) -> tuple[tuple, Callable]:
        return (0,) * self.count, self.finish
