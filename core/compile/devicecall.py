"""A `jit` call that runs on device arrays or under shardings: the program is partitioned
over one mesh's devices by XLA's SPMD partitioner and started without waiting.

A call takes this path when an argument is a `psc_jit.Array`, or when the function was
jitted with `in_shardings`/`out_shardings`. Its results are Arrays (not waited for) when an
argument was one or `out_shardings` was given; otherwise NumPy values, as every other call
of `jit` returns. The programs of such calls are kept per function (`DevicePrograms`), by
signature and by the shardings of their inputs.

What the XLA adapter's partitioned programs cannot do is refused with the reason: writing
into an Array (device buffers are immutable), returning a view of an argument.
"""
from __future__ import annotations

import functools
import hashlib
import math
import re
import time
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from .. import passes
from ..lowering import Partitioning, lower
from ..numpy import verify_checks
from ..tracing import UnsupportedError
from ..tree_util import LEAF, unflatten
from . import distributed, results, xla
from .device_array import Array, DeferredChecks, as_sharding, caller_line, place
from .estimate import check_compile_budget
from .profile import EVENT_BUDGET
from .thunks import device_times
from .sharding import NamedSharding, candidate_specs
from .signature import CallSpec
from .trace import TraceResult, trace_function

PROGRAMS_PER_FUNCTION = 32      # device programs one jitted function keeps (least recent go)


def takes_device_path(jitted, args: tuple, kwargs: dict) -> bool:
    """Whether a call runs on devices: shardings were given, or an argument is an Array."""
    if jitted.in_shardings is not None or jitted.out_shardings is not None:
        return True
    return any(type(a) is Array for a in args) or any(type(a) is Array
                                                       for a in kwargs.values())


def leaf_shardings(jitted, spec: CallSpec) -> list[NamedSharding | None]:
    """Per argument leaf, the sharding it must have in the program: `in_shardings` (one for
    all, or one per parameter by position or name, None: as the argument lies), else an
    Array's own, else none yet (replicated over the program's mesh)."""
    given = jitted.in_shardings
    names = jitted.params or ()
    found = []
    for leaf, value in zip(spec.signature.leaves, spec.leaves, strict=True):
        parameter = leaf.path.split("[")[0].split(".")[0]
        if isinstance(given, NamedSharding):
            sharding = given
        elif isinstance(given, dict):
            sharding = given.get(parameter)
        elif isinstance(given, (tuple, list)):
            position = names.index(parameter) if parameter in names else None
            sharding = given[position] if position is not None and position < len(given) \
                else None
        else:
            sharding = None
        if sharding is None and isinstance(value, Array):
            sharding = value.sharding
        found.append(sharding)
    return found


def program_mesh(shardings: Sequence[NamedSharding | None], out_shardings):
    """The one mesh of a program's shardings (a single device's when none is given)."""
    meshes = {s.mesh for s in shardings if s is not None}
    meshes |= {s.mesh for s in _as_list(out_shardings) if s is not None}
    if len(meshes) > 1:
        raise ValueError("the arguments lie on different devices ("
                         + "; ".join(sorted(repr(m) + " of " + ", ".join(
                             str(d.id) for d in m.device_list) for m in meshes))
                         + "): psc_jit.device_put them onto one mesh first")
    return meshes.pop() if meshes else as_sharding(None).mesh


def _as_list(out_shardings) -> list:
    if out_shardings is None:
        return []
    if isinstance(out_shardings, NamedSharding):
        return [out_shardings]
    return list(out_shardings)


@dataclass
class DeviceProgram:
    """A call signature's program on a mesh: the trace, the partitioned executable, and
    its inputs' and results' shardings."""
    result: TraceResult
    signature: Any                           # cache.Signature of the call
    leaf_shardings: tuple[NamedSharding, ...]    # per argument leaf
    executable: Any                          # xla.spmd.PartitionedExecutable
    in_shardings: tuple[NamedSharding, ...]  # per graph input (constants included)
    out_shardings: tuple[NamedSharding, ...]
    consts: tuple                            # hoisted constants, placed once
    trace_seconds: float
    compile_seconds: float
    text: str

    def as_text(self) -> str:
        """The optimized, partitioned HLO: per-device shapes and the collectives."""
        return self.executable.hlo_text()

    @functools.cached_property
    def spans_processes(self) -> bool:
        return spans_processes(self.executable.devices)

    @functools.cached_property
    def fingerprint(self) -> str:
        """What the processes of the distributed runtime compare before a run together."""
        return hashlib.sha256(self.text.encode()).hexdigest()


