"""Timing a split cell as a whole, and what that needs: the cell's inputs as they were before
it ran, and every random generator's state, so that the timed runs (plain Python, and the
compiled regions with their host steps) all start where the cell's own run started and leave
nothing changed.

A split cell is timed as a whole, as a user would time it: the plain cell against its regions
and host steps together. That runs its host steps again, so it is timed only where doing so
changes nothing outside copies of its inputs (`unrepeatable` in core's regions.py says why
not, step by step; `holds` which values the timed runs copy or put back).
"""
from __future__ import annotations

import ast
import contextlib
import io
import logging
import types
import warnings
from dataclasses import dataclass

import numpy as np

from .core import (Timings, copy_inputs, generator_state, largest_difference, put_back_states,
                   time_interleaved, unrepeatable)
from .regions import PlanRun

log = logging.getLogger("psc_jit")
NOTHING_TO_COMPUTE = "nothing to compute there (names bound to values): plain Python"
_BEFORE_RUN = ("trace", "lower", "compile", "load from disk")   # a miss's stages

_VALUES = (np.ndarray, np.generic, int, float, complex, bool, str, bytes, type(None), np.dtype,
           range, slice)
_GENERATORS = (np.random.Generator, np.random.RandomState)


def holds(value) -> bool:
    """Whether a timed run leaves the notebook's value as it was: an array or a container of
    such (each run gets copies), a number or string, or a generator (its state put back)."""
    if isinstance(value, (list, tuple)):
        return all(holds(v) for v in value)
    if isinstance(value, dict):
        return all(holds(v) for v in value.values())
    return isinstance(value, _VALUES + _GENERATORS)


def _reads_as_is(value) -> bool:
    """A value the cell may read that no code changes by reading or calling it: a module, a
    function or a class (a region calling a notebook function has its writes recorded)."""
    return isinstance(value, (types.ModuleType, types.FunctionType, types.BuiltinFunctionType,
                              type, np.ufunc)) or callable(value) and \
        (getattr(value, "__module__", None) or "").partition(".")[0] == "numpy"


@dataclass
class Snapshot:
    """The cell's inputs (copies, taken before its run) and the generators' states then."""
    inputs: dict
    states: list

    def restore_generators(self) -> None:
        put_back_states(self.states)


def snapshot(inputs: tuple[str, ...], namespace: dict) -> Snapshot | str:
    """The snapshot of the cell's inputs, or why the cell cannot be timed (an input a run
    would change in place that no copy is made of: a file, a list of such, an object)."""
    values = {n: namespace[n] for n in inputs if n in namespace}
    for name, value in values.items():
        if not (holds(value) or _reads_as_is(value)):
            return f"it reads `{name}`, a {type(value).__name__} that its runs could change"
    return Snapshot(copy_inputs(values), generator_states(namespace))


def generator_states(namespace: dict) -> list:
    """(generator, state) of NumPy's global generator and of every generator the namespace
    holds, directly or in a list, tuple or dict."""
    found = {id(np.random.mtrand._rand): np.random.mtrand._rand}
    for value in namespace.values():
        items = value.values() if isinstance(value, dict) else \
            value if isinstance(value, (list, tuple)) else (value,)
        for item in items:
            if isinstance(item, _GENERATORS):
                found[id(item)] = item
    return [(owner, generator_state(owner)) for owner in found.values()]


