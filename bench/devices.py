"""Devices: the inventory, the time of sharded programs on 1, 2 and 4 devices, and what
asynchronous dispatch buys (how soon a call on device arrays returns, chained calls).

    python bench/devices.py [--devices 4] [--size 2048] [--repeat 5]

Runs in a process of its own with PSC_JIT_CPU_DEVICES set (the count is fixed once the
client exists), jax.jit of the same functions beside where jax is installed (its client made
with the same number of CPU devices). On a machine with a GPU plugin and a GPU, the same
programs run on the GPU too. Times are best of `--repeat` batches; the ratios are what to
read: this machine is shared and noisy.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--devices", type=int, default=4)
    parser.add_argument("--size", type=int, default=2048)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    os.environ["PSC_JIT_CPU_DEVICES"] = str(args.devices)
    os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") +
                               f" --xla_force_host_platform_device_count={args.devices}")
    import numpy as np
    import psc_jit
    from psc_jit.sharding import Mesh, NamedSharding, P

    inventory(psc_jit)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((args.size, args.size))
    w = rng.standard_normal((args.size, args.size)) / args.size
    scaling(psc_jit, Mesh, NamedSharding, P, x, w, args.repeat)
    asynchronous(psc_jit, x, w, args.repeat)
    gpu(psc_jit, x)


def inventory(psc_jit) -> None:
    from psc_jit.core.compile.xla import gpu_plugin
    print("## Devices\n")
    for device in psc_jit.devices():
        print(f"- {device.platform}:{device.id} ({device.device_kind})")
    plugin = gpu_plugin()
    print(f"- GPU plugin: {plugin[1] if plugin else 'none installed'}")
    print(f"- cores this process may use: {len(os.sched_getaffinity(0))}\n")


def _best(run, repeat: int, calls: int = 3) -> float:
    """Best of `repeat` batches of `calls` calls, per call (each call waited for)."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(calls):
            run()
        times.append((time.perf_counter() - start) / calls)
    return min(times)


KERNELS = {
    "elementwise chain": lambda np: (lambda x, w: np.tanh(np.sin(x) * 2.0 + x * x) + 1.0),
    "row reduction": lambda np: (lambda x, w: np.sqrt((x * x).sum(axis=1))),
    "matmul, rows sharded": lambda np: (lambda x, w: np.tanh(x @ w)),
    "gradient step": None,      # below: needs psc_jit.grad
}


def _gradient_step(np, grad):
    def loss(w, x):
        return np.mean(np.tanh(x @ w) ** 2)

    def step(x, w):
        return w - 0.1 * grad(loss)(w, x)
    return step


def scaling(psc_jit, Mesh, NamedSharding, P, x, w, repeat: int) -> None:
    import numpy as np
    jax = _jax()
    counts = [n for n in (1, 2, 4, 8) if n <= len(psc_jit.devices())]
    print(f"## Sharded programs, x of {x.shape[0]}x{x.shape[1]} split by rows "
          "(time per call, ratio to 1 device)\n")
    header = "| kernel | " + " | ".join(f"{n} device{'s' * (n > 1)}" for n in counts)
    header += " | jax.jit, " + " / ".join(map(str, counts)) + " |" if jax else " |"
    print(header)
    print("|---" * (header.count("|") - 1) + "|")
    for name, make in KERNELS.items():
        fn = make(np) if make else _gradient_step(np, psc_jit.grad)
        cells, base = [], None
        for n in counts:
            mesh = Mesh(psc_jit.devices()[:n], ("data",))
            rows = NamedSharding(mesh, P("data"))
            f = psc_jit.jit(fn)
            xd = psc_jit.device_put(x, rows)
            wd = psc_jit.device_put(w, NamedSharding(mesh, P()))
            f(xd, wd).block_until_ready()
            seconds = _best(lambda f=f, xd=xd, wd=wd: f(xd, wd).block_until_ready(), repeat)
            base = base or seconds
            cells.append(f"{seconds * 1e3:.1f} ms ({base / seconds:.2f}×)")
        if jax:
            cells.append(" / ".join(_jax_time(jax, name, n, x, w, repeat) for n in counts))
        print(f"| {name} | " + " | ".join(cells) + " |")
    print()


