"""Pytrees: nested tuples, lists, dicts, None, namedtuples and registered classes, as JAX's
`jax.tree_util` has them. `jit`, `grad` and the other transformations take and return them.

    from psc_jit import tree_util
    tree_util.register_dataclass(Params)          # or @tree_util.register_dataclass
    leaves, treedef = tree_util.tree_flatten({'w': w, 'b': b})
"""
from __future__ import annotations

from .core import (PyTreeDef, register_dataclass, register_pytree_node, tree_flatten,
                   tree_leaves, tree_map, tree_structure, tree_unflatten)

__all__ = ["tree_flatten", "tree_unflatten", "tree_map", "tree_leaves", "tree_structure",
           "register_pytree_node", "register_dataclass", "PyTreeDef"]
