"""One elementwise cell on a large input, in a process of its own, for the parent test
(test_memory.py) and bench/memory.py: how far the resident set rose above what it was just
before the cell (its high-water mark, reset then), plain or compiled.

    python memory_child.py numpy|jit|magic|magic-timed|jax ELEMENTS

Prints one JSON line: {"peak_mib": ..., "output_mib": ...}; `peak_mib` is None where Linux
cannot reset the high-water mark (/proc/self/clear_refs).
"""
import json
import sys

import numpy as np

CELL = "y = x * 2.0 + 1.0"
MIB = 1 << 20


def status(field: str) -> float:
    with open("/proc/self/status") as lines:
        for line in lines:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    raise LookupError(field)


def reset_peak() -> bool:
    try:
        with open("/proc/self/clear_refs", "w") as clear:
            clear.write("5")
        return True
    except OSError:
        return False


def prepared(mode: str, elements: int):
    """A function running the cell once, everything it needs ready (jaxlib loaded, a tiny
    program compiled before, x written)."""
    if mode == "numpy":
        ns = {"x": np.ones(elements)}
        return lambda: exec(CELL, ns), ns
    if mode == "jax":
        return jax_cell(elements)
    import psc_jit
    if mode == "jit":
        f = psc_jit.jit(lambda v: v * 2.0 + 1.0)
        f(np.ones(8))
        ns = {"x": psc_jit.aligned(np.ones(elements))}
        return lambda: ns.update(y=f(ns["x"])), ns
    from IPython.core.interactiveshell import InteractiveShell
    shell = InteractiveShell.instance()
    shell.run_line_magic("load_ext", "psc_jit")
    shell.user_ns.update(x=np.ones(8))
    shell.run_cell_magic("psc_jit", "--quiet --no-compare", "z = x * 3.0")
    shell.user_ns["x"] = np.ones(elements)          # (the magic's allocator aligns it)
    flags = "--quiet" if mode == "magic-timed" else "--quiet --no-compare"
    return lambda: shell.run_cell_magic("psc_jit", flags, CELL), shell.user_ns


def jax_cell(elements: int):
    """jax.jit of the cell (a NumPy result, as the magic gives), its input 64-byte aligned
    (jax reads such an array in place, as psc_jit does)."""
    import jax
    jax.config.update("jax_enable_x64", True)
    f = jax.jit(lambda v: v * 2.0 + 1.0)
    np.asarray(f(np.ones(8)))
    raw = np.ones(elements + 8)
    start = (-raw.ctypes.data % 64) // 8
    ns = {"x": raw[start:start + elements]}
    return lambda: ns.update(y=np.asarray(f(ns["x"]))), ns


def main(mode: str, elements: int) -> None:
    run, ns = prepared(mode, elements)
    can_reset = reset_peak()
    before = status("VmRSS")
    run()
    peak = status("VmHWM") - before if can_reset else None
    print(json.dumps({"peak_mib": peak, "output_mib": ns["y"].nbytes / MIB}), flush=True)


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]))
