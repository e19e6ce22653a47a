"""Pure renderers: core records (Graph, FusionModel, RunReport) to DOT, SVG, HTML and text.

No widgets here: `view.py` only places these strings in stock ipywidgets, and a
RunReport's `_repr_html_` can use `report_html` where no widget front end is present.
Every user string (source lines, names, reasons, file names) goes through `html.escape`
on its way into HTML, and through `_dot_text` (then graphviz's quoting) on its way into DOT.
"""
from __future__ import annotations

import dataclasses
import functools
import html
import itertools
import math
import re
import shutil
import subprocess
import time
from collections import Counter
from typing import Any, Iterable, Iterator

import graphviz
from graphviz.backend import dot_command, execute

from psc_jit.core.ir import Graph, Literal, Var

__all__ = [
    "DotMissing", "graph_to_dot", "kernels_to_dot", "dot_to_svg", "summary_html",
    "graph_html", "fused_html", "cache_html", "timing_html", "text_html", "source_html",
    "kernel_table_html", "report_sections", "report_html", "sections_html", "report_text",
    "input_names", "kernel_colours", "kernel_labels", "scale_svg", "svg_pane", "cell_lines",
    "ir_dot", "fused_dot", "TAB_TITLES",
]

_esc = html.escape

# ---------------------------------------------------------------------------------------------
# Numbers in the user's units
# ---------------------------------------------------------------------------------------------


def fmt_seconds(seconds: float) -> str:
    """`1.23 ms`, `45.6 µs`: three significant digits in the largest unit below the value."""
    for scale, unit in ((1.0, "s"), (1e-3, "ms"), (1e-6, "µs")):
        if abs(seconds) >= scale:
            return f"{seconds / scale:.3g} {unit}"
    return f"{seconds / 1e-9:.3g} ns"


def _fmt_scaled(value: float, prefixes: tuple[str, ...], step: float) -> tuple[float, str]:
    for prefix in prefixes[:-1]:
        if abs(value) < step:
            return value, prefix
        value /= step
    return value, prefixes[-1]


def fmt_bytes(count: float) -> str:
    value, unit = _fmt_scaled(count, ("B", "KiB", "MiB", "GiB", "TiB"), 1024.0)
    return f"{value:.3g} {unit}"


def fmt_count(count: float, unit: str = "") -> str:
    """`16 flop`, `1.5 Gflop`, `2.5 k`."""
    value, prefix = _fmt_scaled(count, ("", "k", "M", "G", "T", "P"), 1000.0)
    return f"{value:.3g} {prefix}{unit}".strip()


def fmt_speedup(speedup: float) -> str:
    if speedup == float("inf"):
        return "∞× (compiled run too fast to time)"
    verdict = "faster" if speedup >= 1 else "slower"
    return f"{speedup:.3g}× {verdict} than plain Python"


# ---------------------------------------------------------------------------------------------
# DOT helpers
# ---------------------------------------------------------------------------------------------

_GRAPH_ATTRS = {"rankdir": "TB", "fontname": "Helvetica", "fontsize": "11", "compound": "true",
                "nodesep": "0.25", "ranksep": "0.3"}
_NODE_ATTRS = {"shape": "box", "style": "rounded,filled", "fillcolor": "#ffffff",
               "fontname": "Helvetica", "fontsize": "10", "margin": "0.08,0.03"}
_EDGE_ATTRS = {"arrowsize": "0.6", "color": "#555555"}
_INPUT_FILL = "#e3f2fd"
_OUTPUT_FILL = "#e8f5e9"
HIGHLIGHT_FILL = _HIGHLIGHT_FILL = "#ffd54f"
# Pastel colours, one per kernel (cycled); the Fused graph and the source view share them.
PALETTE = (
    "#a6cee3", "#b2df8a", "#fb9a99", "#fdbf6f", "#cab2d6", "#ffff99",
    "#8dd3c7", "#bebada", "#fb8072", "#80b1d3", "#fdb462", "#fccde5",
)

# An edge waiting to be added once every node is placed: (tail, head, attributes).
Edge = tuple[str, str, dict[str, Any]]


def _dot_text(value: Any) -> str:
    """`value` as the text of a DOT string, for graphviz to quote: a backslash stays a
    backslash, a newline is a centred line break, and `<...>` is never an HTML label
    (graphviz escapes the double quotes)."""
    text = str(value).replace("\\", "\\\\").replace("\n", "\\n")
    return graphviz.nohtml(text)


def _attrs(attrs: dict[str, Any]) -> dict[str, str]:
    """The attributes that are set (not None), as DOT text."""
    return {key: _dot_text(value) for key, value in attrs.items() if value is not None}


def _digraph(name: str) -> graphviz.Digraph:
    """An empty graph with the house defaults for the graph, its nodes and its edges."""
    return graphviz.Digraph(name, graph_attr=_GRAPH_ATTRS, node_attr=_NODE_ATTRS,
                            edge_attr=_EDGE_ATTRS)


def _cluster(cluster_id: str, label: str, **attrs: Any) -> graphviz.Digraph:
    """An empty cluster; its parent takes it (`parent.subgraph(cluster)`) once it is filled."""
    return graphviz.Digraph(cluster_id, graph_attr=_attrs({"label": label, **attrs}))


def _add_node(dot: graphviz.Digraph, node_id: str, **attrs: Any) -> None:
    dot.node(node_id, **_attrs(attrs))


def _add_edges(dot: graphviz.Digraph, edges: Iterable[Edge]) -> None:
    for tail, head, attrs in edges:
        dot.edge(tail, head, **_attrs(attrs))


def _node_id(label: str) -> str:
    """`e12:mul` -> `e12` (a DOT identifier)."""
    return re.sub(r"\W", "_", label.split(":", 1)[0])


def _avals_text(atoms: Iterable[Any]) -> str:
    return ", ".join(str(atom.aval) for atom in atoms)


def _literal_text(literal: Literal) -> str:
    if literal.value.ndim == 0:
        return repr(literal.value.item())
    return f"const {literal.aval}"


def _line_text(eqn) -> str:
    return f"line {eqn.source.line}" if eqn.source is not None else ""


def _aval_words(aval) -> str:
    """`f64[300,200] (shape (300, 200), dtype float64)`."""
    return f"{aval} (shape {tuple(aval.shape)}, dtype {aval.dtype})"


def _eqn_tooltip(eqn, label: str, source_text: dict | None = None) -> str:
    """Hover text of an equation's node: label, result and operand types, source line."""
    rows = [label] + [f"out: {_aval_words(out.aval)}" for out in eqn.outs]
    rows.append(f"in: {_avals_text(eqn.inputs)}")
    if eqn.source is not None:
        code = (source_text or {}).get((eqn.source.file, eqn.source.line))
        rows.append(f"line {eqn.source.line}: {code.strip()}" if code is not None
                    else f"source: {eqn.source}")
    return "\n".join(rows)


def _eqn_node_label(eqn) -> str:
    literals = [_literal_text(a) for a in eqn.inputs if isinstance(a, Literal)]
    rows = [eqn.prim.name, _avals_text(eqn.outs)]
    rows += [f"with {', '.join(literals)}"] if literals else []
    rows += [_line_text(eqn)] if eqn.source is not None else []
    return "\n".join(rows)


