"""What the report costs a cache-hit re-run, in a real Jupyter kernel.

    .venv/bin/python bench/report_cost.py [--repeat N]

Starts a kernel of this environment (jupyter_client), runs a cell once to compile it, then
re-runs it (each a cache hit) with the report and with --quiet, taking turns, and prints the
median wall time of one execute request (sent, replied, its outputs received) for each, and
their difference: what showing the report costs. The cells: the README's layer norm with a
GELU on 1000 x 1000, a softmax on 256 x 1000, a loop of 300 steps, and 80 lines of\nabout six equations each.
"""
from __future__ import annotations

import argparse
import statistics
import time

from jupyter_client.manager import start_new_kernel

SETUP = """\
%load_ext psc_jit
import numpy as np
x = np.random.default_rng(0).standard_normal((1000, 1000))
s = np.random.default_rng(1).standard_normal((256, 1000))
v = np.random.default_rng(2).standard_normal(100)
"""

CELLS = {
    "layer norm + GELU 1000x1000": """\
mu = x.mean(axis=1, keepdims=True)
var = ((x - mu) ** 2).mean(axis=1, keepdims=True)
y = (x - mu) / np.sqrt(var + 1e-5)
h = 0.5 * y * (1.0 + np.tanh(0.7978845608 * (y + 0.044715 * y ** 3)))""",
    "softmax 256x1000": """\
shifted = s - s.max(axis=1, keepdims=True)
e = np.exp(shifted)
probs = e / e.sum(axis=1, keepdims=True)""",
    "loop, 300 steps": """\
u = v.copy()
for step in range(300):
    u = u + 0.01 * (np.roll(u, 1) - 2 * u + np.roll(u, -1))""",
    "80 lines, about 500 equations": "\n".join(
        ["t0 = s[:, :500]"] + [f"t{k} = np.tanh(t{k - 1} * {k}.0 + t{k - 1}.mean(axis=1, "
                               f"keepdims=True)).reshape(256, 500)" for k in range(1, 80)]),
}


def execute(client, code: str) -> float:
    """Seconds from sending the request to its reply with every output received."""
    start = time.perf_counter()
    reply = client.execute_interactive(code, output_hook=lambda msg: None, timeout=300)
    elapsed = time.perf_counter() - start
    if reply["content"]["status"] != "ok":
        raise RuntimeError(f"the cell failed: {reply['content']}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=15)
    args = parser.parse_args()
    manager, client = start_new_kernel(kernel_name="python3")
    try:
        execute(client, SETUP)
        print(f"{'cell':<30} {'with report':>12} {'--quiet':>10} {'report costs':>13}")
        for index, (name, body) in enumerate(CELLS.items()):
            shown = f"%%psc_jit --name bench{index}\n{body}"
            quiet = f"%%psc_jit --name bench{index} --quiet\n{body}"
            execute(client, shown)               # the miss: trace, compile, time
            execute(client, quiet)
            times = {"shown": [], "quiet": []}
            for _ in range(args.repeat):
                times["shown"].append(execute(client, shown))
                times["quiet"].append(execute(client, quiet))
            with_report = statistics.median(times["shown"])
            without = statistics.median(times["quiet"])
            print(f"{name:<30} {with_report * 1e3:>10.1f}ms {without * 1e3:>8.1f}ms "
                  f"{(with_report - without) * 1e3:>11.1f}ms")
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)


if __name__ == "__main__":
    main()
