"""One process of a distributed run (tests/core/compile/test_distributed.py starts several):
joins the runtime, makes a global array from its local rows, runs one partitioned program
(a sum, column sums, an elementwise map: the first two need an all-reduce across the
processes) and prints `RESULT {json}`, or `ERROR {type}: {text}` with the seconds it took.

    python distributed_child.py PROCESS_ID NUM_PROCESSES PORT LOCAL_DEVICES SCENARIO

Scenarios: `run` (the program), `alone` (process 0 waits 2 s for the others),
`other_program` (process 1 runs another program), `die_before` (process 1 exits as the
others start the program, `die_inside`), `die_after` (the same after a first run together)."""
import json
import os
import sys
import threading
import time

import numpy as np

import psc_jit
from psc_jit import distributed
from psc_jit.core import distributed as core_distributed

ROWS_PER_DEVICE, COLS = 2, 3
HEARTBEAT = 3


def program_text(rows: int, devices: int, op: str) -> str:
    tiled = f'"{{devices=[{devices},1]<=[{devices}]}}"'
    x = f"tensor<{rows}x{COLS}xf64>"
    return f"""
module @spmd attributes {{mhlo.num_partitions = {devices} : i32, mhlo.num_replicas = 1 : i32}} {{
  func.func public @main(%x: {x} {{mhlo.sharding = {tiled}}})
      -> (tensor<f64> {{mhlo.sharding = "{{replicated}}"}},
          tensor<{COLS}xf64> {{mhlo.sharding = "{{replicated}}"}},
          {x} {{mhlo.sharding = {tiled}}}) {{
    %zero = stablehlo.constant dense<0.0> : tensor<f64>
    %two = stablehlo.constant dense<2.0> : {x}
    %total = stablehlo.reduce(%x init: %zero) applies stablehlo.add across dimensions = [0, 1]
        : ({x}, tensor<f64>) -> tensor<f64>
    %cols = stablehlo.reduce(%x init: %zero) applies stablehlo.add across dimensions = [0]
        : ({x}, tensor<f64>) -> tensor<{COLS}xf64>
    %y = stablehlo.{op} %x, %two : {x}
    return %total, %cols, %y : tensor<f64>, tensor<{COLS}xf64>, {x}
  }}
}}
"""


def main(process_id: int, num_processes: int, port: int, local_devices: int, scenario: str):
    start = time.monotonic()
    try:
        distributed.initialize(f"127.0.0.1:{port}", num_processes, process_id,
                               local_devices=local_devices,
                               initialization_timeout=2 if scenario == "alone" else 20,
                               heartbeat_timeout=HEARTBEAT, shutdown_timeout=HEARTBEAT,
                               sync_timeout=20)
        print("RESULT " + json.dumps(run(process_id, scenario)), flush=True)
    except distributed.DistributedError as err:
        print(f"ERROR {type(err).__name__}: {err} AFTER {time.monotonic() - start:.1f}", flush=True)
        if not isinstance(err, distributed.ProcessLost):     # (a lost one never leaves)
            leave = threading.Thread(target=shutdown_quietly, daemon=True)
            leave.start()   # (process 0 leaves last: the others need its coordinator to leave)
            leave.join(3 * HEARTBEAT)
        os._exit(3)     # (a hung run's thread must not keep the process)
    distributed.shutdown()


def shutdown_quietly():
    try:
        distributed.shutdown()
    except distributed.DistributedError:
        pass    # (a dead process does not come to the barrier)


def die_inside(program):
    """Agree to run `program` with the others, then exit: they are inside it by then, waiting
    in its collectives (gloo waits for a peer that never connected; a connected one that goes
    is an error at once)."""
    core_distributed.check_same_program(core_distributed.runtime(), program.fingerprint,
                                        program.label)
    os._exit(1)


