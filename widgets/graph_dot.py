"""The traced IR as DOT: a node per equation, input and output; an edge per operand; a
cluster per loop or branch equation holding its sub-graphs (or one node when loops are
collapsed). The equation words here (node id, label, tooltip) are the kernels' drawing's too.
"""
from __future__ import annotations

import dataclasses
import re
from collections import Counter
from typing import Any, Iterable

import graphviz

from psc_jit.core.ir import Graph, Literal, Var

from .digraph import (HIGHLIGHT_FILL, INPUT_FILL, OUTPUT_FILL, Edge, add_edges, add_node,
                      hl_class, new_cluster, new_digraph)

__all__ = ["graph_to_dot", "FAN_OUT_LIMIT", "STEP_PRIMITIVES", "add_io_nodes", "eqn_node_id", "eqn_tooltip",
           "avals_text", "line_text", "named_subgraphs"]

# An input read by more equations than this is drawn once more next to each reader: edges
# from the top of a long graph to every reader make Graphviz's layout take minutes.
FAN_OUT_LIMIT = 4


# Primitives that only re-lay out or repeat values: `hide_steps` draws the graph without them
# (their operands' producers linked straight to their readers).
STEP_PRIMITIVES = frozenset({"reshape", "broadcast_in_dim"})


@dataclasses.dataclass
class _DotContext:
    labels: dict[int, str]            # eqn id -> `e12:mul`
    highlight: frozenset[str]
    env: dict[int, str]               # var id -> id of the node that produced it
    edges: list[Edge]
    collapse_loops: bool = False
    source_text: dict | None = None   # (file, line) -> the line's code, for tooltips
    node_classes: dict[str, str] = dataclasses.field(default_factory=dict)  # label -> classes
    hide_steps: bool = False
    copies: dict[int, str] = dataclasses.field(default_factory=dict)  # var id -> input name
    extra: list[tuple[str, dict]] = dataclasses.field(default_factory=list)
    # (node id, attributes) of the per-use input copies, drawn at the top level


def graph_to_dot(graph: Graph, highlight_labels: Iterable[str] = (),
                 input_names: Iterable[str] = (), output_names: Iterable[str] = (),
                 collapse_loops: bool = False, source_text: dict | None = None,
                 node_classes: dict[str, str] | None = None, hide_steps: bool = False) -> str:
    """One node per equation (primitive, out type, line), input and output nodes, an edge per
    operand; an equation holding sub-graphs (loop, cond) is a cluster drawing them, or one
    node when `collapse_loops`. Highlighted equations are filled and have class `psc_hl`;
    `node_classes` adds classes to equations' nodes by label (the report's page colours and
    highlights them by class). `hide_steps` leaves out STEP_PRIMITIVES."""
    ctx = _DotContext(graph.labels(), frozenset(highlight_labels), {}, [], collapse_loops,
                      source_text, node_classes or {}, hide_steps)
    dot = new_digraph("ir")
    names = _io_names("in", graph.in_vars, tuple(input_names))
    add_io_nodes(dot, "in", graph.in_vars, names, INPUT_FILL)
    ctx.env.update({v.id: f"in{i}" for i, v in enumerate(graph.in_vars)})
    ctx.copies.update(_fanned_out_inputs(graph, names))
    _add_graph_eqns(dot, graph, ctx)
    for node_id, attrs in ctx.extra:
        add_node(dot, node_id, **attrs)
    add_io_nodes(dot, "out", graph.out_atoms, tuple(output_names), OUTPUT_FILL)
    ctx.edges += _out_edges(graph.out_atoms, "out", ctx.env)
    add_edges(dot, ctx.edges)
    return dot.source


def _io_names(prefix: str, atoms, names: tuple[str, ...], shown: str | None = None
              ) -> tuple[str, ...]:
    if len(names) != len(atoms):
        return tuple(f"{shown or prefix} {i}" for i in range(len(atoms)))
    return names


def add_io_nodes(dot: graphviz.Digraph, prefix: str, atoms, names: tuple[str, ...], fill: str,
                 shown: str | None = None) -> None:
    """Nodes `{prefix}0`, ... named by `names`, or else `{shown or prefix} 0`, ..."""
    names = _io_names(prefix, atoms, names, shown)
    for i, (name, atom) in enumerate(zip(names, atoms, strict=True)):
        add_node(dot, f"{prefix}{i}", label=f"{name}\n{atom.aval}", shape="ellipse",
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
            "fillcolor": INPUT_FILL, "fontsize": "9",
            "tooltip": f"{name}: {_aval_words(atom.aval)} "
                       "(an input, drawn again next to each use)"}


def _out_edges(atoms, prefix: str, env: dict[int, str], **attrs) -> list[Edge]:
    return [(env[atom.id], f"{prefix}{i}", attrs) for i, atom in enumerate(atoms)
            if isinstance(atom, Var) and atom.id in env]


def _add_graph_eqns(dot: graphviz.Digraph, graph: Graph, ctx: _DotContext) -> None:
    for eqn in graph.eqns:
        if ctx.hide_steps and eqn.prim.name in STEP_PRIMITIVES:
            _pass_through(eqn, ctx)
            continue
        node_id = eqn_node_id(ctx.labels[eqn.id])
        _add_eqn(dot, eqn, node_id, ctx)
        ctx.edges += _operand_edges(eqn, node_id, ctx)
        ctx.env.update({out.id: node_id for out in eqn.outs})


