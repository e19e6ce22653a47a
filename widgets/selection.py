"""What the explorer highlights when a kernel, a source line or a search is chosen.

Pure functions of a RunReport: a choice becomes a `Highlight` (the IR equations, the kernels
and the cell lines that belong together). Equations, kernels and lines are linked through the
kernels' equation labels and source lines (from XLA's op metadata) and the equations' own
source locations. The page's script makes the same choices in the browser from `page_data`,
which holds these highlights for every kernel, line and equation.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Iterable

from .graph_dot import eqn_node_id
from .kernel_dot import kernel_labels
from .source import kernel_index, kernel_seconds, links
from .units import fmt_seconds

__all__ = ["Highlight", "for_kernel", "for_line", "for_query", "page_data"]


@dataclass(frozen=True)
class Highlight:
    labels: frozenset[str] = frozenset()      # IR equation labels, `e5:tanh`
    kernels: frozenset[str] = frozenset()     # kernel names
    lines: frozenset[int] = frozenset()       # cell line numbers
    text: str = ""                            # the choice, in words

    def __bool__(self) -> bool:
        return bool(self.labels or self.kernels or self.lines)

    def __or__(self, other: Highlight) -> Highlight:
        return Highlight(self.labels | other.labels, self.kernels | other.kernels,
                         self.lines | other.lines, self.text or other.text)

    def describe(self) -> str:
        """`kernel add_tanh_fusion: 4 equations, 1 kernel, line 2`."""
        lines = ", ".join(map(str, sorted(self.lines))) or "none"
        counts = (f"{_plural(len(self.labels), 'equation')}, "
                  f"{_plural(len(self.kernels), 'kernel')}, "
                  f"{'line' if len(self.lines) == 1 else 'lines'} {lines}")
        return f"{self.text}: {counts}" if self.text else counts


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"


# ---------------------------------------------------------------------------------------------
# Choices (read from the report's `source.links`, indexed once)
# ---------------------------------------------------------------------------------------------

def _walk(kernel) -> Iterable[Any]:
    yield kernel
    for inner in kernel.body:
        yield from _walk(inner)


def _kernel_lines(kernel, filename: str) -> set[int]:
    return {source.line for source in kernel.source_lines if source.file == filename}


def for_kernel(report, name: str) -> Highlight:
    """A kernel (and the kernels of its body), its equations and the lines they came from."""
    found = links(report)
    kernel = found.kernels.get(name)
    if kernel is None:
        return Highlight(text=f"kernel {name} (not in this run)")
    inner = list(_walk(kernel))
    labels = frozenset(label for k in inner for label in kernel_labels(k))
    lines = {line for k in inner for line in _kernel_lines(k, report.filename)}
    lines |= {found.eqn_lines[label] for label in labels if label in found.eqn_lines}
    return Highlight(labels, frozenset(k.name for k in inner), frozenset(lines),
                     f"kernel {name}")


def for_line(report, line: int) -> Highlight:
    """A cell line, the equations traced from it and the kernels they went into."""
    found = links(report)
    labels = frozenset(found.line_labels.get(line, ()))
    kernels = set(found.line_kernels.get(line, ()))
    kernels.update(name for label in labels for name in found.label_kernels.get(label, ()))
    return Highlight(labels, frozenset(kernels), frozenset({line}), f"line {line}")


_LINE_QUERY = re.compile(r"^\s*(?:line\s*)?(\d+)\s*$", re.I)


def for_query(report, query: str) -> Highlight:
    """A search: `3` or `line 3` is that line; other text matches equation labels and
    primitive names (`tanh`, `e5`), kernel names, kinds and fused ops, case-insensitively."""
    line = _LINE_QUERY.match(query)
    if line:
        return for_line(report, int(line[1]))
    needle = query.strip().lower()
    if not needle:
        return Highlight()
    found = Highlight(text=f"search {query.strip()!r}")
    for label in _matching_labels(report, needle):
        found = found | _for_label(report, label)
    for kernel in links(report).kernels.values():
        if _kernel_matches(kernel, needle):
            found = found | for_kernel(report, kernel.name)
    return found


def _matching_labels(report, needle: str) -> list[str]:
    if report.graph is None:
        return []
    return [label for label in report.graph.labels().values()
            if needle in label.lower() or label.lower().split(":")[0] == needle]


def _kernel_matches(kernel, needle: str) -> bool:
    words = (kernel.name, kernel.kind, *kernel.fused_ops)
    return any(needle in word.lower() for word in words)


def _for_label(report, label: str) -> Highlight:
    found = links(report)
    kernels = frozenset(found.label_kernels.get(label, ()))
    line = found.eqn_lines.get(label)
    return Highlight(frozenset({label}), kernels,
                     frozenset({line}) if line is not None else frozenset())


# ---------------------------------------------------------------------------------------------
# The same choices, made in the browser: the page's data
# ---------------------------------------------------------------------------------------------

def _choice(highlight: Highlight, index: dict[str, int]) -> dict[str, Any]:
    return {"kernels": sorted(index[name] for name in highlight.kernels if name in index),
            "nodes": sorted({eqn_node_id(label) for label in highlight.labels}),
            "lines": sorted(highlight.lines)}


def page_data(report) -> dict[str, Any]:
    """What the page's script needs to highlight without Python: for each kernel (by index),
    each cell line and each equation node, the kernels, equation nodes and lines that go with
    it (the same `Highlight`s as `for_kernel`, `for_line` and a search for the label), and
    the words a search matches."""
    index = kernel_index(report)
    seconds = kernel_seconds(report) or {}
    kernels = []
    for kernel in links(report).kernels.values():
        taken = seconds.get(kernel.name)
        kernels.append({"name": kernel.name, **_choice(for_kernel(report, kernel.name), index),
                        "words": [kernel.name, kernel.kind, *dict.fromkeys(kernel.fused_ops)],
                        "time": f"{fmt_seconds(taken)} of the median" if taken else None})
    numbered = enumerate(report.source.splitlines(), report.line_offset + 1)
    lines = {str(number): _choice(for_line(report, number), index)
             for number, text in numbered if text.strip()}
    labels = report.graph.labels().values() if report.graph is not None else ()
    nodes = {eqn_node_id(label): {"label": label, **_choice(_for_label(report, label), index)}
             for label in labels}
    return {"name": report.name, "kernels": kernels, "lines": lines, "nodes": nodes}
