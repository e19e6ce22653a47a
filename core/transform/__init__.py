"""Transformations of traced functions, interpreters of the same graphs, driven by each
primitive's rules of differentiation (`core.primitives.record`):

    jvp.py       forward mode: the JVP of a graph
    vjp.py       reverse mode: a graph's forward and backward graphs (JVP, partial
                 evaluation, transposition)
    flat.py      a function of pytrees as a graph of its traced leaves, and back
    api.py       grad, value_and_grad, vjp, jvp (JAX's signatures and meanings)
    jacobian.py  jacfwd, jacrev
    vmap.py      vmap (JAX's signature and meaning)
    collectives.py psum, pmean, all_gather over a named vmap axis

What rules write into (`Ops`) and the batching interpreter live one layer down, in control/
(ops.py, batching.py): the rolling of loops vectorises independent passes with them.
"""
from .api import grad, jvp, value_and_grad, vjp
from ..control.batching import BatchContext
from .jacobian import jacfwd, jacrev
from .vmap import vmap
from .collectives import all_gather, pmean, psum

__all__ = ["grad", "value_and_grad", "vjp", "jvp", "jacfwd", "jacrev", "vmap", "BatchContext",
           "psum", "pmean", "all_gather"]
