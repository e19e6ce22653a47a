"""Run the corpus plain and under `%%psc_jit`, each in its own worker process, and say for
every run of every cell whether it ended as the plain run did.

`CorpusRunner.run(entry)` sends the entry to a plain worker and to a compiled worker
(corpus_worker.py; one of each serves all entries, a crashed or hung one is replaced) and
compares their steps (`compare_steps`). A step's `status`:
- "same": everything equal: names (type, dtype, shape, values, floats bit for bit but the
  payload of a NaN), printed text, exception, NumPy's global random state, generators' states,
  which arrays share memory;
- "last bits": equal but for floats that differ by at most LAST_BITS relative (in a name or
  in a number printed; an array's floats relative to its largest, as sums in another order
  differ), counted apart;
- "differs": anything else;
- "crash" / "hang": the compiled worker died or gave no answer (the entry's steps all get it);
- "corpus": the corpus is wrong (a cell declared raising did not raise plain, or the reverse).
"""
from __future__ import annotations

import base64
import json
import os
import pickle
import re
import shutil
import sys
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "fuzz"))

from cell_oracle import difference, printed_difference  # noqa: E402
from cell_worker import LineWorker  # noqa: E402
from corpus_cells import Entry  # noqa: E402
from corpus_snapshot import Opaque, without_addresses  # noqa: E402

LAST_BITS = 1e-12
DIFFERS, LAST = "differs", "last bits"
FAILING = ("differs", "crash", "hang", "corpus")
ENTRY_TIMEOUT = 300.0       # seconds one entry may take in a worker


@dataclass
class StepOutcome:
    entry: str
    label: str
    cell: int | None                # None: the setup
    run: int
    status: str                     # see the module's docstring
    details: list[str] = field(default_factory=list)
    report: dict | None = None      # the compiled run's report fields (corpus_worker)
    plain_seconds: float = 0.0
    compiled_seconds: float = 0.0


# -- comparing two values ------------------------------------------------------------------------
def worst(found) -> tuple[str, str] | None:
    """The first difference of the severest kind among `found` (Nones skipped)."""
    found = [f for f in found if f is not None]
    return next((f for f in found if f[0] == DIFFERS), found[0] if found else None)


def value_difference(want, got, where: str) -> tuple[str, str] | None:
    """(DIFFERS or LAST, what) where `got` is not `want` (snapshots); None when equal."""
    if type(want) is not type(got):
        return DIFFERS, f"{where}: {type(want).__name__} plain, {type(got).__name__} compiled " \
                        f"({short(want)} vs {short(got)})"
    if isinstance(want, Opaque):
        if want.kind != got.kind:
            return DIFFERS, f"{where}: {want.kind} plain, {got.kind} compiled"
        return value_difference(want.payload, got.payload, f"{where} ({want.kind})")
    if isinstance(want, (list, tuple)):
        if len(want) != len(got):
            return DIFFERS, f"{where}: length {len(want)} plain, {len(got)} compiled"
        return worst(value_difference(w, g, f"{where}[{i}]")
                     for i, (w, g) in enumerate(zip(want, got, strict=True)))
    if isinstance(want, dict):
        if list(want) != list(got):
            return DIFFERS, f"{where}: keys {list(want)} plain, {list(got)} compiled"
        return worst(value_difference(want[k], got[k], f"{where}[{k!r}]") for k in want)
    if isinstance(want, (np.ndarray, np.generic, float, complex)):
        return number_difference(want, got, where)
    return None if want == got else (DIFFERS, f"{where}: {short(want)} plain, {short(got)} "
                                              "compiled")


def number_difference(want, got, where: str) -> tuple[str, str] | None:
    exact = difference(want, got, where)
    if exact is None:
        return None
    if np.result_type(want).kind in "fc" and \
            difference(want, got, where, LAST_BITS, of_largest=True) is None:
        return LAST, exact
    return DIFFERS, exact


def short(value, limit: int = 120) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + "…"


# -- comparing printed text ----------------------------------------------------------------------
TIMING_LINE = re.compile(r"^.*(per loop \(mean|The slowest run took|CPU times:|Wall time:).*$",
                         re.M)


def normalised_text(text: str) -> str:
    """Printed text without what differs between any two runs: timings and addresses."""
    return without_addresses(TIMING_LINE.sub("<timing>", text))


def text_difference(want: str, got: str) -> tuple[str, str] | None:
    want, got = normalised_text(want), normalised_text(got)
    exact = printed_difference(want, got, "printed text")
    if exact is None:
        return None
    return (LAST if printed_difference(want, got, "", LAST_BITS) is None else DIFFERS), exact


