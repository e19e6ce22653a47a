"""Trees of containers: flatten a nested value into leaves and a hashable structure, and back.

A node is a tuple, a list, a dict (its keys sorted, as JAX does), None (a node without
children), a namedtuple, or an instance of a class registered with `register_pytree_node` or
`register_dataclass` (its class is part of the structure); any other value is a leaf. The
structure is hashable (it is part of cache keys) and `structure_change` says in the user's
words where two structures differ. `node_types` narrows which containers count as nodes: loop
carries rebuild tuples only, since lists and dicts are mutable and the caller's own objects
must stay the same objects.

A structure is LEAF or ((kind, aux), children): kind "dict" (aux: the keys, in order),
"list", "tuple", "None", NAMEDTUPLE (aux: the class), REGISTERED (aux: (class, the class's
own aux data)), and in a result OBJECT (aux: (class, attribute names): an object the traced
code made to hold arrays) or ALIAS (a container met before: aux, its number in the order
containers were met; rebuilt as that very object).
"""
from __future__ import annotations

import dataclasses
import functools
from typing import Any, Callable, Hashable, Iterator, NamedTuple

NAMEDTUPLE = "namedtuple"                  # stands for every namedtuple class in node_types
REGISTERED = "registered"                  # stands for every registered class in node_types
CONTAINERS = (tuple, list, dict, type(None), NAMEDTUPLE, REGISTERED)
LEAF = None
ALIAS = "alias"                            # a container met before in a result (aux: its number)
OBJECT = "object"                          # an object a result holds by its attributes


class NodeRule(NamedTuple):
    """How a registered class flattens: flatten(x) -> (children, aux), unflatten(aux,
    children) -> x; `fields`: the children's names (a dataclass's), or None."""
    flatten: Callable[[Any], tuple[Any, Hashable]]
    unflatten: Callable[[Hashable, Any], Any]
    fields: tuple[str, ...] | None


_REGISTRY: dict[type, NodeRule] = {}


def register_pytree_node(nodetype: type, flatten_func: Callable, unflatten_func: Callable
                         ) -> None:
    """Make instances of `nodetype` nodes (JAX's signature): flatten_func(x) -> (children,
    aux_data), aux_data hashable (it is part of cache keys); unflatten_func(aux_data,
    children) -> x."""
    if nodetype in _REGISTRY or nodetype in (tuple, list, dict, type(None)):
        raise ValueError(f"{nodetype.__name__} is already a pytree node")
    _REGISTRY[nodetype] = NodeRule(flatten_func, unflatten_func, None)
    _builder.cache_clear()


def register_dataclass(nodetype: type, data_fields=None, meta_fields=None, drop_fields=()):
    """Make a dataclass a node (JAX's signature; usable as a decorator): its `data_fields` are
    children (traced), its `meta_fields` part of the structure (static, hashable). Without
    them, fields marked `field(metadata={'static': True})` are meta, the rest data."""
    if data_fields is None or meta_fields is None:
        if not dataclasses.is_dataclass(nodetype):
            raise TypeError(f"register_dataclass({nodetype.__name__}) needs data_fields and "
                            "meta_fields: it is not a dataclass")
        fields = [f for f in dataclasses.fields(nodetype) if f.init and f.name not in
                  drop_fields]
        meta_fields = [f.name for f in fields if f.metadata.get("static", False)] \
            if meta_fields is None else list(meta_fields)
        data_fields = [f.name for f in fields if f.name not in meta_fields] \
            if data_fields is None else list(data_fields)
    data, meta = tuple(data_fields), tuple(meta_fields)

    def flatten_fields(x):
        return [getattr(x, f) for f in data], tuple(getattr(x, f) for f in meta)

    def unflatten_fields(aux, children):
        return nodetype(**dict(zip(data, children, strict=True)),
                        **dict(zip(meta, aux, strict=True)))

    register_pytree_node(nodetype, flatten_fields, unflatten_fields)
    _REGISTRY[nodetype] = _REGISTRY[nodetype]._replace(fields=data)
    return nodetype


