"""The machine XLA's CPU code is generated for, as part of a persistent executable's key: its
architecture and its CPU's feature flags (an executable built for AVX-512 must never run
where it is missing)."""
from __future__ import annotations

import functools
import platform


@functools.cache
def host_machine() -> str:
    """The architecture, then the CPU's feature flags, sorted (from /proc/cpuinfo; where it
    cannot be read, what `platform.processor()` says)."""
    flags = ""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as cpuinfo:
            for line in cpuinfo:
                if line.startswith(("flags", "Features")):
                    flags = " ".join(sorted(line.split(":", 1)[1].split()))
                    break
    except OSError:
        flags = platform.processor()
    return f"{platform.machine()}\n{flags}"