class SplitTiming:
    """The part of CellRunner that times a split cell as a whole (and makes the plain runs
    that every timing of a cell makes). It uses the runner's `user_ns`, `_progress`,
    `_split_timed` and `_region_runner`."""

    def _split_snapshot(self, analysis, identity, options):
        """The cell's inputs before its run, when this run of the split cell is to be timed:
        with --compare, or the first run of this cell with inputs of these types and shapes
        (else None). `notes` of the report say why a cell that is to be timed cannot be."""
        values = {n: self.user_ns[n] for n in analysis.inputs if n in self.user_ns}
        key = (identity, analysis.digest, tuple(
            (n, type(v).__name__, getattr(v, "shape", None), str(getattr(v, "dtype", "")))
            for n, v in values.items()))
        if options.compare is False or options.compare is None and key in self._split_timed:
            return None
        self._split_timed[key] = True
        while len(self._split_timed) > self.MAX_PLAIN_FASTER:
            self._split_timed.popitem(last=False)
        return snapshot(analysis.inputs, self.user_ns)

    def _time_split(self, report, analysis, identity, options, run, before) -> None:
        """Time the whole cell: plain Python against its compiled regions and host steps run
        again, each from copies of the inputs as they were before the cell and the generators
        where they were; the generators are put back where the cell left them."""
        why = before if isinstance(before, str) else self._why_untimed(report, analysis, run)
        if why is not None:
            report.notes += (f"not timed: {why}",)
            return
        after = generator_states(self.user_ns)
        try:
            report.timings = self._split_timings(report, analysis, identity, options, run,
                                                 before)
        except Exception as err:    # the cell ran and its results are written: a timing
            log.warning("psc_jit could not time %s", report.name, exc_info=True)  # that fails
            report.notes += (f"not timed: a timing run raised {type(err).__name__}: {err}",)
        finally:
            put_back_states(after)

    def _why_untimed(self, report, analysis, run) -> str | None:
        if not report.compiled:
            return "nothing of it was compiled"
        for region in report.regions:
            if region.fallback_reason not in (None, NOTHING_TO_COMPUTE) or region.wrote_objects:
                return f"line {region.lines[0]} " + (
                    "runs as plain Python" if region.fallback_reason else
                    "writes to the notebook's objects")
        return unrepeatable(report.plan, analysis.tree, self.user_ns, holds)

    def _plain_run(self, analysis):
        """The plain cell as one timed run makes it: in a copy of the namespace with `fresh`
        (copies of its inputs) bound, its printed text not shown; its outputs."""
        plain_code = _plain_code(analysis)
        names = analysis.outputs

        def plain(fresh):
            ns = dict(self.user_ns)
            ns.update(fresh)
            with contextlib.redirect_stdout(io.StringIO()):
                exec(plain_code, ns)
            return {n: ns[n] for n in names if n in ns}
        return plain

    def _split_timings(self, report, analysis, identity, options, run, before) -> Timings:
        plain, names = self._plain_run(analysis), analysis.outputs

        def split(fresh):
            ns = dict(self.user_ns)
            ns.update(fresh)
            regions: dict = {}
            again = PlanRun(analysis, ns, self._region_runner(report, analysis, identity,
                                                              options, regions),
                            dict(run.host_lines), run.code)
            with self._namespace(ns), contextlib.redirect_stdout(io.StringIO()):
                again.run(report.plan)
            return {n: ns[n] for n in names if n in ns}

        with warnings.catch_warnings():     # the cell's warnings were shown once, by its run
            warnings.simplefilter("ignore")
            self._progress("time plain Python against compiled")
            times, outs = time_interleaved({"plain": (plain, before.inputs),
                                            "compiled": (split, before.inputs)},
                                           options.budget, reset=before.restore_generators)
        diffs = {n: largest_difference(outs["plain"][n], outs["compiled"][n])
                 for n in outs["plain"] if n in outs["compiled"]
                 and _is_numeric(outs["plain"][n])}
        compile_seconds = [s for r in report.regions if (s := _compile_seconds(r)) is not None]
        report.notes += ("timed as a whole cell: its compiled regions and host steps against "
                         "the plain cell",)
        return Timings(tuple(times["plain"]), tuple(times["compiled"]),
                       report.stage_seconds["run"],
                       sum(compile_seconds) if compile_seconds else None,
                       max(diffs.values()) if diffs else None, diffs)

    @contextlib.contextmanager
    def _namespace(self, namespace: dict):
        """The runner's regions read and write `namespace` meanwhile (a timed run's copy),
        and nobody hears of their progress."""
        user_ns, progress = self.user_ns, self._progress
        self.user_ns, self._progress = namespace, _tell_no_one
        try:
            yield
        finally:
            self.user_ns, self._progress = user_ns, progress



def _tell_no_one(stage: str) -> None:
    """The progress callback of the timed runs: nobody hears of them."""


def _plain_code(analysis):
    tree = ast.Module(body=analysis.statements(), type_ignores=[])
    return compile(tree, analysis.filename, "exec", dont_inherit=True)


def _compile_seconds(report) -> float | None:
    """What this run spent before running: trace, lower, compile or load (None: a hit)."""
    stages = [report.stage_seconds[k] for k in _BEFORE_RUN if k in report.stage_seconds]
    return sum(stages) if stages else None


def _is_numeric(value) -> bool:
    return isinstance(value, (np.ndarray, np.generic, int, float, complex))
