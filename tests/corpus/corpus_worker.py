"""The corpus's worker process: a real IPython shell with psc_jit loaded, running entries.

`python corpus_worker.py` serves: one JSON request per line on stdin, {"entry": ..., "compiled":
bool}; for each, one line of answer (base64 of a pickled dict) on the stdout it started with.
The entry starts a fresh session (the namespace emptied, NumPy's global random state seeded,
its print options and error state as NumPy starts), its setup runs plain, then each cell runs
as written (`compiled` false) or under `%%psc_jit` (`compiled` true). After the setup and
after every run of a cell, the answer keeps a `step`: what the cell printed, the exception it
raised, a snapshot of the namespace (corpus_snapshot), which arrays share memory, NumPy's
global random state, and (compiled) what `psc_jit.last_report()` says of the run.
"""
from __future__ import annotations

import base64
import contextlib
import io
import json
import pickle
import sys
import time

import numpy as np

from cell_worker import answer_channel, fresh_shell
from corpus_snapshot import (namespace_snapshot, shared_memory, snapshot, user_names,
                             without_addresses)

MAGIC = "%%psc_jit --quiet --no-compare\n"
SESSION_SEED = 12345        # NumPy's global random state at the start of every entry
PRINT_OPTIONS = np.get_printoptions()
ERROR_STATE = np.geterr()


def corpus_shell():
    """IPython's shell with psc_jit loaded; tracebacks not shown (they would print into the
    captured text, and differ by the frames the magic adds: the exception is compared)."""
    shell = fresh_shell()
    shell._showtraceback = lambda *args, **kwargs: None
    # The plain worker's NumPy as a session that has compiled a cell has it: jaxlib's first
    # compile imports ml_dtypes, which adds its types to np.sctypeDict (README, differences).
    import ml_dtypes  # noqa: F401
    return shell


def start_session(shell) -> None:
    shell.reset(new_session=False)
    np.random.seed(SESSION_SEED)
    np.set_printoptions(**PRINT_OPTIONS)
    np.seterr(**ERROR_STATE)


def run_entry(shell, entry: dict, compiled: bool) -> list[dict]:
    """The steps of one entry (see the module's docstring)."""
    start_session(shell)
    steps = [run_step(shell, "setup", entry["setup"], None)]
    for index, cell in enumerate(entry["cells"]):
        for run in range(cell["runs"]):
            label = f"cell {index + 1}" + (f", run {run + 1}" if cell["runs"] > 1 else "")
            source = MAGIC + cell["source"] if compiled else cell["source"]
            step = run_step(shell, label, source, cell["source"] if compiled else None)
            steps.append({**step, "cell": index, "run": run})
    return steps


def run_step(shell, label: str, source: str, body: str | None) -> dict:
    """Run `source` in the shell; what it left. `body`: the cell under the magic (compiled)."""
    import psc_jit
    before = psc_jit.last_report()
    printed = io.StringIO()
    start = time.perf_counter()
    with contextlib.redirect_stdout(printed):
        result = shell.run_cell(source, store_history=False)
    seconds = time.perf_counter() - start
    names = user_names(shell)
    return {"label": label, "cell": None, "run": 0, "stdout": printed.getvalue(),
            "error": described(result.error_before_exec or result.error_in_exec),
            "names": namespace_snapshot(shell, names), "aliases": shared_memory(shell, names),
            "global_random": snapshot(np.random.get_state(legacy=False)), "seconds": seconds,
            "report": None if body is None else
            report_fields(psc_jit.last_report(), before, body)}


def described(error) -> tuple[str, str] | None:
    if error is None:
        return None
    kind = type(error)
    name = kind.__qualname__ if kind.__module__ == "builtins" else \
        f"{kind.__module__}.{kind.__qualname__}"
    return name, without_addresses(str(error))


def report_fields(report, before, body: str) -> dict:
    """What the report of the run says: how it ran ("whole": one compiled program; "split":
    compiled regions and host steps; "plain": not compiled; "no report": last_report() is not
    this run's), why, and its timings. Reads fields a report may not have yet (regions,
    host_steps, host_seconds, compile_seconds) with getattr."""
    if report is None or report is before or report.source.strip() != body.strip():
        return {"kind": "no report", "reason": "last_report() is not this run's"}
    host_steps = getattr(report, "host_steps", None)
    regions, n_host_steps = counted(getattr(report, "regions", None)), counted(host_steps)
    compiled_regions = sum(1 for region in report.regions if region.compiled) if regions \
        else int(bool(report.compiled))
    kind = "plain" if not compiled_regions else \
        "split" if (n_host_steps or 0) > 0 or compiled_regions > 1 else "whole"
    stages = {k: float(v) for k, v in report.stage_seconds.items()}
    if regions:             # a split run's compile stages are its regions'
        for region in report.regions:
            for stage in ("trace", "lower", "compile"):
                if stage in region.stage_seconds:
                    stages[stage] = stages.get(stage, 0.0) + float(region.stage_seconds[stage])
    return {"kind": kind, "reason": report.fallback_reason, "compiled": bool(report.compiled),
            "cache_hit": bool(report.cache_hit), "regions": regions,
            "host_steps": n_host_steps,
            "host_step_text": [str(h)[:200] for h in list(host_steps or ())[:20]],
            "stage_seconds": stages, "compile_seconds": compile_seconds(report, stages),
            "host_seconds": getattr(report, "host_seconds", None) or stages.get("host"),
            "notes": [str(n) for n in report.notes]}


def counted(value) -> int | None:
    if value is None:
        return None
    return value if isinstance(value, int) else len(value)


def compile_seconds(report, stages: dict) -> float | None:
    """Trace, lower and compile time of a run that compiled (None on a cache hit)."""
    given = getattr(report, "compile_seconds", None)
    if given is not None:
        return float(given)
    spent = [stages[s] for s in ("trace", "lower", "compile") if s in stages]
    return sum(spent) if spent and not report.cache_hit else None


def answer(shell, request: dict) -> dict:
    try:
        return {"steps": run_entry(shell, request["entry"], request["compiled"])}
    except Exception as err:     # noqa: BLE001 (the harness's own error, reported, not a crash)
        return {"failure": f"the worker raised {type(err).__name__}: {err}"}


def serve() -> None:
    protocol = answer_channel()
    shell = corpus_shell()
    protocol.write("ready\n")
    protocol.flush()
    for line in sys.stdin:
        reply = answer(shell, json.loads(line))
        try:
            encoded = pickle.dumps(reply)
        except Exception as err:     # noqa: BLE001 (a value the snapshot let through)
            encoded = pickle.dumps({"failure": f"the answer did not pickle: {err}"})
        protocol.write(base64.b64encode(encoded).decode() + "\n")
        protocol.flush()


if __name__ == "__main__":
    serve()