def _named_subgraphs(eqn) -> list[tuple[str, Graph]]:
    """(param name, graph) of each sub-graph an equation holds: `body`, `branches[1]`."""
    found = []
    for key, value in eqn.params.items():
        if isinstance(value, Graph):
            found.append((key, value))
        elif isinstance(value, tuple):
            found += [(f"{key}[{i}]", v) for i, v in enumerate(value) if isinstance(v, Graph)]
    return found


# ---------------------------------------------------------------------------------------------
# The traced IR as DOT
# ---------------------------------------------------------------------------------------------

# An input read by more equations than this is drawn once more next to each reader: edges
# from the top of a long graph to every reader make Graphviz's layout take minutes.
FAN_OUT_LIMIT = 4
_HL_CLASS = "psc_hl"          # the SVG class of highlighted nodes and clusters


@dataclasses.dataclass
class _DotContext:
    labels: dict[int, str]            # eqn id -> `e12:mul`
    highlight: frozenset[str]
    env: dict[int, str]               # var id -> id of the node that produced it
    edges: list[Edge]
    collapse_loops: bool = False
    source_text: dict | None = None   # (file, line) -> the line's code, for tooltips
    copies: dict[int, str] = dataclasses.field(default_factory=dict)  # var id -> input name
    extra: list[tuple[str, dict]] = dataclasses.field(default_factory=list)
    # (node id, attributes) of the per-use input copies, drawn at the top level


def graph_to_dot(graph: Graph, highlight_labels: Iterable[str] = (),
                 input_names: Iterable[str] = (), output_names: Iterable[str] = (),
                 collapse_loops: bool = False, source_text: dict | None = None) -> str:
    """One node per equation (primitive, out type, line), input and output nodes, an edge per
    operand; an equation holding sub-graphs (loop, cond) is a cluster drawing them, or one
    node when `collapse_loops`. Highlighted equations are filled and have class `psc_hl`."""
    ctx = _DotContext(graph.labels(), frozenset(highlight_labels), {}, [], collapse_loops,
                      source_text)
    dot = _digraph("ir")
    names = _io_names("in", graph.in_vars, tuple(input_names))
    _add_io_nodes(dot, "in", graph.in_vars, names, _INPUT_FILL)
    ctx.env.update({v.id: f"in{i}" for i, v in enumerate(graph.in_vars)})
    ctx.copies.update(_fanned_out_inputs(graph, names))
    _add_graph_eqns(dot, graph, ctx)
    for node_id, attrs in ctx.extra:
        _add_node(dot, node_id, **attrs)
    _add_io_nodes(dot, "out", graph.out_atoms, tuple(output_names), _OUTPUT_FILL)
    ctx.edges += _out_edges(graph.out_atoms, "out", ctx.env)
    _add_edges(dot, ctx.edges)
    return dot.source


def _io_names(prefix: str, atoms, names: tuple[str, ...], shown: str | None = None
              ) -> tuple[str, ...]:
    if len(names) != len(atoms):
        return tuple(f"{shown or prefix} {i}" for i in range(len(atoms)))
    return names


def _add_io_nodes(dot: graphviz.Digraph, prefix: str, atoms, names: tuple[str, ...], fill: str,
                  shown: str | None = None) -> None:
    """Nodes `{prefix}0`, ... named by `names`, or else `{shown or prefix} 0`, ..."""
    names = _io_names(prefix, atoms, names, shown)
    for i, (name, atom) in enumerate(zip(names, atoms, strict=True)):
        _add_node(dot, f"{prefix}{i}", label=f"{name}\n{atom.aval}", shape="ellipse",
                  fillcolor=fill, tooltip=f"{name}: {_aval_words(atom.aval)}")


def _fanned_out_inputs(graph: Graph, names: tuple[str, ...]) -> dict[int, str]:
    """Inputs read by more than FAN_OUT_LIMIT equations (at any depth): var id -> name."""
    readers = Counter(a.id for eqn in graph.all_eqns() for a in set(eqn.inputs)
                      if isinstance(a, Var))
    return {v.id: name for v, name in zip(graph.in_vars, names, strict=True)
            if readers[v.id] > FAN_OUT_LIMIT}


def _operand_edges(eqn, node_id: str, ctx: _DotContext) -> list[Edge]:
    """An edge from each operand's producer; a fanned-out input gets a copy drawn here."""
    edges = []
    for position, atom in enumerate(eqn.inputs):
        if not isinstance(atom, Var) or atom.id not in ctx.env:
            continue
        if atom.id in ctx.copies:
            copy_id = f"{node_id}_arg{position}"
            ctx.extra.append((copy_id, _copy_attrs(ctx.copies[atom.id], atom)))
            edges.append((copy_id, node_id, {}))
        else:
            edges.append((ctx.env[atom.id], node_id, {}))
    return edges


def _copy_attrs(name: str, atom: Var) -> dict[str, str]:
    return {"label": name, "shape": "ellipse", "style": "dashed,filled",
            "fillcolor": _INPUT_FILL, "fontsize": "9",
            "tooltip": f"{name}: {_aval_words(atom.aval)} (an input, drawn again next to each use)"}


def _out_edges(atoms, prefix: str, env: dict[int, str], **attrs) -> list[Edge]:
    return [(env[atom.id], f"{prefix}{i}", attrs) for i, atom in enumerate(atoms)
            if isinstance(atom, Var) and atom.id in env]


def _add_graph_eqns(dot: graphviz.Digraph, graph: Graph, ctx: _DotContext) -> None:
    for eqn in graph.eqns:
        node_id = _node_id(ctx.labels[eqn.id])
        _add_eqn(dot, eqn, node_id, ctx)
        ctx.edges += _operand_edges(eqn, node_id, ctx)
        ctx.env.update({out.id: node_id for out in eqn.outs})


def _body_labels(eqn, labels: dict[int, str]) -> set[str]:
    return {labels[inner.id] for _, sub in _named_subgraphs(eqn) for inner in sub.all_eqns()}


def _add_eqn(dot: graphviz.Digraph, eqn, node_id: str, ctx: _DotContext) -> None:
    """The equation's node; an equation holding sub-graphs is a cluster holding its node and
    a cluster per sub-graph, unless loops are collapsed."""
    label = ctx.labels[eqn.id]
    subs = _named_subgraphs(eqn)
    collapsed = bool(subs) and ctx.collapse_loops
    inside = _body_labels(eqn, ctx.labels) if collapsed else set()
    lit = label in ctx.highlight or bool(inside & ctx.highlight)
    text = _eqn_node_label(eqn) + (f"\n({len(inside)} equations inside)" if collapsed else "")
    attrs = {"label": text, "tooltip": _eqn_tooltip(eqn, label, ctx.source_text),
             "fillcolor": _HIGHLIGHT_FILL if lit else None, "penwidth": "2" if lit else None,
             "shape": "box3d" if subs else None, **_hl_class(lit)}
    if not subs or collapsed:
        _add_node(dot, node_id, **attrs)
        return
    header = f"{label} ({_line_text(eqn)})" if eqn.source is not None else label
    cluster = _cluster(f"cluster_{node_id}", header, style="rounded,dashed")
    _add_node(cluster, node_id, **attrs)
    for key, sub in subs:
        cluster.subgraph(_subgraph_cluster(f"{node_id}_{_node_id(key)}", key, sub, node_id, ctx))
    dot.subgraph(cluster)


def _hl_class(lit: bool) -> dict[str, str]:
    return {"class": _HL_CLASS} if lit else {}


