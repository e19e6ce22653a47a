"""Waiting for XLA's work so that an interrupt stops the wait: look, then sleep in short
slices, or wait on a lock in slices (KeyboardInterrupt is delivered between them), and hand a
run that XLA would make on the calling thread to a worker thread, so that the calling thread
only waits."""
from __future__ import annotations

import _thread
import threading
import time
from typing import Callable, TypeVar

from .errors import run_failed

T = TypeVar("T")

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


def wait_for_result(result) -> None:
    """Block until an XLA result is computed; XLA's error for a failed run (out of memory, a
    kernel's error) as an XlaError, as when the launch itself fails.

    XLA runs the program on its own threads; this thread waits by looking, then sleeping in
    short slices, never inside jaxlib's blocking wait, so that an interrupt (Kernel ->
    Interrupt: KeyboardInterrupt in the main thread) stops the wait within a slice. The
    abandoned run finishes in the background; its buffers are freed when it ends (jaxlib holds
    them, and the inputs it reads, until then)."""
    try:
        if not result.is_ready():
            poll_until_ready(result)
        result.block_until_ready()
    except Exception as err:      # jaxlib raises its own JaxRuntimeError; keep its text
        raise run_failed(err) from err


# XLA's asynchronous CPU client runs a program on the calling thread, not its own, when XLA's
# cost analysis gives it fewer flops than this (jaxlib 0.10.2: a "cheap computation", < 1000;
# a while loop's body counts once, whatever its trip count), where an interrupt waits for its
# end. Tested in tests/core/compile/test_inline.py.
XLA_RUNS_INLINE_BELOW_FLOPS = 1000


def runs_where_called(loaded) -> bool:
    """Whether XLA's asynchronous client runs this loaded executable on the calling thread."""
    flops = loaded.cost_analysis().get("flops", 0.0)
    return float(flops) < XLA_RUNS_INLINE_BELOW_FLOPS


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


# -- runs handed to a worker thread -----------------------------------------------------------

class _Worker:
    """A daemon thread that runs the tasks it is handed, one at a time. The hand-off is two
    bare locks (a task costs two thread switches, tens of µs). A task whose caller stopped
    waiting (an interrupt) runs on; its result is dropped as it ends, and the worker goes back
    to the idle ones."""

    def __init__(self):
        self._go = _thread.allocate_lock()
        self._go.acquire()
        self._done = _thread.allocate_lock()
        self._done.acquire()
        self._state = _thread.allocate_lock()   # guards `_outcome` against an abandon
        self._task: Callable | None = None
        self._outcome: tuple | None = None
        self._abandoned = False
        threading.Thread(target=self._serve, name="psc_jit run", daemon=True).start()

    def run(self, task: Callable[[], T]) -> T:
        self._task = task
        self._go.release()
        try:
            while not self._done.acquire(True, WAIT_SLICE):
                pass
            value, error = self._outcome
        except BaseException:
            self._abandon()
            raise
        self._outcome = None
        _IDLE.append(self)
        if error is not None:
            raise error
        return value

    def _serve(self) -> None:
        while True:
            self._go.acquire()
            task, self._task = self._task, None
            try:
                outcome = (task(), None)
            except BaseException as err:      # the caller raises it (an XLA error)
                outcome = (None, err)
            del task
            with self._state:
                if self._abandoned:
                    self._abandoned = False
                    del outcome                 # the abandoned run's buffers go now
                    _IDLE.append(self)
                    continue
                self._outcome = outcome
                del outcome
                self._done.release()

    def _abandon(self) -> None:
        with self._state:
            if self._outcome is None:           # still running: dropped as it ends
                self._abandoned = True
                return
        self._done.acquire(False)               # it ended as the wait stopped (the lock
        self._outcome = None                    # may be this thread's already)
        _IDLE.append(self)


_IDLE: list[_Worker] = []       # workers waiting for a task (list.pop and append are atomic)


def run_on_worker(task: Callable[[], T]) -> T:
    """task() run on a worker thread while this thread waits in slices of WAIT_SLICE, so that
    KeyboardInterrupt stops the wait at once (the task runs on, its result dropped as it
    ends); its result, or its exception raised here."""
    try:
        worker = _IDLE.pop()
    except IndexError:
        worker = _Worker()
    return worker.run(task)
