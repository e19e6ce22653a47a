"""The widgets' renderers (pure functions to DOT/SVG/HTML/text) and the RunView tabs."""
from __future__ import annotations

import re
from types import SimpleNamespace

import numpy as np
import pytest
from widget_records import (CELL, attributes, cluster_body, fallback_report, loop_graph,
                            loop_model, loop_report, needs_dot, node_attributes, node_line,
                            node_of, nodes)
from widget_records import edges as dot_edges
from widget_records import kernel as make_kernel

from psc_jit.core.cache import CacheEvent, CacheRecord, Signature, StaticLeaf, TracedLeaf
from psc_jit.core.ir import Eqn, Graph, ShapedArray, Var
from psc_jit.core.kernels import FusionModel
from psc_jit.core.report import RunReport, Timings
from psc_jit.widgets import render
from psc_jit.widgets.render import DotMissing

# ---------------------------------------------------------------------------------------------
# graph_to_dot
# ---------------------------------------------------------------------------------------------

@pytest.mark.pure
def test_graph_dot_has_a_node_per_equation_and_an_edge_per_operand(traced):
    graph = traced.graph
    dot = render.graph_to_dot(graph)
    operands = sum(isinstance(a, Var) for e in graph.eqns for a in e.inputs)
    results = sum(isinstance(a, Var) for a in graph.out_atoms)
    assert len(nodes(dot, r"e\d+")) == len(graph.eqns)
    assert len(nodes(dot, r"in\d+")) == 2 and len(nodes(dot, r"out\d+")) == 2
    assert len(dot_edges(dot)) == operands + results


@pytest.mark.pure
def test_graph_dot_edges_follow_data_dependencies(traced):
    graph = traced.graph
    edges = [(tail, head) for tail, head, _ in dot_edges(render.graph_to_dot(graph))]
    tanh, multiply = node_of(graph, "tanh"), node_of(graph, "multiply")
    assert edges.count((tanh, multiply)) == 2          # h ** 2 reads h twice
    assert (tanh, "out0") in edges                      # h is the first result
    assert (node_of(graph, "divide"), "out1") in edges


@pytest.mark.pure
def test_graph_dot_labels_carry_primitive_type_and_line(traced):
    dot = render.graph_to_dot(traced.graph, input_names=("x", "w"))
    tanh = node_of(traced.graph, "tanh")
    node_line = next(line for line in dot.splitlines() if line.strip().startswith(f"{tanh} ["))
    assert 'label="tanh\\nf64[8]\\nline 2"' in node_line
    assert f"source: {CELL}:2:" in node_line              # the tooltip has the location
    assert 'label="x\\nf64[8,8]"' in dot


@pytest.mark.pure
def test_inputs_are_named_from_the_signature_when_types_match(traced):
    graph = traced.graph
    signature = "x: f64[8,8], n: (1, 2) (static), w: f64[8]"
    assert render.input_names(signature, graph) == ("x", "w")
    assert render.input_names("x: f64[8,8], w: f32[8]", graph) == ()     # types differ
    assert render.input_names("x: f64[8,8]", graph) == ()                # one is missing


@pytest.mark.pure
def test_highlighted_equations_are_filled(traced):
    labels = traced.graph.labels()
    tanh_label = next(labels[e.id] for e in traced.graph.eqns if e.prim.name == "tanh")
    dot = render.graph_to_dot(traced.graph, highlight_labels=(tanh_label,))
    filled = [line for line in dot.splitlines() if render._HIGHLIGHT_FILL in line]
    assert len(filled) == 1 and filled[0].strip().startswith(tanh_label.split(":")[0] + " [")


@pytest.mark.pure
def test_loop_equation_is_a_cluster_holding_its_body():
    dot = render.graph_to_dot(loop_graph())
    loop = cluster_body(dot, "cluster_e0")
    assert 'label="e0:while_loop (line 2)"' in loop
    assert len(nodes(loop, r"e\d+")) == 3               # the loop and its two body equations
    assert len(nodes(dot, r"e\d+")) == 4                # one node per equation, all levels
    edges = {(tail, head) for tail, head, _ in dot_edges(dot)}
    assert {("in0", "e0"), ("e0", "e3"), ("e3", "out0")} <= edges
    assert ("e1", "e2") in edges                           # inside the body: sin -> multiply
    assert ("e0", "e0_body_graph_in0") in edges            # the loop feeds its body


