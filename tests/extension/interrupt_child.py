"""A real IPython shell that runs a long compiled cell again and again, for the parent test
(test_interrupt.py) to interrupt with SIGINT, as Kernel -> Interrupt does.

    python -X faulthandler interrupt_child.py TRIP_COUNT ROUNDS

Each round prints `go <monotonic time>` as the run starts, then one JSON line: whether the
run ended in KeyboardInterrupt, whether the namespace was left as it was, and the monotonic
time it ended (the clock is the system's, so the parent can subtract its own send time).
"""
import json
import signal
import sys
import time

import numpy as np
from IPython.core.interactiveshell import InteractiveShell

CELL = "for i in range(n):\n    x = np.sin(x) * 0.5 + 0.1\ny = x.sum()\n"


def main(trip_count: int, rounds: int) -> None:
    ip = InteractiveShell.instance()
    ip.run_line_magic("load_ext", "psc_jit")
    ip.user_ns.update(np=np, x=np.ones(1000), n=np.int64(3))
    ip.run_cell_magic("psc_jit", "--quiet --no-compare", CELL)      # compiled once
    ip.user_ns["n"] = np.int64(trip_count)
    for _ in range(rounds):
        x, y = ip.user_ns["x"].copy(), ip.user_ns["y"]
        print("go", time.monotonic(), flush=True)
        try:
            ip.run_cell_magic("psc_jit", "--quiet --no-compare", CELL)
            interrupted = False
        except KeyboardInterrupt:
            interrupted = True
        ended = time.monotonic()
        same = np.array_equal(ip.user_ns["x"], x) and ip.user_ns["y"] == y
        print(json.dumps({"interrupted": interrupted,
                          "unchanged": bool(same), "ended": ended}), flush=True)
    ip.user_ns["n"] = np.int64(3)
    result = ip.run_cell("%%psc_jit --quiet --no-compare\n" + CELL)   # still works after
    print(json.dumps({"after": result.success, "y": float(ip.user_ns["y"])}), flush=True)


if __name__ == "__main__":
    # A kernel takes SIGINT as KeyboardInterrupt whatever it inherited: a test run started as a
    # background job of a shell without job control ignores SIGINT, and so would this child.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    main(int(sys.argv[1]), int(sys.argv[2]))
