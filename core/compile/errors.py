"""The error of XLA's side of a call (compiling, loading or running a program), apart from
compile/xla/ so that modules handling XLA's results need not import the jaxlib adapter."""
from __future__ import annotations


class XlaError(Exception):
    pass


def run_failed(err: Exception) -> XlaError:
    """jaxlib's own error of a run (JaxRuntimeError), as psc_jit's, with its text."""
    return XlaError(f"the compiled program failed: {err}")
