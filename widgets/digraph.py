"""DOT through the graphviz package, in the house style.

Every graph the explorer draws is a `graphviz.Digraph` with the same defaults for the graph,
its nodes and its edges. Attribute values go through `_dot_text` on their way in, so user
text (names, source lines, reasons) is drawn as written: graphviz quotes it and escapes its
double quotes; backslashes stay backslashes; `<...>` is never read as an HTML label.
Highlighted nodes and clusters carry the SVG class `psc_hl`, which the explorer and the
browser test look for.
"""
from __future__ import annotations

from typing import Any, Iterable

import graphviz

__all__ = ["new_digraph", "new_cluster", "add_node", "add_edges", "hl_class", "Edge",
           "INPUT_FILL", "OUTPUT_FILL", "HIGHLIGHT_FILL", "HL_CLASS", "PALETTE"]

_GRAPH_ATTRS = {"rankdir": "TB", "fontname": "Helvetica", "fontsize": "11", "compound": "true",
                "nodesep": "0.25", "ranksep": "0.3"}
_NODE_ATTRS = {"shape": "box", "style": "rounded,filled", "fillcolor": "#ffffff",
               "fontname": "Helvetica", "fontsize": "10", "margin": "0.08,0.03"}
_EDGE_ATTRS = {"arrowsize": "0.6", "color": "#555555"}
INPUT_FILL = "#e3f2fd"
OUTPUT_FILL = "#e8f5e9"
HIGHLIGHT_FILL = "#ffd54f"
HL_CLASS = "psc_hl"          # the SVG class of highlighted nodes and clusters
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


def new_digraph(name: str) -> graphviz.Digraph:
    """An empty graph with the house defaults for the graph, its nodes and its edges."""
    return graphviz.Digraph(name, graph_attr=_GRAPH_ATTRS, node_attr=_NODE_ATTRS,
                            edge_attr=_EDGE_ATTRS)


def new_cluster(cluster_id: str, label: str, **attrs: Any) -> graphviz.Digraph:
    """An empty cluster; its parent takes it (`parent.subgraph(cluster)`) once it is filled."""
    return graphviz.Digraph(cluster_id, graph_attr=_attrs({"label": label, **attrs}))


def add_node(dot: graphviz.Digraph, node_id: str, **attrs: Any) -> None:
    dot.node(node_id, **_attrs(attrs))


def add_edges(dot: graphviz.Digraph, edges: Iterable[Edge]) -> None:
    for tail, head, attrs in edges:
        dot.edge(tail, head, **_attrs(attrs))


def hl_class(lit: bool) -> dict[str, str]:
    """The `class` attribute of a highlighted node or cluster (none when not lit)."""
    return {"class": HL_CLASS} if lit else {}
