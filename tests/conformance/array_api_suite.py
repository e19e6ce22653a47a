"""Run the Array API conformance suite against NumPy and against psc_jit.array_api, compare.

    python tests/conformance/array_api_suite.py [--examples 5] [--version 2023.12]

The pinned, unmodified suite (../shared/array-api-tests, see its PROVENANCE.md) runs once per
namespace: NumPy's own (`numpy`, the baseline), the compiled one with refusals computed by
NumPy (`compiled`: what it measures is the results of compiled code), and the compiled one
with refusals raised (`strict`). Each run writes a pytest-json-report; the outcomes are then
compared per test id. The exit status is 1 when a test that NumPy's namespace passes fails in
a compiled run, except in strict mode a refusal (psc_jit's UnsupportedError or TraceError)
by a function listed in EXPECTED_REFUSALS: the functions whose output shape depends on the
data.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
SUITE = ROOT.parent / "shared" / "array-api-tests"     # the pinned copy (see its PROVENANCE.md)
NAMESPACES = {"numpy": ("numpy", False), "compiled": ("psc_jit.array_api", False),
              "strict": ("psc_jit.array_api", True)}

# Strict mode: the functions that must refuse, their output shape depending on the data. A
# failure counts as expected only when its message is psc_jit's refusal naming one of these.
EXPECTED_REFUSALS = ("np.unique", "np.unique_all", "np.unique_counts", "np.unique_inverse",
                     "np.unique_values", "np.nonzero", "np.repeat with traced repeats")
# Tests NumPy's namespace passes that a compiled run may still fail, each with why. Empty: at
# 50 examples (standard 2023.12) every such test passes compiled, strict mode included.
KNOWN_FAILURES: dict[str, str] = {}
REFUSAL = re.compile(r"psc_jit\.core\.tracing\.(?:UnsupportedError|TraceError|"
                     r"ConcretizationError): (?P<message>.*)")


@dataclass(frozen=True)
class Run:
    mode: str
    outcomes: dict[str, str]          # test id -> "passed", "failed", "skipped", ...
    messages: dict[str, str]          # test id -> the first line of a failure
    seconds: float

    def count(self, outcome: str) -> int:
        return sum(1 for o in self.outcomes.values() if o == outcome)


def run_suite(mode: str, examples: int, version: str, report: Path, suite: Path,
              pytest_args: list[str]) -> Run:
    """One run of the pinned suite against the mode's namespace; outcomes per test id."""
    module, strict = NAMESPACES[mode]
    python_path = os.pathsep.join(filter(None, [str(HERE), os.environ.get("PYTHONPATH")]))
    env = dict(os.environ, ARRAY_API_TESTS_MODULE=module, ARRAY_API_TESTS_VERSION=version,
               PSC_JIT_ARRAY_API_STRICT="1" if strict else "0", PYTHONDONTWRITEBYTECODE="1",
               PYTHONPATH=python_path)
    command = [sys.executable, "-m", "pytest", str(suite / "array_api_tests"),
               "-p", "no:cacheprovider", "-p", "suite_settings", "-q", "--no-header",
               "-W", "ignore",
               f"--max-examples={examples}", "--derandomize", "--disable-deadline",
               # the special-case tests draw with .example(), random unless seeded
               "--hypothesis-seed=0",
               "--json-report", f"--json-report-file={report}", "--json-report-omit",
               "collectors", "log", "warnings", *pytest_args]
    start = time.perf_counter()
    subprocess.run(command, env=env, cwd=ROOT, stdout=subprocess.DEVNULL, check=False)
    seconds = time.perf_counter() - start
    return read_report(mode, report, seconds)


def read_report(mode: str, report: Path, seconds: float) -> Run:
    data = json.loads(report.read_text())
    outcomes, messages = {}, {}
    for test in data["tests"]:
        outcomes[test["nodeid"]] = test["outcome"]
        if test["outcome"] in ("failed", "error"):
            messages[test["nodeid"]] = failure_message(test)
    return Run(mode, outcomes, messages, seconds)