def _subgraph_cluster(prefix: str, key: str, sub: Graph, owner: str,
                      ctx: _DotContext) -> graphviz.Digraph:
    cluster = _cluster(f"cluster_{prefix}", key, style="rounded")
    _add_io_nodes(cluster, f"{prefix}_in", sub.in_vars, (), "#f5f5f5", shown="in")
    ctx.edges += [(owner, f"{prefix}_in{i}", {"style": "dashed"})
                  for i in range(len(sub.in_vars))]
    ctx.env.update({v.id: f"{prefix}_in{i}" for i, v in enumerate(sub.in_vars)})
    _add_graph_eqns(cluster, sub, ctx)
    _add_io_nodes(cluster, f"{prefix}_out", sub.out_atoms, (), "#f5f5f5", shown="out")
    ctx.edges += _out_edges(sub.out_atoms, f"{prefix}_out", ctx.env)
    return cluster


# ---------------------------------------------------------------------------------------------
# The fused kernels as DOT
# ---------------------------------------------------------------------------------------------

def kernel_colours(model) -> dict[str, str]:
    """Kernel name -> its colour (the Fused graph and the source view agree)."""
    names = dict.fromkeys(kernel.name for kernel in model.all_kernels())
    return {name: PALETTE[i % len(PALETTE)] for i, name in enumerate(names)}


def ops_summary(fused_ops: Iterable[str], limit: int = 6) -> str:
    """`multiply×2, reduce, add`: each op once, with its count, in first-seen order."""
    counts = Counter(fused_ops)
    parts = [op if n == 1 else f"{op}×{n}" for op, n in counts.items()]
    return ", ".join(parts[:limit]) + (f", … (+{len(parts) - limit})" if len(parts) > limit
                                       else "")


def _lines_text(kernel, filename: str | None = None) -> str:
    lines = dict.fromkeys(source.line if filename in (None, source.file)
                          else f"{source.file}:{source.line}" for source in kernel.source_lines)
    return ", ".join(map(str, lines))


def _kernel_cluster_label(kernel) -> str:
    rows = [f"{kernel.name} · {kernel.kind}", ops_summary(kernel.fused_ops),
            f"{kernel.shape} · {fmt_bytes(kernel.bytes_estimate)} · "
            f"{fmt_count(kernel.flops_estimate, 'flop')}"]
    lines = _lines_text(kernel)
    word = "lines" if "," in lines else "line"
    return "\n".join(rows + ([f"{word} {lines}"] if lines else []))


def kernel_labels(kernel) -> tuple[str, ...]:
    """The IR equation labels a kernel holds. XLA joins the op names of ops it merged with
    `;` (`e1:multiply;e0:broadcast_in_dim`); each is its own label here."""
    parts = (part.strip() for label in kernel.eqn_labels for part in label.split(";"))
    return tuple(dict.fromkeys(part for part in parts if part))


def _nested_labels(kernel) -> set[str]:
    return {label for inner in kernel.body for label in (*kernel_labels(inner),
                                                         *_nested_labels(inner))}


def _placed_labels(kernel) -> tuple[str, ...]:
    """The labels drawn in a kernel's own cluster: those no kernel of its body holds."""
    nested = _nested_labels(kernel)
    return tuple(label for label in kernel_labels(kernel) if label not in nested)


@dataclasses.dataclass
class _KernelDot:
    eqns: dict[str, Any]              # label -> eqn
    colours: dict[str, str]
    nodes_of: dict[str, list[str]]    # label -> the nodes drawing it (one per kernel)
    kernel_of: dict[str, int]         # node id -> index of the kernel whose cluster holds it
    counter: Iterator[int]
    enclosing: dict[int, frozenset[int]] = dataclasses.field(default_factory=dict)
    # kernel index -> indices of the kernels whose bodies hold it
    lit_kernels: frozenset[str] = frozenset()
    lit_labels: frozenset[str] = frozenset()
    collapse: bool = False
    source_text: dict | None = None


def kernels_to_dot(model, graph: Graph | None, highlight_kernels: Iterable[str] = (),
                   highlight_labels: Iterable[str] = (), collapse: bool = False,
                   input_names: Iterable[str] = (), output_names: Iterable[str] = (),
                   source_text: dict | None = None) -> str:
    """One cluster per kernel (name, kind, fused ops, bytes, flops, lines) holding the IR
    equations it fused, or one node per kernel when `collapse`; edges between kernels where
    the IR's data flow links them. Highlighted kernels and equations have class `psc_hl`."""
    eqns = _eqns_by_label(graph)
    ctx = _KernelDot(eqns, kernel_colours(model), {}, {}, itertools.count(),
                     lit_kernels=frozenset(highlight_kernels),
                     lit_labels=frozenset(highlight_labels), collapse=collapse,
                     source_text=source_text)
    dot = _digraph("kernels")
    for kernel in model.kernels:
        if collapse:
            _add_collapsed_kernel(dot, kernel, ctx)
        else:
            dot.subgraph(_kernel_cluster(kernel, ctx))
    if graph is None:
        return dot.source
    _add_io_nodes(dot, "in", graph.in_vars, tuple(input_names), _INPUT_FILL)
    _add_io_nodes(dot, "out", graph.out_atoms, tuple(output_names), _OUTPUT_FILL)
    _add_edges(dot, _kernel_edges(graph, ctx))
    return dot.source


def _eqns_by_label(graph: Graph | None) -> dict[str, Any]:
    if graph is None:
        return {}
    labels = graph.labels()
    return {labels[eqn.id]: eqn for eqn in graph.all_eqns()}


def _kernel_lit(kernel, ctx: _KernelDot) -> bool:
    return kernel.name in ctx.lit_kernels


def _kernel_style(kernel, ctx: _KernelDot, lit: bool) -> dict[str, str | None]:
    return {"fillcolor": ctx.colours.get(kernel.name, "#eeeeee"),
            "color": "#d32f2f" if lit else None, "penwidth": "3" if lit else None,
            **_hl_class(lit)}


def _kernel_cluster(kernel, ctx: _KernelDot,
                    enclosing: frozenset[int] = frozenset()) -> graphviz.Digraph:
    """`cluster_k{index}`: the kernel's own equations, then its body's kernels' clusters."""
    index = next(ctx.counter)
    ctx.enclosing[index] = enclosing
    cluster = _cluster(f"cluster_k{index}", _kernel_cluster_label(kernel), style="rounded,filled",
                       **_kernel_style(kernel, ctx, _kernel_lit(kernel, ctx)))
    placed = _placed_labels(kernel)
    for label in placed:
        _add_kernel_eqn_node(cluster, index, label, ctx)
    if not placed and not kernel.body:
        _add_node(cluster, f"k{index}", label="(no IR equation recorded)", shape="plaintext",
                  style="", tooltip=f"{kernel.name}: XLA kept no op_name for it")
    for body_kernel in kernel.body:
        cluster.subgraph(_kernel_cluster(body_kernel, ctx, enclosing | {index}))
    return cluster


