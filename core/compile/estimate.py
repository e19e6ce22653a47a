"""How long XLA will take to compile a graph, estimated before it is asked to, and the refusal
of a program over the budget (`core.budget`).

The estimate is a model of XLA's CPU compile time measured on this project's graphs (see
bench/loop_compile.py): a small cost per equation, a larger one per data-movement op (slices,
dynamic updates, gathers: each becomes its own fused computation), and a cost that grows with
the square of the concatenations and pads in one computation (XLA's fusion passes compare them
pairwise: 600 of them took over 6 minutes). It is meant to tell a second from an hour, not to
be exact.
"""
from __future__ import annotations

import collections

from .. import budget
from ..ir import Graph, SourceInfo, subgraphs
from ..tracing import BudgetExceeded

SECONDS_BASE = 0.05
SECONDS_PER_EQUATION = 2e-4
SECONDS_PER_MOVEMENT = 4e-3
SECONDS_PER_CONCATENATION_PAIR = 6e-4
MOVEMENT = frozenset({"slice", "dynamic_slice", "dynamic_update_slice", "gather", "scatter",
                      "pad", "concatenate"})
PAIRWISE = frozenset({"concatenate", "pad"})


def estimate_compile_seconds(graph: Graph) -> float:
    """XLA's compile time for this graph, roughly (seconds on one core of this machine)."""
    return SECONDS_BASE + _computation_seconds(graph)


def _computation_seconds(graph: Graph) -> float:
    seconds, pairwise = 0.0, 0
    for eqn in graph.eqns:
        name = eqn.prim.name
        seconds += SECONDS_PER_EQUATION + (SECONDS_PER_MOVEMENT if name in MOVEMENT else 0.0)
        pairwise += name in PAIRWISE
        for sub in subgraphs(eqn):
            seconds += _computation_seconds(sub)
    return seconds + SECONDS_PER_CONCATENATION_PAIR * pairwise ** 2


def check_compile_budget(graph: Graph, notes=()) -> float:
    """The estimate; BudgetExceeded (naming the line that contributes most equations, and what
    made the program large) when it is over `Budget.max_compile_seconds`."""
    seconds = estimate_compile_seconds(graph)
    limit = budget.current().max_compile_seconds
    if seconds > limit:
        size = sum(1 for _ in graph.all_eqns())
        hint = "; ".join(notes) or ("split the work into smaller programs, or roll the loops "
                                    "that made it large")
        raise BudgetExceeded(
            f"XLA would take about {_duration(seconds)} to compile this program of {size:,} "
            f"equations, over psc_jit's budget of {_duration(limit)} "
            "(Budget.max_compile_seconds)", busiest_line(graph), hint)
    return seconds


def busiest_line(graph: Graph) -> SourceInfo | None:
    """The source line most equations come from."""
    counts = collections.Counter((e.source.file, e.source.line) for e in graph.all_eqns()
                                 if e.source is not None)
    if not counts:
        return None
    (file, line), _ = counts.most_common(1)[0]
    return SourceInfo(file, line)


def _duration(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} minutes"
    return f"{seconds / 3600:.0f} hours"
