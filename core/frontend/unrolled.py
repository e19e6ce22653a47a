"""Where the equations of a large graph come from, loop by loop, for the notes a report
shows (`unroll_notes`): a loop psc_jit unrolled says why (`note_unrolled`, told by the rolling
helpers), any other loop says how to write it so that it rolls.
"""
from __future__ import annotations

import ast
import collections
import linecache

from ..ir import Graph

LARGE_GRAPH = 2_000           # equations; above this, unroll_notes explains where they came from

_UNROLLED: collections.OrderedDict[tuple[str, int], str] = collections.OrderedDict()


def note_unrolled(file: str, line: int, reason: str) -> None:
    _UNROLLED[(file, line)] = reason
    _UNROLLED.move_to_end((file, line))
    while len(_UNROLLED) > 256:
        _UNROLLED.popitem(last=False)


def unroll_notes(graph: Graph, limit: int = LARGE_GRAPH) -> list[str]:
    """Where the equations of a large graph come from, per loop (or line), with what to do:
    `line 3: 12,000 equations from an unrolled loop; write it as a for loop over range(...)
    so psc_jit can roll it`. Empty when the graph has at most `limit` equations."""
    eqns = list(graph.all_eqns())
    if len(eqns) <= limit:
        return []
    counts: collections.Counter = collections.Counter()
    for eqn in eqns:
        if eqn.source is not None:
            counts[_enclosing_loop(eqn.source.file, eqn.source.line)] += 1
    notes = []
    for (file, line, is_loop), n in counts.most_common():
        if n < max(limit // 10, 50) or len(notes) == 3:
            break
        notes.append(_note(file, line, is_loop, n))
    return notes


def _note(file: str, line: int, is_loop: bool, n: int) -> str:
    reason = _UNROLLED.get((file, line))
    if reason:
        return (f"line {line}: {n:,} equations from a loop psc_jit unrolled because {reason}; "
                "change that so it can be rolled into one XLA loop")
    if is_loop:
        text = linecache.getline(file, line).strip()
        what = "a while loop with a static test" if text.startswith("while") else \
            "an unrolled loop"
        return (f"line {line}: {n:,} equations from {what}; write it as a for loop over "
                "range(...) so psc_jit can roll it")
    return f"line {line}: {n:,} equations"


def _enclosing_loop(file: str, line: int) -> tuple[str, int, bool]:
    """(file, line of the outermost loop around `line`, True) or (file, line, False)."""
    loops = _loop_spans(file)
    for start, end in loops:
        if start <= line <= end:
            return file, start, True
    return file, line, False


_SPANS: dict[tuple[str, int], list[tuple[int, int]]] = {}


def _loop_spans(file: str) -> list[tuple[int, int]]:
    lines = linecache.getlines(file)
    key = (file, hash(tuple(lines)))
    if key not in _SPANS:
        _SPANS[key] = _parse_loop_spans("".join(lines))
    return _SPANS[key]


def _parse_loop_spans(text: str) -> list[tuple[int, int]]:
    try:
        tree = ast.parse(_without_magics(text))
    except SyntaxError:
        return []
    spans = [(n.lineno, n.end_lineno) for n in ast.walk(tree) if isinstance(n, (ast.For, ast.While))]
    return sorted(spans, key=lambda s: (s[0], -s[1]))


def _without_magics(text: str) -> str:
    return "\n".join("" if line.lstrip().startswith(("%", "!")) else line
                     for line in text.splitlines())
