"""The widgets' renderers (pure functions to DOT/SVG/HTML/text) and the RunView tabs."""
from __future__ import annotations

import linecache
import re
import shutil
from types import SimpleNamespace

import numpy as np
import pytest

from psc_jit.core import jit
from psc_jit.core.cache import CacheEvent, CacheRecord, Signature, StaticLeaf, TracedLeaf
from psc_jit.core.ir import Eqn, Graph, Literal, ShapedArray, SourceInfo, Var
from psc_jit.core.kernels import FusionModel, Kernel, SourceLine
from psc_jit.core.report import RunReport, Timings
from psc_jit.widgets import render
from psc_jit.widgets.render import DotMissing

needs_dot = pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz `dot` not installed")

CELL = "<psc_jit cell widgets-test>"
SOURCE = """\
def f(x, w):
    h = np.tanh(x @ w + 1.0)   # x < w & 1
    return h, (h ** 2).mean()
"""


def _cell_function():
    """`f` compiled under a cell's file name, so its equations point at the cell's lines."""
    linecache.cache[CELL] = (len(SOURCE), None, SOURCE.splitlines(True), CELL)
    namespace = {"np": np}
    exec(compile(SOURCE, CELL, "exec"), namespace)
    return namespace["f"]


def _args():
    return np.ones((8, 8)), np.ones(8)


@pytest.fixture(scope="module")
def traced():
    return jit(_cell_function()).trace(*_args())


@pytest.fixture(scope="module")
def compiled(traced):
    return traced.lower().compile()


@pytest.fixture(scope="module")
def report(traced, compiled):
    signature = traced.spec.signature
    return RunReport(
        name="cell widgets-test", source=SOURCE, filename=CELL, line_offset=0, compiled=True,
        cache_hit=False, miss_reason="first call", graph=traced.graph, kernels=compiled.kernels,
        stablehlo=traced.lower().as_text(), optimized_hlo=compiled.as_text(),
        stage_seconds=compiled.timings, cost=compiled.cost_analysis(),
        timings=Timings((1e-3, 1.2e-3, 0.9e-3), (1e-4, 1.1e-4, 0.9e-4), 2e-4, 0.15, 1e-16),
        inputs=("x", "w"), outputs=("h",), signature=signature.describe(),
        cache_entries=(CacheRecord("cell widgets-test", signature, compiled, hits=2),),
        cache_events=(CacheEvent("trace", "miss", "cell widgets-test", "first call"),))


def _fallback_report(reason="line 2: 'print(m)': print() is a side effect; remove it"):
    return RunReport(name="cell fallback", source="m = x.sum()\nprint(m)\n", filename=CELL,
                     line_offset=1, compiled=False, fallback_reason=reason)


# ---------------------------------------------------------------------------------------------
# DOT parsing helpers (the tests read the DOT text the way Graphviz would)
# ---------------------------------------------------------------------------------------------

_EDGE = re.compile(r"^\s*(\w+) -> (\w+)(?: \[(.*)\])?;$", re.M)


def _nodes(dot: str, pattern: str) -> list[str]:
    return re.findall(rf"^\s*({pattern}) \[", dot, re.M)


def _edges(dot: str) -> list[tuple[str, str, str]]:
    return _EDGE.findall(dot)


def _node_of(graph: Graph, prim_name: str) -> str:
    labels = graph.labels()
    return next(labels[e.id].split(":")[0] for e in graph.all_eqns() if e.prim.name == prim_name)


def _cluster_body(dot: str, cluster: str) -> str:
    """The text of `subgraph cluster {...}`, nested clusters included."""
    start = dot.index(f"subgraph {cluster} {{")
    depth, index = 0, start
    for index in range(start, len(dot)):
        depth += {"{": 1, "}": -1}.get(dot[index], 0)
        if depth == 0 and dot[index] == "}":
            break
    return dot[start:index + 1]


