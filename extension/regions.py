"""Running a cell planned as compiled regions and host steps (core's frontend/regions.py).

Each region runs as a cell of its own through the runner (compiled, or plain when it cannot
be), reading its inputs from the user's namespace and writing its outputs there; each host
step runs as plain Python in that namespace, at module level as the plain cell would; a
host block (a `for`, `while` or `if` holding a host step) is run by Python, its bodies run
part by part on every pass. A region whose trace fails at a line of the cell, before
anything ran (`SplitAt`), is planned again with that line on the host (on the next run its
cache entry for the same signature says so again, without a trace).
"""
from __future__ import annotations

import ast
import copy
import types
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Callable

from .core import (Hoist, HostBlock, HostStep, PrintHoist, Region, block_at, plan_part,
                   rest_of)


class SplitAt(Exception):
    """A region's trace failed at `line` of the cell, before anything ran."""

    def __init__(self, line: int, reason: str):
        super().__init__(f"line {line}: {reason}")
        self.line, self.reason = line, reason


class NotCompiled(Exception):
    """A region asked to run compiled only (`run_region(region, compiled_only=True)`) was
    not: nothing of it ran (`line`: where its trace stopped, when it did at a line)."""

    def __init__(self, reason: str, line: int | None = None):
        super().__init__(reason)
        self.reason, self.line = reason, line


@dataclass
class HostCode:
    """The compiled Python of a cell's host steps and host blocks (a cell re-run, or a host
    loop's next pass, compiles nothing again), for the last MAX_CELLS cells."""
    MAX_CELLS = 64
    _cells: OrderedDict = field(default_factory=OrderedDict)

    def of(self, analysis) -> dict:
        code = self._cells.pop(analysis.digest, None)
        code = {} if code is None else code
        self._cells[analysis.digest] = code
        while len(self._cells) > self.MAX_CELLS:
            self._cells.popitem(last=False)
        return code