@needs_dot
@pytest.mark.pure
def test_dot_to_svg_renders_and_escapes_user_names(traced):
    svg = render.dot_to_svg(render.graph_to_dot(traced.graph, input_names=('x"<&', "w")))
    assert svg.startswith("<svg") and svg.rstrip().endswith("</svg>")
    assert "x&quot;&lt;&amp;" in svg or "x\"&lt;&amp;" in svg
    assert "tanh" in svg


@needs_dot
@pytest.mark.pure
def test_names_that_look_like_html_labels_or_escapes_are_drawn_as_written():
    dot = render.graph_to_dot(_fanned_out_graph(), input_names=("x", "<b>w</b>"),
                              output_names=('a\\n"b\\',))
    assert node_attributes(dot, "e0_arg1")["label"] == "<b>w</b>"   # a copy: the name alone
    assert node_attributes(dot, "out0")["label"] == 'a\\\\n"b\\\\\\nf64[3]'
    texts = re.findall(r"<text[^>]*>([^<]*)</text>", render.dot_to_svg(dot))
    assert "&lt;b&gt;w&lt;/b&gt;" in texts                  # a string, not an HTML label
    assert 'a\\n&quot;b\\' in texts                          # backslashes are not escapes


@needs_dot
@pytest.mark.pure
def test_loop_graph_renders_to_svg():
    assert "<svg" in render.dot_to_svg(render.graph_to_dot(loop_graph()))


@pytest.mark.pure
def test_dot_missing_says_how_to_install(monkeypatch, tmp_path, traced):
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(DotMissing) as error:
        render.dot_to_svg(render.graph_to_dot(traced.graph))
    message = str(error.value)
    for hint in ("apt-get install graphviz", "brew install graphviz", "conda install"):
        assert hint in message


# ---------------------------------------------------------------------------------------------
# kernels_to_dot
# ---------------------------------------------------------------------------------------------

def _kernel_index(model, name: str) -> int:
    return [k.name for k in model.all_kernels()].index(name)


@pytest.mark.xla
def test_one_cluster_per_kernel_holding_its_equations(traced, compiled):
    model, graph = compiled.kernels, traced.graph
    dot = render.kernels_to_dot(model, graph)
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
    attrs = [a for _, _, a in dot_edges(render.kernels_to_dot(model, graph))]
    assert {"ltail": f"cluster_k{tanh_kernel}", "lhead": f"cluster_k{sum_kernel}"} in attrs


@pytest.mark.pure
def test_body_kernels_are_nested_clusters():
    dot = render.kernels_to_dot(loop_model(), loop_graph())
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
    dot = render.kernels_to_dot(loop_model(), None)
    assert len(re.findall(r"subgraph cluster_k\d+ \{", dot)) == 3


# ---------------------------------------------------------------------------------------------
# HTML
# ---------------------------------------------------------------------------------------------

@pytest.mark.pure
def test_fallback_report_shows_the_reason():
    reason = "line 2: 'print(m)': print() is a side effect; remove it"
    report = fallback_report(reason)
    page = render.report_html(report)
    assert "ran as plain Python" in page
    assert "line 2: &#x27;print(m)&#x27;: print() is a side effect; remove it" in page
    assert reason in render.report_text(report)
    assert "No traced graph" in render.graph_html(report)
    assert "No fused kernels" in render.fused_html(report)


@pytest.mark.pure
def test_source_lines_are_escaped():
    report = RunReport(name="c", source="y = x < 1 & z\n", filename=CELL, line_offset=1,
                       compiled=False, fallback_reason="a <b> & c")
    source = render.source_html(report)
    assert "y = x &lt; 1 &amp; z" in source and "x < 1 &" not in source
    assert ">2</span>" in source                           # numbered after the magic line
    page = render.report_html(report)
    assert "a &lt;b&gt; &amp; c" in page and "<b> & c" not in page


