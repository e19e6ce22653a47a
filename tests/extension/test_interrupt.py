"""Kernel -> Interrupt during a long compiled run: a real IPython shell in a subprocess gets
SIGINT while XLA runs a long rolled loop. The interrupt takes effect within a second, leaves
the namespace as it was, and the shell keeps working (no crash: the child runs with
faulthandler, so a segfault would print its stack). PSC_INTERRUPT_ROUNDS sets how many
interrupts (3 by default, to keep the suite short; run it with 12 to look for rare crashes).
"""
import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

pytestmark = [pytest.mark.ipython, pytest.mark.xla]

CHILD = Path(__file__).with_name("interrupt_child.py")
TRIP_COUNT = int(os.environ.get("PSC_INTERRUPT_TRIPS", "150000"))   # seconds of XLA's time
ROUNDS = int(os.environ.get("PSC_INTERRUPT_ROUNDS", "3"))
WAITS_BEFORE_INTERRUPT = (0.5, 0.05, 0.2, 1.0)     # into the dispatch, the wait, ...


def next_json(child) -> dict:
    """The child's next JSON line (IPython prints the KeyboardInterrupt to stdout too)."""
    for line in child.stdout:
        if line.startswith("{"):
            return json.loads(line)
    return {}


def test_interrupt_stops_a_long_run_within_a_second_and_changes_nothing():
    child = subprocess.Popen([sys.executable, "-X", "faulthandler", str(CHILD),
                              str(TRIP_COUNT), str(ROUNDS)],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        latencies = []
        for round_ in range(ROUNDS):
            line = child.stdout.readline()
            assert line.startswith("go"), line + child.stderr.read()
            time.sleep(WAITS_BEFORE_INTERRUPT[round_ % len(WAITS_BEFORE_INTERRUPT)])
            sent = time.monotonic()
            child.send_signal(signal.SIGINT)
            outcome = next_json(child)
            assert outcome.get("interrupted"), (outcome, child.stderr.read())
            assert outcome["unchanged"]
            latencies.append(outcome["ended"] - sent)
        after = next_json(child)
        assert after["after"]
        assert child.wait(timeout=120) == 0, child.stderr.read()
    finally:
        if child.poll() is None:
            child.kill()
    print("seconds from SIGINT to KeyboardInterrupt:", " ".join(f"{t:.3f}" for t in latencies))
    assert max(latencies) < 1.0, latencies


# -- every path to XLA, on a loop that would not end -------------------------------------------

PATHS_CHILD = Path(__file__).with_name("interrupt_paths_child.py")
FOREVER_CASES = ["jit-small", "jit-large", "jit-timed", "jit-profiled", "magic-small",
                 "magic-large", "magic-in-place-small", "magic-in-place-large",
                 "magic-trip-count"]
SECONDS_BEFORE_INTERRUPT = {"magic-trip-count": 2.5}    # (that run compiles first)


def interrupted_run(case: str, *extra: str) -> tuple[dict, float]:
    """Start the child on `case`, interrupt its long cell, and return its report and the
    seconds from SIGINT until the KeyboardInterrupt reached IPython. The child is killed
    afterwards (the abandoned run goes on in it), or when it has not answered in time."""
    child = subprocess.Popen([sys.executable, "-X", "faulthandler", str(PATHS_CHILD), case,
                              *extra], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    lines: queue.Queue = queue.Queue()
    threading.Thread(target=lambda: [lines.put(line) for line in child.stdout], daemon=True
                     ).start()
    try:
        started = next_line(lines, "go", SECONDS_TO_START)
        assert started, f"{case} did not start: {child.poll()}"
        time.sleep(SECONDS_BEFORE_INTERRUPT.get(case, 1.0))
        sent = time.monotonic()
        child.send_signal(signal.SIGINT)
        outcome = next_line(lines, "{", SECONDS_TO_ANSWER)
        assert outcome, f"{case}: no answer {SECONDS_TO_ANSWER} s after SIGINT"
    finally:
        child.kill()
        child.wait()
    outcome = json.loads(outcome)
    return outcome, outcome["caught"] - sent


SECONDS_TO_START = 120      # the child's compile, on a busy machine
SECONDS_TO_ANSWER = 60      # an interrupt that did not stop the run: the test fails by then


def next_line(lines: queue.Queue, start: str, seconds: float) -> str | None:
    """The next line beginning with `start` within `seconds`, else None."""
    deadline = time.monotonic() + seconds
    while (left := deadline - time.monotonic()) > 0:
        try:
            line = lines.get(timeout=left)
        except queue.Empty:
            return None
        if line.startswith(start):
            return line
    return None


@pytest.mark.parametrize("case", FOREVER_CASES)
def test_an_interrupt_stops_a_run_that_would_not_end_and_changes_nothing(case):
    """`while i < n` with n = 1e12 (a trip count of 1e12 fixed when traced, for the last
    case): through jit and the magic, on inputs small enough that XLA would run the program
    on the calling thread and on large ones, replaced or updated in place, timed, profiled."""
    outcome, seconds = interrupted_run(case)
    print(f"{case}: {seconds:.3f} s from SIGINT to KeyboardInterrupt in IPython, "
          f"{outcome['shown'] - outcome['caught']:.3f} s more to show it")
    assert outcome["interrupted"] and outcome["unchanged"] and outcome["after"], outcome
    assert seconds < 1.0, outcome


@pytest.mark.parametrize("case", ["jit-small", "jit-large", "magic-large"])
def test_an_abandoned_run_holds_no_array_once_it_ends(case):
    """A run of about two seconds, interrupted: once it has ended, none of its arrays is left
    (IPython keeps the last traceback, which must not hold the run's results)."""
    outcome, _ = interrupted_run(case, "2")
    assert outcome["interrupted"] and outcome["unchanged"], outcome
    assert outcome["freed_after"] is not None, outcome
