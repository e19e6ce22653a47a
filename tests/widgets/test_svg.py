"""DOT to SVG through Graphviz: escaping, a missing `dot`, a layout that takes too long, zoom."""
from __future__ import annotations

import re

import pytest
from psc_jit.widgets.graph_dot import graph_to_dot
from psc_jit.widgets.svg import DotMissing, dot_to_svg, scale_svg, svg_pane
from widget_records import fanned_out_graph, loop_graph, needs_dot, node_attributes


@needs_dot
@pytest.mark.pure
def test_dot_to_svg_renders_and_escapes_user_names(traced):
    svg = dot_to_svg(graph_to_dot(traced.graph, input_names=('x"<&', "w")))
    assert svg.startswith("<svg") and svg.rstrip().endswith("</svg>")
    assert "x&quot;&lt;&amp;" in svg or "x\"&lt;&amp;" in svg
    assert "tanh" in svg


@needs_dot
@pytest.mark.pure
def test_names_that_look_like_html_labels_or_escapes_are_drawn_as_written():
    dot = graph_to_dot(fanned_out_graph(), input_names=("x", "<b>w</b>"),
                              output_names=('a\\n"b\\',))
    assert node_attributes(dot, "e0_arg1")["label"] == "<b>w</b>"   # a copy: the name alone
    assert node_attributes(dot, "out0")["label"] == 'a\\\\n"b\\\\\\nf64[3]'
    texts = re.findall(r"<text[^>]*>([^<]*)</text>", dot_to_svg(dot))
    assert "&lt;b&gt;w&lt;/b&gt;" in texts                  # a string, not an HTML label
    assert 'a\\n&quot;b\\' in texts                          # backslashes are not escapes


@needs_dot
@pytest.mark.pure
def test_loop_graph_renders_to_svg():
    assert "<svg" in dot_to_svg(graph_to_dot(loop_graph()))


@pytest.mark.pure
def test_dot_missing_says_how_to_install(monkeypatch, tmp_path, traced):
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(DotMissing) as error:
        dot_to_svg(graph_to_dot(traced.graph))
    message = str(error.value)
    for hint in ("apt-get install graphviz", "brew install graphviz", "conda install"):
        assert hint in message


_SVG = ('<svg width="200pt" height="100pt"\n viewBox="0.00 0.00 200.00 100.00" '
        'xmlns="http://www.w3.org/2000/svg"><g/></svg>')


@pytest.mark.pure
def test_zoom_scales_the_svg_and_fit_follows_its_box():
    assert '<svg width="300.0pt" height="150.0pt"' in scale_svg(_SVG, 1.5)
    fit = scale_svg(_SVG, None)
    assert fit.startswith('<svg width="100%" style="max-width:200pt; height:auto"')
    assert 'viewBox="0.00 0.00 200.00 100.00"' in fit
    pane = svg_pane(_SVG, 0.5)
    assert "overflow:auto" in pane and 'width="100.0pt"' in pane


@needs_dot
@pytest.mark.pure
def test_a_layout_that_takes_too_long_says_so():
    with pytest.raises(DotMissing, match="longer than"):
        dot_to_svg(graph_to_dot(loop_graph()) + "\n", timeout=1e-4)


@needs_dot
@pytest.mark.pure
def test_layouts_are_cached_by_dot_text_failures_too(monkeypatch):
    """A re-run that hits shows its last layout, or its simpler view, without asking `dot`
    again (issue 32: a hit re-run with the report took 0.24-1.7 s)."""
    import psc_jit.widgets.svg as svg
    calls = []
    real = svg._pipe_svg

    def counting(dot, timeout):
        calls.append(dot)
        return real(dot, timeout)
    monkeypatch.setattr(svg, "_pipe_svg", counting)
    dot = graph_to_dot(loop_graph()) + "\n// cached layouts\n"
    first = dot_to_svg(dot)
    assert dot_to_svg(dot) == first and len(calls) == 1
    slow = dot + "// too slow\n"
    for _ in range(2):
        with pytest.raises(DotMissing, match="longer than"):
            dot_to_svg(slow, timeout=1e-4)
    assert len(calls) == 2
    assert dot_to_svg(slow, timeout=60).startswith("<svg")      # more time: laid out again
    assert len(calls) == 3


@needs_dot
@pytest.mark.pure
def test_several_drawings_are_laid_out_together_each_within_the_limit():
    from psc_jit.widgets.svg import lay_out
    drawings = lay_out({"loop": graph_to_dot(loop_graph()) + "\n// together\n",
                        "fan": graph_to_dot(fanned_out_graph()) + "\n// together\n"})
    assert all(svg.startswith("<svg") for svg in drawings.values())
    late = lay_out({"loop": graph_to_dot(loop_graph()) + "\n// limit\n"}, limit=1e-4)
    assert isinstance(late["loop"], DotMissing) and "Not laid out" in str(late["loop"])