def _is_namedtuple(value) -> bool:
    return isinstance(value, tuple) and hasattr(type(value), "_fields")


def _node_type(value) -> type:
    """The container type a value is as a node: its type, or the one a subclass stands in
    for (`__psc_tree_type__`: the watched lists and dicts of `frontend.effects`)."""
    return getattr(type(value), "__psc_tree_type__", type(value))


def _is_node(value, node_types) -> bool:
    if _is_namedtuple(value):
        return NAMEDTUPLE in node_types
    if type(value) in _REGISTRY:
        return REGISTERED in node_types
    return _node_type(value) in node_types


def is_node(value) -> bool:
    """Whether `value` is a container (of any kind, registered classes included)."""
    return value is None or _is_node(value, CONTAINERS)


def _sorted_keys(d: dict) -> tuple:
    try:
        return tuple(sorted(d))
    except TypeError:                      # keys of types that do not compare: as given
        return tuple(d)


def child_path(path: str, kind: str, key) -> str:
    """A child's path as the user would write it: `params['w']`, `pair[0]`, `cfg.lr` (a
    top-level dict's keys are names)."""
    if kind == "dict":
        return f"{path}[{key!r}]" if path else str(key)
    if isinstance(key, str):
        return f"{path}.{key}"
    return f"{path}[{key}]"


def _children(value, path: str, keep_order: bool = False
              ) -> tuple[list[tuple[str, Any]], Hashable]:
    """(path, child) pairs and the node's own part of the structure."""
    if isinstance(value, dict):
        keys = tuple(value) if keep_order else _sorted_keys(value)
        return [(child_path(path, "dict", k), value[k]) for k in keys], ("dict", keys)
    if value is None:
        return [], ("None", None)
    if _is_namedtuple(value):
        return [(child_path(path, NAMEDTUPLE, f), v) for f, v in
                zip(value._fields, value, strict=True)], (NAMEDTUPLE, type(value))
    rule = _REGISTRY.get(type(value))
    if rule is not None:
        kids, aux = rule.flatten(value)
        kids = list(kids)
        names = rule.fields or range(len(kids))
        return [(child_path(path, REGISTERED, n), v) for n, v in zip(names, kids, strict=True)
                ], (REGISTERED, (type(value), aux))
    return [(child_path(path, "list", i), v) for i, v in enumerate(value)], \
        (_node_type(value).__name__, None)


def flatten_with_paths(tree, node_types=CONTAINERS, path: str = "", keep_order: bool = False,
                       own_order: bool = False, _seen: dict | None = None, objects=None
                       ) -> tuple[list[tuple[str, Any]], Hashable]:
    """([(path, leaf), ...], structure). Paths read as the user would write them:
    `x`, `params['w']`, `pair[0]`, `point.x` (a top-level dict's keys are names).
    keep_order: the top-level dict's keys in their own order (a call's parameters);
    own_order: a result, rebuilt as it was made: every dict's keys in their own order, and a
    container met again (`b = a` of a list) an ALIAS of the first (rebuilt as that object).
    objects(value): whether an object is an OBJECT node, flattened by its attributes and
    rebuilt, without its __init__, as an object of its class holding them (own_order only)."""
    if not _is_node(tree, node_types) and not (objects is not None and objects(tree)):
        return [(path, tree)], LEAF
    if own_order and tree is not None:
        _seen = {} if _seen is None else _seen
        found = _seen.get(id(tree))
        if found is not None:
            if found[1] is None:
                raise ValueError(f"{path or 'the result'} holds itself")
            return [], ((ALIAS, found[0]), ())
        _seen[id(tree)] = (len(_seen), None)
    leaves, structures = [], []
    if objects is not None and not _is_node(tree, node_types):
        names = tuple(vars(tree))
        pairs = [(child_path(path, OBJECT, n), vars(tree)[n]) for n in names]
        kind = (OBJECT, (type(tree), names))
    else:
        pairs, kind = _children(tree, path, keep_order or own_order)
    for child_path_, child in pairs:
        sub_leaves, sub = flatten_with_paths(child, node_types, child_path_,
                                             own_order=own_order, _seen=_seen, objects=objects)
        leaves += sub_leaves
        structures.append(sub)
    if own_order and tree is not None:
        _seen[id(tree)] = (_seen[id(tree)][0], tree)
    return leaves, (kind, tuple(structures))