# ---------------------------------------------------------------------------------------------
# graph_to_dot
# ---------------------------------------------------------------------------------------------

@pytest.mark.pure
def test_graph_dot_has_a_node_per_equation_and_an_edge_per_operand(traced):
    graph = traced.graph
    dot = render.graph_to_dot(graph)
    operands = sum(isinstance(a, Var) for e in graph.eqns for a in e.inputs)
    results = sum(isinstance(a, Var) for a in graph.out_atoms)
    assert len(_nodes(dot, r"e\d+")) == len(graph.eqns)
    assert len(_nodes(dot, r"in\d+")) == 2 and len(_nodes(dot, r"out\d+")) == 2
    assert len(_edges(dot)) == operands + results


@pytest.mark.pure
def test_graph_dot_edges_follow_data_dependencies(traced):
    graph = traced.graph
    edges = [(tail, head) for tail, head, _ in _edges(render.graph_to_dot(graph))]
    tanh, multiply = _node_of(graph, "tanh"), _node_of(graph, "multiply")
    assert edges.count((tanh, multiply)) == 2          # h ** 2 reads h twice
    assert (tanh, "out0") in edges                      # h is the first result
    assert (_node_of(graph, "divide"), "out1") in edges


@pytest.mark.pure
def test_graph_dot_labels_carry_primitive_type_and_line(traced):
    dot = render.graph_to_dot(traced.graph, input_names=("x", "w"))
    tanh = _node_of(traced.graph, "tanh")
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


def _loop_graph() -> Graph:
    """x -> while_loop(body: c -> sin(c) * 0.5) -> neg -> result, built by hand."""
    f64 = ShapedArray((4,), np.float64)
    prim = SimpleNamespace
    carried, body_out, mid = Var(f64), Var(f64), Var(f64)
    body = Graph((carried,), (
        Eqn(prim(name="sin"), (carried,), {}, (mid,), SourceInfo(CELL, 3, 8)),
        Eqn(prim(name="multiply"), (mid, Literal.of(0.5)), {}, (body_out,), SourceInfo(CELL, 3, 8)),
    ), (body_out,))
    x, looped, result = Var(f64), Var(f64), Var(f64)
    return Graph((x,), (
        Eqn(prim(name="while_loop"), (x,), {"body_graph": body, "n": 10}, (looped,),
            SourceInfo(CELL, 2, 0)),
        Eqn(prim(name="neg"), (looped,), {}, (result,), SourceInfo(CELL, 4, 4)),
    ), (result,))


@pytest.mark.pure
def test_loop_equation_is_a_cluster_holding_its_body():
    dot = render.graph_to_dot(_loop_graph())
    loop = _cluster_body(dot, "cluster_e0")
    assert 'label="e0:while_loop (line 2)"' in loop
    assert len(_nodes(loop, r"e\d+")) == 3               # the loop and its two body equations
    assert len(_nodes(dot, r"e\d+")) == 4                # one node per equation, all levels
    edges = {(tail, head) for tail, head, _ in _edges(dot)}
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
def test_loop_graph_renders_to_svg():
    assert "<svg" in render.dot_to_svg(render.graph_to_dot(_loop_graph()))


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
        body = _cluster_body(dot, f"cluster_k{index}")
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
    attrs = [a for _, _, a in _edges(render.kernels_to_dot(model, graph))]
    assert f'ltail="cluster_k{tanh_kernel}", lhead="cluster_k{sum_kernel}"' in attrs


def _kernel(name, kind, labels, bytes_estimate, body=(), lines=(2,)):
    return Kernel(name=name, kind=kind, shape="f64[4]", fused_ops=("sine", "multiply"),
                  eqn_labels=labels, source_lines=tuple(SourceLine(CELL, n, 4) for n in lines),
                  operand_shapes=("f64[4]",), bytes_estimate=bytes_estimate, flops_estimate=8,
                  body=body)


