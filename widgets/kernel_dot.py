"""XLA's fused kernels as DOT: one cluster per kernel (name, kind, fused ops, estimated bytes
and flops, measured time when profiled, source lines) holding the IR equations it fused,
nested where a kernel runs in another's body (a loop's), or one node per kernel when
collapsed; edges where the IR's data flow links them. Also the kernel words the table and
the explorer's lists share: colours (one per kernel, or by measured time), op summaries,
lines, labels."""
from __future__ import annotations

import dataclasses
import itertools
from collections import Counter
from typing import Any, Iterable, Iterator

import graphviz

from psc_jit.core.ir import Graph, Var

from .digraph import (HIGHLIGHT_FILL, INPUT_FILL, OUTPUT_FILL, PALETTE, Edge, add_edges,
                      add_node, hl_class, new_cluster, new_digraph)
from .graph_dot import (add_io_nodes, avals_text, eqn_node_id, eqn_tooltip, line_text,
                        named_subgraphs)
from .units import fmt_bytes, fmt_count, fmt_seconds

__all__ = ["kernels_to_dot", "kernel_colours", "time_colours", "kernel_labels", "ops_summary",
           "lines_text"]


def kernel_colours(model) -> dict[str, str]:
    """Kernel name -> its colour (the Fused graph and the source view agree)."""
    names = dict.fromkeys(kernel.name for kernel in model.all_kernels())
    return {name: PALETTE[i % len(PALETTE)] for i, name in enumerate(names)}


TIME_COLD, TIME_HOT = (255, 243, 224), (229, 57, 53)   # no time .. the slowest kernel
UNMEASURED = "#eeeeee"


def time_colours(model, measured) -> dict[str, str]:
    """Kernel name -> a colour from pale (no time) to red (the slowest kernel), by measured
    time; kernels the profile has no time for are grey."""
    slowest = max(measured.seconds.values(), default=0.0)
    colours = {}
    for kernel in model.all_kernels():
        seconds = measured.of(kernel.name)
        colours[kernel.name] = UNMEASURED if seconds is None else _heat(
            seconds / slowest if slowest else 0.0)
    return colours


def _heat(fraction: float) -> str:
    channels = (round(cold + (hot - cold) * fraction)
                for cold, hot in zip(TIME_COLD, TIME_HOT, strict=True))
    return "#" + "".join(f"{channel:02x}" for channel in channels)


def ops_summary(fused_ops: Iterable[str], limit: int = 6) -> str:
    """`multiply×2, reduce, add`: each op once, with its count, in first-seen order."""
    counts = Counter(fused_ops)
    parts = [op if n == 1 else f"{op}×{n}" for op, n in counts.items()]
    return ", ".join(parts[:limit]) + (f", … (+{len(parts) - limit})" if len(parts) > limit
                                       else "")


def lines_text(kernel, filename: str | None = None) -> str:
    lines = dict.fromkeys(source.line if filename in (None, source.file)
                          else f"{source.file}:{source.line}" for source in kernel.source_lines)
    return ", ".join(map(str, lines))


def _kernel_cluster_label(kernel, measured=None) -> str:
    rows = [f"{kernel.name} · {kernel.kind}", ops_summary(kernel.fused_ops),
            f"{kernel.shape} · {fmt_bytes(kernel.bytes_estimate)} · "
            f"{fmt_count(kernel.flops_estimate, 'flop')}"]
    seconds = measured.of(kernel.name) if measured is not None else None
    if seconds is not None:
        rows.append(f"measured {fmt_seconds(seconds)}")
    lines = lines_text(kernel)
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
    measured: Any = None              # core's KernelTimes: a "measured" row per kernel


def kernels_to_dot(model, graph: Graph | None, highlight_kernels: Iterable[str] = (),
                   highlight_labels: Iterable[str] = (), collapse: bool = False,
                   input_names: Iterable[str] = (), output_names: Iterable[str] = (),
                   source_text: dict | None = None, colours: dict[str, str] | None = None,
                   measured=None) -> str:
    """One cluster per kernel (name, kind, fused ops, bytes, flops, measured time, lines)
    holding the IR equations it fused, or one node per kernel when `collapse`; edges between
    kernels where the IR's data flow links them. Kernels are filled with `colours` (default:
    one pastel each). Highlighted kernels and equations have class `psc_hl`."""
    eqns = _eqns_by_label(graph)
    ctx = _KernelDot(eqns, colours or kernel_colours(model), {}, {}, itertools.count(),
                     lit_kernels=frozenset(highlight_kernels),
                     lit_labels=frozenset(highlight_labels), collapse=collapse,
                     source_text=source_text, measured=measured)
    dot = new_digraph("kernels")
    for kernel in model.kernels:
        if collapse:
            _add_collapsed_kernel(dot, kernel, ctx)
        else:
            dot.subgraph(_kernel_cluster(kernel, ctx))
    if graph is None:
        return dot.source
    add_io_nodes(dot, "in", graph.in_vars, tuple(input_names), INPUT_FILL)
    add_io_nodes(dot, "out", graph.out_atoms, tuple(output_names), OUTPUT_FILL)
    add_edges(dot, _kernel_edges(graph, ctx))
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
            **hl_class(lit)}


def _kernel_cluster(kernel, ctx: _KernelDot,
                    enclosing: frozenset[int] = frozenset()) -> graphviz.Digraph:
    """`cluster_k{index}`: the kernel's own equations, then its body's kernels' clusters."""
    index = next(ctx.counter)
    ctx.enclosing[index] = enclosing
    cluster = new_cluster(f"cluster_k{index}", _kernel_cluster_label(kernel, ctx.measured),
                          style="rounded,filled",
                          **_kernel_style(kernel, ctx, _kernel_lit(kernel, ctx)))
    placed = _placed_labels(kernel)
    for label in placed:
        _add_kernel_eqn_node(cluster, index, label, ctx)
    if not placed and not kernel.body:
        add_node(cluster, f"k{index}", label="(no IR equation recorded)", shape="plaintext",
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
    add_node(dot, f"k{index}", label=_kernel_cluster_label(kernel, ctx.measured) + hidden,
             tooltip=f"{kernel.name}: " + ", ".join(dict.fromkeys(labels)),
             style="rounded,filled", **_kernel_style(kernel, ctx, lit))


def _walk_kernels(kernel) -> Iterator[Any]:
    yield kernel
    for inner in kernel.body:
        yield from _walk_kernels(inner)


def _add_kernel_eqn_node(dot: graphviz.Digraph, index: int, label: str,
                         ctx: _KernelDot) -> None:
    node_id = f"k{index}_{eqn_node_id(label)}"
    ctx.kernel_of[node_id] = index
    ctx.nodes_of.setdefault(label, []).append(node_id)
    lit = label in ctx.lit_labels
    style = {"fillcolor": HIGHLIGHT_FILL if lit else None, "penwidth": "2" if lit else None,
             **hl_class(lit)}
    eqn = ctx.eqns.get(label)
    if eqn is None:
        add_node(dot, node_id, label=label, tooltip=f"{label} (not in this graph)", **style)
        return
    text = f"{label}\n{avals_text(eqn.outs)}" + (f"\n{line_text(eqn)}" if eqn.source else "")
    add_node(dot, node_id, label=text, tooltip=eqn_tooltip(eqn, label, ctx.source_text),
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
        for _, sub in named_subgraphs(eqn):
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
