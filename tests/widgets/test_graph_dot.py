"""The traced IR as DOT: nodes, edges, loop clusters, highlights, tooltips, fan-out."""
from __future__ import annotations

import pytest
from psc_jit.core.ir import Var
from psc_jit.widgets.digraph import HIGHLIGHT_FILL
from psc_jit.widgets.graph_dot import FAN_OUT_LIMIT, graph_to_dot
from widget_records import (CELL, attributes, cluster_body, fanned_out_graph, loop_graph,
                            node_attributes, node_line, node_of, nodes)
from widget_records import edges as dot_edges


@pytest.mark.pure
def test_graph_dot_has_a_node_per_equation_and_an_edge_per_operand(traced):
    graph = traced.graph
    dot = graph_to_dot(graph)
    operands = sum(isinstance(a, Var) for e in graph.eqns for a in e.inputs)
    results = sum(isinstance(a, Var) for a in graph.out_atoms)
    assert len(nodes(dot, r"e\d+")) == len(graph.eqns)
    assert len(nodes(dot, r"in\d+")) == 2 and len(nodes(dot, r"out\d+")) == 2
    assert len(dot_edges(dot)) == operands + results


@pytest.mark.pure
def test_graph_dot_edges_follow_data_dependencies(traced):
    graph = traced.graph
    edges = [(tail, head) for tail, head, _ in dot_edges(graph_to_dot(graph))]
    tanh, multiply = node_of(graph, "tanh"), node_of(graph, "multiply")
    assert edges.count((tanh, multiply)) == 2          # h ** 2 reads h twice
    assert (tanh, "out0") in edges                      # h is the first result
    assert (node_of(graph, "divide"), "out1") in edges


@pytest.mark.pure
def test_graph_dot_labels_carry_primitive_type_and_line(traced):
    dot = graph_to_dot(traced.graph, input_names=("x", "w"))
    tanh = node_of(traced.graph, "tanh")
    node_line = next(line for line in dot.splitlines() if line.strip().startswith(f"{tanh} ["))
    assert 'label="tanh\\nf64[8]\\nline 2"' in node_line
    assert f"source: {CELL}:2:" in node_line              # the tooltip has the location
    assert 'label="x\\nf64[8,8]"' in dot


@pytest.mark.pure
def test_highlighted_equations_are_filled(traced):
    labels = traced.graph.labels()
    tanh_label = next(labels[e.id] for e in traced.graph.eqns if e.prim.name == "tanh")
    dot = graph_to_dot(traced.graph, highlight_labels=(tanh_label,))
    filled = [line for line in dot.splitlines() if HIGHLIGHT_FILL in line]
    assert len(filled) == 1 and filled[0].strip().startswith(tanh_label.split(":")[0] + " [")


@pytest.mark.pure
def test_loop_equation_is_a_cluster_holding_its_body():
    dot = graph_to_dot(loop_graph())
    loop = cluster_body(dot, "cluster_e0")
    assert 'label="e0:while_loop (line 2)"' in loop
    assert len(nodes(loop, r"e\d+")) == 3               # the loop and its two body equations
    assert len(nodes(dot, r"e\d+")) == 4                # one node per equation, all levels
    edges = {(tail, head) for tail, head, _ in dot_edges(dot)}
    assert {("in0", "e0"), ("e0", "e3"), ("e3", "out0")} <= edges
    assert ("e1", "e2") in edges                           # inside the body: sin -> multiply
    assert ("e0", "e0_body_graph_in0") in edges            # the loop feeds its body


@pytest.mark.pure
def test_highlighted_equations_have_the_highlight_class():
    dot = graph_to_dot(loop_graph(), highlight_labels=("e1:sin",))
    assert node_attributes(dot, "e1")["class"] == "psc_hl"
    assert "class" not in node_attributes(dot, "e2") and "class" not in node_attributes(dot, "e0")


@pytest.mark.pure
def test_collapsed_loop_is_one_node_lit_by_its_body():
    dot = graph_to_dot(loop_graph(), highlight_labels=("e2:multiply",),
                              collapse_loops=True)
    assert "subgraph" not in dot
    assert nodes(dot, r"e\d+") == ["e0", "e3"]
    loop = node_line(dot, "e0")
    assert "(2 equations inside)" in loop and attributes(loop)["class"] == "psc_hl"
    assert {(t, h) for t, h, _ in dot_edges(dot)} == {("in0", "e0"), ("e0", "e3"), ("e3", "out0")}


@pytest.mark.pure
def test_tooltips_give_shape_dtype_and_the_source_line():
    source = {(CELL, 3): "    c = np.sin(c) * 0.5"}
    dot = graph_to_dot(loop_graph(), source_text=source)
    tooltip = node_attributes(dot, "e1")["tooltip"]
    assert tooltip.split("\\n") == ["e1:sin", "out: f64[4] (shape (4,), dtype float64)",
                                    "in: f64[4]", "line 3: c = np.sin(c) * 0.5"]
    assert "source: <psc_jit cell widgets-test>:4:4" in node_line(dot, "e3")   # no text: where


@pytest.mark.pure
def test_an_input_read_by_many_equations_is_drawn_next_to_each_reader():
    dot = graph_to_dot(fanned_out_graph(), input_names=("x", "w"))
    copies = nodes(dot, r"e\d+_arg1")
    assert len(copies) == FAN_OUT_LIMIT + 1
    edges = {(t, h) for t, h, _ in dot_edges(dot)}
    assert not any(tail == "in1" for tail, _ in edges)          # no long edges from w
    assert ("e0_arg1", "e0") in edges and ("in0", "e0") in edges  # x is read once: drawn once
    assert node_attributes(dot, "e2_arg1")["label"] == "w"


@pytest.mark.pure
def test_reshape_and_broadcast_steps_can_be_left_out_with_their_data_flow_kept():
    """Issue 32: 19 of 36 primitives were reshapes and broadcasts; without them the producer
    of a step's operand feeds the step's readers."""
    from types import SimpleNamespace

    import numpy as np
    from psc_jit.core.ir import Eqn, Graph, ShapedArray

    f64 = ShapedArray((3,), np.float64)
    x, wide, out = Var(f64), Var(f64), Var(f64)
    graph = Graph((x,), (Eqn(SimpleNamespace(name="broadcast_in_dim"), (x,), {}, (wide,)),
                         Eqn(SimpleNamespace(name="sin"), (wide,), {}, (out,))), (out,))
    full = graph_to_dot(graph)
    assert nodes(full, r"e\d+") == ["e0", "e1"]
    hidden = graph_to_dot(graph, hide_steps=True)
    assert nodes(hidden, r"e\d+") == ["e1"]
    assert {(t, h) for t, h, _ in dot_edges(hidden)} == {("in0", "e1"), ("e1", "out0")}


@pytest.mark.pure
def test_equation_nodes_carry_the_classes_they_are_given():
    graph = loop_graph()
    dot = graph_to_dot(graph, node_classes={"e3:neg": "psc-eq psc-k2"})
    assert node_attributes(dot, "e3")["class"] == "psc-eq psc-k2"
