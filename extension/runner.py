"""Running a `%%psc_jit` cell: the logic behind the magic, as a plain class.

The cell becomes a function (inputs as parameters, outputs as results) handed to the same
`Jitted` that `jit` gives users. Nothing in the user's namespace changes unless the compiled
run succeeds; a cell that cannot be compiled runs as plain Python, and the report says why.
"""
from __future__ import annotations

import ast
import copy
import dataclasses
import functools
import logging
import time
import warnings
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any, Callable

from .core import (PRESENT, TRACE_CACHE, CellAnalysis, cell_plan, Compiled,
                   DataDependentShapeError, LoweringError, TraceError,
                   HostBlock, Jitted, KeptArrays, KernelTimes, RunReport, Sink,
                   SubclassArgument, Timings, analyze_cell, bind_outputs, cell_function,
                   checking_prints,
                   KeptObjects, copy_inputs, effect_sinks, failure_line, host_steps_of,
                   is_split, largest_difference, loop_names, region_analysis,
                   fmt_seconds, replay_effects, sink_fits, static_plan, time_interleaved,
                   with_definitions, with_effects, written_names)
from .devicecell import on_devices, run_on_devices
from .gradcell import gradient_cell, gradient_name, gradient_problem
from .reportlog import ReportLog
from .regions import HostCode, NotCompiled, PlanRun, SplitAt
from .split_timing import (_BEFORE_RUN, NOTHING_TO_COMPUTE, SplitTiming, _compile_seconds,
                           _is_numeric)


log = logging.getLogger("psc_jit")

# What a run's `progress` callback is told, in order (a cache hit only runs).
# (while XLA compiles, the callback also hears how long it has been at it).
PROGRESS_STAGES = ("trace", "lower", "compile", "run", "time plain Python against compiled",
                   "profile kernels")


_last_report: RunReport | None = None


def last_report() -> RunReport | None:
    """The record of the last %%psc_jit run (a failing one included), or None."""
    return _last_report


def _set_last_report(report: RunReport) -> None:
    global _last_report
    _last_report = report


def _no_progress(stage: str) -> None:
    """The default `progress` callback: tells no one."""


class PscJitError(Exception):
    """Raised with --strict when a cell cannot be compiled; the message says why and where."""


@dataclass(frozen=True)
class Options:
    static: frozenset[str] = frozenset()
    traced: frozenset[str] = frozenset()
    compare: bool | None = None        # None: compare on a cache miss
    strict: bool = False
    quiet: bool = False
    name: str | None = None
    budget: float = 1.0                # seconds per side for the timing comparison (PscJit)
    force: bool = False                # compile even where plain Python was measured faster
    grad: str | None = None            # --grad OUT: also d{OUT}_d{NAME} for NAME in wrt
    wrt: tuple[str, ...] = ()
    mesh: tuple[tuple[str, int], ...] = ()     # --mesh data=4: partition over these devices
    shard: tuple[tuple[str, tuple], ...] = ()  # --shard x=data: per input, axis per dimension
    device_arrays: bool = False        # --device-arrays: outputs bound as psc_jit.Arrays


@dataclass
class _CellProgram:
    jitted: Jitted
    inputs: tuple[str, ...]
    analysis: CellAnalysis
    sinks: dict[str, str] = field(default_factory=dict)  # input -> kind (effects.Sink)
    effects: bool = True       # its result carries its writes (not with --grad)

    def arguments(self, user_ns: dict) -> list:
        """The call's arguments: the inputs' values, a Sink for each object only written,
        PRESENT for each name the cell may delete without reading it."""
        sinks, reads = self.sinks, self.analysis.inputs
        return [Sink(n, sinks[n], user_ns[n]) if n in sinks else
                user_ns[n] if n in reads else PRESENT for n in self.inputs]

    def split(self, result) -> tuple[dict, Any, tuple]:
        """(outputs, last value, writes to the sinks) of the program's result."""
        if self.effects:
            (outputs, last), effects = result
            return outputs, last, effects
        outputs, last = result
        return outputs, last, ()


