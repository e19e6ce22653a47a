"""The record of one `%%psc_jit` run (or one jitted call): what views show and tests read.

`psc_jit.last_report()` returns one of these; its field names are a public contract.
"""
from __future__ import annotations

import math
import statistics
from dataclasses import dataclass, field
from typing import Any

from ..ir import Graph
from .units import fmt_seconds, fmt_speedup


@dataclass(frozen=True)
class CallBreakdown:
    """One compiled call split into parts that add up to it (seconds): Python dispatch (the
    signature and the guards), input transfer (onto XLA's device, copies included), XLA
    execution, and output handling (results as NumPy arrays, in-place updates written back,
    views rebuilt). `copies` says which inputs were copied on the way in, and why."""
    dispatch: float
    transfer: float
    execute: float
    outputs: float
    measured: float                           # the call as timed from outside
    copies: tuple[str, ...] = ()              # "x is not 64-byte aligned: 7.6 MiB copied"

    PART_NAMES = ("Python dispatch", "input transfer", "XLA execution", "output handling")

    @classmethod
    def from_marks(cls, marks, copies=()) -> CallBreakdown:
        """From the clock read at the call's start, before the transfer, after it, after
        XLA's run and at the end."""
        start, transfer, execute, outputs, end = marks
        return cls(transfer - start, execute - transfer, outputs - execute, end - outputs,
                   end - start, tuple(copies))

    @property
    def parts(self) -> tuple[tuple[str, float], ...]:
        return tuple(zip(self.PART_NAMES, (self.dispatch, self.transfer, self.execute,
                                           self.outputs), strict=True))

    @property
    def total(self) -> float:
        return sum(seconds for _, seconds in self.parts)

    def dominant(self) -> tuple[str, float]:
        return max(self.parts, key=lambda part: part[1])

    def scaled(self, seconds: float) -> CallBreakdown:
        """The same call with every part scaled so that the whole is `seconds` (the compiled
        median): the parts' shares, in the measurement the verdict comes from."""
        factor = seconds / self.measured if self.measured else 0.0
        return CallBreakdown(self.dispatch * factor, self.transfer * factor,
                             self.execute * factor, self.outputs * factor, seconds, self.copies)

    def advice(self, plain_seconds: float) -> str:
        """Why this call is slower than plain Python's `plain_seconds`: which part dominates,
        and what would help. (Asked only when the verdict says slower.)"""
        name, seconds = self.dominant()
        share = f"{name} takes {fmt_seconds(seconds)} of the {fmt_seconds(self.measured)} call"
        if self.measured < SMALL_CALL and not self.copies:
            return f"{share}: {_too_little_work(plain_seconds)}"
        return f"{share}: {_HELP[name](self)}"


SMALL_CALL = 50e-6     # seconds: below this a compiled call is mostly its fixed cost


def _too_little_work(plain_seconds: float) -> str:
    return (f"the plain cell takes only {fmt_seconds(plain_seconds)}, less than the fixed cost "
            "of any compiled call (handing inputs to XLA, starting its program, wrapping the "
            "results: about 10 µs); compile cells that do more work (larger arrays, whole "
            "loops) and keep tiny ones plain")


_HELP = {
    "Python dispatch": lambda b: "the cell does too little work for a compiled call to pay "
                                 "off; put more of the computation into one cell or loop",
    "input transfer": lambda b: "; ".join(b.copies) + (
        "; make such inputs once with psc_jit.aligned(x), a 64-byte aligned copy XLA reads "
        "in place (outputs of compiled cells already are)"
        if b.copies else "no input was copied, yet each costs a hand-over to XLA: pass "
                         "fewer, larger arrays"),
    "XLA execution": lambda b: "XLA's code is slower than NumPy's for this cell; the Explorer "
                               "shows which kernel takes the time",
    "output handling": lambda b: "results are copied back into NumPy arrays; return fewer or "
                                 "smaller arrays",
}


# With fewer runs than this on a side, its spread is not read from its runs: it is taken
# as UNKNOWN_SPREAD of its median either way (a machine's run-to-run noise, seen here).
FEW_RUNS = 3
UNKNOWN_SPREAD = 0.10


def spread_of(runs: tuple[float, ...]) -> tuple[float, float]:
    """Where the middle of the runs lie: the quartiles from 4 runs on, else the extremes
    (with fewer than FEW_RUNS, the median ± UNKNOWN_SPREAD)."""
    if len(runs) < FEW_RUNS:
        middle = statistics.median(runs)
        return middle * (1 - UNKNOWN_SPREAD), middle * (1 + UNKNOWN_SPREAD)
    if len(runs) < 4:
        return min(runs), max(runs)
    low, _, high = statistics.quantiles(runs, n=4, method="inclusive")
    return low, high