class DevicePrograms:
    """One jitted function's device programs, by (signature, input shardings, output
    shardings); at most PROGRAMS_PER_FUNCTION, the least recently used dropped first."""

    def __init__(self):
        self._programs: OrderedDict = OrderedDict()
        self.last: DeviceProgram | None = None
        self.last_reason: str | None = None
        self.last_times: tuple = ()         # thunks.DeviceTime of a profiled call

    def get(self, key) -> DeviceProgram | None:
        program = self._programs.get(key)
        if program is not None:
            self._programs.move_to_end(key)
        return program

    def put(self, key, program: DeviceProgram) -> None:
        self._programs[key] = program
        self._programs.move_to_end(key)
        while len(self._programs) > PROGRAMS_PER_FUNCTION:
            self._programs.popitem(last=False)

    def miss_reason(self, key) -> str:
        for signature, shardings, _ in reversed(self._programs):
            if signature == key[0]:
                changed = [f"{path}: {old} → {new}" for path, old, new in
                           zip((leaf.path for leaf in signature.leaves), shardings, key[1],
                               strict=False) if old != new]
                if changed:
                    return "; ".join(changed)
                return "output shardings changed"
        return "first call on devices" if not self._programs else "new signature"


def device_call(jitted, args: tuple, kwargs: dict, arrays: bool | None = None,
                profile: bool = False):
    """Run a call on the devices (see the module's docstring); `arrays`: return Arrays (True)
    or NumPy values (False) whatever the arguments are. `profile`: run it under jaxlib's
    profiler, waiting for its end, and keep each device's time (`DevicePrograms.last_times`)."""
    origin = f"{caller_line()} of {jitted.name}"
    spec = jitted.spec(args, kwargs)
    wanted = leaf_shardings(jitted, spec)
    mesh = program_mesh(wanted, jitted.out_shardings)
    shardings = [s if s is not None else NamedSharding(mesh) for s in wanted]
    key = (spec.signature, tuple(_describe(s, leaf) for s, leaf in
                                 zip(shardings, spec.signature.leaves, strict=True)),
           _out_key(jitted.out_shardings))
    programs = jitted.device_programs
    program = programs.get(key)
    extra = program.result.reads.check(spec.leaves) if program is not None else None
    if program is None or extra is None:
        programs.last_reason = programs.miss_reason(key) if program is None else \
            "what the trace read changed: " + program.result.reads.explain(spec.leaves)
        program = _compile(jitted, spec, shardings, mesh)
        programs.put(key, program)
        extra = program.result.reads.check(spec.leaves)
    else:
        programs.last_reason = None
    programs.last = program
    leaves = list(spec.leaves) + list(extra)
    inputs = _placed_inputs(program, leaves, origin)
    programs.last_times = ()
    if program.spans_processes:
        outputs = distributed.run_together(program.executable, inputs, program.fingerprint,
                                           jitted.name)
    elif profile:
        outputs, trace = xla.profiled(lambda: program.executable.run(inputs),
                                      program.executable.module_name, EVENT_BUDGET)
        programs.last_times = device_times(trace)
    else:
        outputs = program.executable.execute(inputs)
    results = [Array(h, aval, s, origin) for h, aval, s in
               zip(outputs, program.executable.out_avals, program.out_shardings, strict=True)]
    wants_arrays = arrays if arrays is not None else jitted.out_shardings is not None or any(
        isinstance(v, Array) for v in spec.leaves)
    return _rebuild(program.result, results, leaves, wants_arrays)