def flatten(tree, node_types=CONTAINERS) -> tuple[list, Hashable]:
    """(leaves, structure)."""
    pairs, structure = flatten_with_paths(tree, node_types)
    return [leaf for _, leaf in pairs], structure


def unflatten(structure: Hashable, leaves) -> Any:
    """The tree of this structure with these leaves, in order."""
    if structure is LEAF:
        return next(iter(leaves))
    return _rebuilder(structure)(iter(leaves))


@functools.lru_cache(maxsize=1024)
def _rebuilder(structure: Hashable) -> Callable[[Iterator], Any]:
    """The builder of a whole tree, found once per structure (every run rebuilds its result
    through here): `_builder`, or with ALIAS nodes one that shares the containers it made."""
    if not _has_alias(structure):
        return _builder(structure)
    shared = _shared_builder(structure)
    return lambda leaves: shared(leaves, [])


def _has_alias(structure: Hashable) -> bool:
    return structure is not LEAF and (structure[0][0] == ALIAS or any(
        _has_alias(child) for child in structure[1]))


@functools.lru_cache(maxsize=256)
def _shared_builder(structure: Hashable) -> Callable[[Iterator, list], Any]:
    """`_builder` for a structure with ALIAS nodes: `built` holds the containers made so far
    in the order flatten met them (None, a node without children, is not counted)."""
    if structure is LEAF:
        return lambda leaves, built: next(leaves)
    (kind, aux), children_ = structure
    if kind == ALIAS:
        return lambda leaves, built: built[aux]
    if kind == "None":
        return lambda leaves, built: None
    make = _builder(((kind, aux), tuple(LEAF for _ in children_)))
    parts = tuple(_shared_builder(child) for child in children_)

    def build(leaves, built):
        slot = len(built)
        built.append(None)
        built[slot] = make(iter([part(leaves, built) for part in parts]))
        return built[slot]
    return build


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
    if kind == "None":
        return lambda leaves: None
    if kind == NAMEDTUPLE:
        return lambda leaves: aux(*[part(leaves) for part in parts])
    if kind == REGISTERED:
        cls, data = aux
        rebuild = _REGISTRY[cls].unflatten
        return lambda leaves: rebuild(data, [part(leaves) for part in parts])
    if kind == OBJECT:
        cls, names = aux

        def make_object(leaves):
            made = cls.__new__(cls)
            vars(made).update(zip(names, [part(leaves) for part in parts], strict=True))
            return made
        return make_object
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


def node_name(structure: Hashable) -> str:
    """What the user calls this node: `dict`, `list`, `None`, `Config`, or `leaf`."""
    if structure is LEAF:
        return "leaf"
    kind, aux = structure[0]
    if kind == NAMEDTUPLE:
        return aux.__name__
    if kind == REGISTERED:
        return aux[0].__name__
    return kind


def _child_keys(structure: Hashable) -> list:
    (kind, aux), kids = structure
    if kind == "dict":
        return list(aux)
    if kind == NAMEDTUPLE:
        return list(aux._fields)
    if kind == REGISTERED:
        return list(_REGISTRY[aux[0]].fields or range(len(kids)))
    return list(range(len(kids)))