def _loop_model() -> FusionModel:
    inner = _kernel("body_fusion", "loop", ("e1:sin", "e2:multiply"), 64, lines=(3,))
    loop = _kernel("while.1", "while", ("e1:sin", "e2:multiply", "e0:while_loop"), 32,
                   body=(inner,))
    return FusionModel((loop, _kernel("neg.2", "negate", ("e3:neg",), 96, lines=(4,))))


@pytest.mark.pure
def test_body_kernels_are_nested_clusters():
    dot = render.kernels_to_dot(_loop_model(), _loop_graph())
    assert len(re.findall(r"subgraph cluster_k\d+ \{", dot)) == 3
    loop = _cluster_body(dot, "cluster_k0")
    assert "subgraph cluster_k1 {" in loop                   # the body kernel sits inside
    assert len(_nodes(loop, r"k0_e\d+")) == 1                # e1, e2 are drawn once, in k1
    assert len(_nodes(_cluster_body(dot, "cluster_k1"), r"k1_e\d+")) == 2
    edges = {(tail, head) for tail, head, _ in _edges(dot)}
    assert ("k1_e1", "k1_e2") in edges                       # fused chain inside the body
    assert ("k0_e0", "k2_e3") in edges                       # the loop's result feeds neg


@pytest.mark.pure
def test_kernel_graph_without_ir_still_has_clusters():
    dot = render.kernels_to_dot(_loop_model(), None)
    assert len(re.findall(r"subgraph cluster_k\d+ \{", dot)) == 3


# ---------------------------------------------------------------------------------------------
# HTML
# ---------------------------------------------------------------------------------------------

@pytest.mark.pure
def test_fallback_report_shows_the_reason():
    reason = "line 2: 'print(m)': print() is a side effect; remove it"
    report = _fallback_report(reason)
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
    rows = re.findall(r"<div(?: title=\"[^\"]*\")? style=\"background:([^\"]+)\">(.*?)</div>", html)
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
    report = _fallback_report()
    report.kernels = _loop_model()
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
    html = render.cache_html(_fallback_report())
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
    assert "Not timed" in render.timing_html(_fallback_report())


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

@needs_dot
@pytest.mark.xla
def test_run_view_has_six_html_tabs(report):
    import ipywidgets

    from psc_jit.widgets import RunView
    view = RunView(report)
    assert view.tab.titles == ("Summary", "Graph", "Fused", "Cache", "Timing", "Text")
    for child in view.tab.children:
        assert isinstance(child, ipywidgets.HTML) and child.value.strip()
    graph_tab, fused_tab = view.tab.children[1].value, view.tab.children[2].value
    assert "<svg" in graph_tab and "<svg" in fused_tab
    bundle = view._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle
    assert bundle["text/plain"] == render.report_text(report)


@pytest.mark.xla
def test_run_view_without_dot_explains_and_keeps_other_tabs(report, monkeypatch, tmp_path):
    from psc_jit.widgets import RunView
    monkeypatch.setenv("PATH", str(tmp_path))
    tab = RunView(report).tab
    tabs = dict(zip(tab.titles, (child.value for child in tab.children), strict=True))
    for title in ("Graph", "Fused"):
        assert "apt-get install graphviz" in tabs[title] and "<svg" not in tabs[title]
    assert "Kernels by estimated cost" in tabs["Fused"]     # the table needs no Graphviz
    assert "compiled with XLA" in tabs["Summary"]
    assert "<svg" in tabs["Timing"] and "<pre" in tabs["Text"]


@pytest.mark.pure
def test_mimebundle_for_front_ends_without_widgets():
    from psc_jit.widgets import mimebundle
    report = _fallback_report()
    bundle = mimebundle(report)
    assert set(bundle) == {"text/plain", "text/html"}
    assert bundle["text/plain"] == render.report_text(report)
    for title in ("Summary", "Graph", "Fused", "Cache", "Timing", "Text"):
        assert f"{title}</h3>" in bundle["text/html"]
