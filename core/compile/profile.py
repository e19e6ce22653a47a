"""Measured time per fused kernel: one compiled call under jaxlib's profiler.

XLA:CPU runs a program as a sequence of thunks, one per instruction of the optimized module's
ENTRY computation (a fusion, a loop, a library call; a loop's body runs its own thunks on
every iteration), and jaxlib's profiler records one event per thunk run, named after its HLO
instruction. Those names are the kernels' names in `kernels.FusionModel`, so each kernel gets
the time its thunk took: summed over its runs, with how many runs there were. A kernel in a
loop's body is timed inside its loop's time. Top-level kernels that depend on each other run
one after another, so their times add up to at most the call's XLA execution (XLA:CPU may
run independent ones at once on its threads).

Profiling is opt-in: `profile_call` (one call), or once on a `%%psc_jit` timed run, never on
a normal call. It is bounded: one call, at most `EVENT_BUDGET` thunk runs (a program whose
known loop counts need more is not profiled), and when the profiler gives nothing the result
says why in one line instead of failing.
"""
from __future__ import annotations

import dataclasses
from collections import Counter
from dataclasses import dataclass, field
from itertools import zip_longest
from typing import Any, Iterable

from . import xla
from .thunks import ThunkEvent, ThunkTrace
from .kernels import FusionModel, Kernel
from .report import CallBreakdown
from .units import fmt_seconds

__all__ = ["KernelTimes", "EVENT_BUDGET", "profile_call", "kernel_times", "expected_events"]

EVENT_BUDGET = 100_000      # thunk runs one profiled call may record


@dataclass(frozen=True)
class KernelTimes:
    """What each kernel of one profiled call took (seconds, all its runs together).

    `seconds` and `runs` are keyed by kernel name (`FusionModel` names: bodies' kernels
    included); `top_level` names the program's own kernels, whose times add up to `total`;
    `execute` is the XLA execution of the same call (`CallBreakdown.execute`); `others`
    holds thunks the fusion model has no kernel for. `note`, in one line: why there are no
    times, or what was left out."""
    seconds: dict[str, float] = field(default_factory=dict)
    runs: dict[str, int] = field(default_factory=dict)
    top_level: tuple[str, ...] = ()
    execute: float = 0.0
    others: dict[str, float] = field(default_factory=dict)
    note: str | None = None

    @classmethod
    def unavailable(cls, note: str, execute: float = 0.0) -> KernelTimes:
        return cls(execute=execute, note=note)

    @property
    def available(self) -> bool:
        return bool(self.seconds)

    @property
    def total(self) -> float:
        """The top-level kernels' time: the part of the XLA execution spent in kernels."""
        return sum(self.seconds.get(name, 0.0) for name in self.top_level)

    def of(self, name: str) -> float | None:
        return self.seconds.get(name)

    def share(self, name: str) -> float:
        """A kernel's time as a fraction of the call's XLA execution."""
        seconds = self.seconds.get(name, 0.0)
        return seconds / self.execute if self.execute else 0.0

    def slowest(self, count: int | None = None) -> list[tuple[str, float]]:
        ranked = sorted(self.seconds.items(), key=lambda item: item[1], reverse=True)
        return ranked[:count] if count is not None else ranked

    def describe(self) -> str:
        """One line: `3 kernels measured: 1.2 ms of the 1.4 ms XLA execution (86%)` or why
        nothing was."""
        if not self.available:
            return self.note or "no kernel was measured"
        share = f" ({self.total / self.execute:.0%})" if self.execute else ""
        text = (f"{len(self.seconds)} kernel{'s' if len(self.seconds) != 1 else ''} measured: "
                f"{fmt_seconds(self.total)} of the {fmt_seconds(self.execute)} XLA "
                f"execution{share}, in one profiled call")
        return f"{text}; {self.note}" if self.note else text


