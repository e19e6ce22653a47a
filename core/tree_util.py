"""Trees of containers: flatten a nested value into leaves and a hashable structure, and back.

A node is a tuple, a list, a dict or a namedtuple (its class is part of the structure); any
other value is a leaf. The structure is hashable (it is part of cache keys). `node_types`
narrows which containers count as nodes: loop carries rebuild tuples only, since lists and
dicts are mutable and the caller's own objects must stay the same objects.
"""
from __future__ import annotations

from typing import Any, Hashable

NAMEDTUPLE = "namedtuple"                  # stands for every namedtuple class in node_types
CONTAINERS = (tuple, list, dict, NAMEDTUPLE)
LEAF = None


def _is_namedtuple(value) -> bool:
    return isinstance(value, tuple) and hasattr(type(value), "_fields")


def _is_node(value, node_types) -> bool:
    if _is_namedtuple(value):
        return NAMEDTUPLE in node_types
    return type(value) in node_types


def _children(value, path: str) -> tuple[list[tuple[str, Any]], Hashable]:
    """(path, child) pairs and the node's own part of the structure."""
    if isinstance(value, dict):
        keys = tuple(value)
        paths = [f"{path}[{k!r}]" if path else str(k) for k in keys]
        return list(zip(paths, value.values(), strict=True)), ("dict", keys)
    if _is_namedtuple(value):
        return [(f"{path}.{f}", v) for f, v in zip(value._fields, value, strict=True)], \
            (NAMEDTUPLE, type(value))
    return [(f"{path}[{i}]", v) for i, v in enumerate(value)], (type(value).__name__, None)


def flatten_with_paths(tree, node_types=CONTAINERS, path: str = ""
                       ) -> tuple[list[tuple[str, Any]], Hashable]:
    """([(path, leaf), ...], structure). Paths read as the user would write them:
    `x`, `params['w']`, `pair[0]`, `point.x` (a top-level dict's keys are names)."""
    if not _is_node(tree, node_types):
        return [(path, tree)], LEAF
    leaves, structures = [], []
    pairs, kind = _children(tree, path)
    for child_path, child in pairs:
        sub_leaves, sub = flatten_with_paths(child, node_types, child_path)
        leaves += sub_leaves
        structures.append(sub)
    return leaves, (kind, tuple(structures))


def flatten(tree, node_types=CONTAINERS) -> tuple[list, Hashable]:
    """(leaves, structure)."""
    pairs, structure = flatten_with_paths(tree, node_types)
    return [leaf for _, leaf in pairs], structure


def unflatten(structure: Hashable, leaves) -> Any:
    """The tree of this structure with these leaves, in order."""
    return _build(structure, iter(leaves))


def _build(node: Hashable, leaves) -> Any:
    # A module-level function, not a closure over itself: a self-referencing closure is a
    # reference cycle that would keep the leaves (a call's result arrays) alive until the
    # garbage collector runs.
    if node is LEAF:
        return next(leaves)
    (kind, aux), children = node
    items = [_build(child, leaves) for child in children]
    if kind == "dict":
        return dict(zip(aux, items, strict=True))
    if kind == NAMEDTUPLE:
        return aux(*items)
    return items if kind == "list" else tuple(items)


def children(structure: Hashable) -> tuple[Hashable, ...]:
    """The structures of a node's children (none for a leaf)."""
    return () if structure is LEAF else structure[1]


def leaf_count(structure: Hashable) -> int:
    if structure is LEAF:
        return 1
    return sum(leaf_count(child) for child in children(structure))
