"""psc_jit.core: the tracing JIT (no IPython, no widgets). This module is its one door.

    cell or function -> signature -> trace (Graph) -> StableHLO -> XLA executable -> cached -> run

The layout is the pipeline; each layer imports only the layers above it in this list:

    ir.py              the IR: ShapedArray, Var, Literal, Eqn, Graph (immutable, printable)
    budget.py          how large a program may grow and how long XLA may take (a setting)
    tree_util.py       nested containers flattened to leaves and a hashable structure
    interpreter.py     runs a Graph on NumPy arrays with each primitive's reference impl
    passes.py          passes over graphs (dead code, hoisted constants)
    lowering.py        a Graph to StableHLO text (the context primitives' lowerings write into)
    layout.py          memory layouts (shape, strides, offset) and view steps, by arithmetic
    tracing.py         Tracer, Trace, Buffer (views and in-place updates), bind, trace errors
    typecheck.py       re-derives every equation's types through its primitive's rules
    primitives/        the closed set of primitives, one record each with all its rules
    numpy/             NumPy's functions, ufuncs, methods and indexing on tracers
    control/           sub-traces, and loops and branches traced into `while_loop` and `cond`
                       equations (fori_loop, while_loop, cond, switch, scan)
    frontend/          the Python frontend: a notebook cell as a function, code converted for
                       tracing (loops and branches rolled), what a trace reads (inputs and
                       guards) and its effects on Python objects
    compile/           jit and the staged API, the trace and executable caches, the one
                       module that imports jaxlib (compile/xla/), the fused kernels of the
                       optimized module, run reports, timing and measured time per
                       kernel (jaxlib's profiler), processes joined into one set of devices
                       (distributed.py, xla/distributed.py: jaxlib's distributed runtime)
    transform/         grad, value_and_grad, vjp, jvp, jacfwd, jacrev, vmap: interpreters of
                       the graphs driven by each primitive's rules of differentiation and
                       batching

extension/ and widgets/ import core only from here (and records from `psc_jit.core.ir`).
"""
from . import budget
from .budget import Budget, set_budget
from .budget import current as current_budget
from .compile.cache import (EXECUTABLE_CACHE, TRACE_CACHE, CacheEvent, CacheRecord, Signature,
                            StaticLeaf, TracedLeaf)
from .compile import distributed
from .compile.diskcache import DISK_CACHE, DiskCache, DiskCacheWarning, FromDisk
from .compile.jit import CallReport, Compiled, Jitted, Lowered, Traced, jit
from .compile.prepare import Fallback, PreparedCall
from .compile.kernels import FusionModel, Kernel, SourceLine, parse_optimized_hlo
from .compile.profile import KernelTimes, profile_call
from .compile.report import CallBreakdown, RunReport, Timings
from .compile.signature import CallSpec, SubclassArgument
from .compile.timing import KeptArrays, copy_inputs, largest_difference, time_interleaved
from .compile.units import fmt_bytes, fmt_count, fmt_seconds, fmt_speedup
from .compile.xla import XlaError, cpu_device_count, set_cpu_device_count
from .compile.xla import devices, module_cost
from .compile.devicecall import collectives, device_call
from .compile.device_array import Array, device_put
from .compile.distributed import make_array_from_process_local_data
from .compile.sharding import Mesh, NamedSharding, PartitionSpec, constrain
from .compile.hostmemory import align_new_arrays
from .compile.freedmemory import TRIM_INTERVAL, keep_freed_memory, trim_freed_memory
from .compile.hostmemory import aligned_copy as aligned
from .control.api import cond, fori_loop, scan, switch, while_loop
from .frontend.cell import (PRESENT, CellAnalysis, analyze_cell, bind_outputs, block_at,
                            make_cell_function, parse_cell, region_analysis)
from .frontend.sinks import effect_sinks
from .frontend.regions import (HostBlock, HostStep, Region, cell_plan, failure_line,
                               host_steps_of, is_split, loop_names, plan_cell, plan_part,
                               regions_of, rest_of, static_plan, unrepeatable)
from .frontend.hoist import Hoist
from .frontend.printed import PrintHoist, checking_prints
from .frontend.predraw import generator_state, put_back_states
from .frontend.convert import cell_function
from .frontend.definitions import with_definitions
from .frontend.effects import (KeptObjects, Sink, replay_effects, sink_fits, with_effects,
                              written_names)
from .frontend.rewrite import roll_loops
from .ir import Eqn, Graph, Literal, ShapedArray, SourceInfo, Var
from .lowering import LoweringError
from .primitives import PRIMITIVES, Primitive
from .tracing import (BudgetExceeded, ConcretizationError, DataDependentShapeError, TraceError,
                      UnsupportedError)
from .transform import all_gather, grad, jacfwd, jacrev, jvp, pmean, psum, value_and_grad, vjp, vmap
from .tree_util import (PyTreeDef, register_dataclass, register_pytree_node, tree_flatten,
                        tree_leaves, tree_map, tree_structure, tree_unflatten)
from .typecheck import GraphTypeError, check_graph

__all__ = [
    "jit", "Jitted", "Traced", "Lowered", "Compiled", "CallSpec", "CallReport", "Fallback",
    "PreparedCall",
    "SubclassArgument",
    "Array", "device_put", "devices", "cpu_device_count", "set_cpu_device_count", "Mesh",
    "NamedSharding", "PartitionSpec", "device_call", "module_cost", "constrain", "collectives",
    "fori_loop", "while_loop", "cond", "switch", "scan",
    "grad", "value_and_grad", "vjp", "jvp", "jacfwd", "jacrev", "vmap", "psum", "pmean",
    "all_gather",
    "TraceError", "ConcretizationError", "UnsupportedError", "DataDependentShapeError",
    "BudgetExceeded", "LoweringError", "XlaError", "aligned", "align_new_arrays", "Budget",
    "keep_freed_memory", "trim_freed_memory", "TRIM_INTERVAL",
    "budget",
    "current_budget", "set_budget",
    "GraphTypeError", "check_graph",
    "TRACE_CACHE", "EXECUTABLE_CACHE", "DISK_CACHE", "DiskCache", "DiskCacheWarning",
    "FromDisk", "CacheEvent", "CacheRecord", "Signature", "StaticLeaf",
    "TracedLeaf", "FusionModel", "Kernel", "SourceLine", "parse_optimized_hlo",
    "RunReport", "Timings", "CallBreakdown", "KernelTimes", "profile_call", "time_interleaved",
    "KeptArrays",
    "largest_difference", "copy_inputs",
    "fmt_seconds", "fmt_bytes", "fmt_count", "fmt_speedup",
    "PRESENT", "bind_outputs", "CellAnalysis", "analyze_cell", "make_cell_function",
    "parse_cell", "roll_loops",
    "block_at", "region_analysis", "HostBlock", "HostStep", "Region", "cell_plan", "failure_line", "unrepeatable", "Hoist",
    "PrintHoist", "checking_prints",
    "rest_of",
    "generator_state", "put_back_states",
    "host_steps_of", "is_split", "loop_names", "plan_cell", "plan_part", "regions_of",
    "static_plan",
    "effect_sinks", "Sink", "replay_effects", "sink_fits", "with_effects", "written_names",
    "with_definitions",
    "KeptObjects",
    "cell_function",
    "Graph", "Eqn", "Var", "Literal", "ShapedArray", "SourceInfo", "PRIMITIVES", "Primitive",
    "tree_flatten", "tree_unflatten", "tree_map", "tree_leaves", "tree_structure",
    "register_pytree_node", "register_dataclass", "PyTreeDef",
    "distributed", "make_array_from_process_local_data",
]
