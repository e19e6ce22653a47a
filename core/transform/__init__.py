"""Transformations of traced functions, interpreters of the same graphs, driven by each
primitive's rules of differentiation (`core.primitives.record`):

    ops.py       what rules write into: equations with the source line they came from
    jvp.py       forward mode: the JVP of a graph
    vjp.py       reverse mode: a graph's forward and backward graphs (JVP, partial
                 evaluation, transposition)
    flat.py      a function of pytrees as a graph of its traced leaves, and back
    api.py       grad, value_and_grad, vjp, jvp (JAX's signatures and meanings)
    jacobian.py  jacfwd, jacrev
"""
from .api import grad, jvp, value_and_grad, vjp
from .jacobian import jacfwd, jacrev

__all__ = ["grad", "value_and_grad", "vjp", "jvp", "jacfwd", "jacrev"]
