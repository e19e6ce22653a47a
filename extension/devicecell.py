"""A `%%psc_jit` cell on devices: `--mesh data=4 --shard x=data` partitions the cell's
program over a mesh of the process's devices (XLA's SPMD partitioner), `--device-arrays`
binds its outputs as psc_jit.Arrays (not waited for), and so does a cell whose inputs are
already Arrays. Otherwise the outputs are bound as NumPy values, as every cell's are.

The cell is one program (never split into regions: a host step between two partitioned
programs would gather every array to the host). The report shows the partitioned program:
its kernels with each device's shapes, and the collectives XLA inserted, with their bytes.
"""
from __future__ import annotations

import re
import time

import numpy as np

from .core import (Array, Mesh, NamedSharding, PartitionSpec, bind_outputs, collectives,
                   device_call,
                   devices, fmt_seconds, module_cost, parse_optimized_hlo, replay_effects)

# --mesh data=4 | data=2,model=2
_MESH_AXIS = re.compile(r"^([A-Za-z_]\w*)=(\d+)$")


class MeshUsage(ValueError):
    """A --mesh or --shard argument that cannot be used, with what to write instead."""


def parse_mesh(text: str) -> tuple[tuple[str, int], ...]:
    axes = []
    for part in text.split(","):
        match = _MESH_AXIS.match(part.strip())
        if match is None:
            raise MeshUsage(f"--mesh {text}: give axis sizes as NAME=SIZE, comma-separated "
                            "(--mesh data=4, or --mesh data=2,model=2)")
        axes.append((match.group(1), int(match.group(2))))
    return tuple(axes)


def parse_shards(values) -> tuple[tuple[str, tuple], ...]:
    """--shard x=data w=,model: per name, the mesh axis of each dimension ('' : not split)."""
    found = []
    for value in values or ():
        name, _, dims = value.partition("=")
        if not name.isidentifier() or not _:
            raise MeshUsage(f"--shard {value}: give NAME=AXIS (x=data), with one axis per "
                            "dimension, comma-separated, empty for a dimension not split "
                            "(w=,model)")
        found.append((name, tuple(d.strip() or None for d in dims.split(","))))
    return tuple(found)


def make_mesh(axes: tuple[tuple[str, int], ...]) -> Mesh:
    available = devices()
    size = int(np.prod([n for _, n in axes]))
    if size > len(available):
        raise MeshUsage(f"--mesh {','.join(f'{a}={n}' for a, n in axes)} needs {size} devices; "
                        f"this process has {len(available)}. Ask for more before the first "
                        "compile: %config PscJit.cpu_devices = "
                        f"{size} (or PSC_JIT_CPU_DEVICES={size}), then restart the kernel")
    grid = np.empty(size, dtype=object)
    grid[:] = available[:size]
    return Mesh(grid.reshape([n for _, n in axes]), tuple(a for a, _ in axes))


def on_devices(options, user_ns: dict, inputs) -> bool:
    """Whether a cell runs on devices: a mesh or device arrays asked for, or an input that
    is already a device array."""
    return bool(options.mesh or options.device_arrays or
                any(type(user_ns.get(n)) is Array for n in inputs))


def run_on_devices(runner, report, analysis, identity, options):
    """Run the cell's program on the devices and bind its outputs (see the module)."""
    __tracebackhide__ = True    # IPython shows the cell's line, not ours
    program = runner._program(analysis, identity, options)
    mesh = make_mesh(options.mesh) if options.mesh else None
    unknown = [n for n, _ in options.shard if n not in program.inputs]
    if unknown:
        raise MeshUsage(f"--shard {', '.join(unknown)}: not an input of the cell (its inputs "
                        f"are {', '.join(program.inputs) or 'none'})")
    if options.shard and mesh is None:
        raise MeshUsage("--shard needs a mesh to split over: give --mesh too (--mesh data=4)")
    jitted = program.jitted
    jitted.in_shardings = {n: NamedSharding(mesh, PartitionSpec(*dims))
                           for n, dims in options.shard} if mesh else None
    if mesh is not None and not options.shard:
        jitted.in_shardings = {n: NamedSharding(mesh) for n in program.inputs}
    values = program.arguments(runner.user_ns)
    wants_arrays = options.device_arrays or any(type(v) is Array for v in values)
    runner._progress("run")
    start = time.perf_counter()
    # a run bound as NumPy values is waited for anyway: it is profiled (each device's time)
    profile = not wants_arrays and options.compare is not False
    result = device_call(jitted, tuple(values), {}, arrays=wants_arrays, profile=profile)
    outputs, last, effects = program.split(result)
    report.stage_seconds["run"] = time.perf_counter() - start
    bind_outputs(runner.user_ns, outputs)
    replay_effects(effects, runner.user_ns)
    fill_report(report, jitted)
    return report, last


def fill_report(report, jitted) -> None:
    programs = jitted.device_programs
    program = programs.last
    hlo = program.as_text()
    report.compiled = True
    report.cache_hit = programs.last_reason is None
    report.miss_reason = programs.last_reason
    report.graph = program.result.graph
    report.stablehlo = program.text
    report.optimized_hlo = hlo
    report.kernels = parse_optimized_hlo(hlo, module_cost)
    if not report.cache_hit:
        report.stage_seconds.update(trace=program.trace_seconds,
                                    compile=program.compile_seconds)
    report.signature = ", ".join(
        f"{leaf.path}: {s.describe(len(leaf.aval.shape))}"
        for leaf, s in zip(program.signature.leaves, program.leaf_shardings, strict=True)
        if hasattr(leaf, "aval"))
    report.notes = tuple(partition_notes(program, hlo)) + tuple(
        time_notes(programs.last_times, program))


def time_notes(times, program) -> list[str]:
    """Each device's time in the run (its kernels), and the collectives' share of it."""
    if not times:
        return []
    names = {k: f"{d.platform}:{d.id}" for k, d in enumerate(program.executable.devices)}
    return ["per device: " + "; ".join(
        f"{names.get(t.device, t.device)} {fmt_seconds(t.busy_ns * 1e-9)}"
        + (f" ({t.collective_share:.0%} in collectives, waits for the others included)"
           if t.collective_ns else "") for t in times)]


def partition_notes(program, hlo: str) -> list[str]:
    """What the report says of a partitioned program: its mesh, and each collective XLA
    inserted, with its bytes per device."""
    mesh = program.in_shardings[0].mesh if program.in_shardings else None
    notes = []
    if mesh is not None and mesh.size > 1:
        notes.append(f"partitioned over {mesh!r}: each kernel below shows one device's shapes")
    notes.extend(f"{op} of {result} ({nbytes:,} bytes per device)"
                 for op, result, nbytes in collectives(hlo))
    return notes
