"""The fused kernels as DOT: a cluster per kernel, nesting, data-flow edges, highlights and
collapsing."""
from __future__ import annotations

import re

import pytest
from psc_jit.core import FusionModel
from psc_jit.widgets.kernel_dot import kernel_labels, kernels_to_dot
from widget_records import (attributes, cluster_body, loop_graph, loop_model, node_attributes,
                            node_line, nodes)
from widget_records import edges as dot_edges
from widget_records import kernel as make_kernel


def _kernel_index(model, name: str) -> int:
    return [k.name for k in model.all_kernels()].index(name)


@pytest.mark.xla
def test_one_cluster_per_kernel_holding_its_equations(traced, compiled):
    model, graph = compiled.kernels, traced.graph
    dot = kernels_to_dot(model, graph)
    kernels = list(model.all_kernels())
    assert len(re.findall(r"subgraph cluster_k\d+ \{", dot)) == len(kernels)
    for index, kernel in enumerate(kernels):
        body = cluster_body(dot, f"cluster_k{index}")
        assert f"{kernel.name} · {kernel.kind}" in body
        for label in kernel.eqn_labels:
            assert f'label="{label}\\n' in body


@pytest.mark.xla
def test_kernel_graph_links_kernels_by_data_flow(traced, compiled):
    model, graph = compiled.kernels, traced.graph
    labels = {e.prim.name: label for e, label in
              zip(graph.all_eqns(), graph.labels().values(), strict=True)}
    owners = model.eqn_to_kernels()
    tanh_kernel = _kernel_index(model, owners[labels["tanh"]][0])
    sum_kernel = _kernel_index(model, owners[labels["reduce_sum"]][0])
    assert tanh_kernel != sum_kernel                         # XLA fuses them apart here
    attrs = [a for _, _, a in dot_edges(kernels_to_dot(model, graph))]
    assert {"ltail": f"cluster_k{tanh_kernel}", "lhead": f"cluster_k{sum_kernel}"} in attrs


@pytest.mark.pure
def test_body_kernels_are_nested_clusters():
    dot = kernels_to_dot(loop_model(), loop_graph())
    assert len(re.findall(r"subgraph cluster_k\d+ \{", dot)) == 3
    loop = cluster_body(dot, "cluster_k0")
    assert "subgraph cluster_k1 {" in loop                   # the body kernel sits inside
    assert len(nodes(loop, r"k0_e\d+")) == 1                # e1, e2 are drawn once, in k1
    assert len(nodes(cluster_body(dot, "cluster_k1"), r"k1_e\d+")) == 2
    edges = {(tail, head) for tail, head, _ in dot_edges(dot)}
    assert ("k1_e1", "k1_e2") in edges                       # fused chain inside the body
    assert ("k0_e0", "k2_e3") in edges                       # the loop's result feeds neg


@pytest.mark.pure
def test_kernel_graph_without_ir_still_has_clusters():
    dot = kernels_to_dot(loop_model(), None)
    assert len(re.findall(r"subgraph cluster_k\d+ \{", dot)) == 3


@pytest.mark.pure
def test_highlighted_kernels_are_outlined_and_their_equations_filled():
    dot = kernels_to_dot(loop_model(), loop_graph(), highlight_kernels=("neg.2",),
                                highlight_labels=("e3:neg",))
    neg = cluster_body(dot, "cluster_k2")
    neg_style = attributes(neg.splitlines()[1])                   # its `graph [...]` line
    assert neg_style["class"] == "psc_hl" and neg_style["color"] == "#d32f2f"
    assert node_attributes(dot, "k2_e3")["class"] == "psc_hl"
    assert "psc_hl" not in cluster_body(dot, "cluster_k0")


@pytest.mark.pure
def test_collapsed_kernels_are_one_node_each_linked_by_data_flow():
    dot = kernels_to_dot(loop_model(), loop_graph(), highlight_labels=("e1:sin",),
                                collapse=True)
    assert "subgraph" not in dot
    assert nodes(dot, r"k\d+") == ["k0", "k1"]                   # the loop holds its body
    assert "(3 IR equations inside)" in node_line(dot, "k0")
    assert node_attributes(dot, "k0")["class"] == "psc_hl"       # e1 is inside it
    edges = {(t, h) for t, h, _ in dot_edges(dot)}
    assert edges == {("in0", "k0"), ("k0", "k1"), ("k1", "out0")}


@pytest.mark.pure
def test_labels_xla_joined_with_semicolons_are_separate_equations():
    model = FusionModel((make_kernel("fused", "loop", ("e1:sin;e2:multiply",), 8),))
    assert kernel_labels(model.kernels[0]) == ("e1:sin", "e2:multiply")
    dot = kernels_to_dot(model, loop_graph())
    assert nodes(dot, r"k0_e\d+") == ["k0_e1", "k0_e2"]