# -- comparing steps -----------------------------------------------------------------------------
def step_differences(plain: dict, compiled: dict, varies=()) -> list[tuple[str, str]]:
    """Every way the compiled step ended differently from the plain one."""
    found = []
    if plain["error"] != compiled["error"]:
        found.append((DIFFERS, f"exception: plain {error_text(plain['error'])}; compiled "
                               f"{error_text(compiled['error'])}"))
    found.append(text_difference(plain["stdout"], compiled["stdout"]))
    names_plain, names_compiled = set(plain["names"]), set(compiled["names"])
    if names_plain != names_compiled:
        found.append((DIFFERS, f"names bound only plain: {sorted(names_plain - names_compiled)}"
                               f", only compiled: {sorted(names_compiled - names_plain)}"))
    for name in sorted((names_plain & names_compiled) - set(varies)):
        found.append(value_difference(plain["names"][name], compiled["names"][name], name))
    found.append(value_difference(plain["global_random"], compiled["global_random"],
                                  "np.random's global state"))
    aliases = [p for p in plain["aliases"] if not set(p) & set(varies)]
    if sorted(aliases) != sorted(p for p in compiled["aliases"] if not set(p) & set(varies)):
        found.append((DIFFERS, f"arrays sharing memory: plain {aliases}, compiled "
                               f"{compiled['aliases']}"))
    return [f for f in found if f is not None]


def error_text(error) -> str:
    return "no error" if error is None else f"{error[0]}: {error[1]}"


def corpus_problem(entry: Entry, step: dict) -> str | None:
    """Where the plain run contradicts the corpus (a cell declared raising did not, or the
    reverse, or the setup raised)."""
    if step["cell"] is None:
        return None if step["error"] is None else \
            f"the setup raised {error_text(step['error'])}"
    declared = entry.cells[step["cell"]].raises
    if declared != (step["error"] is not None):
        return f"declared {'raising' if declared else 'not raising'}, but plain gave " \
               f"{error_text(step['error'])}"
    return None


def compare_steps(entry: Entry, plain: list[dict], compiled: list[dict]) -> list[StepOutcome]:
    outcomes = []
    for p, c in zip(plain, compiled, strict=True):
        found = step_differences(p, c, entry.varies)
        problem = corpus_problem(entry, p)
        status = "corpus" if problem else (worst(found) or ("same",))[0]
        details = [problem] if problem else [d for _, d in found]
        outcomes.append(StepOutcome(entry.name, p["label"], p["cell"], p["run"], status,
                                    details, c["report"], p["seconds"], c["seconds"]))
    return outcomes


def failed_steps(entry: Entry, status: str, detail: str) -> list[StepOutcome]:
    """Every step of an entry whose compiled worker gave no steps."""
    steps = [StepOutcome(entry.name, "setup", None, 0, status, [detail])]
    for index, cell in enumerate(entry.cells):
        steps += [StepOutcome(entry.name, f"cell {index + 1}", index, run, status, [detail])
                  for run in range(cell.runs)]
    return steps


# -- the workers ---------------------------------------------------------------------------------
class CorpusRunner:
    """A plain and a compiled worker, each in its own directory (the files cells write) with
    its own IPython directory, sharing a fresh disk cache (so a compile is a compile)."""

    def __init__(self, timeout: float = ENTRY_TIMEOUT):
        self.root = tempfile.mkdtemp(prefix="psc_jit-corpus-")
        self.workers = {mode: self._worker(mode, timeout) for mode in ("plain", "compiled")}

    def _worker(self, mode: str, timeout: float) -> LineWorker:
        home = os.path.join(self.root, mode)
        os.makedirs(home)
        env = {"IPYTHONDIR": os.path.join(home, ".ipython"),
               "PSC_JIT_CACHE_DIR": os.path.join(self.root, "cache")}
        return LineWorker(HERE / "corpus_worker.py", paths=(HERE.parent / "fuzz",),
                          timeout=timeout, cwd=home, env=env)

    def run(self, entry: Entry) -> list[StepOutcome]:
        plain = self._ask("plain", entry)
        if isinstance(plain, str):
            return failed_steps(entry, "corpus", f"plain: {plain}")
        compiled = self._ask("compiled", entry)
        if isinstance(compiled, tuple):
            return failed_steps(entry, *compiled)
        if isinstance(compiled, str):
            return failed_steps(entry, DIFFERS, f"compiled: {compiled}")
        return compare_steps(entry, plain, compiled)

    def _ask(self, mode: str, entry: Entry):
        """The worker's steps; (status, detail) when it crashed or hung; a str when the
        worker's harness failed."""
        request = {"entry": asdict(entry), "compiled": mode == "compiled"}
        answer = self.workers[mode].ask(json.dumps(request))
        if isinstance(answer, tuple):
            return answer if mode == "compiled" else f"the plain worker: {answer[1]}"
        reply = pickle.loads(base64.b64decode(answer))
        return reply.get("steps") or reply["failure"]

    def stop(self) -> None:
        for worker in self.workers.values():
            worker.stop()
        shutil.rmtree(self.root, ignore_errors=True)