@dataclass(frozen=True)
class Verdict:
    """Plain against compiled in words that hold from run to run: `faster` or `slower` when
    the runs say so beyond their spread (`ratio`: plain median / compiled median), else
    `same`, with `within` the largest relative difference the spread allows (0.04: ±4%).

    Runs timed in turns (`timing.time_interleaved`) are read in pairs: a round's compiled
    time over its plain time, each pair timed under the same load, so that a busy spell of
    the machine moves both and not their ratio. The verdict is `faster` when the middle half
    of those ratios (their quartiles) lies below 1, `slower` when above, `same` when it
    holds 1. Runs that are not pairs are read by each side's spread (`spread_of`)."""
    kind: str                   # "faster", "slower" or "same"
    ratio: float
    within: float = 0.0

    @classmethod
    def of(cls, plain: tuple[float, ...], compiled: tuple[float, ...]) -> Verdict:
        plain_median, compiled_median = statistics.median(plain), statistics.median(compiled)
        ratio = plain_median / compiled_median if compiled_median > 0 else float("inf")
        low, high = _relative_spread(plain, compiled)
        if high < 1 and ratio > 1:
            return cls("faster", ratio)
        if low > 1 and ratio < 1:
            return cls("slower", ratio)
        return cls("same", ratio, max(high - 1, 1 - low, 0.0))

    def text(self, versus: str = " than plain Python") -> str:
        """`3.2× faster than plain Python`, `2.5× slower …`, `about the same as plain Python
        (±4%)`."""
        if self.kind == "same":
            against = versus.replace(" than ", " as ", 1) if versus else ""
            return f"about the same{against} (±{max(math.ceil(round(self.within * 100, 6)), 1)}%)"
        return fmt_speedup(self.ratio, versus)


def _relative_spread(plain: tuple[float, ...], compiled: tuple[float, ...]
                     ) -> tuple[float, float]:
    """Where compiled / plain lies: the quartiles of the rounds' ratios when the runs are
    pairs, else the extremes the two sides' spreads allow."""
    if len(plain) == len(compiled) >= FEW_RUNS and min(plain) > 0:
        return spread_of(tuple(c / p for p, c in zip(plain, compiled, strict=True)))
    (plain_low, plain_high), (low, high) = spread_of(plain), spread_of(compiled)
    if plain_low <= 0:
        return 0.0, float("inf")
    return low / plain_high, high / plain_low


@dataclass(frozen=True)
class Timings:
    """Plain Python against compiled, each on copies of the inputs (seconds): the two sides
    timed in turns, round after round (`timing.time_interleaved`). Every figure a report
    shows is read from these runs: the verdict from their medians and spreads, the parts of
    a compiled call and each kernel's time as their shares of the compiled median."""
    plain_seconds: tuple[float, ...]          # one entry per timed run
    compiled_seconds: tuple[float, ...]       # cache-hit runs of the executable, same inputs
    first_call_seconds: float                 # the first compiled run (after compile)
    compile_seconds: float | None             # trace + lower + XLA compile (None: a hit)
    largest_difference: float | None          # max |plain - compiled| over all outputs
    differences: dict[str, float] = field(default_factory=dict)   # per output name
    flops: float | None = None                # per compiled run: the kernels' count
    bytes_accessed: float | None = None
    breakdown: CallBreakdown | None = None    # one compiled call, part by part (its shares)
    kernel_times: Any = None                  # profile.KernelTimes of one profiled call

    @property
    def plain_median(self) -> float:
        return statistics.median(self.plain_seconds)

    @property
    def compiled_median(self) -> float:
        return statistics.median(self.compiled_seconds)

    @property
    def speedup(self) -> float:
        return self.plain_median / self.compiled_median if self.compiled_median else float("inf")

    @property
    def verdict(self) -> Verdict:
        return Verdict.of(self.plain_seconds, self.compiled_seconds)

    def spread(self, which: str) -> tuple[float, float]:
        """The middle of one side's runs (quartiles; see `spread_of`)."""
        return spread_of(self.plain_seconds if which == "plain" else self.compiled_seconds)

    @property
    def median_call(self) -> CallBreakdown | None:
        """The compiled median split into dispatch, transfer, execution and outputs by the
        shares of the clocked call (None when there is none)."""
        if self.breakdown is None:
            return None
        return self.breakdown.scaled(self.compiled_median)

    def kernel_seconds(self, name: str) -> float | None:
        """A kernel's part of the compiled median: its share of the profiled call's XLA
        execution times the median's XLA execution (None: not measured)."""
        measured, call = self.kernel_times, self.median_call
        if measured is None or measured.of(name) is None:
            return None
        execute = call.execute if call is not None else self.compiled_median
        return measured.share(name) * execute

    def why_slower(self) -> str | None:
        """When the verdict is `slower`: which part of the compiled median dominates and what
        would help (None otherwise)."""
        if self.verdict.kind != "slower":
            return None
        call = self.median_call
        if call is None:
            return (f"the compiled median {fmt_seconds(self.compiled_median)} is over plain "
                    f"Python's {fmt_seconds(self.plain_median)}; no call was clocked part by "
                    "part to say where its time goes")
        return call.advice(self.plain_median)


