"""The monomorphic signature of a call: which argument leaves are traced (and their types),
which are static (and their values). `call_spec` builds the full record (`CallSpec`, with a
`Signature` that cache reasons read); `fast_key` a cheap stand-in that re-runs use to find
the same cache entry without building it.
"""
from __future__ import annotations

import re
import types
from dataclasses import dataclass
from typing import Any, Hashable

import numpy as np

from ..frontend.sources import short_repr, value_key
from ..ir import ShapedArray
from ..numpy.subclasses import plain_base, subclass_message
from ..tracing import is_traced_value
from ..tree_util import flatten_with_paths, is_node
from .cache import Signature, StaticLeaf, TracedLeaf, exact_key
from .device_array import Array


class SubclassArgument(TypeError):
    """An argument leaf whose type is a strict subclass of what it would be traced as (a
    masked array, a matrix, a subclass of the user's; `tracing.plain_base`): neither traced
    (it would become a plain array) nor static (an array's key is its data alone)."""

    def __init__(self, path: str, value):
        super().__init__("; ".join(subclass_message(value, path)))


def leaf_spec(path: str, value, force: str | None = None):
    """TracedLeaf or StaticLeaf for one argument leaf; force is "static" or "traced"."""
    if isinstance(value, Array):     # a device array: traced by its type (its data is away)
        return TracedLeaf(path, value.aval, "array", None)
    if plain_base(value) is not None and (force != "static" or isinstance(value, np.ndarray)):
        raise SubclassArgument(path, value)
    traced = is_traced_value(value) if force is None else force == "traced"
    if traced:
        if isinstance(value, np.ndarray):
            strides = None if value.flags.c_contiguous else value.strides   # views follow it
            return TracedLeaf(path, ShapedArray(value.shape, value.dtype), "array", strides)
        if isinstance(value, np.generic):
            return TracedLeaf(path, ShapedArray((), value.dtype), "scalar")
        if isinstance(value, (bool, int, float, complex)):
            return TracedLeaf(path, ShapedArray((), np.result_type(value), True), "python")
        raise TypeError(f"{path}: a {type(value).__name__} cannot be traced")
    if force is None and isinstance(value, np.ndarray):
        # a dtype XLA cannot take (longdouble, object, str): refused by its dtype, so its
        # data never becomes part of a cache key
        raise TypeError(f"{path}: XLA has no {value.dtype} type, so an array of it cannot be "
                        "traced")
    return StaticLeaf(path, static_key(path, value), type(value))


def static_key(path: str, value) -> Hashable:
    if isinstance(value, np.ndarray):
        return ("ndarray", value.shape, value.dtype.str, value.tobytes())
    try:
        hash(value)
    except TypeError:
        if isinstance(value, (set, bytearray, np.generic)) or not hasattr(value, "__dict__"):
            raise TypeError(f"{path}: a {type(value).__name__} is neither an array nor "
                            "hashable, so it cannot be a static argument") from None
        return Identity(value)
    return value


class Identity:
    """An unhashable object with attributes (a dataclass instance, a SimpleNamespace) as a
    static value: this very object. What the code reads of it is guarded attribute by
    attribute (see frontend.reads), so changing an attribute is seen."""
    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value

    def __eq__(self, other) -> bool:
        return isinstance(other, Identity) and other.value is self.value

    def __hash__(self) -> int:
        return id(self.value)

    def __repr__(self) -> str:
        return short_repr(self.value)


@dataclass(frozen=True)
class CallSpec:
    """How one call's arguments split into traced leaves and static values."""
    signature: Signature
    leaves: tuple[Any, ...]            # every leaf value, in order
    traced_index: tuple[int, ...]      # positions of traced leaves

    @property
    def paths(self) -> list[str]:
        return [leaf.path for leaf in self.signature.leaves]