def run(process_id: int, scenario: str) -> dict:
    devices = distributed.device_count()
    rows = ROWS_PER_DEVICE * devices
    full = np.arange(rows * COLS, dtype=np.float64).reshape(rows, COLS) / 7
    tiling = distributed.Tiling((devices, 1))
    local_rows = rows // distributed.process_count()
    local = full[process_id * local_rows:(process_id + 1) * local_rows]
    x = psc_jit.make_array_from_process_local_data(tiling, local)
    op = "add" if scenario == "other_program" and process_id == 1 else "multiply"
    avals = [psc_jit.core.ShapedArray((), np.float64), psc_jit.core.ShapedArray((COLS,), np.float64),
             x.aval]
    program = distributed.SpmdProgram(program_text(rows, devices, op), [x.aval], avals,
                                      [tiling], [distributed.Tiling(), distributed.Tiling(), tiling],
                                      label=f"program {op} (process {process_id})")
    if scenario == "die_before" and process_id == 1:
        die_inside(program)
    outputs = program(x)
    if scenario == "die_after":
        if process_id == 1:
            die_inside(program)
        outputs = program(x)
    one_type = all(isinstance(a, psc_jit.Array) for a in (x, *outputs))
    total, cols, y = (o.local_data() for o in outputs)
    y_total = float(np.asarray(psc_jit.jit(lambda a: a.sum())(outputs[2])))  # (across processes)
    compiled_here = psc_jit.jit(lambda a: (a * a).sum(axis=0))(local)
    sharded = sharded_jit(local)
    if scenario == "run":
        sharded.update(layouts(program, full, local, program_text(rows, devices, op), avals))
    return {"devices": devices, "one_type": one_type, "y_total": y_total,
            "global_shape": list(x.shape), "total": float(total),
            "cols": cols.tolist(), "y": y.tolist(), "expected_y": (local * 2).tolist(),
            "expected_total": float(full.sum()), "expected_cols": full.sum(axis=0).tolist(),
            "jit_here": compiled_here.tolist(), "expected_jit": (local * local).sum(axis=0).tolist(),
            **sharded}


def layouts(program, full: np.ndarray, local: np.ndarray, text: str, avals: list) -> dict:
    """What the hand-written program takes: an Array laid out as its tiling says, whatever
    its mesh's axes are named; an Array laid out otherwise, or tilings that are not the
    module's, are refused with the reason."""
    from psc_jit.sharding import Mesh, NamedSharding, P
    rows = NamedSharding(Mesh(psc_jit.devices(), ("data",)), P("data"))
    named = psc_jit.make_array_from_process_local_data(rows, local)
    found = {"named_total": float(program(named)[0].local_data())}
    replicated = psc_jit.make_array_from_process_local_data(distributed.Tiling(), full)
    tilings = [distributed.Tiling((distributed.device_count(), 1))]
    for name, attempt in [
            ("replicated_refused", lambda: program(replicated)),
            ("mislabeled_refused", lambda: distributed.SpmdProgram(
                text, [replicated.aval], avals, tilings, [distributed.Tiling()] * 3, "mislabeled"))]:
        try:
            attempt()
            found[name] = "taken"
        except distributed.DistributedError as err:
            found[name] = str(err)
    return found


def sharded_jit(local: np.ndarray) -> dict:
    """psc_jit's own partitioned programs over the processes: an Array made of every process's
    rows (NamedSharding over a mesh of all the devices), given to jit, read everywhere."""
    from psc_jit.sharding import Mesh, NamedSharding, P
    mesh = Mesh(psc_jit.devices(), ("data",))
    x = psc_jit.make_array_from_process_local_data(NamedSharding(mesh, P("data")), local)
    total, doubled = psc_jit.jit(lambda a: ((a * a).sum(), np.sin(a) * 2.0))(x)
    try:
        read = np.asarray(x).shape == x.shape       # (all of it: one process holds every block)
    except ValueError as err:                       # (only a part here: refused, not given)
        read = str(err)
    return {"sharded_shape": list(x.shape), "read_whole": read,
            "local_rows": x.local_data().tolist(), "local_given": local.tolist(),
            "sharded_total": float(np.asarray(total)),
            "sharded_doubled": np.asarray(doubled).tolist()}


if __name__ == "__main__":
    main(*map(int, sys.argv[1:5]), sys.argv[5])