@dataclass
class RunReport:
    name: str                                  # the cell's label (--name, or "cell <digest>")
    source: str                                # the cell body
    filename: str                              # file name its code and locations use
    line_offset: int                           # lines shown above the body (the magic line)
    compiled: bool
    fallback_reason: str | None = None         # "line 3: 'print(m)': print() is a side effect..."
    cache_hit: bool = False
    from_disk: Any = None                      # FromDisk: loaded from the disk cache (load
    #                                            time, compile time in the session that made it)
    miss_reason: str | None = None             # "x: f64[300,200] → f64[50,200]"
    graph: Graph | None = None                 # the traced IR
    kernels: Any = None                        # psc_jit.core.kernels.FusionModel
    stablehlo: str | None = None
    optimized_hlo: str | None = None
    stage_seconds: dict[str, float] = field(default_factory=dict)   # trace/lower/compile/run
    #                                            (a split cell: "host", its run outside the
    #                                            compiled regions' stages)
    cost: dict[str, float] = field(default_factory=dict)            # XLA cost analysis
    timings: Timings | None = None             # None when not compared
    inputs: tuple[str, ...] = ()
    outputs: tuple[str, ...] = ()
    signature: str = ""                        # "x: f64[1000,1000], w: f64[1000]"
    cache_entries: tuple[Any, ...] = ()        # CacheRecords of this cell
    cache_events: tuple[Any, ...] = ()         # CacheEvents of this cell, oldest first
    notes: tuple[str, ...] = ()                # e.g. "line 3: 1,000 equations from an unrolled loop"
    # A cell split into compiled regions and host steps (frontend/regions.py): a report per
    # region (its graph, kernels, cache entry, fallback), in source order; the host steps and
    # host blocks (loops run by Python); how many passes each host loop made; the loops that
    # rolled instead, their draws made before them (predraw.py: block -> the draws).
    regions: tuple[RunReport, ...] = ()
    host_steps: tuple[Any, ...] = ()
    host_passes: dict[tuple, int] = field(default_factory=dict)
    predrawn: dict[tuple, str] = field(default_factory=dict)
    wrote_objects: bool = False                # its run wrote to Python objects (effects)
    plan: tuple = ()                           # the parts (frontend/regions.py), as they ran
    part: tuple = ()                           # of a region's report: its key in the plan
    lines: tuple[int, int] | None = None       # ... and its first and last line

    @property
    def split(self) -> bool:
        """Whether the cell ran as compiled regions and host steps."""
        return bool(self.host_steps)

    @property
    def plain_reasons(self) -> str | None:
        """Why any of the cell ran as plain Python: the fallback reason, or each host step's
        and each region's that ran as plain Python (None when all of it compiled)."""
        if self.fallback_reason is not None:
            return self.fallback_reason
        steps = [self._explain(step) for step in self.host_steps] + [
            f"lines {r.lines[0]}-{r.lines[1]}: {r.fallback_reason}" if r.lines else
            r.fallback_reason for r in self.regions if r.fallback_reason is not None]
        return "; ".join(steps) if steps else None

    def _explain(self, step) -> str:
        drawn = self.predrawn.get((step.path, step.index)) if hasattr(step, "bodies") else None
        if drawn is None:
            return step.explain()
        return f"line {step.line}: the `for` rolled, its draws made before it ({drawn})"

    def split_summary(self) -> str:
        """"2 compiled regions, 1 host step: line 5 `print(i)`; run by Python: the `for` at
        line 3" (empty when not split)."""
        if not self.split:
            return ""
        compiled = sum(1 for r in self.regions if r.compiled)
        plain = len(self.regions) - compiled
        parts = [_count(compiled, "compiled region")]
        if plain:
            parts.append(_count(plain, "region") + " as plain Python")
        steps = [step for step in self.host_steps if not hasattr(step, "bodies")]
        blocks = [step for step in self.host_steps if hasattr(step, "bodies")]
        rolled = [block for block in blocks if (block.path, block.index) in self.predrawn]
        blocks = [block for block in blocks if block not in rolled]
        text = ", ".join(parts) + f", {_count(len(steps), 'host step')}"
        text += (": " + "; ".join(step.describe() for step in steps)) if steps else ""
        if rolled:
            text += "; rolled, its draws made before it: " + ", ".join(
                block.describe() for block in rolled)
        if blocks:
            text += "; run by Python: " + ", ".join(block.describe() for block in blocks)
        return text

    @property
    def breakdown(self) -> CallBreakdown | None:
        """One compiled call split into dispatch, transfer, execution, outputs (when timed)."""
        return self.timings.breakdown if self.timings else None

    @property
    def measured(self):
        """What each fused kernel took in one profiled call (profile.KernelTimes: seconds per
        kernel name, or a note saying why there are none); None when the run was not timed."""
        return self.timings.kernel_times if self.timings else None

    @property
    def agreement(self) -> float | None:
        """The largest difference between plain and compiled outputs (None: not compared)."""
        return self.timings.largest_difference if self.timings else None

    @property
    def loaded_from_disk(self) -> bool:
        """Whether this run's program was loaded from the disk cache instead of compiled."""
        return self.from_disk is not None

    @property
    def n_primitives(self) -> int:
        return sum(1 for _ in self.graph.all_eqns()) if self.graph is not None else 0

    @property
    def n_kernels(self) -> int:
        return len(self.kernels.kernels) if self.kernels is not None else 0


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" + ("" if n == 1 else "s")
