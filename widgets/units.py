"""Numbers in the user's units: seconds, bytes, counts, speed-ups (three significant digits).
The same words as core's messages (`psc_jit.core.compile.units`)."""
from __future__ import annotations

from psc_jit.core import fmt_bytes, fmt_count, fmt_seconds, fmt_speedup

__all__ = ["fmt_seconds", "fmt_bytes", "fmt_count", "fmt_speedup"]
