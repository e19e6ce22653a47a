"""Waiting for XLA's work so that an interrupt stops the wait: look, then sleep in short
slices (never inside jaxlib's blocking wait, where KeyboardInterrupt is not delivered)."""
from __future__ import annotations

import threading
import time

SPIN_SECONDS = 2e-4     # a run's wait first looks without sleeping (most calls end by then)
POLL_SHORTEST = 5e-5    # then sleeps this long between looks
POLL_SHORT_FOR = 0.02   # for the first this many seconds, then longer and longer,
POLL_LONGEST = 5e-3     # up to this long


def poll_until_ready(result) -> None:
    """Look until `result` is ready: without sleeping at first, then in short sleeps (a run of
    a few milliseconds ends at most a slice late), longer ones as the run goes on."""
    start = time.perf_counter()
    while not result.is_ready() and time.perf_counter() - start < SPIN_SECONDS:
        pass
    delay = POLL_SHORTEST
    while not result.is_ready():
        time.sleep(delay)
        if time.perf_counter() - start > POLL_SHORT_FOR:
            delay = min(delay * 2, POLL_LONGEST)


WAIT_SLICE = 0.05       # seconds between looks at a running compile (and at interrupts)


def wait_for_thread(worker: threading.Thread, waiting=None) -> None:
    """Wait for a worker thread (an XLA compile) in slices of WAIT_SLICE, calling
    `waiting(seconds so far)` about every second."""
    start = last = time.monotonic()
    while worker.is_alive():
        worker.join(WAIT_SLICE)
        now = time.monotonic()
        if waiting is not None and now - last >= 1.0:
            last = now
            waiting(now - start)