def _add_collapsed_kernel(dot: graphviz.Digraph, kernel, ctx: _KernelDot) -> None:
    """One node `k{index}` standing for the kernel and its body; its labels map to it."""
    index = next(ctx.counter)
    ctx.enclosing[index] = frozenset()
    ctx.kernel_of[f"k{index}"] = index
    labels = (*kernel_labels(kernel), *_nested_labels(kernel))
    for label in dict.fromkeys(labels):
        ctx.nodes_of.setdefault(label, []).append(f"k{index}")
    lit = any(k.name in ctx.lit_kernels for k in _walk_kernels(kernel))
    lit = lit or bool(ctx.lit_labels.intersection(labels))
    hidden = f"\n({len(dict.fromkeys(labels))} IR equations inside)" if labels else ""
    _add_node(dot, f"k{index}", label=_kernel_cluster_label(kernel) + hidden,
              tooltip=f"{kernel.name}: " + ", ".join(dict.fromkeys(labels)),
              style="rounded,filled", **_kernel_style(kernel, ctx, lit))


def _walk_kernels(kernel) -> Iterator[Any]:
    yield kernel
    for inner in kernel.body:
        yield from _walk_kernels(inner)


def _add_kernel_eqn_node(dot: graphviz.Digraph, index: int, label: str,
                         ctx: _KernelDot) -> None:
    node_id = f"k{index}_{_node_id(label)}"
    ctx.kernel_of[node_id] = index
    ctx.nodes_of.setdefault(label, []).append(node_id)
    lit = label in ctx.lit_labels
    style = {"fillcolor": _HIGHLIGHT_FILL if lit else None, "penwidth": "2" if lit else None,
             **_hl_class(lit)}
    eqn = ctx.eqns.get(label)
    if eqn is None:
        _add_node(dot, node_id, label=label, tooltip=f"{label} (not in this graph)", **style)
        return
    text = f"{label}\n{_avals_text(eqn.outs)}" + (f"\n{_line_text(eqn)}" if eqn.source else "")
    _add_node(dot, node_id, label=text, tooltip=_eqn_tooltip(eqn, label, ctx.source_text),
              **style)


def _kernel_edges(graph: Graph, ctx: _KernelDot) -> list[Edge]:
    """Edges the IR's data flow gives: between the equations of one kernel, and (one per pair
    of endpoints) between inputs, kernels and outputs. Values flow through equations no kernel
    holds (reshapes XLA turned into bitcasts, ...) to the next equation drawn."""
    labels = graph.labels()
    origins: dict[int, set[str]] = {v.id: {f"in{i}"} for i, v in enumerate(graph.in_vars)}
    links: dict[tuple, Edge] = {}
    for eqn in graph.all_eqns():
        arriving = set().union(*(origins.get(a.id, set()) for a in eqn.inputs
                                 if isinstance(a, Var)))
        heads = ctx.nodes_of.get(labels[eqn.id], [])
        for tail in sorted(arriving):
            for head in heads:
                _link(links, tail, head, ctx)
        leaving = set(heads) or arriving
        origins.update({out.id: leaving for out in eqn.outs})
        for _, sub in _named_subgraphs(eqn):
            origins.update({v.id: leaving for v in sub.in_vars})
    for i, atom in enumerate(graph.out_atoms):
        for tail in sorted(origins.get(atom.id, ()) if isinstance(atom, Var) else ()):
            _link(links, tail, f"out{i}", ctx)
    return list(links.values())


def _link(links: dict[tuple, Edge], tail: str, head: str, ctx: _KernelDot) -> None:
    """Node to node inside a kernel (or into and out of its body's kernels); otherwise one
    edge per pair of clusters (or in/out)."""
    tail_kernel, head_kernel = ctx.kernel_of.get(tail), ctx.kernel_of.get(head)
    if tail == head:
        return
    if _nested(tail_kernel, head_kernel, ctx.enclosing) or ctx.collapse:
        links.setdefault((tail, head), (tail, head, {}))
        return
    key = (tail if tail_kernel is None else tail_kernel,
           head if head_kernel is None else head_kernel)
    attrs = {"ltail": None if tail_kernel is None else f"cluster_k{tail_kernel}",
             "lhead": None if head_kernel is None else f"cluster_k{head_kernel}"}
    links.setdefault(key, (tail, head, attrs))


def _nested(a: int | None, b: int | None, enclosing: dict[int, frozenset[int]]) -> bool:
    """Whether kernels a and b are the same kernel, or one holds the other in its body."""
    if a is None or b is None:
        return False
    return a == b or a in enclosing[b] or b in enclosing[a]


# ---------------------------------------------------------------------------------------------
# DOT to SVG
# ---------------------------------------------------------------------------------------------

INSTALL_HINT = (
    "The Graphviz `dot` program was not found, and the graph views need it. Install it with "
    "`apt-get install graphviz` (Debian/Ubuntu), `brew install graphviz` (macOS) or "
    "`conda install -c conda-forge graphviz`, then run the cell again."
)


class DotMissing(RuntimeError):
    """The Graphviz `dot` program is not installed (or could not lay out a graph)."""

    def __init__(self, detail: str = "", hint: str = INSTALL_HINT):
        super().__init__(hint + (f" ({detail})" if detail else ""))


LAYOUT_TIMEOUT_SECONDS = 60.0


def dot_to_svg(dot: str, timeout: float = LAYOUT_TIMEOUT_SECONDS) -> str:
    """Lay out DOT with Graphviz's `dot` program; the `<svg>` element, ready to inline.
    Layouts are cached by DOT text (re-highlighting the same graph is instant)."""
    if shutil.which("dot") is None:     # asked before the cache: a layout made earlier must
        raise DotMissing()              # not hide that `dot` has gone from the PATH
    return _layout(dot, timeout)


@functools.lru_cache(maxsize=64)
def _layout(dot: str, timeout: float) -> str:
    try:
        svg = _pipe_svg(dot, timeout)
    except graphviz.ExecutableNotFound as error:
        raise DotMissing() from error
    except subprocess.TimeoutExpired as error:
        raise DotMissing(hint=f"Graphviz took longer than {timeout:.0f} s to lay out this "
                         "graph; collapse loops or kernels, or read the Text tab.") from error
    except graphviz.CalledProcessError as error:
        raise DotMissing(hint="Graphviz could not lay out this graph: "
                         + (error.stderr or "").strip()[:300]) from error
    except OSError as error:
        raise DotMissing(str(error)) from error
    return svg[svg.find("<svg"):]


def _pipe_svg(dot: str, timeout: float) -> str:
    """`graphviz.pipe_string("dot", "svg", dot)` with a timeout: the same command and the
    same runner (which raise `ExecutableNotFound` and `CalledProcessError`), since
    `pipe_string` (graphviz 0.20, 0.21) takes no timeout and a layout can run for minutes.
    The runner hands `timeout` to `subprocess.run`, which kills `dot` when it expires."""
    command = dot_command.command("dot", "svg")
    done = execute.run_check(command, input=dot, encoding="utf-8", capture_output=True,
                             quiet=True, timeout=timeout)
    return done.stdout


_SVG_SIZE = re.compile(r'<svg width="([\d.]+)pt" height="([\d.]+)pt"')


def scale_svg(svg: str, zoom: float | None) -> str:
    """Graphviz's SVG at `zoom` (1.0: natural size), or, with None, as wide as its container
    but never wider than its natural size (its viewBox keeps the aspect ratio)."""
    size = _SVG_SIZE.search(svg)
    if size is None:
        return svg
    width, height = float(size[1]), float(size[2])
    if zoom is None:
        sized = f'<svg width="100%" style="max-width:{width:.0f}pt; height:auto"'
    else:
        sized = f'<svg width="{width * zoom:.1f}pt" height="{height * zoom:.1f}pt"'
    return svg[:size.start()] + sized + svg[size.end():]