@pytest.mark.xla
def test_source_lines_are_coloured_by_their_kernel(report):
    colours = render.kernel_colours(report.kernels)
    line_kernels = report.kernels.line_to_kernels()
    html = render.source_html(report)
    rows = re.findall(r'<div class="psc-line"[^>]* style="background:([^"]+)">(.*?)</div>', html)
    tanh_row = next(bg for bg, row in rows if "np.tanh" in row)
    assert tanh_row == colours[line_kernels[(CELL, 2)][0]]
    def_row = next(bg for bg, row in rows if "def f" in row)
    assert def_row == "transparent"
    for name in colours:                                     # the legend names every kernel
        assert f"{name} <span" in html


@pytest.mark.xla
def test_kernel_table_lists_every_kernel_with_cell_lines(report):
    table = render.kernel_table_html(report)
    kernels = list(report.kernels.all_kernels())
    assert table.count("<tr>") == len(kernels) + 1
    assert CELL not in table and "&lt;psc_jit" not in table  # the cell's lines show as numbers


@pytest.mark.pure
def test_kernel_table_is_sorted_by_estimated_cost():
    report = fallback_report()
    report.kernels = loop_model()
    table = render.kernel_table_html(report)
    order = [table.index(name) for name in ("neg.2", "body_fusion", "while.1")]
    assert order == sorted(order)                             # 96 B, 64 B, 32 B


@pytest.mark.pure
def test_cache_tab_lists_entries_misses_and_evictions():
    signature = Signature("s", (TracedLeaf("x", ShapedArray((50, 200), np.float64), "array"),
                                StaticLeaf("n", 3)))
    entry = SimpleNamespace(compile_seconds=0.25)
    report = RunReport(
        name="c", source="", filename=CELL, line_offset=1, compiled=True, cache_hit=False,
        miss_reason="x: f64[300,200] → f64[50,200]",
        cache_entries=(CacheRecord("c", signature, entry, hits=7),),
        cache_events=(CacheEvent("trace", "miss", "c", "first call"),
                      CacheEvent("trace", "miss", "c", "x: f64[300,200] → f64[50,200]"),
                      CacheEvent("trace", "evict", "c", "x: f64[300,200]"),
                      CacheEvent("trace", "hit", "c")))
    html = render.cache_html(report)
    assert "This run: miss: x: f64[300,200] → f64[50,200]" in html
    assert "x: f64[50,200], n: 3 (static)" in html and "<td" in html and ">7<" in html
    assert "250 ms" in html
    misses = html[html.index("Misses"):html.index("Evictions")]
    assert misses.count("<tr>") == 3 and "first call" in misses
    assert "x: f64[300,200]</td>" in html[html.index("Evictions"):]


@pytest.mark.pure
def test_cache_tab_without_events_says_so():
    html = render.cache_html(fallback_report())
    assert "No cached entries" in html and "No misses" in html and "No evictions" in html


def _timed_report(**timing_fields):
    timings = Timings((1e-3, 1.4e-3, 0.8e-3), (1e-4, 1.2e-4, 0.9e-4), 3e-4, 0.2, 2e-16,
                      **timing_fields)
    return RunReport(name="c", source="", filename=CELL, line_offset=1, compiled=True,
                     timings=timings)


@pytest.mark.pure
def test_timing_tab_compares_medians_and_rates():
    html = render.timing_html(_timed_report(flops=1e6, bytes_accessed=8e6))
    assert "1 ms, spread 800 µs – 1.4 ms over 3 runs" in html
    assert "100 µs, spread 90 µs – 120 µs over 3 runs" in html
    assert "10× faster than plain Python" in html
    assert "200 ms" in html and "300 µs" in html             # compile, first call
    assert "10 GFLOP/s" in html and "74.5 GiB/s" in html      # 1e6 / 1e-4, 8e6 / 1e-4
    chart = html[html.index("<svg"):]
    assert chart.count("<rect") == 3 and "</svg>" in chart


@pytest.mark.pure
def test_timing_tab_when_not_timed():
    assert "Not timed" in render.timing_html(fallback_report())