def call_spec(arguments: dict[str, Any], static_names=frozenset(),
              traced_names=frozenset()) -> CallSpec:
    """The spec of a call given its arguments by parameter name."""
    leaves, structure = flatten_with_paths(arguments, keep_order=True)
    specs, values, traced = [], [], []
    for i, (path, value) in enumerate(leaves):
        name = re.split(r"[\[.]", path)[0]
        force = "static" if name in static_names else ("traced" if name in traced_names else None)
        spec = leaf_spec(path, value, force)
        specs.append(spec)
        values.append(value)
        if isinstance(spec, TracedLeaf):
            traced.append(i)
    aliases = _alias_groups([(specs[i].path, values[i]) for i in traced])
    return CallSpec(Signature(structure, tuple(specs), aliases), tuple(values), tuple(traced))


def _alias_groups(traced: list[tuple[str, Any]]) -> tuple[tuple[str, ...], ...]:
    by_id: dict[int, list[str]] = {}
    for path, value in traced:
        if isinstance(value, np.ndarray):
            by_id.setdefault(id(value), []).append(path)
    return tuple(tuple(paths) for paths in by_id.values() if len(paths) > 1)


def overlapping_inputs(spec: CallSpec) -> list[tuple[str, str]]:
    """Pairs of distinct traced arrays whose memory overlaps (views of one another)."""
    arrays = [(spec.signature.leaves[i].path, spec.leaves[i]) for i in spec.traced_index
              if isinstance(spec.leaves[i], np.ndarray)]
    pairs = []
    for n, (p1, a1) in enumerate(arrays):
        for p2, a2 in arrays[n + 1:]:
            if a1 is not a2 and np.may_share_memory(a1, a2) and np.shares_memory(a1, a2):
                pairs.append((p1, p2))
    return pairs


def overlaps_itself(array: np.ndarray) -> bool:
    """Whether two elements of the array share memory (a zero stride along an axis longer than
    one, windows that overlap): an update of one element shows through the others, in the
    order NumPy happens to write them. Arrays made by slicing never do."""
    if array.size <= 1:
        return False
    span = array.itemsize
    for stride, length in sorted((abs(s), n) for s, n in zip(array.strides, array.shape,
                                                              strict=True) if n > 1):
        if stride < span:
            return _offsets_collide(array)
        span += stride * (length - 1)
    return False


EXACT_OVERLAP_CHECK = 1 << 22     # elements: larger arrays that may overlap are taken to


def _offsets_collide(array: np.ndarray) -> bool:
    """The exact answer when the quick one cannot tell: two elements' bytes meet."""
    if array.size > EXACT_OVERLAP_CHECK:
        return True
    offsets = np.zeros((), np.int64)
    for stride, length in zip(array.strides, array.shape, strict=True):
        offsets = np.add.outer(offsets, np.arange(length, dtype=np.int64) * stride)
    return bool((np.diff(np.sort(offsets, axis=None)) < array.itemsize).any())


# -- the fast key of a re-run -----------------------------------------------------------------

_NODES = (tuple, list, dict)
# static values whose key is the object itself (compared by identity): what a cell reads most
# often beside its arrays (np, its helper functions), checked first
_PLAIN_STATIC = frozenset({types.ModuleType, types.FunctionType, types.BuiltinFunctionType,
                           np.ufunc})


def fast_key(args, forced_static: frozenset[int] = frozenset()) -> tuple | None:
    """A key at least as fine as the signature of a call with these positional arguments
    (each one a leaf), or None when only the full `call_spec` can tell: containers, static
    arrays, unhashable values, the same array passed twice."""
    keys = []
    arrays = 0
    for i, value in enumerate(args):
        if type(value) in _PLAIN_STATIC:       # a module or a function: by identity
            keys.append((type(value), value))
            continue
        key = value_key(value) if i not in forced_static else None
        if key is None:
            if isinstance(value, (_NODES, np.ndarray, np.generic)) or (
                    value is not None and is_node(value)):     # a registered class's instance
                return None
            try:
                hash(value)
            except TypeError:
                return None
            key = exact_key(value)
        elif key[0] == "array":
            arrays += 1
        keys.append(key)
    if arrays > 1 and _repeats_an_array(args):
        return None
    return tuple(keys)


def _repeats_an_array(args) -> bool:
    ids = [id(a) for a in args if type(a) is np.ndarray]
    return len(set(ids)) != len(ids)