def spans_processes(devices: Sequence) -> bool:
    """Whether devices belong to more than one process (the distributed runtime)."""
    return len({d.process_index for d in devices}) > 1


def _describe(sharding: NamedSharding, leaf) -> str:
    rank = len(leaf.aval.shape) if hasattr(leaf, "aval") else 0
    return f"{sharding.describe(rank)} ({sharding.hlo_text(rank)})"


def _out_key(out_shardings) -> tuple:
    return tuple(None if s is None else s.key() for s in _as_list(out_shardings)) \
        if not isinstance(out_shardings, NamedSharding) else ("all", out_shardings.key())


def _compile(jitted, spec: CallSpec, shardings: list[NamedSharding], mesh) -> DeviceProgram:
    start = time.perf_counter()
    result = trace_function(jitted.call_with, spec, jitted._note_reads)
    _refuse_unsupported(result, spec)
    traced = time.perf_counter() - start
    graph, consts = passes.hoist_constants(result.graph)
    check_compile_budget(graph)
    in_shardings = [shardings[i] if i < len(shardings) else NamedSharding(mesh)
                    for i, _ in result.inputs] + [NamedSharding(mesh)] * len(consts)
    out_wanted = _wanted_outputs(jitted.out_shardings, result)
    if spans_processes(mesh.device_list) and jitted.out_shardings is None:
        out_wanted = [NamedSharding(mesh)] * len(out_wanted)   # each process reads them all
    in_avals, out_avals = graph.in_avals, graph.out_avals
    one_device = mesh.size == 1
    # XLA's own dot and sort, not psc_jit's custom calls: the partitioner cannot split those,
    # and XLA's cost analysis counts none of their work, so the asynchronous client would
    # run a program made of them on the calling thread (the call would wait for its end)
    targets = frozenset()

    def compile_with(outs):
        partitioning = Partitioning(
            mesh.size, "" if one_device else mesh.sdy_declaration(),
            tuple("" if one_device else s.sdy_text(len(a.shape))
                  for s, a in zip(in_shardings, in_avals, strict=True)),
            tuple(None if one_device or s is None else s.sdy_text(len(a.shape))
                  for s, a in zip(outs, out_avals, strict=True)))
        text = lower(graph, jitted.name, targets, partitioning)
        return text, xla.spmd.compile_partitioned(text, mesh.device_list, in_avals, out_avals)

    text, executable = compile_with(out_wanted)
    named = [_named(mesh, hlo, len(a.shape)) for hlo, a in
             zip(executable.out_hlo, out_avals, strict=True)]
    if any(n is None for n in named):    # a layout XLA chose that has no name: replicate it
        out_wanted = [w if w is not None or n is not None else NamedSharding(mesh)
                      for w, n in zip(out_wanted, named, strict=True)]
        text, executable = compile_with(out_wanted)
        named = [_named(mesh, hlo, len(a.shape)) for hlo, a in
                 zip(executable.out_hlo, out_avals, strict=True)]
    placed_consts = tuple(place(c, NamedSharding(mesh), "a constant") for c in consts)
    return DeviceProgram(result, spec.signature, tuple(shardings), executable,
                         tuple(in_shardings), tuple(named), placed_consts,
                         traced, time.perf_counter() - start - traced, text)


def _wanted_outputs(out_shardings, result: TraceResult) -> list[NamedSharding | None]:
    """Per graph output, the sharding asked for (by output leaf), or None (XLA chooses)."""
    n = len(result.graph.out_avals)
    if out_shardings is None:
        return [None] * n
    if isinstance(out_shardings, NamedSharding):
        return [out_shardings] * n
    wanted: list = [None] * n
    given = list(out_shardings)
    for k, out in enumerate(result.out_specs):
        if out.how == "traced" and k < len(given):
            wanted[out.index] = given[k]
    return wanted


def _named(mesh, hlo_text: str, rank: int) -> NamedSharding | None:
    """XLA's sharding of a result, named with the mesh's axes (None when no spec says it)."""
    for spec in candidate_specs(mesh, rank):
        sharding = NamedSharding(mesh, spec)
        if xla.spmd.same_sharding(sharding.hlo_text(rank), hlo_text):
            return sharding
    return None