def svg_pane(svg: str, zoom: float | None = None, max_height: int = 640) -> str:
    """The SVG in a scrolling box: zoom scales it, scrolling pans it."""
    return (f'<div class="psc-svg" style="overflow:auto; max-height:{max_height}px; '
            f'border:1px solid #e0e0e0">{scale_svg(svg, zoom)}</div>')


def svg_or_hint(dot: str, zoom: float | None = None) -> str:
    """The laid-out graph in a scrolling box, or why it could not be laid out."""
    try:
        return svg_pane(dot_to_svg(dot), zoom)
    except DotMissing as error:
        return _notice(str(error))


# ---------------------------------------------------------------------------------------------
# HTML helpers
# ---------------------------------------------------------------------------------------------

_TABLE = 'style="border-collapse:collapse; font-size:12px; margin:4px 0 8px 0"'
_CELL = 'style="border:1px solid #ddd; padding:2px 6px; text-align:left; vertical-align:top"'
_HEAD = ('style="border:1px solid #ddd; padding:2px 6px; text-align:left; '
         'background:#f3f3f3"')
_PRE = ('style="font-size:11px; line-height:1.35; background:#fafafa; padding:6px; '
        'overflow:auto; max-height:480px; border:1px solid #eee"')


def _table(header: Iterable[str] | None, rows: Iterable[Iterable[str]],
           row_attrs: Iterable[str] = ()) -> str:
    """A table of already-escaped cells (no header row when `header` is None); `row_attrs`
    are attributes for each row's `<tr>`, in order."""
    head = "".join(f"<th {_HEAD}>{cell}</th>" for cell in header or ())
    head = f"<thead><tr>{head}</tr></thead>" if head else ""
    attrs = itertools.chain(row_attrs, itertools.repeat(""))
    body = "".join(_tr(next(attrs)) + "".join(f"<td {_CELL}>{cell}</td>" for cell in row)
                   + "</tr>" for row in rows)
    return f"<table {_TABLE}>{head}<tbody>{body}</tbody></table>"


def _tr(attrs: str) -> str:
    return f"<tr {attrs}>" if attrs else "<tr>"


def _section(title: str, body: str) -> str:
    return f'<h4 style="margin:8px 0 4px 0">{_esc(title)}</h4>{body}'


def notice(text: str) -> str:
    """A yellow note: why something is not shown, or how to make it shown."""
    return f'<p style="color:#8a6d3b; background:#fcf8e3; padding:4px 8px">{_esc(text)}</p>'


_notice = notice


def _para(text: str) -> str:
    return f"<p>{_esc(text)}</p>"


def _pre(text: str) -> str:
    return f"<pre {_PRE}>{_esc(text)}</pre>"


def _chip(colour: str, title: str = "") -> str:
    return (f'<span title="{_esc(title)}" style="display:inline-block; width:10px; '
            f'height:10px; margin-right:2px; background:{colour}; border:1px solid #888">'
            "</span>")


def _wrap(body: str) -> str:
    return ('<div class="psc-jit" style="font-family:Helvetica,Arial,sans-serif; '
            f'font-size:13px">{body}</div>')


# ---------------------------------------------------------------------------------------------
# Summary
# ---------------------------------------------------------------------------------------------

def _status_text(report) -> str:
    if report.compiled:
        return "compiled with XLA"
    return f"not compiled, ran as plain Python: {report.fallback_reason or 'no reason given'}"


def _cache_text(report) -> str:
    if report.cache_hit:
        return "hit"
    return f"miss: {report.miss_reason}" if report.miss_reason else "miss"


def _stages_text(report) -> str:
    return " · ".join(f"{stage} {fmt_seconds(seconds)}"
                      for stage, seconds in report.stage_seconds.items())


def _speedup_text(report) -> str:
    timings = report.timings
    if timings is None:
        return "not timed (run with --compare to time it)"
    return (f"{fmt_speedup(timings.speedup)} (plain {fmt_seconds(timings.plain_median)}, "
            f"compiled {fmt_seconds(timings.compiled_median)})")


def summary_items(report) -> list[tuple[str, str]]:
    """(name, plain text) rows shared by the Summary tab and the terminal summary."""
    items = [("status", _status_text(report))]
    if report.compiled:
        items += [("cache", _cache_text(report))]
    items += [("signature", report.signature)] if report.signature else []
    items += [("stages", _stages_text(report))] if report.stage_seconds else []
    if report.graph is not None:
        items += [("fusion", fusion_text(report))]
    if report.compiled:
        items += [("speed-up", _speedup_text(report))]
    if report.agreement is not None:
        items += [("agreement", f"largest difference {report.agreement:.3g}")]
    items += [("note", note) for note in report.notes]
    return items


def fusion_text(report) -> str:
    """`11 primitives → 5 kernels`."""
    primitives, kernels = report.n_primitives, report.n_kernels
    return (f"{primitives} primitive{'s' * (primitives != 1)} → "
            f"{kernels} kernel{'s' * (kernels != 1)}")


def summary_html(report) -> str:
    colour = "#2e7d32" if report.compiled else "#c62828"
    title = f"{report.name}: {'compiled' if report.compiled else 'fallback'}"
    head = f'<div style="font-weight:bold; color:{colour}; margin:4px 0">{_esc(title)}</div>'
    rows = [(f"<b>{_esc(name)}</b>", _esc(text)) for name, text in summary_items(report)]
    rows += _names_rows(report)
    return head + _table(None, rows)


def _names_rows(report) -> list[tuple[str, str]]:
    rows = []
    for name, values in (("inputs", report.inputs), ("outputs", report.outputs)):
        if values:
            rows.append((f"<b>{name}</b>", _esc(", ".join(values))))
    return rows


def report_text(report) -> str:
    """A plain-text summary for terminal IPython."""
    lines = [f"psc_jit {report.name}"]
    lines += [f"  {name}: {text}" for name, text in summary_items(report)]
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------
# Graph and Fused tabs
# ---------------------------------------------------------------------------------------------

MAX_DRAWN_EQUATIONS = 600


def cell_lines(report) -> dict[tuple[str, int], str]:
    """(cell file, line number) -> the line's code, numbered as equations' sources are."""
    return {(report.filename, number): text for number, text
            in enumerate(report.source.splitlines(), report.line_offset + 1)}


def _output_names(report) -> tuple[str, ...]:
    """The cell's outputs name the graph's results when there is one per output."""
    graph = report.graph
    return tuple(report.outputs) if len(report.outputs) == len(graph.out_atoms) else ()


def ir_dot(report, highlight_labels: Iterable[str] = (), collapse_loops: bool = False) -> str:
    """The traced graph of a run as DOT, inputs named, tooltips quoting the cell's lines."""
    graph = report.graph
    return graph_to_dot(graph, highlight_labels, input_names(report.signature, graph),
                        _output_names(report), collapse_loops=collapse_loops,
                        source_text=cell_lines(report))


def fused_dot(report, highlight_kernels: Iterable[str] = (), highlight_labels: Iterable[str] = (),
              collapse: bool = False) -> str:
    """The fused kernels of a run as DOT (clusters, or one node per kernel)."""
    graph = report.graph
    inputs, outputs = ((input_names(report.signature, graph), _output_names(report))
                       if graph is not None else ((), ()))
    return kernels_to_dot(report.kernels, graph, highlight_kernels, highlight_labels,
                          collapse=collapse, input_names=inputs, output_names=outputs,
                          source_text=cell_lines(report))


