"""Run the notebook corpus plain and under `%%psc_jit` and print what happened: how many cells
compiled whole, split into compiled regions and host steps, or ran as plain Python, and why
(reasons grouped); the same by tag; compile times; the time re-runs of split cells spend
outside their compiled regions (when the report gives it); and every run that ended
differently from plain, with its entry to paste.

    .venv/bin/python tests/corpus/report.py [--tag TAG] [--entry NAME] [--details] [--json F]

A cell is counted by its first run under the magic. Exits 1 when a run differs.
"""
from __future__ import annotations

import argparse
import collections
import json
import re
import statistics
import sys
import time
from dataclasses import asdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from corpus_cells import TAGS, Entry  # noqa: E402
from corpus_entries import ENTRIES  # noqa: E402
from corpus_harness import FAILING, LAST, CorpusRunner, StepOutcome  # noqa: E402

KINDS = ("whole", "split", "plain", "no report")
KIND_NAMES = {"whole": "compiled whole", "split": "split into regions",
              "plain": "plain Python", "no report": "no report of the run"}


def reason_group(reason: str | None) -> str:
    """A fallback reason without its line and code, and without its advice: the construct."""
    text = re.sub(r"^line \d+: '.*?': ", "", reason or "(none given)")
    if "(checked at run time" in text:
        return f"{text.split(':')[0]} checked at run time"
    text = re.sub(r"(raised [\w.]+):.*", r"\1", text.split(";")[0])
    return text[:90]


def first_runs(outcomes: list[StepOutcome]) -> list[StepOutcome]:
    return [o for o in outcomes if o.cell is not None and o.run == 0]


def kind_of(outcome: StepOutcome) -> str:
    return (outcome.report or {}).get("kind", "no report")


def percent(part: int, whole: int) -> str:
    return f"{100 * part / whole:5.1f}%" if whole else "    -"


def print_kinds(cells: list[StepOutcome]) -> None:
    counts = collections.Counter(kind_of(o) for o in cells)
    print("== how each cell ran (its first run under %%psc_jit)")
    for kind in KINDS:
        print(f"  {KIND_NAMES[kind]:<22} {counts[kind]:4d}  {percent(counts[kind], len(cells))}")
    compiled = counts["whole"] + counts["split"]
    print(f"  compiled at least one region: {compiled} of {len(cells)} "
          f"({percent(compiled, len(cells)).strip()}; the issue asks for at least 90%)")


def print_reasons(cells: list[StepOutcome]) -> None:
    reasons = collections.Counter(reason_group((o.report or {}).get("reason"))
                                  for o in cells if kind_of(o) in ("plain", "no report"))
    print(f"== why cells ran plain or gave no report ({sum(reasons.values())} cells)")
    for reason, count in reasons.most_common():
        print(f"  {count:4d}  {reason}")


def print_tags(entries: dict[str, Entry], cells: list[StepOutcome],
               outcomes: list[StepOutcome]) -> None:
    differing = {(o.entry, o.cell) for o in outcomes if o.status in FAILING}
    print("== by tag (cells)")
    print(f"  {'tag':<15} {'cells':>5} {'whole':>5} {'split':>5} {'plain':>5} {'no rep':>6} "
          f"{'differ':>6}")
    for tag in TAGS:
        tagged = [o for o in cells if tag in entries[o.entry].tags(o.cell)]
        kinds = collections.Counter(kind_of(o) for o in tagged)
        bad = sum((o.entry, o.cell) in differing for o in tagged)
        print(f"  {tag:<15} {len(tagged):5d} {kinds['whole']:5d} {kinds['split']:5d} "
              f"{kinds['plain']:5d} {kinds['no report']:6d} {bad:6d}")


def median_ms(values) -> str:
    values = [v for v in values if v is not None]
    return f"{1e3 * statistics.median(values):.1f} ms (n={len(values)})" if values else "-"


def print_times(outcomes: list[StepOutcome]) -> None:
    reports = [o.report or {} for o in outcomes]
    print("== times")
    print(f"  compile (trace + lower + compile, runs that compiled): "
          f"{median_ms(r.get('compile_seconds') for r in reports)} median")
    reruns = [o for o in outcomes if o.run > 0 and kind_of(o) in ("whole", "split")]
    print(f"  re-runs of compiled cells: compiled {median_ms(o.compiled_seconds for o in reruns)},"
          f" plain {median_ms(o.plain_seconds for o in reruns)} median (whole cell, wall)")
    split_reruns = [o.report.get("host_seconds") for o in reruns if kind_of(o) == "split"]
    given = [s for s in split_reruns if s is not None]
    if given:
        print(f"  re-runs of split cells, outside compiled regions: {median_ms(given)} median")
    else:
        print(f"  re-runs of split cells, outside compiled regions: not reported "
              f"({len(split_reruns)} such re-runs; the report has no host_seconds)")


def print_differences(entries: dict[str, Entry], outcomes: list[StepOutcome],
                      details: bool) -> int:
    failing = [o for o in outcomes if o.status in FAILING]
    last_bits = [o for o in outcomes if o.status == LAST]
    cells = {(o.entry, o.cell) for o in failing}
    print(f"== runs that end differently from plain: {len(failing)} runs in {len(cells)} cells"
          f" ({len(last_bits)} more runs differ only in the last bits of floats)")
    shown = set()
    for o in failing + last_bits:
        print(f"-- {o.entry} / {o.label}: {o.status} [{kind_of(o)}]")
        for detail in o.details[:4]:
            print(f"     {detail[:300]}")
        if details and o.entry not in shown:
            shown.add(o.entry)
            print("     " + entries[o.entry].text().replace("\n", "\n     "))
    return len(failing)


def selected(args) -> list[Entry]:
    return [e for e in ENTRIES if (not args.entry or e.name in args.entry) and
            (not args.tag or any(args.tag in e.tags(i) for i in range(len(e.cells))))]


def run_all(entries: list[Entry]) -> list[StepOutcome]:
    runner = CorpusRunner()
    try:
        return [o for e in entries for o in runner.run(e)]
    finally:
        runner.stop()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tag", help="only entries with a cell of this tag")
    parser.add_argument("--entry", action="append", help="only this entry (repeatable)")
    parser.add_argument("--details", action="store_true",
                        help="print each differing entry's cells too")
    parser.add_argument("--json", help="write every run's outcome to this file")
    args = parser.parse_args(argv)
    entries = selected(args)
    start = time.perf_counter()
    outcomes = run_all(entries)
    by_name = {e.name: e for e in entries}
    cells = first_runs(outcomes)
    runs = sum(o.cell is not None for o in outcomes)
    print(f"== psc_jit notebook corpus: {len(entries)} entries, {len(cells)} cells, {runs} runs"
          f" under the magic, in {time.perf_counter() - start:.1f} s")
    print_kinds(cells)
    print_reasons(cells)
    print_tags(by_name, cells, outcomes)
    print_times(outcomes)
    failing = print_differences(by_name, outcomes, args.details)
    if args.json:
        Path(args.json).write_text(json.dumps([asdict(o) for o in outcomes], indent=1))
    return 1 if failing else 0


if __name__ == "__main__":
    sys.exit(main())