@pytest.mark.pure
def test_slower_compiled_run_is_called_slower():
    report = _timed_report()
    report.timings = Timings((1e-4,), (2e-4,), 1e-4, 0.1, None)
    assert "0.5× slower than plain Python" in render.report_text(report)


@pytest.mark.xla
def test_text_tab_escapes_ir_and_hlo(report):
    html = render.text_html(report)
    assert html.count("<pre") == 3
    assert "tensor&lt;8x8xf64&gt;" in html and "tensor<8x8xf64>" not in html
    assert "fusion" in html                                   # the optimized module


@pytest.mark.xla
def test_report_text_summarises_the_run(report):
    text = render.report_text(report)
    assert "compiled with XLA" in text and "cache: miss: first call" in text
    assert f"{report.n_primitives} primitives → {report.n_kernels} kernels" in text
    assert "10× faster than plain Python" in text
    assert re.search(r"stages: trace [\d.]+ [mµ]?s · lower", text)
    assert "<" not in text.replace(CELL, "")                  # plain text, no markup


# ---------------------------------------------------------------------------------------------
# The view
# ---------------------------------------------------------------------------------------------

@pytest.mark.pure
def test_mimebundle_for_front_ends_without_widgets():
    from psc_jit.widgets import mimebundle
    report = fallback_report()
    bundle = mimebundle(report)
    assert set(bundle) == {"text/plain", "text/html"}
    assert bundle["text/plain"] == render.report_text(report)
    for title in ("Summary", "Graph", "Fused", "Cache", "Timing", "Text"):
        assert f"{title}</h3>" in bundle["text/html"]


# ---------------------------------------------------------------------------------------------
# Explorer drawing: highlights, collapsing, tooltips, fan-out, zoom
# ---------------------------------------------------------------------------------------------

@pytest.mark.pure
def test_highlighted_equations_have_the_highlight_class():
    dot = render.graph_to_dot(loop_graph(), highlight_labels=("e1:sin",))
    assert node_attributes(dot, "e1")["class"] == "psc_hl"
    assert "class" not in node_attributes(dot, "e2") and "class" not in node_attributes(dot, "e0")


@pytest.mark.pure
def test_collapsed_loop_is_one_node_lit_by_its_body():
    dot = render.graph_to_dot(loop_graph(), highlight_labels=("e2:multiply",),
                              collapse_loops=True)
    assert "subgraph" not in dot
    assert nodes(dot, r"e\d+") == ["e0", "e3"]
    loop = node_line(dot, "e0")
    assert "(2 equations inside)" in loop and attributes(loop)["class"] == "psc_hl"
    assert {(t, h) for t, h, _ in dot_edges(dot)} == {("in0", "e0"), ("e0", "e3"), ("e3", "out0")}


@pytest.mark.pure
def test_tooltips_give_shape_dtype_and_the_source_line():
    source = {(CELL, 3): "    c = np.sin(c) * 0.5"}
    dot = render.graph_to_dot(loop_graph(), source_text=source)
    tooltip = node_attributes(dot, "e1")["tooltip"]
    assert tooltip.split("\\n") == ["e1:sin", "out: f64[4] (shape (4,), dtype float64)",
                                    "in: f64[4]", "line 3: c = np.sin(c) * 0.5"]
    assert "source: <psc_jit cell widgets-test>:4:4" in node_line(dot, "e3")   # no text: where


def _fanned_out_graph() -> Graph:
    """x + w + w + ...: w is read by one more equation than FAN_OUT_LIMIT."""
    f64 = ShapedArray((3,), np.float64)
    x, w = Var(f64), Var(f64)
    eqns, value = [], x
    for _ in range(render.FAN_OUT_LIMIT + 1):
        out = Var(f64)
        eqns.append(Eqn(SimpleNamespace(name="add"), (value, w), {}, (out,)))
        value = out
    return Graph((x, w), tuple(eqns), (value,))