def too_big_to_draw(report) -> bool:
    return report.graph is not None and report.n_primitives > MAX_DRAWN_EQUATIONS


def graph_html(report) -> str:
    """The traced IR before fusion, as inline SVG (or why it is not drawn)."""
    if report.graph is None:
        return _notice(f"No traced graph: {_status_text(report)}")
    if too_big_to_draw(report):
        return _notice(f"The graph has {report.n_primitives} equations, too many to draw; "
                       "the Text tab lists them.")
    return _para(f"{report.n_primitives} primitives before fusion") + svg_or_hint(ir_dot(report))


_TRACED_LEAF = re.compile(r"(?:^|, )([^\s:,]+): (\w+~?\[[\d,]*\])(?= \((?:NumPy|Python) "
                          r"scalar\)|, |$)")


def input_names(signature: str, graph: Graph) -> tuple[str, ...]:
    """The traced leaves' names (`x`, `params[0]`) from a signature text such as
    `x: f64[8,8], n: 3 (static), w: f64[8]`, when their types match the graph's inputs one
    to one; () otherwise (the inputs are then numbered)."""
    leaves = _TRACED_LEAF.findall(signature)
    if [aval for _, aval in leaves] != [str(v.aval) for v in graph.in_vars]:
        return ()
    return tuple(name for name, _ in leaves)


def fused_html(report) -> str:
    """XLA's kernels after fusion: the cluster graph, the kernel table, the coloured source."""
    if report.kernels is None:
        return _notice(f"No fused kernels: {_status_text(report)}")
    drawing = (_notice("Too many equations to draw the kernel graph.") if too_big_to_draw(report)
               else svg_or_hint(fused_dot(report)))
    return (_para(fusion_text(report)) + drawing + _section("Kernels by estimated cost", kernel_table_html(report))
            + _section("Source lines by kernel", source_html(report)))


COST_KEYS = {"bytes": lambda k: (k.bytes_estimate, k.flops_estimate),
             "flops": lambda k: (k.flops_estimate, k.bytes_estimate)}


def kernel_cost(kernel) -> tuple[int, int]:
    """Estimated cost: bytes moved first (fused loops on CPU are memory bound), then flops."""
    return COST_KEYS["bytes"](kernel)


def kernels_by_cost(model, sort_by: str = "bytes") -> list[Any]:
    """Every kernel (bodies' too), costliest first by estimated bytes or flops."""
    return sorted(model.all_kernels(), key=COST_KEYS[sort_by], reverse=True)


_LIT_ROW = "background:#fff3c4; font-weight:bold; outline:2px solid #d32f2f"


def kernel_table_html(report, sort_by: str = "bytes", highlight: Iterable[str] = ()) -> str:
    """The kernels, costliest first: kind, fused ops, shapes, estimated bytes and flops, lines.
    Rows of highlighted kernels have class `psc_hl`."""
    if report.kernels is None:
        return _notice("No kernels.")
    colours, lit = kernel_colours(report.kernels), frozenset(highlight)
    rows, attrs = [], []
    for k in kernels_by_cost(report.kernels, sort_by):
        rows.append((_chip(colours[k.name], k.name) + _esc(k.name), _esc(k.kind),
                     _esc(ops_summary(k.fused_ops, limit=12)), _shapes_text(k),
                     fmt_bytes(k.bytes_estimate), fmt_count(k.flops_estimate),
                     _esc(_lines_text(k, report.filename))))
        attrs.append(f'class="psc_hl" style="{_LIT_ROW}"' if k.name in lit else "")
    header = ("kernel", "kind", "fused ops", "shapes (out ← in)", "bytes (est.)",
              "flops (est.)", "lines")
    return _table(header, rows, attrs)


def _shapes_text(kernel) -> str:
    operands = ", ".join(kernel.operand_shapes)
    return _esc(f"{kernel.shape} ← {operands}" if operands else kernel.shape)


def source_html(report, highlight_lines: Iterable[int] = ()) -> str:
    """The cell source with line numbers, each line coloured by the kernel(s) it went into.
    Every row has `data-line`; highlighted rows have class `psc_hl` and an outline, and the
    other rows fade while something is highlighted."""
    line_kernels = _cell_line_kernels(report)
    colours = kernel_colours(report.kernels) if report.kernels is not None else {}
    lit = frozenset(highlight_lines)
    rows = [_source_row(number, text, line_kernels.get(number, ()), colours, lit)
            for number, text in enumerate(report.source.splitlines(), report.line_offset + 1)]
    code = ('<div class="psc-source" style="font-family:monospace; font-size:12px; '
            f'line-height:1.4; white-space:pre">{"".join(rows)}</div>')
    return code + _legend(report, colours)


def _cell_line_kernels(report) -> dict[int, tuple[str, ...]]:
    if report.kernels is None:
        return {}
    return {line: names for (file, line), names in report.kernels.line_to_kernels().items()
            if file == report.filename}


def _source_row(number: int, text: str, names: tuple[str, ...], colours,
                lit: frozenset[int] = frozenset()) -> str:
    background = colours.get(names[0], "transparent") if names else "transparent"
    chips = "".join(_chip(colours.get(name, "#eee"), name) for name in names)
    title = f' title="{_esc(", ".join(names))}"' if names else ""
    classes, style = "psc-line", f"background:{background}"
    if number in lit:
        classes, style = "psc-line psc_hl", f"{style}; outline:2px solid #d32f2f; font-weight:bold"
    elif lit:
        style += "; opacity:0.45"
    return (f'<div class="{classes}" data-line="{number}" data-kernels="{_esc(" ".join(names))}"'
            f'{title} style="{style}">'
            f'<span style="color:#888; display:inline-block; width:3.5em; text-align:right">'
            f'{number}</span> <span style="display:inline-block; width:4em">{chips}</span>'
            f"{_esc(text) or ' '}</div>")


def _legend(report, colours: dict[str, str]) -> str:
    if not colours:
        return ""
    kinds = {k.name: k.kind for k in report.kernels.all_kernels()}
    items = [f'<span style="margin-right:12px">{_chip(colour, name)}{_esc(name)} '
             f'<span style="color:#777">({_esc(kinds[name])})</span></span>'
             for name, colour in colours.items()]
    return f'<div style="margin-top:6px; font-size:12px">{"".join(items)}</div>'


# ---------------------------------------------------------------------------------------------
# Cache tab
# ---------------------------------------------------------------------------------------------

def _entry_compile_seconds(entry) -> float | None:
    seconds = getattr(entry, "compile_seconds", None)
    if seconds is None and getattr(entry, "compiled", None) is not None:
        seconds = getattr(entry.compiled, "compile_seconds", None)
    return seconds


def _entry_size(entry) -> str:
    """The memory a cached program runs in (`1.55 MiB: in 1.53 MiB, out 7.8 KiB, temp 8 KiB`,
    and its code when XLA says), or "" when the entry does not say."""
    memory_stats = getattr(entry, "memory_stats", None)
    if memory_stats is None:
        return ""
    try:
        stats = memory_stats()
    except (RuntimeError, ValueError, AttributeError):
        return ""
    parts = {"in": stats.argument_bytes, "out": stats.output_bytes, "temp": stats.temp_bytes,
             "code": stats.generated_code_bytes}
    total = fmt_bytes(sum(parts.values()))
    return f"{total}: " + ", ".join(f"{name} {fmt_bytes(size)}" for name, size in parts.items()
                                     if size or name != "code")