@dataclass
class CellRunner(SplitTiming):
    """Runs cells against one user namespace; keeps the last reports of each cell (see
    ReportLog) and the programs of the last MAX_PROGRAMS cell variants."""
    MAX_PROGRAMS = 256
    user_ns: dict
    reports: ReportLog = field(default_factory=ReportLog)
    _programs: OrderedDict[tuple, _CellProgram] = field(default_factory=OrderedDict)
    _latest_digest: dict[str, str] = field(default_factory=dict)
    _host_code: HostCode = field(default_factory=HostCode)
    _static_loop_regions: set = field(default_factory=set)   # see _run_region
    # (cell, source, signature) -> why its later runs run as plain Python (see _pick)
    _plain_faster: OrderedDict[tuple, str] = field(default_factory=OrderedDict)
    MAX_PLAIN_FASTER = 1024
    _split_timed: OrderedDict[tuple, bool] = field(default_factory=OrderedDict)

    def run(self, source: str, options: Options = Options(), cell_id: str | None = None,
            progress: Callable[[str], None] | None = None, written: str | None = None
            ) -> tuple[RunReport, Any]:
        """(report, value of the cell's last expression or None). `progress(stage)`, if given,
        is called as each of PROGRESS_STAGES that this run needs starts. `written`: the cell as
        the user wrote it, when `source` is IPython's Python for it (line magics made calls,
        line for line): the report shows what the user wrote."""
        __tracebackhide__ = True    # IPython shows the cell's line, not ours
        self._progress = progress or _no_progress
        try:
            analysis = analyze_cell(source)
        except SyntaxError as err:      # plain Python raises it too: the report says so
            _set_last_report(RunReport(
                name=options.name or "cell", source=source, filename="<psc_jit cell>",
                line_offset=1, compiled=False,
                fallback_reason=f"the cell is not Python: {type(err).__name__}: {err}"))
            raise
        identity = options.name or cell_id or analysis.digest
        report = RunReport(name=options.name or f"cell {analysis.digest[:8]}",
                           source=written or source,
                           filename=analysis.filename, line_offset=analysis.line_offset,
                           compiled=False, inputs=analysis.inputs,
                           outputs=analysis.outputs + _gradient_names(options))
        self.reports.add(identity, report)
        _set_last_report(report)
        if options.grad is not None:
            self._check_gradient(analysis, options)
        if on_devices(options, self.user_ns, analysis.inputs):
            try:
                return run_on_devices(self, report, analysis, identity, options)
            except (TraceError, LoweringError) as err:
                return self._fallback(report, analysis, str(err), options)
        whole = options.grad is not None or options.strict     # never split
        if not whole and is_split(static_plan(analysis)):
            return self._run_split(report, analysis, identity, options, {})
        if analysis.findings:
            return self._fallback(report, analysis, analysis.findings[0].explain(), options)
        try:
            return self._run_compiled(report, analysis, identity, options)
        except _Fallback as fb:
            reason, line = fb.reason, fb.line
        # outside the handler: the plain run's own error is not shown chained to the fallback
        if line is None or whole:
            return self._fallback(report, analysis, reason, options)
        return self._run_split(report, analysis, identity, options, {line: reason})

    def clear_programs(self) -> None:
        """Forget the cells' programs (with the caches cleared, their memos point nowhere)."""
        self._programs.clear()
        self._static_loop_regions.clear()
        self._plain_faster.clear()
        self._split_timed.clear()

    # -- a cell of regions and host steps ------------------------------------------------------
    @staticmethod
    def _plan(analysis, host_lines: dict[int, str]) -> tuple:
        return cell_plan(analysis, host_lines)

    def _run_split(self, report, analysis, identity, options, host_lines: dict[int, str]):
        """Run the cell as compiled regions and host steps (extension/regions.py), with
        `host_lines` (line -> reason) on the host too, and those where a region's trace stops
        in this run (a region whose trace stopped at a line before finds that in its cache
        entry, for its signature, and is split again); the report gets one report per region,
        and the host steps."""
        __tracebackhide__ = True    # IPython shows the cell's line, not ours
        regions: dict[tuple, RunReport] = {}
        run = PlanRun(analysis, self.user_ns,
                      self._region_runner(report, analysis, identity, options, regions),
                      dict(host_lines), self._host_code.of(analysis))
        before = self._split_snapshot(analysis, identity, options)
        self._progress("run")
        start = time.perf_counter()
        try:
            value = run.run(self._plan(analysis, host_lines))
        finally:
            report.stage_seconds["run"] = time.perf_counter() - start
            self._fill_split_report(report, analysis, regions, run)
            inside = sum(r.stage_seconds.get(stage, 0.0) for r in report.regions if r.compiled
                         for stage in ("run", *_BEFORE_RUN))
            report.stage_seconds["host"] = max(report.stage_seconds["run"] - inside, 0.0)
        if before is not None:
            self._time_split(report, analysis, identity, options, run, before)
        return report, value

    def _region_runner(self, report, analysis, identity, options, regions: dict):
        """`run_region(region, plain=None, compiled_only=False)` for a PlanRun of the cell in
        the runner's namespace: each region run as a cell of its own, its report kept in
        `regions` (see extension/regions.py for what it raises)."""
        quiet = _uncompared(options)

        def run_region(region, plain=None, compiled_only=False):
            __tracebackhide__ = True
            part = region_analysis(analysis, region.path, region.start, region.stop,
                                   region.ends_cell, region.rewrite)
            first = regions.get(region.key)     # (a host loop runs it on every pass: its
            sub = RunReport(                    # first pass's report is kept, the run times
                name=f"{report.name} {region.lines()}", source=analysis.source,   # added)
                filename=analysis.filename, line_offset=analysis.line_offset, compiled=False,
                inputs=part.inputs, outputs=part.outputs, part=region.key,
                lines=(region.first_line, region.last_line))
            regions.setdefault(region.key, sub)
            if plain is None and not region.computes and not _updates_arrays(region,
                                                                             self.user_ns):
                plain = NOTHING_TO_COMPUTE
            if plain is not None:
                sub.fallback_reason = plain
                return run_plain(part, self.user_ns)
            try:
                value = self._run_region(sub, part, f"{identity} {region.key}", quiet,
                                         loop_names(analysis.tree, region.path))
            except _Fallback as fb:
                if fb.line is not None or compiled_only:
                    if first is None:
                        del regions[region.key]
                    if compiled_only:
                        raise NotCompiled(fb.reason, fb.line) from None
                    raise SplitAt(fb.line, fb.reason) from None
                sub.fallback_reason = fb.reason
                return run_plain(part, self.user_ns)
            if first is not None:
                first.stage_seconds["run"] = first.stage_seconds.get("run", 0.0) + \
                    sub.stage_seconds.get("run", 0.0)
                first.wrote_objects |= sub.wrote_objects
            return value
        return run_region

    def _run_region(self, report, part, identity, options, loop_vars):
        """A region's compiled run. The ints a host loop binds on every pass (its `for`
        target) are traced, so that each pass finds the same program; a region that needs
        them as Python values is compiled for each value instead (remembered: the next pass
        goes there straight)."""
        __tracebackhide__ = True
        ints = frozenset(n for n in loop_vars & set(part.inputs)
                         if type(self.user_ns.get(n)) is int) - options.static
        if ints and identity not in self._static_loop_regions:
            try:
                traced = dataclasses.replace(options, traced=options.traced | ints)
                return self._run_compiled(report, part, identity, traced)[1]
            except _Fallback:
                self._static_loop_regions.add(identity)
                report.cache_hit, report.miss_reason = False, None
        return self._run_compiled(report, part, identity, options)[1]

    def _fill_split_report(self, report, analysis, regions, run) -> None:
        plan = self._plan(analysis, run.host_lines)
        report.regions = tuple(regions[key] for key in sorted(regions, key=_source_order))
        report.plan = plan
        report.host_steps = tuple(host_steps_of(plan))
        report.host_passes = dict(run.passes)
        report.predrawn = dict(run.predrawn)
        report.compiled = any(r.compiled for r in report.regions)
        report.cache_hit = bool(report.regions) and all(r.cache_hit for r in report.regions
                                                         if r.compiled)
        misses = [f"{r.name}: {r.miss_reason}" for r in report.regions
                  if r.compiled and not r.cache_hit and r.miss_reason]
        report.miss_reason = "; ".join(misses) or None
        if not report.compiled:     # why, as a cell that was not split says it
            steps = [step.explain() for step in report.host_steps
                     if not isinstance(step, HostBlock)]
            report.fallback_reason = "; ".join(steps + [
                r.fallback_reason for r in report.regions
                if r.fallback_reason not in (None, NOTHING_TO_COMPUTE)])
            log.info("%s runs as plain Python: %s", report.name, report.fallback_reason)
        elif log.isEnabledFor(logging.INFO):
            log.info("%s runs as %s", report.name, report.split_summary())

    # -- the compiled path ---------------------------------------------------------------------
    def _run_compiled(self, report, analysis, identity, options):
        __tracebackhide__ = True    # IPython shows the cell's line, not ours
        program = self._program(analysis, identity, options)
        values = program.arguments(self.user_ns)
        call = self._prepare(program, values, identity, analysis, report)
        compiled = call.compiled
        report.signature = call.record.signature_text
        timed = options.compare or (options.compare is None and not report.cache_hit
                                    and options.grad is None)
        picked = (identity, analysis.digest, report.signature)
        faster = self._plain_faster.get(picked)
        if faster is not None and not timed and not (options.force or options.strict or
                                                     options.grad is not None):
            raise _Fallback(faster)
        # timed runs start where the cell's own run started: its inputs as they were before
        before = dict(zip(program.inputs, values, strict=True))
        if timed and compiled.mutates:
            before = copy_inputs(before)
        self._progress("run")
        start = time.perf_counter()
        try:
            outputs, last, effects = program.split(call.run())
        except DataDependentShapeError as err:   # checked before anything was written back
            raise _Fallback(str(err)) from err
        except Exception as err:
            if not getattr(err, "psc_run_check", False):
                raise
            # Nothing was written back; plain Python runs the lines before the failing one
            # (binding their names) and then raises the same error.
            raise _Fallback(f"{type(err).__name__}: {err} (checked at run time; the cell ran "
                            "as plain Python, which raises it)") from err
        report.stage_seconds["run"] = time.perf_counter() - start
        bind_outputs(self.user_ns, outputs)
        replay_effects(effects, self.user_ns)
        self._fill_report(report, compiled, program)
        report.wrote_objects = bool(effects)
        if timed:
            kept_objects = KeptObjects(self.user_ns[n] for n in written_names(effects)
                                       if n not in program.sinks and n in self.user_ns)
            try:
                report.timings = self._compare(analysis, program, compiled, before,
                                               call.leaves, report, options, kept_objects)
                self._pick(picked, report)
            except Exception as err:    # the cell ran and its results are written: a timing
                log.warning("psc_jit could not time %s", report.name, exc_info=True)  # that
                report.notes += (f"not timed: a timing run raised {type(err).__name__}: "   # fails
                                 f"{err}",)                     # is told, never the cell's error
        return report, last

    def _pick(self, picked: tuple, report) -> None:
        """After a timed run: when plain Python was faster beyond the noise (the verdict of
        the interleaved runs), the later runs of this cell with this signature run as plain
        Python, and the report says so; otherwise they run compiled. A changed signature (or
        source) is timed, and decides, anew; so does a run with --compare."""
        timings = report.timings
        self._plain_faster.pop(picked, None)
        if timings is None or timings.verdict.kind != "slower":
            return
        why = (f"plain Python is faster here: {fmt_seconds(timings.plain_median)} vs "
               f"{fmt_seconds(timings.compiled_median)} compiled; `--force` compiles anyway")
        self._plain_faster[picked] = why
        while len(self._plain_faster) > self.MAX_PLAIN_FASTER:
            self._plain_faster.popitem(last=False)
        report.notes += (f"{why}: later runs with this signature run as plain Python",)

    def _prepare(self, program, values, identity, analysis, report):
        """The call through the compiler's one door (`Jitted.prepare`, as `jit` makes it):
        its cache entry found, or made now (a compiled program, or the decision to run the
        cell as plain Python, which is cached too). The report hears how it was found."""
        previous = self._latest_digest.get(identity)
        first = "first run of this cell" if previous in (None, analysis.digest) else \
            "new cell source"
        try:
            call = program.jitted.prepare(values, first=first, progress=self._progress,
                                          fall_back=True)
        except SubclassArgument as err:     # (neither traced nor static: see its message)
            raise _Fallback(str(err)) from err
        except TypeError as err:
            raise _Fallback(f"{err}; pass it with --static NAME or keep it out of the cell") \
                from err
        report.cache_hit = call.hit
        if not call.hit:        # (an interrupt while compiling leaves the runner as it was)
            self._latest_digest[identity] = analysis.digest
            if call.compiled is not None:
                report.miss_reason = call.miss_reason
                report.from_disk = call.compiled.from_disk
                report.stage_seconds.update(call.compiled.timings)
        if call.fallback is not None:
            entry = call.record.entry if call.record is not None else None
            frames = getattr(entry, "frames", ())
            raise _Fallback(call.fallback, failure_line(frames, analysis) if frames else None)
        return call

    def _program(self, analysis, identity, options) -> _CellProgram:
        inputs = analysis.parameters(self.user_ns)
        key = (identity, analysis.digest, inputs, options.static, options.traced, options.grad,
               options.wrt)
        program = self._programs.get(key)
        sinks = self._sinks(analysis, inputs, options)
        if program is not None and program.sinks == sinks:   # (each object still of its kind)
            self._programs.move_to_end(key)
        else:
            fn = checking_prints(cell_function(analysis, list(inputs), self.user_ns), analysis)
            if options.grad is None:    # (its writes, and its helpers' to the notebook's globals)
                fn = with_effects(fn, tuple(inputs.index(n) for n in sinks), self.user_ns,
                                  inputs)
            else:
                fn = gradient_cell(fn, inputs, options.grad, options.wrt)
            fn = with_definitions(fn)   # (its defs and classes: plain ones, made each run)
            jitted = Jitted(fn, static_argnames=options.static, name=options.name or
                            f"cell {analysis.digest[:8]}", traced_argnames=options.traced,
                            convert=False, reader="the cell")
            jitted.owner_key = ("cell", identity, analysis.digest, inputs) + key[-2:]
            program = self._programs[key] = _CellProgram(jitted, inputs, analysis, sinks,
                                                         options.grad is None)
            while len(self._programs) > self.MAX_PROGRAMS:
                self._programs.popitem(last=False)
        return program

    def _sinks(self, analysis, inputs, options) -> dict[str, str]:
        if options.grad is not None:
            return {}
        sinks = _sinks_of(analysis, inputs, self.user_ns)
        return {n: k for n, k in sinks.items() if n not in options.static | options.traced}

    def _fill_report(self, report, compiled: Compiled, program) -> None:
        report.compiled = True
        report.graph = compiled.graph
        report.stablehlo = compiled.lowered.text
        report.optimized_hlo = compiled.as_text()
        report.kernels = compiled.kernels
        report.cost = compiled.cost_analysis()
        report.notes = compiled.notes
        report.cache_entries = tuple(program.jitted.cache_records())
        report.cache_events = TRACE_CACHE.events_of(program.jitted.name)

    # -- timing --------------------------------------------------------------------------------
    def _compare(self, analysis, program, compiled, arguments, leaves, report, options,
                 kept_objects):
        """Time the cell plain and compiled (leaves: those of the cell's own run; kept_objects:
        the notebook's objects its helpers write to, which the plain runs' helpers write to
        too, put back after each)."""
        plain_run = self._plain_run(analysis)

        def plain(fresh):
            return plain_run(fresh) | {n: fresh[n] for n in program.inputs if n in fresh}

        def fast(fresh):       # the call as a re-run makes it, through the same door, with
            #                    no clock read in between (the writes to objects it only
            #                    writes to not made)
            call = program.jitted.compiled_call(tuple(fresh[n] for n in program.inputs))
            return program.split(call.run())[0] | {n: fresh[n] for n in program.inputs}

        # plain Python writes to copies of the objects the cell only writes to; arrays of
        # the user's objects that the cell updates in place are put back after every run
        plain_arguments = {n: copy.copy(self.user_ns[n]) if n in program.sinks else v
                           for n, v in arguments.items()}
        arrays = KeptArrays(compiled.updated_arrays(leaves))

        def restore():
            arrays.restore()
            kept_objects.restore()
        try:
            with warnings.catch_warnings():     # the cell's warnings were shown once, by its run
                warnings.simplefilter("ignore")
                self._progress("time plain Python against compiled")
                times, outs = time_interleaved({"plain": (plain, plain_arguments),
                                                "compiled": (fast, arguments)},
                                               options.budget, reset=restore)
            breakdown = self._breakdown(program, compiled, arguments, restore)
            kernel_times = self._kernel_times(program, compiled, arguments)
        finally:
            restore()
        plain_out, compiled_out = outs["plain"], outs["compiled"]
        diffs = {n: largest_difference(plain_out[n], compiled_out[n])
                 for n in plain_out if n in compiled_out and _is_numeric(plain_out[n])}
        first = report.stage_seconds.get("run", times["compiled"][0])
        return Timings(tuple(times["plain"]), tuple(times["compiled"]), first,
                       _compile_seconds(report), max(diffs.values()) if diffs else None, diffs,
                       report.cost.get("flops"), report.cost.get("bytes accessed"),
                       breakdown, kernel_times)

    @staticmethod
    def _breakdown(program, compiled, arguments, reset, runs: int = 5):
        """The fastest of a few compiled calls, part by part: on the user's own arrays when
        the program updates none in place, else on copies laid out like them (and the arrays
        of the user's objects reset before each)."""
        best = None
        for _ in range(runs):
            fresh = arguments if not compiled.mutates else copy_inputs(arguments)
            reset()
            _, breakdown = program.jitted.time_call(*(fresh[n] for n in program.inputs))
            if best is None or breakdown.measured < best.measured:
                best = breakdown
        return best

    def _kernel_times(self, program, compiled, arguments):
        """What each fused kernel took, from one call under jaxlib's profiler (on copies when
        the program updates inputs in place): only on a timed run, never on a plain re-run."""
        self._progress("profile kernels")
        fresh = arguments if not compiled.mutates else copy_inputs(arguments)
        try:
            _, _, times = program.jitted.profile_call(*(fresh[n] for n in program.inputs))
        except Exception as err:    # the cell ran and its results are written: a measurement
            log.warning("psc_jit could not measure the kernels of %s", program.jitted.name,
                        exc_info=True)            # that fails is told, never the cell's error
            return KernelTimes.unavailable(
                f"not measured: psc_jit's profiler failed ({type(err).__name__}: {err})")
        return times

    def _check_gradient(self, analysis, options) -> None:
        inputs = tuple(n for n in analysis.inputs if n in self.user_ns)
        problem = gradient_problem(analysis, inputs, options.grad, options.wrt)
        if problem is not None:
            raise PscJitError(problem)

    # -- the plain path ------------------------------------------------------------------------
    def _fallback(self, report, analysis, reason: str, options):
        __tracebackhide__ = True    # IPython shows the cell's line, not ours
        report.fallback_reason = reason
        if options.grad is not None:
            raise PscJitError(f"{report.name}: --grad needs the cell compiled, and it was not: "
                              f"{reason}")
        log.info("%s runs as plain Python: %s", report.name, reason)
        if options.strict:
            raise PscJitError(f"{report.name} was not compiled: {reason}")
        self._progress("run")
        start = time.perf_counter()
        value = run_plain(analysis, self.user_ns)
        report.stage_seconds["run"] = time.perf_counter() - start
        return report, value


