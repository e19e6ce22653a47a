"""XLA's kernels as DOT: one box per kernel (name, kind, fused ops, shape, flops, bytes, source
lines), a loop's kernels inside a cluster of their loop, and an edge wherever the optimized
module feeds one kernel's result to another (`Kernel.inputs`), from the program's inputs and
to its outputs. Also the kernel words the table, the source view and the page share: colours
(one per kernel, or by measured time), op summaries, lines, labels.

The drawing carries no measured time: it stays the same from one run of a cell to the next,
so its layout is made once (`svg.lay_out` caches it) and the page colours it by time."""
from __future__ import annotations

from collections import Counter
from typing import Iterable

import graphviz

from psc_jit.core.ir import Graph

from .digraph import INPUT_FILL, OUTPUT_FILL, PALETTE, add_edges, add_node, new_cluster, new_digraph
from .graph_dot import add_io_nodes
from .units import fmt_bytes, fmt_count

__all__ = ["kernels_to_dot", "kernel_colours", "time_colours", "kernel_labels", "ops_summary",
           "lines_text", "kernel_class", "flops_text"]


def kernel_colours(model) -> dict[str, str]:
    """Kernel name -> its colour (the drawings and the source view agree)."""
    names = dict.fromkeys(kernel.name for kernel in model.all_kernels())
    return {name: PALETTE[i % len(PALETTE)] for i, name in enumerate(names)}


TIME_COLD, TIME_HOT = (255, 243, 224), (229, 57, 53)   # no time .. the slowest kernel
UNMEASURED = "#eeeeee"


def time_colours(model, seconds: dict[str, float]) -> dict[str, str]:
    """Kernel name -> a colour from pale (no time) to red (the slowest kernel), by measured
    time; kernels without a time are grey."""
    slowest = max(seconds.values(), default=0.0)
    colours = {}
    for kernel in model.all_kernels():
        taken = seconds.get(kernel.name)
        colours[kernel.name] = UNMEASURED if taken is None else _heat(
            taken / slowest if slowest else 0.0)
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


def flops_text(kernel) -> str:
    """`268 MFLOP`, `1.02 kFLOP + 1 k transcendental`, or `FLOP unknown` (a loop whose
    iterations are not known before it runs)."""
    if kernel.flops is None:
        return "FLOP unknown"
    text = fmt_count(kernel.flops, "FLOP")
    return text + (f" + {fmt_count(kernel.transcendentals)} transcendental"
                   if kernel.transcendentals else "")


def kernel_labels(kernel) -> tuple[str, ...]:
    """The IR equation labels a kernel holds. XLA joins the op names of ops it merged with
    `;` (`e1:multiply;e0:broadcast_in_dim`); each is its own label here."""
    parts = (part.strip() for label in kernel.eqn_labels for part in label.split(";"))
    return tuple(dict.fromkeys(part for part in parts if part))


def kernel_class(index: int) -> str:
    """The class of a kernel's box (and of its equations' nodes in the traced graph) in the
    SVG: `psc-k3` for the kernel at index 3 of `FusionModel.all_kernels()`."""
    return f"psc-k{index}"


def _box_label(kernel) -> str:
    lines = lines_text(kernel)
    rows = [f"{kernel.name} · {kernel.kind}", ops_summary(kernel.fused_ops),
            f"{kernel.shape} · {flops_text(kernel)} · {fmt_bytes(kernel.bytes_estimate)}"]
    if kernel.trip_count is not None:
        rows.append(f"{kernel.trip_count:,} iterations")
    return "\n".join(rows + ([f"{'lines' if ',' in lines else 'line'} {lines}"] if lines else []))


def kernels_to_dot(model, graph: Graph | None = None, input_names: Iterable[str] = (),
                   output_names: Iterable[str] = (), colours: dict[str, str] | None = None
                   ) -> str:
    """One box `k{index}` per kernel (index in `model.all_kernels()`), filled with `colours`
    (default: one pastel each) and of class `psc-kernel psc-k{index}`; a kernel with a body (a
    loop, a conditional) is a cluster `cluster_k{index}` holding its box and its body's
    boxes. Edges follow the optimized module's operands; with the traced `graph`, its inputs
    (`parameter N`) and outputs are drawn too."""
    colours = colours or kernel_colours(model)
    index = {kernel.name: i for i, kernel in enumerate(model.all_kernels())}
    dot = new_digraph("kernels")
    for kernel in model.kernels:
        _add_kernel(dot, kernel, index, colours)
    inputs = len(graph.in_vars) if graph is not None else 0
    if graph is not None:
        add_io_nodes(dot, "in", graph.in_vars, tuple(input_names), INPUT_FILL)
        add_io_nodes(dot, "out", graph.out_atoms, tuple(output_names), OUTPUT_FILL)
    edges = [(_source_node(source, index, inputs), f"k{index[kernel.name]}", {})
             for kernel in model.all_kernels() for source in kernel.inputs]
    if graph is not None:
        edges += [(f"k{index[name]}", f"out{i}", {})
                  for i, names in enumerate(model.outputs[:len(graph.out_atoms)])
                  for name in names if name in index]
    unique = dict.fromkeys((tail, head) for tail, head, _ in edges if tail is not None)
    add_edges(dot, [(tail, head, {}) for tail, head in unique])
    return dot.source


def _source_node(source: str, index: dict[str, int], inputs: int) -> str | None:
    """The node a kernel's operand comes from: a kernel's box, or an input (hoisted
    constants, parameters past the graph's inputs, are not drawn)."""
    if source in index:
        return f"k{index[source]}"
    number = source.removeprefix("parameter ")
    if number.isdigit() and int(number) < inputs:
        return f"in{number}"
    return None


def _add_kernel(dot: graphviz.Digraph, kernel, index: dict[str, int],
                colours: dict[str, str]) -> None:
    node = f"k{index[kernel.name]}"
    classes = f"psc-kernel {kernel_class(index[kernel.name])}"
    attrs = {"label": _box_label(kernel), "tooltip": f"{kernel.name}: " + ", ".join(
        kernel_labels(kernel)), "fillcolor": colours.get(kernel.name, "#eeeeee"),
        "class": classes, "shape": "box3d" if kernel.body else None}
    if not kernel.body:
        add_node(dot, node, **attrs)
        return
    cluster = new_cluster(f"cluster_{node}", "", style="rounded,dashed", **{"class": classes})
    add_node(cluster, node, **attrs)
    for inner in kernel.body:
        _add_kernel(cluster, inner, index, colours)
    dot.subgraph(cluster)
