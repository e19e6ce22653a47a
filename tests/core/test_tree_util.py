"""psc_jit.tree_util as jax.tree_util has it: which values are nodes, the order of leaves
(dict keys sorted), round trips, tree_map over several trees, registration."""
from __future__ import annotations

import dataclasses
from collections import namedtuple

import numpy as np
import pytest
from psc_jit import tree_util

pytestmark = pytest.mark.pure

Point = namedtuple("Point", "x y")


@tree_util.register_dataclass
@dataclasses.dataclass
class Config:
    lr: float
    steps: int = dataclasses.field(default=10, metadata={"static": True})


def test_leaves_in_jax_order_and_round_trip():
    tree = {"b": [1, None, (2, Point(3, 4))], "a": Config(0.5), "c": None}
    leaves, treedef = tree_util.tree_flatten(tree)
    assert leaves == [0.5, 1, 2, 3, 4]                       # 'a' before 'b'; None no leaf
    assert treedef.num_leaves == 5
    back = tree_util.tree_unflatten(treedef, leaves)
    assert back == tree and isinstance(back["b"][2][1], Point) and back["a"].steps == 10
    assert tree_util.tree_leaves(np.ones(2))[0] is not None  # an array is a leaf


def test_structure_compares_by_shape_of_the_tree():
    s = tree_util.tree_structure
    assert s({"a": 1, "b": 2}) == s({"b": 5, "a": 6})
    assert s([1, 2]) != s((1, 2)) and s(Config(1.0)) != s(Config(1.0, steps=3))
    assert hash(s({"a": [1, None]})) == hash(s({"a": [3, None]}))


def test_tree_map_over_several_trees_and_is_leaf():
    got = tree_util.tree_map(lambda a, b: a + b, {"x": 1, "y": (2, 3)}, {"x": 10, "y": (20, 30)})
    assert got == {"x": 11, "y": (22, 33)}
    with pytest.raises(ValueError, match=r"y: 2 → 3 items"):
        tree_util.tree_map(lambda a, b: a, {"x": 1, "y": (2, 3)}, {"x": 1, "y": (2, 3, 4)})
    pairs = tree_util.tree_leaves([(1, 2), (3, 4)], is_leaf=lambda t: isinstance(t, tuple))
    assert pairs == [(1, 2), (3, 4)]


def test_register_pytree_node_with_aux_data():
    class Labelled:
        def __init__(self, value, label):
            self.value, self.label = value, label
    tree_util.register_pytree_node(Labelled, lambda n: ((n.value,), n.label),
                                   lambda label, kids: Labelled(kids[0], label))
    doubled = tree_util.tree_map(lambda v: v * 2, Labelled(3, "three"))
    assert (doubled.value, doubled.label) == (6, "three")
    with pytest.raises(ValueError, match="already a pytree node"):
        tree_util.register_pytree_node(Labelled, None, None)


def test_register_dataclass_needs_fields_for_a_plain_class():
    class Plain:
        pass
    with pytest.raises(TypeError, match="needs data_fields and meta_fields"):
        tree_util.register_dataclass(Plain)


def test_a_result_keeps_shared_containers_and_objects_it_made():
    from types import SimpleNamespace

    from psc_jit.core.tree_util import flatten_with_paths, unflatten
    inner = [1.0, 2.0]
    holder = SimpleNamespace(values=inner, label="run")
    result = {"a": inner, "b": inner, "h": holder, "t": (holder, inner)}
    pairs, structure = flatten_with_paths(result, own_order=True,
                                          objects=lambda v: isinstance(v, SimpleNamespace))
    assert [p for p, _ in pairs] == ["a[0]", "a[1]", "h.label"]
    rebuilt = unflatten(structure, [leaf for _, leaf in pairs])
    assert rebuilt["a"] is rebuilt["b"] is rebuilt["h"].values is rebuilt["t"][1]
    assert rebuilt["t"][0] is rebuilt["h"] and type(rebuilt["h"]) is SimpleNamespace
    assert rebuilt == result and rebuilt["a"] is not inner
    cycle = [1.0]
    cycle.append(cycle)
    with pytest.raises(ValueError, match="holds itself"):
        flatten_with_paths(cycle, own_order=True)
