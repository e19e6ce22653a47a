"""The IPython magics: `%%psc_jit`, `%psc_cache`, `%psc_timings`. Thin: parse the arguments,
call the runner, display the view."""
from __future__ import annotations

import ast
import functools

from IPython.core.error import UsageError
from IPython.core.magic import Magics, cell_magic, line_magic, magics_class, no_var_expand
from IPython.core.magic_arguments import argument, magic_arguments, parse_argstring
from IPython.display import display

from .config import PscJit
from .core import (DISK_CACHE, EXECUTABLE_CACHE, TRACE_CACHE, align_new_arrays,
                   TRIM_INTERVAL, keep_freed_memory, trim_freed_memory)
from .devicecell import MeshUsage, parse_mesh, parse_shards
from .runner import CellRunner, Options


def _names(values) -> frozenset[str]:
    return frozenset(_ordered_names(values))


def _ordered_names(values) -> tuple[str, ...]:
    """Names given space- or comma-separated, each once, in order."""
    names = (n.strip() for v in values or () for n in v.split(","))
    return tuple(dict.fromkeys(n for n in names if n))


def _settings(shell) -> PscJit:
    """The shell's PscJit settings (`%config PscJit`), made and registered once per shell."""
    for configurable in shell.configurables:
        if isinstance(configurable, PscJit):
            return configurable
    settings = PscJit(parent=shell)
    shell.configurables.append(settings)
    return settings


def _python_source(shell, cell: str) -> str:
    """The cell as Python: as written when it parses, else as IPython would run it (line
    magics `%timeit ...` and shell escapes `!ls` become calls, which run as host steps)."""
    if _parses(cell):
        return cell
    transformed = shell.transform_cell(cell)
    same_lines = len(transformed.splitlines()) == len(cell.splitlines())
    return transformed if same_lines else cell      # (reports quote the cell's lines)


@functools.lru_cache(maxsize=256)
def _parses(cell: str) -> bool:
    """Whether the cell is Python as written (asked on every run: remembered per cell)."""
    try:
        ast.parse(cell)
    except SyntaxError:
        return False
    return True


