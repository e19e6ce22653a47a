"""Trees of containers: flatten a nested value into leaves and a hashable structure, and back.

A node is a tuple, a list, a dict or a namedtuple (its class is part of the structure); any
other value is a leaf. The structure is hashable (it is part of cache keys). `node_types`
narrows which containers count as nodes: loop carries rebuild tuples only, since lists and
dicts are mutable and the caller's own objects must stay the same objects.
"""
from __future__ import annotations

import functools
from typing import Any, Callable, Hashable, Iterator

NAMEDTUPLE = "namedtuple"                  # stands for every namedtuple class in node_types
CONTAINERS = (tuple, list, dict, NAMEDTUPLE)
LEAF = None


def _is_namedtuple(value) -> bool:
    return isinstance(value, tuple) and hasattr(type(value), "_fields")


def _node_type(value) -> type:
    """The container type a value is as a node: its type, or the one a subclass stands in
    for (`__psc_tree_type__`: the watched lists and dicts of `control.effects`)."""
    return getattr(type(value), "__psc_tree_type__", type(value))


def _is_node(value, node_types) -> bool:
    if _is_namedtuple(value):
        return NAMEDTUPLE in node_types
    return _node_type(value) in node_types


def _children(value, path: str) -> tuple[list[tuple[str, Any]], Hashable]:
    """(path, child) pairs and the node's own part of the structure."""
    if isinstance(value, dict):
        keys = tuple(value)
        paths = [f"{path}[{k!r}]" if path else str(k) for k in keys]
        return list(zip(paths, value.values(), strict=True)), ("dict", keys)
    if _is_namedtuple(value):
        return [(f"{path}.{f}", v) for f, v in zip(value._fields, value, strict=True)], \
            (NAMEDTUPLE, type(value))
    return [(f"{path}[{i}]", v) for i, v in enumerate(value)], (_node_type(value).__name__, None)


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
    if structure is LEAF:
        return next(iter(leaves))
    return _builder(structure)(iter(leaves))


@functools.lru_cache(maxsize=1024)
def _builder(structure: Hashable) -> Callable[[Iterator], Any]:
    """A function of an iterator of leaves that builds the tree (made once per structure:
    re-runs rebuild the same output tree every time)."""
    if structure is LEAF:
        return next
    (kind, aux), children_ = structure
    parts = tuple(_builder(child) for child in children_)
    if kind == "dict":
        return lambda leaves: dict(zip(aux, [part(leaves) for part in parts], strict=True))
    if kind == NAMEDTUPLE:
        return lambda leaves: aux(*[part(leaves) for part in parts])
    if kind == "list":
        return lambda leaves: [part(leaves) for part in parts]
    return lambda leaves: tuple([part(leaves) for part in parts])


def children(structure: Hashable) -> tuple[Hashable, ...]:
    """The structures of a node's children (none for a leaf)."""
    return () if structure is LEAF else structure[1]


def leaf_count(structure: Hashable) -> int:
    if structure is LEAF:
        return 1
    return sum(leaf_count(child) for child in children(structure))


def broadcast_prefix(prefix, tree, node_types=CONTAINERS, is_leaf=lambda p: p is None) -> list:
    """For each leaf of `tree`, the leaf of `prefix` above it: `prefix` has the structure of
    `tree` down to its own leaves, each of which stands for the whole subtree below it (as
    JAX's in_axes stands for the arguments). ValueError where the structures differ."""
    if is_leaf(prefix) or not _is_node(prefix, node_types):
        return [prefix] * len(flatten(tree, node_types)[0])
    if not _is_node(tree, node_types):
        raise ValueError(f"{prefix!r} is a container where the value is a leaf ({tree!r})")
    (prefix_pairs, prefix_kind), (tree_pairs, tree_kind) = (_children(prefix, ""),
                                                            _children(tree, ""))
    if isinstance(prefix, dict) and isinstance(tree, dict):
        if set(prefix) != set(tree):
            raise ValueError(f"keys {sorted(map(str, prefix))} where the value has keys "
                             f"{sorted(map(str, tree))}")
        return [p for k in tree for p in broadcast_prefix(prefix[k], tree[k], node_types,
                                                          is_leaf)]
    if prefix_kind[0] != tree_kind[0] or len(prefix_pairs) != len(tree_pairs):
        raise ValueError(f"a {type(prefix).__name__} of {len(prefix_pairs)} where the value is "
                         f"a {type(tree).__name__} of {len(tree_pairs)}")
    return [p for (_, sub_prefix), (_, sub_tree) in zip(prefix_pairs, tree_pairs, strict=True)
            for p in broadcast_prefix(sub_prefix, sub_tree, node_types, is_leaf)]
