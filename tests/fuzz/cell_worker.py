"""Run scenarios in a worker process: a crash (a segfault in compiled code) or a hang is
reported as a failure with its cell, and the next scenario gets a fresh worker.

`python cell_worker.py` serves: one JSON scenario per line on stdin, one JSON outcome per
line on the stdout it started with (what the cells print goes to stderr). `Worker` is the
parent's side.
"""
from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
import warnings
from pathlib import Path

from cellgen import Scenario
from cell_oracle import (VALUE, Outcome, compare_step, difference, replay_explains, rounding,
                         run_source)

HERE = Path(__file__).resolve().parent


def fresh_shell():
    from IPython.core.interactiveshell import InteractiveShell
    shell = InteractiveShell.instance()
    shell.run_line_magic("load_ext", "psc_jit")
    shell.run_cell("import numpy as np")
    return shell


def run_scenario(shell, scenario: Scenario, label: str) -> Outcome:
    """The scenario plain (in a dict) and compiled (in the shell), compared after each step."""
    import numpy as np
    import psc_jit
    names = scenario.names()
    for name in names:
        shell.user_ns.pop(name, None)
    plain: dict = {"np": np, "__name__": "__main__"}     # (as a notebook's namespace)
    outcome = Outcome()
    steps = [("setup", scenario.setup)]
    for i, change in enumerate((None, *scenario.changes)):
        if change is not None:
            steps.append((f"change {i}", change))
        steps.append((f"run {i + 1}", None))
    line = f"--quiet --no-compare --name {label} {scenario.flags}"
    allowed = rounding(scenario.setup, scenario.cell, scenario.changes)
    replayed: list[str | None] = []     # the steps after the setup, for replay_explains
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        for step, source in steps:
            want = run_source(source or scenario.cell, plain)
            if source is not None:
                got = run_source(source, shell.user_ns)
            else:
                got = magic_run(shell, line, scenario.cell)
                outcome.runs += 1
                report = psc_jit.last_report()
                if report is not None and not report.compiled and report.fallback_reason:
                    outcome.fallbacks.append(report.fallback_reason)
                elif report is not None and not report.compiled and got[1] is None:
                    outcome.failure = ("fallback", f"{step}: not compiled and no reason given")
            failure = compare_step(step, names, plain, shell.user_ns, (want[1], got[1]),
                                   allowed)
            if failure is None and source is None and \
                    (d := difference(want[0], got[0], "value", allowed.of(VALUE))):
                failure = ("value", f"{step}: the cell's value: {d}")
            if step != "setup":
                replayed.append(source)
            if failure is not None and failure[0] in ("value", "signed zero") and \
                    replay_explains(scenario.setup, scenario.cell, replayed, names, plain,
                                    shell.user_ns, (want[0], got[0]), allowed):
                failure = None
            outcome.failure = outcome.failure or failure
            if outcome.failure or (source is not None and want[1] is not None):
                break
    return outcome


def magic_run(shell, line: str, cell: str):
    try:
        return shell.run_cell_magic("psc_jit", line, cell), None
    except Exception as err:  # noqa: BLE001 (the cell's error, compared with plain's)
        return None, err


def serve() -> None:
    protocol = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)       # what cells print must not mix with the outcomes
    shell = fresh_shell()
    protocol.write("ready\n")       # the parent's timeout counts from here, not the load
    protocol.flush()
    for count, line in enumerate(sys.stdin):
        scenario = Scenario(**{k: tuple(v) if k == "changes" else v
                               for k, v in json.loads(line).items()})
        try:
            outcome = run_scenario(shell, scenario, f"fuzz{count}")
        except Exception as err:    # noqa: BLE001 (the oracle's own error: reported, not a crash)
            outcome = Outcome(failure=("oracle", f"the oracle raised {type(err).__name__}: "
                                                 f"{err}"))
        protocol.write(json.dumps(dataclasses.asdict(outcome)) + "\n")
        protocol.flush()


class Worker:
    """A worker process that runs scenarios one after another; restarted after a crash.
    `timeout`: seconds one scenario may take; `load_timeout`: seconds a new worker may take to
    load IPython, psc_jit and jaxlib (long on a loaded machine), counted apart."""

    def __init__(self, timeout: float = 300.0, load_timeout: float = 900.0):
        self.timeout = timeout
        self.load_timeout = load_timeout
        self.process = None

    def start(self):
        env = dict(os.environ, PYTHONPATH=str(HERE))
        self.process = subprocess.Popen([sys.executable, str(HERE / "cell_worker.py")],
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=subprocess.DEVNULL, text=True, env=env)
        if self._read_line(self.load_timeout) != "ready\n":
            code = self.stop()
            raise RuntimeError(f"the fuzz worker did not start (exit code {code}) within "
                               f"{self.load_timeout:.0f} s")

    def run(self, scenario: Scenario) -> Outcome:
        if self.process is None or self.process.poll() is not None:
            self.start()
        self.process.stdin.write(json.dumps(dataclasses.asdict(scenario)) + "\n")
        self.process.stdin.flush()
        answer = self._read_line(self.timeout)
        if answer:
            fields = json.loads(answer)
            failure = fields.pop("failure")
            return Outcome(**fields, failure=tuple(failure) if failure else None)
        hung = self.process.poll() is None
        code = self.stop()
        if hung:
            return Outcome(failure=("hang", f"no answer in {self.timeout:.0f} s"))
        return Outcome(failure=("crash", f"the worker died (exit code {code})"))

    def _read_line(self, timeout: float) -> str:
        """The worker's next line, or "" when it died or gave none in `timeout` seconds
        (waiting on until the worker exits, when it closed its output)."""
        import selectors
        with selectors.DefaultSelector() as selector:
            selector.register(self.process.stdout, selectors.EVENT_READ)
            if not selector.select(timeout):
                return ""
        line = self.process.stdout.readline()
        if not line:
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                pass
        return line

    def stop(self):
        if self.process is None:
            return None
        if self.process.poll() is None:
            self.process.kill()
        code = self.process.wait()
        self.process = None
        return code


if __name__ == "__main__":
    serve()
