"""A real IPython shell that runs one compiled call that would not end (a `while i < n` loop,
n = 1e12), for the parent test (test_interrupt.py) to interrupt with SIGINT, as Kernel ->
Interrupt does. Each case takes another path to XLA: `jit` and the magic, on small inputs
(XLA would run the program on the calling thread) and large ones (on XLA's own thread),
with the array replaced or updated in place, a trip count fixed when traced, and the timed
and profiled calls.

    python -X faulthandler interrupt_paths_child.py CASE [SECONDS | n=TRIPS]

With SECONDS, the long run is made to take about that long instead (a trip count measured
here), and the child then waits for it to end and says when XLA's arrays of it were freed;
with n=TRIPS, it runs that many trips. Prints `go <monotonic time>` as the long cell starts,
then one JSON line: whether the cell ended in KeyboardInterrupt, whether the namespace's
values are as before, the monotonic times the interrupt reached IPython and its traceback
was shown, when the abandoned run's arrays were freed, and whether the shell runs the cell
again afterwards. `interrupted_run` (test_interrupt.py, bench/interrupts.py) starts it and
sends the SIGINT.
"""
import gc
import json
import queue
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
from IPython.core.interactiveshell import InteractiveShell

from psc_jit import last_report

SPIN = """
def spin(x, n):
    i = 0
    while i < n:
        x = x * 0.999 + 0.001
        i += 1
    return x
f = jit(spin)
y = f(x, n)
"""
REPLACED = "i = 0\nwhile i < n:\n    x = x * 0.999 + 0.001\n    i += 1\n"
IN_PLACE = "i = 0\nwhile i < n:\n    x[:] = x * 0.999 + 0.001\n    i += 1\n"
RANGE = "for k in range(n):\n    x = x * 0.999 + 0.001\n"
MAGIC = "%%psc_jit --quiet --no-compare\n"
SMALL, UNDER_CHEAP, LARGE = 8, 400, 100_000   # (400: 805 flops, under XLA's cheap 1000)
FOREVER = 1e12

# case: (setup, the long cell (reads n), elements of x, the value of n it takes)
CASES = {
    "jit-small": (SPIN, "y = f(x, n)", SMALL, float),
    "jit-400": (SPIN, "y = f(x, n)", UNDER_CHEAP, float),
    "jit-large": (SPIN, "y = f(x, n)", LARGE, float),
    "jit-timed": (SPIN, "r = f.time_call(x, n)", SMALL, float),
    "jit-profiled": (SPIN, "r = f.profile_call(x, n)", LARGE, float),
    "magic-small": ("", MAGIC + REPLACED, SMALL, float),
    "magic-large": ("", MAGIC + REPLACED, LARGE, float),
    "magic-in-place-small": ("", MAGIC + IN_PLACE, SMALL, float),
    "magic-in-place-large": ("", MAGIC + IN_PLACE, LARGE, float),
    "magic-trip-count": ("", MAGIC + RANGE, SMALL, int),
}


def snapshot(ns: dict) -> dict:
    """The namespace's values that the cells touch: copies of arrays, and their identities."""
    return {k: (id(v), np.copy(v)) for k, v in ns.items() if k in ("x", "y", "i")}


def unchanged(ns: dict, before: dict) -> bool:
    now = snapshot(ns)
    return now.keys() == before.keys() and all(
        now[k][0] == before[k][0] and np.array_equal(now[k][1], before[k][1]) for k in now)


def trips_for(shell, cell: str, kind, seconds: float) -> float:
    """A trip count whose run takes about `seconds` (measured on runs of at least 0.2 s)."""
    trips, elapsed = 10_000, 0.0
    while elapsed < 0.2:
        trips *= 4
        shell.user_ns["n"] = kind(trips)
        start = time.perf_counter()
        shell.run_cell(cell)
        elapsed = time.perf_counter() - start
    return kind(trips * seconds / elapsed)


def wait_for_freed(live_arrays, baseline: int, limit: float = 20.0) -> float | None:
    """Seconds until psc_jit's XLA arrays are back to `baseline` (None: not within limit)."""
    start = time.monotonic()
    while time.monotonic() - start < limit:
        gc.collect()
        if live_arrays() <= baseline:
            return time.monotonic() - start
        time.sleep(0.05)
    return None