def kernel_times(model: FusionModel, trace: ThunkTrace, execute: float) -> KernelTimes:
    """The trace's thunk runs summed per kernel of the model (a loop's runs as spans that
    hold its body's runs)."""
    if not trace.events:
        return KernelTimes.unavailable(trace.note or "no kernel was measured", execute)
    names = {kernel.name for kernel in model.all_kernels()}
    events = _by_kernel(model, trace.events)
    spans = _loop_spans(model, sorted(events, key=lambda event: event.start_ns))
    seconds: dict[str, float] = {}
    runs: Counter[str] = Counter()
    others: dict[str, float] = {}
    for event in events:
        into = seconds if event.name in names else others
        duration = spans.get(id(event), event.duration_ns)
        into[event.name] = into.get(event.name, 0.0) + duration * 1e-9
        runs[event.name] += 1
    return KernelTimes(seconds, dict(runs), tuple(k.name for k in model.kernels), execute,
                       others, trace.note)


def _by_kernel(model: FusionModel, events) -> list[ThunkEvent]:
    """The events named after their kernels: a loop XLA:CPU runs as one compiled function
    runs as the thunk of its `call` (its body's kernels then have no runs of their own)."""
    kernel_of = {kernel.thunk: kernel.name for kernel in model.all_kernels() if kernel.thunk}
    return [dataclasses.replace(event, name=kernel_of[event.name])
            if event.name in kernel_of else event for event in events]


def _loop_spans(model: FusionModel, events: list[ThunkEvent]) -> dict[int, int]:
    """id(event) -> its span (ns) for each run of a kernel with a body: from its start to the
    end of the last run of its body's kernels before its next run. A loop's thunk may return
    before its body is done (XLA:CPU goes on with the next iteration on another thread when
    a body kernel finishes later), so its own event can end before its body's runs do."""
    spans: dict[int, int] = {}
    for kernel in model.all_kernels():
        if not kernel.body:
            continue
        inner = {k.name for body in kernel.body for k in _walk(body)}
        runs = [event for event in events if event.name == kernel.name]
        for run, later in zip_longest(runs, runs[1:]):      # (later: None after the last)
            ends = [event.start_ns + event.duration_ns for event in events
                    if event.name in inner and event.start_ns >= run.start_ns
                    and (later is None or event.start_ns < later.start_ns)]
            spans[id(run)] = max([run.start_ns + run.duration_ns, *ends]) - run.start_ns
    return spans


def _walk(kernel: Kernel):
    yield kernel
    for inner in kernel.body:
        yield from _walk(inner)


def expected_events(kernels: Iterable[Kernel]) -> int | None:
    """How many thunk runs one call records: a kernel once, a loop's body once per iteration
    (None when a loop's count is unknown)."""
    total = 0
    for kernel in kernels:
        total += 1
        if kernel.body:
            inner = expected_events(kernel.body)
            trips = kernel.trip_count if kernel.kind == "while" else 1
            if inner is None or trips is None:
                return None
            total += trips * inner
    return total


def profile_call(jitted, *args, max_events: int = EVENT_BUDGET
                 ) -> tuple[Any, CallBreakdown, KernelTimes]:
    """One call of `jitted`, as a re-run makes it (`Jitted.time_call`), under jaxlib's
    profiler: (result, the call's breakdown, its kernels' times); a call with no entry yet is
    compiled first, outside the profiler. The call happens: in-place updates land. A program whose known loop counts need more than `max_events` thunk runs is called
    without the profiler, and the times say so."""
    compiled = jitted.compiled_call(args).compiled
    expected = expected_events(compiled.kernels.kernels)
    if expected is not None and expected > max_events:
        result, breakdown = jitted.time_call(*args)
        return result, breakdown, KernelTimes.unavailable(
            f"not profiled: one call runs {expected:,} kernels (loop iterations counted), "
            f"over the budget of {max_events:,}", breakdown.execute)
    (result, breakdown), trace = xla.profiled(lambda: jitted.time_call(*args),
                                              compiled.executable.module_name, max_events)
    return result, breakdown, kernel_times(compiled.kernels, trace, breakdown.execute)
