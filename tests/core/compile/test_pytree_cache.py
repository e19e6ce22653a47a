"""Pytrees through `jit`: nested containers, namedtuples and registered classes in and out,
their structure part of the cache key, and a miss it causes explained in the user's words."""
from __future__ import annotations

import dataclasses
from typing import NamedTuple

import numpy as np
import pytest
from psc_jit import jit
from psc_jit import tree_util
from psc_jit.core import TRACE_CACHE

pytestmark = pytest.mark.xla


@tree_util.register_dataclass
@dataclasses.dataclass
class Layer:
    w: np.ndarray
    b: np.ndarray
    activation: str = dataclasses.field(default="tanh", metadata={"static": True})


@dataclasses.dataclass
class OtherLayer:
    w: np.ndarray
    b: np.ndarray


tree_util.register_dataclass(OtherLayer, data_fields=["w", "b"], meta_fields=[])


class Point(NamedTuple):
    x: np.ndarray
    y: np.ndarray


def forward(params, x):
    for layer in params["layers"]:
        x = np.tanh(x @ layer.w + layer.b) if layer.activation == "tanh" else x @ layer.w
    return {"out": x, "norm": np.sum(x * x), "none": None, "pair": (x[0], [x[1]])}


def _layers(n, sizes=(3, 3)):
    rng = np.random.default_rng(0)
    return [Layer(rng.standard_normal(sizes), rng.standard_normal(sizes[1])) for _ in range(n)]


def test_pytrees_in_and_out_equal_numpy():
    params = {"layers": _layers(2), "scale": None}
    x = np.arange(6.0).reshape(2, 3) / 6
    got, want = jit(forward)(params, x), forward(params, x)
    assert tree_util.tree_structure(got) == tree_util.tree_structure(want)
    for g, w in zip(tree_util.tree_leaves(got), tree_util.tree_leaves(want), strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-12)
    assert got["none"] is None and isinstance(got["pair"][1], list)


def test_namedtuples_and_registered_classes_round_trip():
    f = jit(lambda p, layer: (Point(p.y, p.x * 2), Layer(layer.w.T, -layer.b, "linear")))
    p, layer = Point(np.ones(2), np.arange(2.0)), _layers(1)[0]
    q, out = f(p, layer)
    assert isinstance(q, Point) and isinstance(out, Layer) and out.activation == "linear"
    np.testing.assert_array_equal(q.x, p.y)
    np.testing.assert_array_equal(out.w, layer.w.T)


def test_the_same_structure_hits_and_dict_order_does_not_matter():
    f = jit(lambda params: params["a"] + params["b"])
    f({"a": np.ones(3), "b": np.ones(3)})
    f({"b": np.zeros(3), "a": np.ones(3)})
    assert f.last_call.cache_hit


def test_a_returned_dict_keeps_the_order_its_keys_were_made_in():
    def stats(x):
        return {"mean": x.mean(), "std": x.std(), "n": x.size, "inner": {"z": x, "a": 2 * x}}
    got, want = jit(stats)(np.arange(4.0)), stats(np.arange(4.0))
    assert list(got) == list(want) == ["mean", "std", "n", "inner"]
    assert list(got["inner"]) == ["z", "a"]


def _miss(fun, first, second) -> str:
    """Why a call with `second` missed, after one with `first` (a fresh cache each time)."""
    TRACE_CACHE.clear()
    f = jit(fun)
    f(first)
    f(second)
    assert not f.last_call.cache_hit
    return f.last_call.miss_reason


def test_a_leaf_whose_shape_changed_is_named_by_its_path():
    f = (lambda params: params["w"].sum())
    assert _miss(f, {"w": np.ones(3)}, {"w": np.ones(4)}) == "params['w']: f64[3] → f64[4]"


def test_keys_added_or_removed_are_named():
    f = (lambda params: sum(v.sum() for v in params.values()))
    a, ab = {"a": np.ones(2)}, {"a": np.ones(2), "b": np.ones(2)}
    assert _miss(f, a, ab) == "params: keys changed, 'b' added"
    assert _miss(f, ab, a) == "params: keys changed, 'b' removed"


def test_a_longer_list_and_another_class_are_named():
    f = (lambda layers: sum(layer.w.sum() for layer in layers))
    assert _miss(f, _layers(2), _layers(3)) == "layers: 2 → 3 items"
    g = (lambda cfg: cfg.w.sum() + cfg.b.sum())
    layer = _layers(1)[0]
    assert _miss(g, layer, OtherLayer(layer.w, layer.b)) == "cfg: Layer → OtherLayer"
    pair = (layer.w, layer.b)
    assert _miss(lambda cfg: cfg[0].sum(), pair, list(pair)) == "cfg: tuple → list"


def test_nested_paths_and_static_fields_are_named():
    f = (lambda params: params["layers"][0].w.sum())
    layers = _layers(1)
    changed = [Layer(np.ones((3, 4)), layers[0].b)]
    assert _miss(f, {"layers": layers}, {"layers": changed}) == \
        "params['layers'][0].w: f64[3,3] → f64[3,4]"
    linear = [Layer(layers[0].w, layers[0].b, "linear")]
    assert _miss(f, {"layers": layers}, {"layers": linear}) == \
        "params['layers'][0]: Layer metadata ('tanh',) → ('linear',)"
    assert _miss(f, {"layers": layers}, {"layers": layers, "x": None}) == \
        "params: keys changed, 'x' added"


def test_a_registered_object_changed_in_place_is_not_a_stale_hit():
    class Box:
        def __init__(self, value):
            self.value = value
    tree_util.register_pytree_node(Box, lambda b: ((b.value,), None), lambda _, kids: Box(*kids))
    f = jit(lambda box: box.value * 2)
    box = Box(np.ones(3))
    f(box)
    box.value = np.arange(4.0)
    np.testing.assert_array_equal(f(box), np.arange(4.0) * 2)
    assert f.last_call.miss_reason == "box[0]: f64[3] → f64[4]"     # the first child


def test_an_object_made_to_hold_arrays_comes_back_as_one_of_its_class():
    @dataclasses.dataclass
    class Result:
        value: np.ndarray
        label: str = "run"
    got = jit(lambda x: {"r": Result(x * 2)})(np.ones(2))["r"]
    assert type(got) is Result and got.label == "run"
    np.testing.assert_array_equal(got.value, [2.0, 2.0])


def test_returning_an_object_that_cannot_be_rebuilt_says_what_to_do():
    class Slotted:
        __slots__ = ("value",)

        def __init__(self, value):
            self.value = value
    with pytest.raises(TypeError, match=r"register_pytree_node\(Slotted"):
        jit(lambda x: {"r": Slotted(x * 2)})(np.ones(2))