def structure_change(old: Hashable, new: Hashable, path: str = "") -> str | None:
    """Where two structures first differ, in the user's words (`params: keys changed, 'b'
    added`, `layers: 2 → 3 items`, `cfg: Config → OtherConfig`); None where they are equal."""
    if old == new:
        return None
    where = path or "the arguments"
    if old is LEAF or new is LEAF or node_name(old) != node_name(new):
        return f"{where}: {node_name(old)} → {node_name(new)}"
    (kind, old_aux), (_, new_aux) = old[0], new[0]
    if kind == "dict" and set(old_aux) != set(new_aux):
        added = [f"{k!r} added" for k in new_aux if k not in old_aux]
        removed = [f"{k!r} removed" for k in old_aux if k not in new_aux]
        return f"{where}: keys changed, {', '.join(added + removed)}"
    if len(old[1]) != len(new[1]):
        return f"{where}: {len(old[1])} → {len(new[1])} items"
    if kind == REGISTERED and old_aux[1] != new_aux[1]:
        return f"{where}: {node_name(old)} metadata {old_aux[1]!r} → {new_aux[1]!r}"
    for key, a, b in zip(_child_keys(new), old[1], new[1], strict=True):
        change = structure_change(a, b, child_path(path, kind, key))
        if change:
            return change
    return f"{where}: key order changed"


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
        return [p for k in _sorted_keys(tree) for p in broadcast_prefix(prefix[k], tree[k],
                                                                        node_types, is_leaf)]
    if prefix_kind[0] != tree_kind[0] or len(prefix_pairs) != len(tree_pairs):
        raise ValueError(f"a {type(prefix).__name__} of {len(prefix_pairs)} where the value is "
                         f"a {type(tree).__name__} of {len(tree_pairs)}")
    return [p for (_, sub_prefix), (_, sub_tree) in zip(prefix_pairs, tree_pairs, strict=True)
            for p in broadcast_prefix(sub_prefix, sub_tree, node_types, is_leaf)]


def registration_advice(value) -> str:
    """What to write so that an object of this class is a node, not a leaf."""
    cls = type(value).__name__
    first = f"psc_jit.tree_util.register_dataclass({cls})" if dataclasses.is_dataclass(value) \
        else f"psc_jit.tree_util.register_dataclass({cls}, data_fields=[...], meta_fields=[...])"
    return (f"a {cls} is not a pytree node: register its class with {first}, or with "
            f"psc_jit.tree_util.register_pytree_node({cls}, flatten, unflatten)")


# -- the public API (psc_jit.tree_util) --------------------------------------------------------

class PyTreeDef(NamedTuple):
    """A structure as `tree_structure` returns it (JAX's name)."""
    structure: Hashable

    @property
    def num_leaves(self) -> int:
        return leaf_count(self.structure)


def tree_flatten(tree, is_leaf: Callable[[Any], bool] | None = None):
    """(leaves, treedef)."""
    if is_leaf is not None:
        return _flatten_until(tree, is_leaf)
    leaves, structure = flatten(tree)
    return leaves, PyTreeDef(structure)


def _flatten_until(tree, is_leaf):
    if is_leaf(tree) or not _is_node(tree, CONTAINERS):
        return [tree], PyTreeDef(LEAF)
    pairs, kind = _children(tree, "")
    leaves, structures = [], []
    for _, child in pairs:
        sub_leaves, sub = _flatten_until(child, is_leaf)
        leaves += sub_leaves
        structures.append(sub.structure)
    return leaves, PyTreeDef((kind, tuple(structures)))


def tree_unflatten(treedef, leaves):
    structure = treedef.structure if isinstance(treedef, PyTreeDef) else treedef
    return unflatten(structure, leaves)


def tree_leaves(tree, is_leaf=None) -> list:
    return tree_flatten(tree, is_leaf)[0]


def tree_structure(tree, is_leaf=None) -> PyTreeDef:
    return tree_flatten(tree, is_leaf)[1]


def tree_map(f: Callable, tree, *rest, is_leaf=None):
    """f applied to the leaves of `tree` and the leaves at the same places of `rest` (trees
    of tree's structure)."""
    leaves, treedef = tree_flatten(tree, is_leaf)
    others = []
    for other in rest:
        other_leaves, other_def = tree_flatten(other, is_leaf)
        if other_def != treedef:
            change = structure_change(treedef.structure, other_def.structure)
            raise ValueError(f"tree_map: the trees differ in structure ({change})")
        others.append(other_leaves)
    return unflatten(treedef.structure, [f(*xs) for xs in zip(leaves, *others, strict=True)])
