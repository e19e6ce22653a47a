"""psc_jit.core: the tracing JIT (no IPython, no widgets).

trace -> Graph -> StableHLO -> XLA executable -> cached -> run.
"""
from .jit import Compiled, Jitted, Lowered, Traced, jit
from .tracing import ConcretizationError, TraceError, UnsupportedError

__all__ = ["jit", "Jitted", "Traced", "Lowered", "Compiled", "TraceError",
           "ConcretizationError", "UnsupportedError"]
