"""`make fuzz`: draw cells for FUZZ_MINUTES minutes (fresh examples each run), run each plain
and compiled in a worker process, and print what was tried: cells, runs, fallbacks by reason,
and each distinct failure with the minimal cell hypothesis shrank it to.

A failure found once is remembered by its kind, so the search goes on to find others instead
of finding it again; the run exits 1 when any failure was found.
"""
from __future__ import annotations

import argparse
import collections
import re
import sys
import time

from hypothesis import HealthCheck, given, settings

from cellgen import Scenario, scenarios
from cell_worker import Worker


def failure_kind(category: str, detail: str) -> str:
    """A failure's kind, without the values and names that vary between its examples."""
    detail = re.sub(r"^(setup|run \d+|change \d+): ", "", detail)
    detail = re.sub(r"type \w+ != (\w+) \(.*\)$", r"type T != \1", detail)
    detail = re.sub(r"0x[0-9a-f]+|-?\d+(\.\d+)?(e-?\d+)?", "#", detail)
    detail = re.sub(r"\b(x\d|[abwsnKdL])\b", "NAME", detail)
    return f"{category}: {detail[:120]}"


def reason_kind(reason: str) -> str:
    reason = re.sub(r"^line \d+: '[^']*': ", "", reason)
    reason = re.sub(r"`[^`]*`|'[^']*'|\([^)]*\)|\d+", "…", reason)
    return reason[:100]


class Fuzzer:
    def __init__(self, deadline: float):
        self.deadline = deadline
        self.worker = Worker()
        self.cells = self.runs = 0
        self.fallbacks: collections.Counter = collections.Counter()
        self.known: dict[str, int] = {}
        self.found: dict[str, tuple[str, str]] = {}
        self.failing: tuple[str, str, Scenario] | None = None

    def check(self, scenario: Scenario) -> None:
        if time.time() > self.deadline:
            return
        outcome = self.worker.run(scenario)
        self.cells += 1
        self.runs += outcome.runs
        self.fallbacks.update(reason_kind(r) for r in outcome.fallbacks)
        if outcome.failure is not None:
            kind = failure_kind(*outcome.failure)
            self.known[kind] = self.known.get(kind, 0) + 1
            if kind not in self.found:
                # hypothesis replays the minimal example last
                self.failing = (kind, outcome.failure[1], scenario)
                raise AssertionError(kind, outcome.failure[1])

    def round(self, examples: int) -> None:
        @settings(max_examples=examples, deadline=None, database=None, derandomize=False,
                  suppress_health_check=list(HealthCheck), print_blob=False)
        @given(scenarios())
        def test(scenario):
            self.check(scenario)
        try:
            test()
        except Exception:   # noqa: BLE001 (an AssertionError, or hypothesis's Flaky of one)
            if self.failing is None:
                raise
            kind, detail, scenario = self.failing
            self.failing = None
            self.found[kind] = (detail, scenario.text())
            print(f"\nFAILURE {kind}\n  {detail}\n{self.found[kind][1]}\n", flush=True)

    def report(self, minutes: float) -> None:
        print(f"\n== psc_jit cell fuzzing: {self.cells} cells ({self.runs} runs of the magic) "
              f"in {minutes:.1f} minutes")
        print(f"== fallbacks by reason ({sum(self.fallbacks.values())}):")
        for reason, count in self.fallbacks.most_common(25):
            print(f"  {count:6d}  {reason}")
        print(f"== failures ({len(self.found)} kinds, {sum(self.known.values())} cells):")
        for kind, (detail, text) in self.found.items():
            print(f"-- {kind} ({self.known.get(kind, 0)} cells)\n   {detail}\n{text}\n")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--minutes", type=float, default=30.0)
    args = parser.parse_args(argv)
    start = time.time()
    fuzzer = Fuzzer(start + 60 * args.minutes)
    try:
        while time.time() < fuzzer.deadline:
            fuzzer.round(examples=200)
            print(f"[{(time.time() - start) / 60:5.1f} min] {fuzzer.cells} cells, "
                  f"{len(fuzzer.found)} failure kinds", flush=True)
    finally:
        fuzzer.worker.stop()
    fuzzer.report((time.time() - start) / 60)
    return 1 if fuzzer.found else 0


if __name__ == "__main__":
    sys.exit(main())
