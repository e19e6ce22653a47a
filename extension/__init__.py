"""psc_jit: compile plain NumPy notebook cells with XLA.

    %load_ext psc_jit
    %%psc_jit
    y = np.tanh(x @ w + 1.0)
"""
from .core import jit

__all__ = ["jit"]