def _sinks_of(analysis: CellAnalysis, inputs: tuple[str, ...], user_ns: dict) -> dict[str, str]:
    """The inputs the cell only writes to whose objects take those writes (`Sink`), and that
    no other input names (the cell would read them through it)."""
    sinks = effect_sinks(analysis.own_source, inputs)
    if not sinks:
        return {}
    others = {id(user_ns[n]) for n in inputs if n not in sinks}
    return {n: kind for n, kind in sinks.items()
            if sink_fits(kind, user_ns[n]) and id(user_ns[n]) not in others}


def _gradient_names(options: Options) -> tuple[str, ...]:
    if options.grad is None:
        return ()
    return tuple(gradient_name(options.grad, name) for name in options.wrt)




@functools.lru_cache(maxsize=64)
def _uncompared(options: Options) -> Options:
    """The options of a split cell's regions: timed, if at all, as one cell."""
    return dataclasses.replace(options, compare=False)


def _source_order(key: tuple) -> tuple:
    """Region keys (path, start, stop) in the order of the cell's source (paths alternate
    statement indices and field names, so tuples compare like with like)."""
    path, start, *_ = key
    return path + (start,)


class _Fallback(Exception):
    def __init__(self, reason: str, line: int | None = None):
        super().__init__(reason)
        self.reason, self.line = reason, line   # line: of the cell, where its trace stopped


def _updates_arrays(region, namespace: dict) -> bool:
    """Whether the region sets items of an array (`x[m] = v`): an update a program makes."""
    import numpy as np
    return any(isinstance(namespace.get(name), np.ndarray) for name in region.stores)


def run_plain(analysis: CellAnalysis, user_ns: dict):
    """Run the cell (or its region) as plain Python in the namespace; return its last
    expression's value."""
    __tracebackhide__ = True    # IPython shows the cell's line, not ours
    tree = ast.Module(body=analysis.statements(), type_ignores=[])
    last = None
    if analysis.has_last_expr:
        last = ast.Expression(tree.body.pop().value)
    exec(compile(tree, analysis.filename, "exec", dont_inherit=True), user_ns)
    if last is not None:   # (dont_inherit: this module's `annotations` future is not the cell's)
        return eval(compile(last, analysis.filename, "eval", dont_inherit=True), user_ns)
    return None