def _pass_through(eqn, ctx: _DotContext) -> None:
    """A hidden step: its result is drawn as coming from its operand's producer."""
    source = next((a for a in eqn.inputs if isinstance(a, Var) and a.id in ctx.env), None)
    if source is None:
        return
    for out in eqn.outs:
        ctx.env[out.id] = ctx.env[source.id]
        if source.id in ctx.copies:
            ctx.copies[out.id] = ctx.copies[source.id]


def _body_labels(eqn, labels: dict[int, str]) -> set[str]:
    return {labels[inner.id] for _, sub in named_subgraphs(eqn) for inner in sub.all_eqns()}


def _add_eqn(dot: graphviz.Digraph, eqn, node_id: str, ctx: _DotContext) -> None:
    """The equation's node; an equation holding sub-graphs is a cluster holding its node and
    a cluster per sub-graph, unless loops are collapsed."""
    label = ctx.labels[eqn.id]
    subs = named_subgraphs(eqn)
    collapsed = bool(subs) and ctx.collapse_loops
    inside = _body_labels(eqn, ctx.labels) if collapsed else set()
    lit = label in ctx.highlight or bool(inside & ctx.highlight)
    text = _eqn_node_label(eqn) + (f"\n({len(inside)} equations inside)" if collapsed else "")
    classes = " ".join(filter(None, [hl_class(lit).get("class"), ctx.node_classes.get(label)]))
    attrs = {"label": text, "tooltip": eqn_tooltip(eqn, label, ctx.source_text),
             "fillcolor": HIGHLIGHT_FILL if lit else None, "penwidth": "2" if lit else None,
             "shape": "box3d" if subs else None, "class": classes or None}
    if not subs or collapsed:
        add_node(dot, node_id, **attrs)
        return
    header = f"{label} ({line_text(eqn)})" if eqn.source is not None else label
    cluster = new_cluster(f"cluster_{node_id}", header, style="rounded,dashed")
    add_node(cluster, node_id, **attrs)
    for key, sub in subs:
        sub_id = f"{node_id}_{eqn_node_id(key)}"
        cluster.subgraph(_subgraph_cluster(sub_id, key, sub, node_id, ctx))
    dot.subgraph(cluster)


def _subgraph_cluster(prefix: str, key: str, sub: Graph, owner: str,
                      ctx: _DotContext) -> graphviz.Digraph:
    cluster = new_cluster(f"cluster_{prefix}", key, style="rounded")
    add_io_nodes(cluster, f"{prefix}_in", sub.in_vars, (), "#f5f5f5", shown="in")
    ctx.edges += [(owner, f"{prefix}_in{i}", {"style": "dashed"})
                  for i in range(len(sub.in_vars))]
    ctx.env.update({v.id: f"{prefix}_in{i}" for i, v in enumerate(sub.in_vars)})
    _add_graph_eqns(cluster, sub, ctx)
    add_io_nodes(cluster, f"{prefix}_out", sub.out_atoms, (), "#f5f5f5", shown="out")
    ctx.edges += _out_edges(sub.out_atoms, f"{prefix}_out", ctx.env)
    return cluster


# ---------------------------------------------------------------------------------------------
# An equation in words: its node id, label, types, line, tooltip and sub-graphs
# ---------------------------------------------------------------------------------------------

def eqn_node_id(label: str) -> str:
    """`e12:mul` -> `e12` (a DOT identifier)."""
    return re.sub(r"\W", "_", label.split(":", 1)[0])


def avals_text(atoms: Iterable[Any]) -> str:
    return ", ".join(str(atom.aval) for atom in atoms)


def _literal_text(literal: Literal) -> str:
    if literal.value.ndim == 0:
        return repr(literal.value.item())
    return f"const {literal.aval}"


def line_text(eqn) -> str:
    return f"line {eqn.source.line}" if eqn.source is not None else ""


def _aval_words(aval) -> str:
    """`f64[300,200] (shape (300, 200), dtype float64)`."""
    return f"{aval} (shape {tuple(aval.shape)}, dtype {aval.dtype})"


def eqn_tooltip(eqn, label: str, source_text: dict | None = None) -> str:
    """Hover text of an equation's node: label, result and operand types, source line."""
    rows = [label] + [f"out: {_aval_words(out.aval)}" for out in eqn.outs]
    rows.append(f"in: {avals_text(eqn.inputs)}")
    if eqn.source is not None:
        code = (source_text or {}).get((eqn.source.file, eqn.source.line))
        rows.append(f"line {eqn.source.line}: {code.strip()}" if code is not None
                    else f"source: {eqn.source}")
    return "\n".join(rows)


def _eqn_node_label(eqn) -> str:
    literals = [_literal_text(a) for a in eqn.inputs if isinstance(a, Literal)]
    rows = [eqn.prim.name, avals_text(eqn.outs)]
    rows += [f"with {', '.join(literals)}"] if literals else []
    rows += [line_text(eqn)] if eqn.source is not None else []
    return "\n".join(rows)


def named_subgraphs(eqn) -> list[tuple[str, Graph]]:
    """(param name, graph) of each sub-graph an equation holds: `body`, `branches[1]`."""
    found = []
    for key, value in eqn.params.items():
        if isinstance(value, Graph):
            found.append((key, value))
        elif isinstance(value, tuple):
            found += [(f"{key}[{i}]", v) for i, v in enumerate(value) if isinstance(v, Graph)]
    return found