@pytest.mark.pure
def test_an_input_read_by_many_equations_is_drawn_next_to_each_reader():
    dot = render.graph_to_dot(_fanned_out_graph(), input_names=("x", "w"))
    copies = nodes(dot, r"e\d+_arg1")
    assert len(copies) == render.FAN_OUT_LIMIT + 1
    edges = {(t, h) for t, h, _ in dot_edges(dot)}
    assert not any(tail == "in1" for tail, _ in edges)          # no long edges from w
    assert ("e0_arg1", "e0") in edges and ("in0", "e0") in edges  # x is read once: drawn once
    assert node_attributes(dot, "e2_arg1")["label"] == "w"


@pytest.mark.pure
def test_highlighted_kernels_are_outlined_and_their_equations_filled():
    dot = render.kernels_to_dot(loop_model(), loop_graph(), highlight_kernels=("neg.2",),
                                highlight_labels=("e3:neg",))
    neg = cluster_body(dot, "cluster_k2")
    neg_style = attributes(neg.splitlines()[1])                   # its `graph [...]` line
    assert neg_style["class"] == "psc_hl" and neg_style["color"] == "#d32f2f"
    assert node_attributes(dot, "k2_e3")["class"] == "psc_hl"
    assert "psc_hl" not in cluster_body(dot, "cluster_k0")