def failure_message(test: dict) -> str:
    for stage in ("call", "setup", "teardown"):
        crash = test.get(stage, {}).get("crash")
        if crash:
            return crash["message"]
    return ""


def expected_refusal(message: str) -> str | None:
    """The refusal's message when `message` is psc_jit refusing an expected function."""
    for line in message.splitlines():
        match = REFUSAL.search(line)
        if match and any(name in match["message"] for name in EXPECTED_REFUSALS):
            return match["message"]
    return None


def regressions(baseline: Run, run: Run) -> tuple[list[str], list[str]]:
    """(unexpected, expected): tests NumPy passes that fail in `run`; expected ones are
    refusals allowed in strict mode."""
    unexpected, expected = [], []
    for test_id, outcome in baseline.outcomes.items():
        if outcome != "passed" or run.outcomes.get(test_id) == "passed" or \
                test_id in KNOWN_FAILURES:
            continue
        message = run.messages.get(test_id, f"outcome {run.outcomes.get(test_id)}")
        if run.mode == "strict" and expected_refusal(message):
            expected.append(test_id)
        else:
            unexpected.append(test_id)
    return unexpected, expected


def first_line(message: str) -> str:
    return message.strip().splitlines()[0][:160] if message.strip() else ""


def summary_table(runs: list[Run]) -> str:
    header = f"{'namespace':<10} {'passed':>7} {'failed':>7} {'skipped':>8} {'seconds':>8}"
    lines = [header]
    for run in runs:
        failed = run.count("failed") + run.count("error")
        lines.append(f"{run.mode:<10} {run.count('passed'):>7} {failed:>7} "
                     f"{run.count('skipped'):>8} {run.seconds:>8.0f}")
    return "\n".join(lines)


def report_regressions(baseline: Run, run: Run) -> bool:
    """Print what NumPy passes and `run` fails; True when none of it is unexpected."""
    unexpected, expected = regressions(baseline, run)
    if expected:
        print(f"\n{run.mode}: {len(expected)} tests NumPy passes fail with an expected "
              "refusal:")
        for test_id in expected:
            print(f"  {test_id}\n      {expected_refusal(run.messages[test_id])[:140]}")
    if unexpected:
        print(f"\n{run.mode}: {len(unexpected)} tests NumPy passes FAIL:")
        for test_id in unexpected:
            print(f"  {test_id}\n      {first_line(run.messages.get(test_id, ''))}")
    return not unexpected


def parse_arguments(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--examples", type=int, default=5,
                        help="hypothesis examples per test (elementwise tests get a tenth)")
    parser.add_argument("--version", default="2023.12", help="the standard's version")
    parser.add_argument("--suite", type=Path, default=SUITE, help="the suite's directory")
    parser.add_argument("--modes", default="numpy,compiled,strict",
                        help="namespaces to run, numpy first (the baseline)")
    parser.add_argument("--reports", type=Path, default=ROOT / "artifacts" / "conformance",
                        help="where the json reports go")
    parser.add_argument("pytest_args", nargs="*", help="passed to pytest (after --)")
    return parser.parse_args(argv)


def main(argv=None) -> int:
    args = parse_arguments(argv)
    modes = args.modes.split(",")
    if modes[0] != "numpy" or any(m not in NAMESPACES for m in modes):
        raise SystemExit(f"--modes: numpy first, then any of compiled, strict (got {modes})")
    args.reports.mkdir(parents=True, exist_ok=True)
    runs = []
    for mode in modes:
        report = args.reports / f"{mode}-{args.version}-{args.examples}.json"
        print(f"== {mode}: {NAMESPACES[mode][0]}", flush=True)
        runs.append(run_suite(mode, args.examples, args.version, report, args.suite.resolve(),
                              args.pytest_args))
    print(f"\nArray API suite, standard {args.version}, {args.examples} examples per test:")
    print(summary_table(runs))
    agree = [report_regressions(runs[0], run) for run in runs[1:]]
    return 0 if all(agree) else 1


if __name__ == "__main__":
    sys.exit(main())