class PlanRun:
    """One run of a planned cell in `namespace`. `run_region(region)` runs a region (and
    returns its last expression's value, or None); it raises SplitAt when the region's trace
    failed at a line; `run_region(region, plain=reason)` runs it as plain Python.
    `host_lines` (line -> reason): the lines run on the host, those found in this run added
    (at most MAX_SPLITS)."""
    MAX_SPLITS = 32

    def __init__(self, analysis, namespace: dict, run_region: Callable[[Region], object],
                 host_lines: dict[int, str], code: dict):
        self.analysis = analysis
        self.tree = analysis.tree
        self.namespace, self.run_region = namespace, run_region
        self.host_lines, self.code = host_lines, code
        self.splits = 0
        self.passes: dict[tuple, int] = {}      # host block -> passes its body made (last run)
        self.predrawn: dict[tuple, str] = {}    # host block -> its draws, made before it

    def run(self, plan: tuple):
        """Run the parts in order; the value of the cell's last expression, or None."""
        __tracebackhide__ = True    # IPython shows the cell's line, not ours
        value = None
        for part in plan:
            value = self._part(part)
        return value

    def _part(self, part):
        __tracebackhide__ = True
        if isinstance(part, Region):
            if not isinstance(part.rewrite, Hoist):
                return self._region(part)
            try:
                if part.rewrite.names()[0] not in self.namespace:   # (its statement ran whole)
                    return self.run(rest_of(self.tree, part, self.host_lines,
                                            self.analysis.filename))
                return self._region(part)
            finally:
                for name in part.rewrite.names():
                    self.namespace.pop(name, None)
        if isinstance(part, HostStep):
            if part.hoist is not None:
                return self._draws(part)
            if isinstance(part.rewritten, PrintHoist):
                return self._print(part)
            return self._host_step(part)
        self._host_block(part)
        return None

    def _draws(self, step: HostStep) -> None:
        """Make the draws of the statement (hoist.py), binding their names for the region
        after this step; when a read the statement makes before them fails, run the statement
        whole instead, as plain Python does."""
        __tracebackhide__ = True
        hoist = step.hoist
        try:
            for read in hoist.reads:
                eval(self._code(("read", read), lambda r=read: compile(r, "<read>", "eval")),
                     self.namespace)
        except Exception:
            self._host_step(step)
            return
        for name, draw in zip(hoist.names(), hoist.draws, strict=True):
            code = self._code(("draw", draw), lambda d=draw: compile(
                d, self.analysis.filename, "eval"))
            self.namespace[name] = eval(code, self.namespace)

    def _region(self, region: Region):
        __tracebackhide__ = True
        try:
            return self.run_region(region)
        except SplitAt as split:
            if self.splits >= self.MAX_SPLITS or split.line in self.host_lines:
                reason = f"{split.reason} (psc_jit could not split the region there)"
                return self.run_region(region, plain=reason)
            self.splits += 1
            self.host_lines[split.line] = split.reason
        return self.run(plan_part(self.tree, region, self.host_lines, self.analysis.filename))

    # -- host steps ---------------------------------------------------------------------------
    def _print(self, step: HostStep):
        """A print whose values the region before it computed (printed.py). When that region
        was planned again and ran the print itself, there are no values: nothing to do."""
        __tracebackhide__ = True
        names = step.rewritten.names()
        if names[0] not in self.namespace:
            return None
        try:
            return self._host_step(step)
        finally:
            for name in names:
                self.namespace.pop(name, None)

    def _host_step(self, step: HostStep):
        """Run the statement as the plain cell runs it: at module level in the namespace (the
        cell's last expression is evaluated, and its value shown)."""
        __tracebackhide__ = True
        stmt = self._statement(step.path, step.index)
        if step.rewritten is not None:
            stmt = step.rewritten.apply([copy.deepcopy(stmt)])[0]
        filename = self.analysis.filename
        if step.ends_cell and isinstance(stmt, ast.Expr):
            code = self._code(("eval", step.path, step.index, step.rewritten), lambda: compile(
                ast.Expression(stmt.value), filename, "eval"))
            return eval(code, self.namespace)
        code = self._code(("exec", step.path, step.index, step.rewritten), lambda: compile(
            ast.Module(body=[stmt], type_ignores=[]), filename, "exec"))
        exec(code, self.namespace)
        return None

    # -- host blocks --------------------------------------------------------------------------
    def _host_block(self, block: HostBlock) -> None:
        __tracebackhide__ = True
        body, orelse = block.bodies
        key = (block.path, block.index)
        passes = 0
        if block.kind == "if":
            self.run(body if self._eval(block, "test") else orelse)
            return
        if block.kind == "while":
            while self._eval(block, "test"):
                self.run(body)
                passes += 1
        else:
            iterable = self._eval(block, "iter")
            rolled, block = self._rolled(block, iterable)
            if rolled:
                self.passes[key] = len(iterable)
                return      # (a rolled loop has no `else`)
            body, orelse = block.bodies
            # the binding's code is kept; its function reads and writes this run's namespace
            # (a timed run's copy of it, too: not the namespace of the run that compiled it)
            assign = types.FunctionType(
                self._code(("assign", *key), lambda: self._assign_code(block)), self.namespace)
            for item in iterable:
                assign(item)
                self.run(body)
                passes += 1
        self.passes[key] = passes
        self.run(orelse)        # (no break: the plan keeps loops that break on the host whole)

    def _rolled(self, block: HostBlock, iterable) -> tuple[bool, HostBlock]:
        """Run the `for` as one compiled region with its draws made before it (predraw.py),
        when it has a predraw and both the draws and the region can be made; else nothing
        ran, the generators are as they were, and the loop runs pass by pass. A region whose
        trace stopped at a line of the body is planned again with that line on the host (and
        tried again, when it still has a predraw: a draw the source did not show); one that
        did not compile otherwise is not tried again for this cell. (Whether it rolled, and
        the block as planned last.)"""
        __tracebackhide__ = True
        refused = ("not rolled", block.predraw)
        if block.predraw is None or refused in self.code:
            return False, block
        drawn = block.predraw.draw(self.namespace, iterable)
        if isinstance(drawn, str):
            return False, block
        names, put_back = drawn
        self.namespace.update(names)
        try:
            self.run_region(block.rolled(), compiled_only=True)
        except NotCompiled as failed:
            put_back()
            return self._not_rolled(block, iterable, failed, refused)
        except BaseException:   # (nothing of the loop ran: nor did its draws)
            put_back()
            raise
        finally:
            for name in names:
                self.namespace.pop(name, None)
        self.predrawn[(block.path, block.index)] = block.predraw.describe()
        return True, block

    def _not_rolled(self, block, iterable, failed: NotCompiled, refused):
        __tracebackhide__ = True
        if failed.line is None or failed.line in self.host_lines or \
                self.splits >= self.MAX_SPLITS:
            self.code[refused] = True
            return False, block
        self.splits += 1
        self.host_lines[failed.line] = failed.reason
        loop = Region(block.path, block.index, block.index + 1, block.line, block.line, False)
        again = plan_part(self.tree, loop, self.host_lines, self.analysis.filename)[0]
        return self._rolled(again, iterable)

    def _eval(self, block: HostBlock, field_name: str):
        __tracebackhide__ = True
        code = self._code((field_name, block.path, block.index), lambda: compile(
            ast.Expression(getattr(self._statement(block.path, block.index), field_name)),
            self.analysis.filename, "eval"))
        return eval(code, self.namespace)

    def _assign_code(self, block: HostBlock):
        """The code of a function binding a `for` loop's target to one item, as the plain
        cell's loop binds it: names in the namespace, items and attributes of the objects
        named."""
        target = self._statement(block.path, block.index).target
        names = sorted({n.id for n in ast.walk(target) if isinstance(n, ast.Name)
                        and isinstance(n.ctx, ast.Store)})
        item = ast.Name("__psc_item", ast.Load())
        body = ([ast.Global(names)] if names else []) + [ast.Assign([target], item)]
        arguments = ast.arguments([], [ast.arg("__psc_item")], None, [], [], None, [])
        fn = ast.copy_location(ast.FunctionDef("__psc_assign", arguments, body, [], None,
                                               type_params=[]), target)
        module = ast.fix_missing_locations(ast.Module(body=[fn], type_ignores=[]))
        scope: dict = {}
        exec(compile(module, self.analysis.filename, "exec"), self.namespace, scope)
        return scope["__psc_assign"].__code__

    # -- helpers ------------------------------------------------------------------------------
    def _statement(self, path, index) -> ast.stmt:
        return block_at(self.tree, path)[index]

    def _code(self, key, make):
        code = self.code.get(key)
        if code is None:
            code = self.code[key] = make()
        return code
