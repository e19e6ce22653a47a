"""The kernels as DOT: a box per kernel, a loop's kernels inside its cluster, and edges where the
optimized module feeds one kernel to another (not where the traced graph does)."""
from __future__ import annotations

import re

import numpy as np
import pytest
from psc_jit import jit
from psc_jit.core import FusionModel
from psc_jit.widgets.kernel_dot import kernel_labels, kernels_to_dot
from widget_records import cluster_body, loop_graph, loop_model, node_attributes, nodes
from widget_records import edges as dot_edges
from widget_records import kernel as make_kernel


@pytest.mark.pure
def test_one_box_per_kernel_named_with_its_kind_ops_flops_and_lines():
    dot = kernels_to_dot(loop_model(), loop_graph())
    assert nodes(dot, r"k\d+") == ["k0", "k1", "k2"]
    neg = node_attributes(dot, "k2")
    assert neg["label"].startswith("neg.2 · negate\\nsine, multiply\\nf64[4] · 4 FLOP · 96 B")
    assert neg["label"].endswith("line 4") and neg["class"] == "psc-kernel psc-k2"
    assert "10 iterations" in node_attributes(dot, "k0")["label"]


@pytest.mark.pure
def test_a_loops_kernels_sit_in_its_cluster():
    dot = kernels_to_dot(loop_model(), loop_graph())
    loop = cluster_body(dot, "cluster_k0")
    assert nodes(loop, r"k\d+") == ["k0", "k1"]
    assert "k2" not in loop


@pytest.mark.pure
def test_edges_follow_the_kernels_inputs_and_the_programs_outputs():
    edges = {(tail, head) for tail, head, _ in dot_edges(kernels_to_dot(loop_model(),
                                                                        loop_graph()))}
    assert edges == {("in0", "k0"), ("k0", "k2"), ("k2", "out0")}


@pytest.mark.pure
def test_without_the_traced_graph_kernels_are_still_linked():
    edges = {(t, h) for t, h, _ in dot_edges(kernels_to_dot(loop_model(), None))}
    assert edges == {("k0", "k2")}


@pytest.mark.pure
def test_labels_xla_joined_with_semicolons_are_separate_equations():
    model = FusionModel((make_kernel("fused", "loop", ("e1:sin;e2:multiply",), 8),))
    assert kernel_labels(model.kernels[0]) == ("e1:sin", "e2:multiply")


@pytest.mark.xla
def test_a_reduction_split_over_kernels_is_drawn_as_the_chain_xla_runs():
    """Issue 32: `(y ** 2).sum(axis=1)` is several kernels in a chain; the traced graph gave
    each of them the multiply as input and the result as output (siblings)."""
    def cell(y):
        return (y ** 2).sum(axis=1)
    traced = jit(cell).trace(np.ones((300, 200)))
    compiled = traced.lower().compile()
    dot = kernels_to_dot(compiled.kernels, traced.graph)
    count = len(compiled.kernels.kernels)
    assert count >= 2
    chain = [("in0", "k0")] + [(f"k{i}", f"k{i + 1}") for i in range(count - 1)] + \
        [(f"k{count - 1}", "out0")]
    assert sorted((t, h) for t, h, _ in dot_edges(dot)) == sorted(chain)
    assert not re.search(r"lhead|ltail", dot)
