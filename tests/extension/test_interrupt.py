"""Kernel -> Interrupt during a long compiled run: a real IPython shell in a subprocess gets
SIGINT while XLA runs a long rolled loop. The interrupt takes effect within a second, leaves
the namespace as it was, and the shell keeps working (no crash: the child runs with
faulthandler, so a segfault would print its stack). PSC_INTERRUPT_ROUNDS sets how many
interrupts (3 by default, to keep the suite short; run it with 12 to look for rare crashes).
"""
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from interrupt_paths_child import CASES, interrupted_run

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


# -- every path to XLA, on a loop that would not end (interrupt_paths_child.py) ----------------

@pytest.mark.parametrize("case", list(CASES))
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
    """A run of about four seconds, interrupted half a second in: once it has ended, none of
    its arrays is left (IPython keeps the last traceback, which must not hold the run's
    results)."""
    outcome, _ = interrupted_run(case, "4", wait=0.5)
    assert outcome["interrupted"] and outcome["unchanged"], outcome
    assert outcome["freed_after"] is not None, outcome
