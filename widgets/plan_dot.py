"""A split cell in one picture: its compiled regions and host steps in source order, each
region a box (its lines, `N primitives → M kernels`, hit or miss), each host step an oval
(its line, its code; why it runs on the host in its tooltip), each loop Python runs a
cluster around the parts of its body (with the passes it made)."""
from __future__ import annotations

import itertools

from .digraph import add_edges, add_node, new_cluster, new_digraph
from .markup import paragraph_html, section_html
from .summary import fusion_text
from .svg import svg_or_hint

__all__ = ["plan_dot", "plan_html", "REGION_FILL", "PLAIN_FILL", "HOST_FILL"]

REGION_FILL = "#e8f5e9"     # compiled
PLAIN_FILL = "#fff8e1"      # a region that ran as plain Python
HOST_FILL = "#eceff1"


def plan_dot(report) -> str:
    """The DOT of a split run's parts (see the module docstring), joined in the order they
    run."""
    dot = new_digraph("plan")
    reports = {region.part: region for region in report.regions}
    chain: list[str] = []
    _add_parts(dot, report.plan, reports, _Loops(report.host_passes, report.predrawn), chain)
    add_edges(dot, [(a, b, {}) for a, b in itertools.pairwise(chain)])
    return dot.source


def plan_html(report) -> str:
    """The picture with the summary's sentence above it (empty for a cell not split)."""
    if not report.split:
        return ""
    text = paragraph_html(report.split_summary())
    return section_html("Regions and host steps", text + svg_or_hint(plan_dot(report)))


class _Loops:
    """What the report says of the loops Python ran: passes, and those that rolled with their
    draws made before them."""

    def __init__(self, passes: dict, predrawn: dict):
        self.passes, self.predrawn = passes, predrawn


def _add_parts(dot, parts, reports, loops, chain) -> None:
    for part in parts:
        if hasattr(part, "bodies") and (part.path, part.index) in loops.predrawn:
            _add_rolled(dot, part, reports, loops, chain)
        elif hasattr(part, "bodies"):
            _add_block(dot, part, reports, loops, chain)
        elif hasattr(part, "first_line"):
            _add_region(dot, part, reports.get(part.key), chain)
        else:
            node = f"step_{_node_id(part.path, part.index)}"
            add_node(dot, node, label=f"line {part.line}: {part.construct}", shape="ellipse",
                     fillcolor=HOST_FILL, tooltip=part.reason)
            chain.append(node)


def _add_region(dot, region, report, chain) -> None:
    if report is None:          # (it never ran: an earlier part raised)
        return
    node = f"region_{_node_id(region.path, region.start)}"
    if report.compiled:
        state = "hit" if report.cache_hit else "compiled"
        label, fill = f"{region.lines()}\n{fusion_text(report)} · {state}", REGION_FILL
    else:
        label, fill = f"{region.lines()}\nplain Python", PLAIN_FILL
    add_node(dot, node, label=label, fillcolor=fill, tooltip=report.fallback_reason or "")
    chain.append(node)


def _add_rolled(dot, block, reports, loops, chain) -> None:
    """A loop that rolled: its draws for every pass (one host step), then its region."""
    key = (block.path, block.index)
    node = f"draws_{_node_id(*key)}"
    add_node(dot, node, label=f"line {block.line}: draws for {loops.passes.get(key, 0)} passes"
             f"\n{loops.predrawn[key]}", shape="ellipse", fillcolor=HOST_FILL,
             tooltip="made before the loop, in one call each, as the passes would make them")
    chain.append(node)
    _add_region(dot, block.rolled(), reports.get(block.rolled().key), chain)


def _add_block(dot, block, reports, loops, chain) -> None:
    count = loops.passes.get((block.path, block.index))
    label = f"the `{block.kind}` at line {block.line} runs in Python" + (
        f" ({count} passes)" if count is not None else "")
    cluster = new_cluster(f"cluster_{_node_id(block.path, block.index)}", label,
                          style="dashed", color="#90a4ae", tooltip=block.reason)
    for body in block.bodies:
        _add_parts(cluster, body, reports, loops, chain)
    dot.subgraph(cluster)


def _node_id(path, index) -> str:
    return "_".join(str(step) for step in (*path, index))
