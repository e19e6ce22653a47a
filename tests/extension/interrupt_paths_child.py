"""A real IPython shell that runs one compiled call that would not end (a `while i < n` loop,
n = 1e12), for the parent test (test_interrupt.py) to interrupt with SIGINT, as Kernel ->
Interrupt does. Each case takes another path to XLA: `jit` and the magic, on small inputs
(XLA would run the program on the calling thread) and large ones (on XLA's own thread),
with the array replaced or updated in place, a trip count fixed when traced, and the timed
and profiled calls.

    python -X faulthandler interrupt_paths_child.py CASE [SECONDS]

With SECONDS, the long run is made to take about that long instead (a trip count measured
here), and the child then waits for it to end and says when XLA's arrays of it were freed.
Prints `go <monotonic time>` as the long cell starts, then one JSON line: whether the cell
ended in KeyboardInterrupt, whether the namespace's values are as before, the monotonic time
it ended, and whether the shell runs the cell again afterwards.
"""
import gc
import json
import sys
import time

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
SMALL, LARGE = 8, 100_000
FOREVER = 1e12

# case: (setup, the long cell (reads n), elements of x, the value of n it takes)
CASES = {
    "jit-small": (SPIN, "y = f(x, n)", SMALL, float),
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


def main(case: str, seconds: float | None) -> None:
    setup, cell, size, kind = CASES[case]
    shell = InteractiveShell.instance()
    shell.run_line_magic("load_ext", "psc_jit")
    shell.user_ns.update(x=np.ones(size), n=kind(3))
    shell.run_cell("import numpy as np\nfrom psc_jit import jit\n" + setup)
    assert shell.run_cell(cell).success          # compiled, and run once
    report = last_report()
    assert report is None or report.compiled, report.fallback_reason
    long_n = FOREVER if seconds is None else trips_for(shell, cell, kind, seconds)
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
    interrupted = isinstance(result.error_in_exec, KeyboardInterrupt)
    same = unchanged(shell.user_ns, before)
    freed = wait_for_freed(live_arrays, baseline) if seconds is not None else None
    shell.user_ns["n"] = kind(3)
    after = shell.run_cell(cell).success
    print(json.dumps({"interrupted": interrupted, "unchanged": same,
                      "caught": caught[0] if caught else None, "shown": ended,
                      "freed_after": freed, "after": after}), flush=True)


if __name__ == "__main__":
    main(sys.argv[1], float(sys.argv[2]) if len(sys.argv) > 2 else None)