@pytest.mark.pure
def test_collapsed_kernels_are_one_node_each_linked_by_data_flow():
    dot = render.kernels_to_dot(loop_model(), loop_graph(), highlight_labels=("e1:sin",),
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
    assert render.kernel_labels(model.kernels[0]) == ("e1:sin", "e2:multiply")
    dot = render.kernels_to_dot(model, loop_graph())
    assert nodes(dot, r"k0_e\d+") == ["k0_e1", "k0_e2"]


_SVG = ('<svg width="200pt" height="100pt"\n viewBox="0.00 0.00 200.00 100.00" '
        'xmlns="http://www.w3.org/2000/svg"><g/></svg>')


@pytest.mark.pure
def test_zoom_scales_the_svg_and_fit_follows_its_box():
    assert '<svg width="300.0pt" height="150.0pt"' in render.scale_svg(_SVG, 1.5)
    fit = render.scale_svg(_SVG, None)
    assert fit.startswith('<svg width="100%" style="max-width:200pt; height:auto"')
    assert 'viewBox="0.00 0.00 200.00 100.00"' in fit
    pane = render.svg_pane(_SVG, 0.5)
    assert "overflow:auto" in pane and 'width="100.0pt"' in pane


@needs_dot
@pytest.mark.pure
def test_a_layout_that_takes_too_long_says_so():
    with pytest.raises(DotMissing, match="longer than"):
        render.dot_to_svg(render.graph_to_dot(loop_graph()) + "\n", timeout=1e-4)


# ---------------------------------------------------------------------------------------------
# Kernel table and source, highlighted
# ---------------------------------------------------------------------------------------------

@pytest.mark.pure
def test_kernel_table_sorts_by_flops_and_outlines_highlighted_rows():
    table = render.kernel_table_html(loop_report(), sort_by="flops", highlight=("neg.2",))
    order = [table.index(f"{name}</td>") for name in ("body_fusion", "while.1", "neg.2")]
    assert order == sorted(order)                   # 80 flop (64 B), 80 flop (32 B), 4 flop
    lit = re.findall(r'<tr class="psc_hl"[^>]*>(.*?)</tr>', table)
    assert len(lit) == 1 and "neg.2" in lit[0]
    assert "f64[4] ← f64[4]" in table                            # result and operand shapes


@pytest.mark.pure
def test_source_rows_carry_their_line_and_highlight():
    html = render.source_html(loop_report(), highlight_lines=(3,))
    rows = re.findall(r'<div class="(psc-line[^"]*)" data-line="(\d+)" data-kernels="([^"]*)"'
                      r'[^>]* style="([^"]*)"', html)
    assert [(line, names) for _, line, names, _ in rows] == [
        ("2", "while.1"), ("3", "body_fusion"), ("4", "neg.2")]
    classes = {line: cls for cls, line, _, _ in rows}
    styles = {line: style for _, line, _, style in rows}
    assert classes == {"2": "psc-line", "3": "psc-line psc_hl", "4": "psc-line"}
    assert "outline:2px solid #d32f2f" in styles["3"] and "opacity" in styles["2"]
    assert "opacity" not in render.source_html(loop_report())


# ---------------------------------------------------------------------------------------------
# Cache entries' sizes, and the notebook-wide overviews (%psc_cache, %psc_timings)
# ---------------------------------------------------------------------------------------------

def _signature(rows: int) -> Signature:
    return Signature("s", (TracedLeaf("x", ShapedArray((rows, 200), np.float64), "array"),))


def _entry(argument=1600, output=8, temp=0, code=0):
    stats = SimpleNamespace(argument_bytes=argument, output_bytes=output, temp_bytes=temp,
                            generated_code_bytes=code)
    return SimpleNamespace(compile_seconds=0.5, memory_stats=lambda: stats)


@pytest.mark.pure
def test_cache_entries_show_their_size():
    table = render.entries_table([CacheRecord("c", _signature(2), _entry(2048, 1024, 0, 512))])
    assert "3.5 KiB: in 2 KiB, out 1 KiB, temp 0 B, code 512 B" in table
    assert "500 ms" in table
    assert "code" not in render.entries_table([CacheRecord("c", _signature(2), _entry())])


@pytest.mark.pure
def test_cache_overview_lists_every_cell_since_the_last_clear():
    records = [CacheRecord("layer", _signature(500), _entry(), hits=3),
               CacheRecord("softmax", _signature(9), _entry())]
    events = [CacheEvent("trace", "miss", "old", "before the clear"),
              CacheEvent("trace", "clear", "*"),
              CacheEvent("trace", "miss", "layer", "x: f64[1000,200] → f64[500,200]"),
              CacheEvent("trace", "evict", "softmax", "x: f64[3,200]")]
    counts = {"entries": 2, "hits": 3, "misses": 1, "evictions": 1}
    html = render.cache_overview_html(records, events, counts)
    assert "2 entries, 3 hits, 1 misses, 1 evictions" in html
    entries = html[html.index("Entries"):html.index("Misses")]
    assert entries.count("<tr>") == 3 and "layer</td>" in entries and ">3<" in entries
    misses = html[html.index("Misses"):html.index("Evictions")]
    assert "x: f64[1000,200] → f64[500,200]" in misses and "before the clear" not in misses
    assert "softmax</td>" in html[html.index("Evictions"):]
    text = render.cache_overview_text(records, events, counts)
    assert "layer: x: f64[500,200] (3 hits)" in text and "evict softmax: x: f64[3,200]" in text


def _timed(name, signature, plain, compiled):
    return RunReport(name=name, source="", filename=CELL, line_offset=1, compiled=True,
                     signature=signature,
                     timings=Timings((plain,), (compiled,), compiled, 0.1, 0.0, flops=1e6,
                                     bytes_accessed=2e6))


@pytest.mark.pure
def test_timings_overview_compares_the_latest_timing_of_each_cell():
    reports = [_timed("chain", "a: f64[10]", 4e-3, 1e-3), _timed("norms", "a: f64[10]", 2e-3, 1e-3),
               _timed("chain", "a: f64[10]", 8e-3, 2e-3), _timed("chain", "a: f64[5]", 1e-3, 1e-3),
               fallback_report()]
    html = render.timings_overview_html(reports)
    rows = re.findall(r"<tr>(.*?)</tr>", html[html.index("<tbody>"):])
    assert [re.findall(r">([^<]*)</td>", row)[:2] for row in rows] == [
        ["chain", "a: f64[10]"], ["norms", "a: f64[10]"], ["chain", "a: f64[5]"]]
    assert "8 ms (8 ms – 8 ms)" in rows[0] and "4×" in rows[0]   # the later chain run
    assert "500 MFLOP/s" in rows[0] and "954 MiB/s" in rows[0]
    chart = html[html.index("<svg"):]
    assert chart.count("<rect") == 6                              # plain and compiled per cell
    assert "No timed" in render.timings_overview_html([fallback_report()])
    assert "chain: plain 8 ms" in render.timings_overview_text(reports)