def _clock(timestamp: float) -> str:
    return time.strftime("%H:%M:%S", time.localtime(timestamp))


def cache_html(report) -> str:
    """This run's hit or miss, every cached entry of this cell, every miss, every eviction."""
    this_run = _para(f"This run: {_cache_text(report)}" if report.compiled
                     else "This run did not use the cache (it ran as plain Python).")
    return ('<div class="psc-cache">' + this_run
            + _section("Entries", entries_table(report.cache_entries))
            + _section("Misses", events_table(report.cache_events, "miss", "reason")
                       or _para("No misses recorded."))
            + _section("Evictions", events_table(report.cache_events, "evict", "signature")
                       or _para("No evictions.")) + "</div>")


_ENTRY_HEADER = ("signature", "hits", "compile time", "size", "created")


def entries_table(records: Iterable[Any], with_owner: bool = False) -> str:
    """One row per cache entry: (owner,) signature, hits, compile time, size, creation time."""
    rows = []
    for record in records:
        seconds = _entry_compile_seconds(record.entry)
        row = (_esc(record.signature.describe()), str(record.hits),
               fmt_seconds(seconds) if seconds is not None else "", _esc(_entry_size(record.entry)),
               _clock(record.created))
        rows.append(((_esc(record.owner),) if with_owner else ()) + row)
    if not rows:
        return _para("No cached entries.")
    return _table((("cell / function",) if with_owner else ()) + _ENTRY_HEADER, rows)


def events_table(events: Iterable[Any], kind: str, detail: str, with_owner: bool = False) -> str:
    """The events of one kind as a table ("" when there are none)."""
    rows = [((_esc(event.owner),) if with_owner else ()) + (_clock(event.time), _esc(event.cache),
                                                           _esc(event.detail))
            for event in events if event.kind == kind]
    header = (("cell / function",) if with_owner else ()) + ("time", "cache", detail)
    return _table(header, rows) if rows else ""


def cache_overview_html(records: Iterable[Any], events: Iterable[Any], counts: dict[str, int]
                        ) -> str:
    """Every cache entry of the session (each cell and function), every miss with its reason,
    every eviction: what `%psc_cache` shows. `counts`: entries, hits, misses, evictions."""
    events = _since_last_clear(list(events))
    head = (f"psc_jit cache: {counts.get('entries', 0)} entries, {counts.get('hits', 0)} hits, "
            f"{counts.get('misses', 0)} misses, {counts.get('evictions', 0)} evictions")
    return _wrap(f'<div class="psc-cache-overview"><b>{_esc(head)}</b>'
                 + _section("Entries", entries_table(records, with_owner=True))
                 + _section("Misses", events_table(events, "miss", "reason", with_owner=True)
                            or _para("No misses recorded."))
                 + _section("Evictions", events_table(events, "evict", "signature",
                                                      with_owner=True)
                            or _para("No evictions.")) + "</div>")


def _since_last_clear(events: list[Any]) -> list[Any]:
    clears = [i for i, event in enumerate(events) if event.kind == "clear"]
    return events[clears[-1] + 1:] if clears else events


def cache_overview_text(records: Iterable[Any], events: Iterable[Any],
                        counts: dict[str, int]) -> str:
    """The same facts as plain text, for terminals."""
    lines = [f"psc_jit cache: {counts.get('entries', 0)} entries, {counts.get('hits', 0)} hits, "
             f"{counts.get('misses', 0)} misses, {counts.get('evictions', 0)} evictions"]
    lines += [f"  {r.owner}: {r.signature.describe()} ({r.hits} hits)" for r in records]
    lines += [f"  {e.kind} {e.owner}: {e.detail}" for e in _since_last_clear(list(events))
              if e.kind in ("miss", "evict")]
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------
# Timing tab
# ---------------------------------------------------------------------------------------------

def timing_html(report) -> str:
    """Plain against compiled: medians, spreads, compile and first call, speed-up, rates."""
    timings = report.timings
    if timings is None:
        return _notice("Not timed: the comparison runs on a cache miss or with --compare.")
    rows = [(_esc(name), _esc(value)) for name, value in _timing_items(report)]
    return f'<div class="psc-timing">{_table(None, rows)}{timing_chart_svg(timings)}</div>'


def _timing_items(report) -> list[tuple[str, str]]:
    timings = report.timings
    items = [("plain Python (median)", _median_text(timings, "plain")),
             ("compiled (median)", _median_text(timings, "compiled"))]
    items += [("compile (trace + lower + XLA)", _compile_text(report)),
              ("first compiled call", fmt_seconds(timings.first_call_seconds)),
              ("speed-up", fmt_speedup(timings.speedup))]
    return items + _rate_items(report) + _difference_items(timings)


def _compile_text(report) -> str:
    total = fmt_seconds(report.timings.compile_seconds)
    stages = [f"{stage} {fmt_seconds(report.stage_seconds[stage])}"
              for stage in ("trace", "lower", "compile") if stage in report.stage_seconds]
    return f"{total} ({', '.join(stages)})" if stages else total


def _median_text(timings, which: str) -> str:
    median = timings.plain_median if which == "plain" else timings.compiled_median
    low, high = timings.spread(which)
    runs = len(timings.plain_seconds if which == "plain" else timings.compiled_seconds)
    spread = f"spread {fmt_seconds(low)} – {fmt_seconds(high)}"
    return f"{fmt_seconds(median)}, {spread} over {runs} runs"


def _rate_items(report) -> list[tuple[str, str]]:
    timings, items = report.timings, []
    flops = timings.flops if timings.flops is not None else report.cost.get("flops")
    moved = (timings.bytes_accessed if timings.bytes_accessed is not None
             else report.cost.get("bytes accessed"))
    if flops and timings.compiled_median:
        items.append(("achieved FLOP/s", f"{fmt_count(flops / timings.compiled_median, 'FLOP/s')} "
                                         f"({fmt_count(flops, 'FLOP')} per run)"))
    if moved and timings.compiled_median:
        items.append(("achieved bytes/s", f"{fmt_bytes(moved / timings.compiled_median)}/s "
                                          f"({fmt_bytes(moved)} per run)"))
    return items


def _difference_items(timings) -> list[tuple[str, str]]:
    if timings.largest_difference is None:
        return []
    items = [("largest difference", f"{timings.largest_difference:.3g}")]
    return items + [(f"difference in {name}", f"{value:.3g}")
                    for name, value in timings.differences.items()]


_BAR_COLOURS = {"plain": "#9e9e9e", "compiled": "#1e88e5", "first call": "#90caf9"}


def timing_chart_svg(timings, width: int = 420) -> str:
    """Horizontal bars: plain and compiled medians (whiskers: min to max), first call."""
    bars = [("plain", timings.plain_median, timings.spread("plain")),
            ("compiled", timings.compiled_median, timings.spread("compiled")),
            ("first call", timings.first_call_seconds, None)]
    top = max(max((value, *(spread or ()))) for _, value, spread in bars) or 1.0
    scale = (width - 190) / top
    rows = [_bar(i, name, value, spread, scale) for i, (name, value, spread) in enumerate(bars)]
    height = 22 * len(bars) + 6
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
            f'font-family="Helvetica,Arial,sans-serif" font-size="11">{"".join(rows)}</svg>')


