"""Run scenarios in a worker process: a crash (a segfault in compiled code) or a hang is
reported as a failure with its cell, and the next scenario gets a fresh worker.

`python cell_worker.py` serves: one JSON scenario per line on stdin, one JSON outcome per
line on the stdout it started with (what the cells print goes to stderr). `Worker` is the
parent's side; `LineWorker`, the process and its timeouts, also runs the corpus's workers
(tests/corpus).
"""
from __future__ import annotations

import contextlib
import dataclasses
import io
import json
import os
import subprocess
import sys
import warnings
from pathlib import Path

from cellgen import Scenario
from cell_oracle import (VALUE, Outcome, Rounding, compare_step, difference,
                         printed_difference, replay_explains, rounding, run_source)

HERE = Path(__file__).resolve().parent


def fresh_shell():
    from IPython.core.interactiveshell import InteractiveShell
    shell = InteractiveShell.instance()
    shell.run_line_magic("load_ext", "psc_jit")
    shell.run_line_magic("config", "PscJit.timing_budget = 0")   # (--compare: one run a side)
    shell.run_cell("import numpy as np")
    return shell


def run_scenario(shell, scenario: Scenario, label: str) -> Outcome:
    """The scenario plain (in a dict) and compiled (in the shell), compared after each step."""
    import numpy as np
    import psc_jit
    names = scenario.names()
    for name in names:
        shell.user_ns.pop(name, None)
    plain: dict = {"np": np}
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
            start = np.random.get_state(legacy=False)
            with contextlib.redirect_stdout(io.StringIO()) as printed_plain:
                want = run_source(source or scenario.cell, plain)
            drawn = np.random.get_state(legacy=False)
            np.random.set_state(start)      # the compiled side draws from where plain did
            with contextlib.redirect_stdout(io.StringIO()) as printed:
                if source is not None:
                    got = run_source(source, shell.user_ns)
                else:
                    got = magic_run(shell, line, scenario.cell)
            if source is None:
                outcome.runs += 1
                report = psc_jit.last_report()
                if report is not None and not report.compiled and report.fallback_reason:
                    outcome.fallbacks.append(report.fallback_reason)
                elif report is not None and not report.compiled and got[1] is None:
                    outcome.failure = ("fallback", f"{step}: not compiled and no reason given")
            failure = compare_step(step, names, plain, shell.user_ns, (want[1], got[1]),
                                   allowed) or host_difference(
                step, (printed_plain.getvalue(), printed.getvalue()),
                (drawn, np.random.get_state(legacy=False)), allowed)
            drawn = np.random.get_state(legacy=False)
            if failure is None and source is None and \
                    (d := difference(want[0], got[0], "value", allowed.of(VALUE))):
                failure = ("value", f"{step}: the cell's value: {d}")
            if step != "setup":
                replayed.append(source)
            if failure is not None and failure[0] in ("value", "signed zero") and \
                    replay_explains(scenario.setup, scenario.cell, replayed, names, plain,
                                    shell.user_ns, (want[0], got[0]), allowed):
                failure = None
            np.random.set_state(drawn)      # as the step left it, whatever the replays drew
            outcome.failure = outcome.failure or failure
            if outcome.failure or (source is not None and want[1] is not None):
                break
    return outcome


def host_difference(step: str, printed: tuple[str, str], states, allowed: Rounding):
    """What plain and compiled printed, and NumPy's global random state after each, told
    apart: (category, detail) or None."""
    if (d := printed_difference(*printed, f"{step}: the printed text", allowed.rtol)):
        return "printed text", d
    if (d := difference(*states, f"{step}: np.random's global state")):
        return "random state", d
    return None


def magic_run(shell, line: str, cell: str):
    try:
        return shell.run_cell_magic("psc_jit", line, cell), None
    except Exception as err:  # noqa: BLE001 (the cell's error, compared with plain's)
        return None, err


def answer_channel():
    """The stdout the worker started with, kept for its answers; what cells print (to file
    descriptor 1) goes to stderr from now on, so it never mixes with them."""
    protocol = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    return protocol


def serve() -> None:
    protocol = answer_channel()
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


class LineWorker:
    """A worker process (`script`, with `paths` on its PYTHONPATH) that answers each line it
    is sent with one line; started on first use and again after it crashed or hung.
    `timeout`: seconds one answer may take; `load_timeout`: seconds a new worker may take to
    load IPython, psc_jit and jaxlib (long on a loaded machine), counted apart, until it says
    "ready". `cwd`: the directory it runs in (the files its cells write go there); `env`:
    variables set for it."""

    def __init__(self, script: Path, paths=(), timeout: float = 300.0,
                 load_timeout: float = 900.0, cwd: str | None = None, env=None):
        self.script = Path(script)
        self.paths = (self.script.parent, *paths)
        self.timeout = timeout
        self.load_timeout = load_timeout
        self.cwd = cwd
        self.env = dict(env or {})
        self.process = None

    def start(self):
        path = os.pathsep.join(str(p) for p in self.paths)
        env = dict(os.environ, **self.env, PYTHONPATH=path)
        self.process = subprocess.Popen([sys.executable, str(self.script)],
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=subprocess.DEVNULL, text=True, env=env,
                                        cwd=self.cwd)
        if self._read_line(self.load_timeout) != "ready\n":
            code = self.stop()
            raise RuntimeError(f"the worker {self.script.name} did not start (exit code "
                               f"{code}) within {self.load_timeout:.0f} s")

    def ask(self, line: str) -> str | tuple[str, str]:
        """The worker's answer to `line`, or ("hang" | "crash", detail) when it gave none (the
        next question then starts a fresh worker)."""
        if self.process is None or self.process.poll() is not None:
            self.start()
        self.process.stdin.write(line + "\n")
        self.process.stdin.flush()
        answer = self._read_line(self.timeout)
        if answer:
            return answer
        hung = self.process.poll() is None
        code = self.stop()
        if hung:
            return ("hang", f"no answer in {self.timeout:.0f} s")
        return ("crash", f"the worker died (exit code {code})")

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


class Worker(LineWorker):
    """The fuzzer's worker: runs scenarios one after another (see LineWorker)."""

    def __init__(self, timeout: float = 300.0, load_timeout: float = 900.0):
        super().__init__(HERE / "cell_worker.py", timeout=timeout, load_timeout=load_timeout)

    def run(self, scenario: Scenario) -> Outcome:
        answer = self.ask(json.dumps(dataclasses.asdict(scenario)))
        if isinstance(answer, tuple):
            return Outcome(failure=answer)
        fields = json.loads(answer)
        failure = fields.pop("failure")
        return Outcome(**fields, failure=tuple(failure) if failure else None)


if __name__ == "__main__":
    serve()