def _refuse_unsupported(result: TraceResult, spec: CallSpec) -> None:
    for leaf_pos, _ in result.mutated:
        if leaf_pos < len(spec.leaves) and isinstance(spec.leaves[leaf_pos], Array):
            raise TypeError(f"{spec.signature.leaves[leaf_pos].path} is a psc_jit.Array, "
                            "which is immutable (it lives on the devices): return the new "
                            "value instead of writing into it")
    for out in result.out_specs:
        if out.how == "choice" or out.how == "view" and not _whole_output(out):
            raise UnsupportedError("the function returns a view of an argument (or of "
                                   "another result), and device arrays have no views", None,
                                   "return a copy (`.copy()`)")


def _whole_output(out) -> bool:
    """A result that is one of the program's outputs as it is (a "view" with no steps)."""
    return out.how == "traced" or out.how == "view" and out.value == (-1, ())


def _placed_inputs(program: DeviceProgram, leaves: list, origin: str) -> list:
    result = program.result
    placed = []
    for (position, dtype), sharding in zip(result.inputs, program.in_shardings, strict=False):
        value = leaves[position]
        if isinstance(value, Array):
            if value.sharding != sharding:
                value = place(np.asarray(value), sharding, origin)
            placed.append(value._handle)
        else:
            array = np.asarray(value, dtype) if dtype is not None else value
            placed.append(place(array, sharding, origin)._handle)
    placed.extend(c._handle for c in program.consts)
    return placed


def _rebuild(result: TraceResult, arrays: list[Array], leaves: list, wants_arrays: bool):
    """The call's return value from the run's result Arrays (as Arrays, or read as NumPy
    values); in-place updates of NumPy arguments written back."""
    if wants_arrays and result.checks and not result.mutated:   # verified when read
        checks = DeferredChecks(result.checks, arrays[result.check_index],
                                arrays[result.check_index + 1])
        for array in arrays[:result.check_index]:
            array._checks = checks
    read = [np.asarray(a) for a in arrays] \
        if result.mutated or not wants_arrays else None
    if result.checks and read is not None:
        verify_checks(result.checks, read[result.check_index], read[result.check_index + 1])
    for leaf_pos, out_index in result.mutated:
        np.copyto(leaves[leaf_pos], read[out_index])
    values = []
    for out in result.out_specs:
        if out.how in ("static", "const"):
            values.append(results.rebuild(out, (), leaves, {}))
        elif wants_arrays:
            values.append(arrays[out.index])
        else:
            value = read[out.index]
            values.append(value[()] if out.kind == "scalar" else
                          value.item() if out.kind == "python" else value)
    if result.out_structure is LEAF:
        return values[0]
    return unflatten(result.out_structure, values)


_COLLECTIVE_OPS = ("all-reduce", "all-gather", "reduce-scatter", "all-to-all",
                   "collective-permute")
_SHAPE = re.compile(r"\b(pred|[fsuc]\d+|bf16)\[([\d,]*)\]")
_ITEM_BYTES = {"pred": 1, "bf16": 2}


def collectives(hlo_text: str) -> list[tuple[str, str, int]]:
    """The collectives of a partitioned HLO module: (operation, result type, bytes per
    device) each, in program order."""
    found = []
    for line in hlo_text.splitlines():
        _, eq, rhs = line.partition(" = ")
        if not eq:
            continue
        op = next((o for o in _COLLECTIVE_OPS if re.search(rf"\s{o}(-start)?\(", " " + rhs)),
                  None)
        if op is None:
            continue
        result = rhs.split(f" {op}")[0]
        total = 0
        for kind, dims in _SHAPE.findall(result):
            count = math.prod(int(d) for d in dims.split(",") if d)
            total += count * _ITEM_BYTES.get(kind, int(kind[1:]) // 8 if kind[1:].isdigit()
                                              else 4)
        found.append((op, result.strip(), total))
    return found