def main(case: str, seconds: float | None, trips: float | None = None) -> None:
    setup, cell, size, kind = CASES[case]
    shell = InteractiveShell.instance()
    shell.run_line_magic("load_ext", "psc_jit")
    shell.user_ns.update(x=np.ones(size), n=kind(3))
    shell.run_cell("import numpy as np\nfrom psc_jit import jit\n" + setup)
    assert shell.run_cell(cell).success          # compiled, and run once
    report = last_report()
    assert report is None or report.compiled, report.fallback_reason
    long_n = trips if trips is not None else FOREVER if seconds is None else \
        trips_for(shell, cell, kind, seconds)
    shell.user_ns["n"] = kind(long_n)
    from psc_jit.core.compile.xla import live_arrays
    before, baseline = snapshot(shell.user_ns), live_arrays()
    shell.run_cell("raise KeyboardInterrupt")   # (IPython's first traceback takes a second)
    caught = []

    def shown(self, etype, value, tb, tb_offset=None):
        caught.append(time.monotonic())
        self.showtraceback((etype, value, tb), tb_offset=tb_offset)
    shell.set_custom_exc((KeyboardInterrupt,), shown)
    print("go", time.monotonic(), flush=True)
    result = shell.run_cell(cell)
    ended = time.monotonic()
    signal.signal(signal.SIGINT, signal.SIG_IGN)     # a SIGINT after the run: it ended first
    interrupted = isinstance(result.error_in_exec, KeyboardInterrupt)
    same = unchanged(shell.user_ns, before)
    freed = wait_for_freed(live_arrays, baseline) if seconds is not None else None
    shell.user_ns["n"] = kind(3)
    after = shell.run_cell(cell).success
    print(json.dumps({"interrupted": interrupted, "unchanged": same,
                      "caught": caught[0] if caught else None, "shown": ended,
                      "freed_after": freed, "after": after}), flush=True)


# -- the parent's side ---------------------------------------------------------------------------

SECONDS_BEFORE_INTERRUPT = {"magic-trip-count": 2.5}    # (that run compiles first)
SECONDS_TO_START = 120      # the child's compile, on a busy machine
SECONDS_TO_ANSWER = 60      # an interrupt that did not stop the run: no answer by then


def interrupted_run(case: str, *extra: str, wait: float | None = None) -> tuple[dict, float]:
    """Start this script on `case`, interrupt its long cell `wait` seconds into it, and return
    its report and the seconds from SIGINT until the KeyboardInterrupt reached IPython. The
    child is killed
    afterwards (the abandoned run goes on in it), or when it has not answered in time
    (AssertionError)."""
    child = subprocess.Popen([sys.executable, "-X", "faulthandler", str(Path(__file__)), case,
                              *extra], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    lines: queue.Queue = queue.Queue()
    threading.Thread(target=lambda: [lines.put(line) for line in child.stdout], daemon=True
                     ).start()
    try:
        started = next_line(lines, "go", SECONDS_TO_START)
        assert started, f"{case} did not start: {child.poll()}"
        time.sleep(wait if wait is not None else SECONDS_BEFORE_INTERRUPT.get(case, 1.0))
        sent = time.monotonic()
        child.send_signal(signal.SIGINT)
        outcome = next_line(lines, "{", SECONDS_TO_ANSWER)
        if not outcome:
            child.send_signal(signal.SIGABRT)      # (faulthandler prints every thread's stack)
            child.wait(10)
        assert outcome, f"{case}: no answer {SECONDS_TO_ANSWER} s after SIGINT\n" + \
            child.stderr.read()[-6000:]
    finally:
        child.kill()
        child.wait()
    outcome = json.loads(outcome)
    caught = outcome["caught"]          # (None: the run had ended before the SIGINT)
    return outcome, caught - sent if caught is not None else float("inf")


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


if __name__ == "__main__":
    # A kernel takes SIGINT as KeyboardInterrupt whatever it inherited: a test run started as a
    # background job of a shell without job control ignores SIGINT, and so would this child.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    extra = sys.argv[2] if len(sys.argv) > 2 else None
    main(sys.argv[1], float(extra) if extra and not extra.startswith("n=") else None,
         float(extra[2:]) if extra and extra.startswith("n=") else None)
