"""Sharding in JAX's words: `Mesh`, `PartitionSpec` (also `P`), `NamedSharding`.

    mesh = Mesh(psc_jit.devices()[:4], ("data",))
    x = psc_jit.device_put(x, NamedSharding(mesh, PartitionSpec("data")))
    f = psc_jit.jit(f, in_shardings=NamedSharding(mesh, P("data")))
    constrain(y, P(None, "data"))     # inside f: y's layout, where the program is partitioned
"""
from .core import Mesh, NamedSharding, PartitionSpec, constrain

P = PartitionSpec

__all__ = ["Mesh", "NamedSharding", "PartitionSpec", "P", "constrain"]