def _bar(row: int, name: str, value: float, spread, scale: float) -> str:
    y, x0 = 4 + 22 * row, 80
    length = max(value * scale, 1.0)
    parts = [f'<text x="0" y="{y + 12}">{_esc(name)}</text>',
             f'<rect x="{x0}" y="{y}" width="{length:.1f}" height="16" '
             f'fill="{_BAR_COLOURS[name]}"><title>{_esc(name)}: {fmt_seconds(value)}</title>'
             "</rect>"]
    if spread is not None:
        low, high = (x0 + s * scale for s in spread)
        parts.append(f'<line x1="{low:.1f}" y1="{y + 8}" x2="{high:.1f}" y2="{y + 8}" '
                     'stroke="#333" stroke-width="1"/>')
    end = x0 + max(length, (spread[1] * scale) if spread else 0)
    parts.append(f'<text x="{end + 4:.1f}" y="{y + 12}">{fmt_seconds(value)}</text>')
    return "".join(parts)


# ---------------------------------------------------------------------------------------------
# Every timed cell compared (%psc_timings)
# ---------------------------------------------------------------------------------------------

def latest_timed(reports: Iterable[Any]) -> list[Any]:
    """The last timed report of each (cell, signature), in the order cells were first timed."""
    latest: dict[tuple[str, str], Any] = {}
    for report in reports:
        if report.timings is not None:
            latest[(report.name, report.signature)] = report
    return list(latest.values())


def _median_spread(timings, which: str) -> str:
    low, high = timings.spread(which)
    median = timings.plain_median if which == "plain" else timings.compiled_median
    return f"{fmt_seconds(median)} ({fmt_seconds(low)} – {fmt_seconds(high)})"


def _rate_text(amount: float | None, seconds: float, unit: str) -> str:
    if not amount or not seconds:
        return ""
    return (f"{fmt_bytes(amount / seconds)}/s" if unit == "B"
            else fmt_count(amount / seconds, "FLOP/s"))


def _comparison_row(report) -> tuple[str, ...]:
    t = report.timings
    return (_esc(report.name), _esc(report.signature), _esc(_median_spread(t, "plain")),
            _esc(_median_spread(t, "compiled")), fmt_seconds(t.compile_seconds),
            fmt_seconds(t.first_call_seconds), _esc(f"{t.speedup:.3g}×"),
            _rate_text(t.flops, t.compiled_median, "flop"),
            _rate_text(t.bytes_accessed, t.compiled_median, "B"))


_COMPARISON_HEADER = ("cell", "signature", "plain median (min – max)",
                      "compiled median (min – max)", "compile", "first call", "speed-up",
                      "FLOP/s", "bytes/s")


def timings_overview_html(reports: Iterable[Any]) -> str:
    """One table and one chart comparing every timed cell: what `%psc_timings` shows."""
    timed = latest_timed(reports)
    if not timed:
        return _wrap(_para("No timed %%psc_jit cell yet (cells are timed on a cache miss, or "
                           "with --compare)."))
    table = _table(_COMPARISON_HEADER, [_comparison_row(r) for r in timed])
    return _wrap(f'<div class="psc-timings">{table}{timings_chart_svg(timed)}</div>')


def timings_overview_text(reports: Iterable[Any]) -> str:
    timed = latest_timed(reports)
    if not timed:
        return "No timed %%psc_jit cell yet (cells are timed on a cache miss, or with --compare)."
    return "\n".join(f"{r.name}: plain {_median_spread(r.timings, 'plain')}, compiled "
                     f"{_median_spread(r.timings, 'compiled')}, {fmt_speedup(r.timings.speedup)}"
                     for r in timed)


def timings_chart_svg(reports: list[Any], width: int = 560) -> str:
    """Per cell, a grey bar (plain median) and a blue one (compiled median) on one log scale,
    so cells whose times differ a thousandfold still read."""
    values = [v for r in reports for v in (r.timings.plain_median, r.timings.compiled_median)]
    low, high = _log_range(values)
    rows = []
    for i, report in enumerate(reports):
        for j, which in enumerate(("plain", "compiled")):
            value = getattr(report.timings, f"{which}_median")
            rows.append(_log_bar(30 * i + 13 * j, which, value, low, high, width - 260))
        rows.append(f'<text x="0" y="{30 * i + 16}">{_esc(report.name[:22])}</text>')
    height = 30 * len(reports) + 4
    return (f'<svg class="psc-timings-chart" xmlns="http://www.w3.org/2000/svg" width="{width}" '
            f'height="{height}" font-family="Helvetica,Arial,sans-serif" font-size="11">'
            f'{"".join(rows)}</svg>')


def _log_range(values: list[float]) -> tuple[float, float]:
    positive = [v for v in values if v > 0] or [1e-6]
    return math.log10(min(positive)) - 0.5, math.log10(max(positive)) + 0.1


def _log_bar(y: int, which: str, value: float, low: float, high: float, span: int) -> str:
    x0 = 150
    fraction = (math.log10(value) - low) / (high - low) if value > 0 else 0.0
    length = max(fraction * span, 1.0)
    return (f'<rect x="{x0}" y="{y + 4}" width="{length:.1f}" height="11" '
            f'fill="{_BAR_COLOURS[which]}"><title>{which}: {fmt_seconds(value)}</title></rect>'
            f'<text x="{x0 + length + 4:.1f}" y="{y + 13}">{which} {fmt_seconds(value)}</text>')


# ---------------------------------------------------------------------------------------------
# Text tab
# ---------------------------------------------------------------------------------------------

def text_html(report) -> str:
    """The IR, the StableHLO module and XLA's optimized HLO, each in an escaped <pre>."""
    texts = (("IR (traced graph)", str(report.graph) if report.graph is not None else None),
             ("StableHLO", report.stablehlo), ("Optimized HLO (after fusion)",
                                               report.optimized_hlo))
    return "".join(_text_block(title, text, open_=i == 0)
                   for i, (title, text) in enumerate(texts))


def _text_block(title: str, text: str | None, open_: bool) -> str:
    body = _pre(text) if text else _para("Not available for this run.")
    state = " open" if open_ else ""
    return (f'<details{state}><summary style="cursor:pointer; font-weight:bold">'
            f"{_esc(title)}</summary>{body}</details>")


# ---------------------------------------------------------------------------------------------
# The whole report
# ---------------------------------------------------------------------------------------------

TAB_TITLES = ("Summary", "Graph", "Fused", "Cache", "Timing", "Text")


def report_sections(report) -> list[tuple[str, str]]:
    """(tab title, HTML) for each tab, in order; graph tabs explain a missing `dot`."""
    renderers = (summary_html, graph_html, fused_html, cache_html, timing_html, text_html)
    return [(title, render(report)) for title, render in zip(TAB_TITLES, renderers,
                                                                 strict=True)]


def report_html(report) -> str:
    """Every tab stacked in one HTML document fragment (for front ends without widgets)."""
    return sections_html(report_sections(report))


def sections_html(sections: Iterable[tuple[str, str]]) -> str:
    """(title, HTML) sections stacked under headings."""
    body = "".join(f'<h3 style="margin:12px 0 4px 0; border-bottom:1px solid #ddd">'
                   f"{_esc(title)}</h3>{section}" for title, section in sections)
    return _wrap(body)
