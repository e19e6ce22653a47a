"""The Explorer tab's drawings of a run: inputs named from the signature."""
from __future__ import annotations

import pytest
from psc_jit.widgets.graphs import input_names


@pytest.mark.pure
def test_inputs_are_named_from_the_signature_when_types_match(traced):
    graph = traced.graph
    signature = "x: f64[8,8], n: (1, 2) (static), w: f64[8]"
    assert input_names(signature, graph) == ("x", "w")
    assert input_names("x: f64[8,8], w: f32[8]", graph) == ()     # types differ
    assert input_names("x: f64[8,8]", graph) == ()                # one is missing