@magics_class
class PscJitMagics(Magics):
    def __init__(self, shell):
        super().__init__(shell)
        self.runner = CellRunner(shell.user_ns)
        self.settings = _settings(shell)
        align_new_arrays(self.settings.align_arrays)
        keep_freed_memory(self.settings.kept_freed_memory << 20)

    @magic_arguments()
    @argument("--static", action="append", metavar="NAMES",
              help="names (comma-separated) to treat as static: their values key the cache")
    @argument("--traced", action="append", metavar="NAMES",
              help="names (comma-separated) to trace even if they are Python ints or bools")
    @argument("--compare", dest="compare", action="store_true", default=None,
              help="time plain Python against compiled on every run (default: on a cache miss)")
    @argument("--no-compare", dest="compare", action="store_false",
              help="never time plain Python against compiled")
    @argument("--force", action="store_true",
              help="run compiled even where plain Python was measured faster for this cell")
    @argument("--strict", action="store_true",
              help="raise instead of running the cell as plain Python when it cannot compile")
    @argument("--quiet", action="store_true", help="show no report")
    @argument("--name", metavar="LABEL", help="a label for this cell in reports and the cache")
    @argument("--grad", metavar="OUT",
              help="also compute the gradient of the cell's scalar output OUT with respect to "
                   "the inputs named by --wrt, bound as dOUT_dNAME (e.g. dloss_dw)")
    @argument("--wrt", nargs="+", action="extend", metavar="NAME",
              help="with --grad: the inputs to differentiate with respect to")
    @argument("--mesh", metavar="AXES",
              help="partition the cell's program over a mesh of devices: NAME=SIZE, "
                   "comma-separated (data=4, or data=2,model=2); see psc_jit.devices()")
    @argument("--shard", nargs="+", action="extend", metavar="NAME=AXES",
              help="with --mesh: split input NAME over mesh axes, one per dimension, "
                   "comma-separated, empty for a dimension not split (x=data, w=,model); "
                   "inputs not named are replicated")
    @argument("--device-arrays", action="store_true",
              help="bind the cell's outputs as psc_jit.Arrays, left on the devices and not "
                   "waited for (a cell whose inputs are Arrays does so too)")
    @no_var_expand
    @cell_magic
    def psc_jit(self, line, cell):
        """Compile this cell's NumPy code with XLA, cache it under its signature, run it.

        Inputs are the names the cell reads before assigning them; outputs the names it
        assigns. Arrays, NumPy scalars and Python floats are traced; Python ints, bools,
        strings, None, modules and functions are static (part of the cache key). A cell
        that cannot be compiled runs as plain Python and the report says why, at which line.
        With --grad OUT --wrt NAME..., the gradient of the scalar OUT with respect to each NAME
        is bound as dOUT_dNAME too.
        """
        __tracebackhide__ = True    # IPython shows the cell's line, not ours
        options = self._options(line, self.settings.timing_budget, self.settings.pick_faster)
        written, cell = cell, _python_source(self.shell, cell)
        from .display import progress_display, show_report
        with progress_display(enabled=not options.quiet) as progress:
            report, value = self.runner.run(cell, options, cell_id=self._cell_id(),
                                            written=written if written != cell else None,
                                            progress=progress)
        trim_freed_memory(TRIM_INTERVAL)
        if not options.quiet:
            show_report(report, progress)
        return value

    @functools.lru_cache(maxsize=256)       # noqa: B019 (one magics object per shell)
    def _options(self, line: str, budget: float = Options.budget, pick_faster: bool = True
                 ) -> Options:
        """The options of a magic line with the session's timing budget and choice of the
        faster (parsed and built once per distinct line and settings: re-runs skip both)."""
        args = parse_argstring(self.psc_jit, line)
        static, traced = _names(args.static), _names(args.traced)
        if static & traced:
            raise UsageError(f"{', '.join(sorted(static & traced))}: a name is either --static "
                             "or --traced, not both")
        if args.wrt and not args.grad:
            raise UsageError("--wrt names the inputs of a gradient: give --grad OUT too")
        try:
            mesh = parse_mesh(args.mesh) if args.mesh else ()
            shard = parse_shards(args.shard)
        except MeshUsage as err:
            raise UsageError(str(err)) from None
        if shard and not mesh:
            raise UsageError("--shard splits inputs over a mesh: give --mesh too (--mesh data=4)")
        if (mesh or args.device_arrays) and args.grad:
            raise UsageError("--grad runs on one device: leave out --mesh and --device-arrays")
        return Options(static=static, traced=traced, compare=args.compare,
                       strict=args.strict, force=args.force or not pick_faster,
                       quiet=args.quiet, name=args.name, grad=args.grad,
                       wrt=_ordered_names(args.wrt), budget=budget, mesh=mesh, shard=shard,
                       device_arrays=args.device_arrays)

    def _cell_id(self) -> str | None:
        kernel = getattr(self.shell, "kernel", None)
        get_parent = getattr(kernel, "get_parent", None)
        if get_parent is None:
            return None
        try:
            parent = get_parent()
        except (TypeError, LookupError):
            return None
        return (parent or {}).get("metadata", {}).get("cellId")

    @magic_arguments()
    @argument("--clear", action="store_true", help="empty the in-memory caches")
    @argument("--clear-disk", action="store_true",
              help="delete every compiled program kept on disk")
    @line_magic
    def psc_cache(self, line):
        """Show every cached compiled program of this session, its hits, every miss's reason
        and the disk cache; `--clear` empties the in-memory caches, `--clear-disk` the disk."""
        args = parse_argstring(self.psc_cache, line)
        if args.clear:
            TRACE_CACHE.clear()
            EXECUTABLE_CACHE.clear()
            self.runner.clear_programs()
            print("psc_jit caches cleared")
        if args.clear_disk:
            print(f"psc_jit disk cache cleared: {DISK_CACHE.clear()} programs deleted")
        if args.clear or args.clear_disk:
            return None
        from .display import cache_overview_bundle
        display(cache_overview_bundle(), raw=True)
        return None

    @line_magic
    def psc_timings(self, line):
        """One table comparing every timed %%psc_jit cell of this session."""
        from .display import timings_overview_bundle
        display(timings_overview_bundle(self.runner.reports), raw=True)
