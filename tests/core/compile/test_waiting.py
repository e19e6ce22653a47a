"""Runs handed to a worker thread (`waiting.run_on_worker`): the caller waits in slices where
an interrupt stops it; the task's result or its error comes back; a worker busy with an
abandoned task never holds up the next call (tests/extension/test_interrupt.py interrupts
real runs)."""
import threading

import pytest
from psc_jit.core.compile.waiting import run_on_worker


def test_a_task_gives_its_result_or_raises_its_error_in_the_caller():
    assert run_on_worker(lambda: 41 + 1) == 42

    def fails():
        raise ValueError("from the worker")
    with pytest.raises(ValueError, match="from the worker"):
        run_on_worker(fails)
    assert run_on_worker(lambda: "again") == "again"


def test_a_busy_worker_does_not_hold_up_another_call():
    release, started = threading.Event(), threading.Event()
    results = []

    def blocked():
        started.set()
        release.wait(10)
        return "late"
    caller = threading.Thread(target=lambda: results.append(run_on_worker(blocked)))
    caller.start()
    assert started.wait(10)
    assert run_on_worker(lambda: "meanwhile") == "meanwhile"
    release.set()
    caller.join(10)
    assert results == ["late"]