def _jax():
    """jax, with 64-bit types on (else it would compute float64 inputs in float32)."""
    try:
        import jax
    except ImportError:
        return None
    jax.config.update("jax_enable_x64", True)
    return jax


def _jax_time(jax, name: str, n: int, x, w, repeat: int) -> str:
    import jax.numpy as jnp
    from jax.sharding import Mesh as JMesh, NamedSharding as JNamed, PartitionSpec as JP
    cpus = jax.devices("cpu")
    if len(cpus) < n:
        return "-"
    mesh = JMesh(np_array(cpus[:n]), ("data",))
    fn = KERNELS[name](jnp) if KERNELS[name] else _gradient_step(jnp, jax.grad)
    f = jax.jit(fn)
    xd = jax.device_put(x, JNamed(mesh, JP("data")))
    wd = jax.device_put(w, JNamed(mesh, JP()))
    f(xd, wd).block_until_ready()
    return f"{_best(lambda: f(xd, wd).block_until_ready(), repeat) * 1e3:.1f} ms"


def np_array(items):
    import numpy as np
    out = np.empty(len(items), dtype=object)
    out[:] = items
    return out


def asynchronous(psc_jit, x, w, repeat: int) -> None:
    import numpy as np
    print("## Asynchronous dispatch (one device)\n")

    def heavy(a, b):
        for _ in range(4):
            a = np.tanh(a @ b)
        return a
    f = psc_jit.jit(heavy)
    xd, wd = psc_jit.device_put(x), psc_jit.device_put(w)
    f(xd, wd).block_until_ready()
    returns, computes = [], []
    for _ in range(max(repeat, 5)):
        start = time.perf_counter()
        out = f(xd, wd)
        returned = time.perf_counter()
        out.block_until_ready()
        returns.append(returned - start)
        computes.append(time.perf_counter() - start)
    print(f"- a call of {statistics.median(computes) * 1e3:.0f} ms (median) returns in "
          f"{statistics.median(returns) * 1e3:.3f} ms (median; best "
          f"{min(returns) * 1e3:.3f} ms, worst {max(returns) * 1e3:.3f} ms)")
    one = min(computes)
    best_chain = None
    for _ in range(max(repeat // 2, 2)):
        start = time.perf_counter()
        a = xd
        for _ in range(10):
            a = f(a, wd)
        dispatched = time.perf_counter() - start
        a.block_until_ready()
        total = time.perf_counter() - start
        best_chain = min(best_chain or (total, dispatched), (total, dispatched))
    total, dispatched = best_chain
    print(f"- ten chained calls: all dispatched after {dispatched * 1e3:.2f} ms, done after "
          f"{total * 1e3:.0f} ms = {total / (10 * one):.2f}× ten single calls "
          f"({10 * one * 1e3:.0f} ms)")
    print(f"- NumPy in, NumPy out (waits, as before): "
          f"{_best(lambda: f(x, w), repeat, 1) * 1e3:.0f} ms per call\n")


def gpu(psc_jit, x) -> None:
    import numpy as np
    print("## GPU\n")
    try:
        gpus = psc_jit.devices("gpu")
    except Exception as err:
        print(f"- skipped: {err}\n")
        return
    f = psc_jit.jit(lambda v: np.tanh(v @ v.T))
    out = np.asarray(f(psc_jit.device_put(x, gpus[0])))
    ref = np.asarray(f(psc_jit.device_put(x)))
    print(f"- {gpus[0]}: largest difference from the CPU's result "
          f"{np.abs(out - ref).max():.2e}\n")


if __name__ == "__main__":
    sys.exit(main())
