"""Numbers in the user's units: seconds, bytes, counts, speed-ups (three significant digits).
Core's messages and the widgets use the same words."""
from __future__ import annotations

__all__ = ["fmt_seconds", "fmt_bytes", "fmt_count", "fmt_speedup"]


def fmt_seconds(seconds: float) -> str:
    """`1.23 ms`, `45.6 µs`: three significant digits in the largest unit below the value."""
    for scale, unit in ((1.0, "s"), (1e-3, "ms"), (1e-6, "µs")):
        if abs(seconds) >= scale:
            return f"{seconds / scale:.3g} {unit}"
    return f"{seconds / 1e-9:.3g} ns"


def _fmt_scaled(value: float, prefixes: tuple[str, ...], step: float) -> tuple[float, str]:
    for prefix in prefixes[:-1]:
        if abs(value) < step:
            return value, prefix
        value /= step
    return value, prefixes[-1]


def fmt_bytes(count: float) -> str:
    value, unit = _fmt_scaled(count, ("B", "KiB", "MiB", "GiB", "TiB"), 1024.0)
    return f"{value:.3g} {unit}"


def fmt_count(count: float, unit: str = "") -> str:
    """`16 flop`, `1.5 Gflop`, `2.5 k`."""
    value, prefix = _fmt_scaled(count, ("", "k", "M", "G", "T", "P"), 1000.0)
    return f"{value:.3g} {prefix}{unit}".strip()


def fmt_speedup(speedup: float, versus: str = " than plain Python") -> str:
    """`3.2× faster than plain Python`, `4× slower than plain Python` (plain / compiled);
    `versus=""` for a column headed "speed-up": `3.2× faster`, `4× slower`."""
    if speedup == float("inf"):
        return "∞× (compiled run too fast to time)"
    if speedup >= 1:
        return f"{speedup:.3g}× faster{versus}"
    if speedup <= 0:
        return f"slower{versus} (plain too fast to time)"
    return f"{1 / speedup:.3g}× slower{versus}"
