"""How arrays lie on devices, in JAX's words: a `Mesh` of devices with named axes, a
`PartitionSpec` saying which mesh axes split which array dimensions, and a `NamedSharding`
joining the two. No jaxlib here: a sharding is told to XLA as text, in the two forms XLA
reads (`hlo_text`: the HLO sharding of a placed array or a result; `sdy_text`: the Shardy
attribute of a program's argument or result, with `Mesh.sdy_declaration`).

A device is whatever the XLA adapter lists (`xla.devices()`): the sharding only needs its
position in the mesh and its `id`.

`SingleDevice` is where `device_put(x, device)` puts an array, and where an unsharded
device array lives: a mesh of one device.
"""
from __future__ import annotations

import itertools
import math
from typing import Sequence

import numpy as np

from ..primitives import sharding_constraint_p
from ..tracing import Tracer, bind

MESH_NAME = "mesh"      # the Shardy symbol of a program's one mesh


class PartitionSpec(tuple):
    """Per array dimension: None (not split), a mesh axis name, or a tuple of names (split
    over their product, the first the major one). Dimensions past the spec's end are not
    split: `PartitionSpec("data")` splits the first dimension of any array over `data`."""

    def __new__(cls, *dims):
        for dim in dims:
            names = dim if isinstance(dim, tuple) else (dim,)
            if not all(n is None or isinstance(n, str) for n in names) or \
                    (isinstance(dim, tuple) and None in dim):
                raise TypeError(f"PartitionSpec takes mesh axis names, tuples of them or "
                                f"None; got {dim!r}")
        return super().__new__(cls, dims)

    def axes(self, rank: int) -> list[tuple[str, ...]]:
        """The mesh axes splitting each of the `rank` dimensions."""
        if len(self) > rank:
            raise ValueError(f"{self!r} names {len(self)} dimensions; the array has {rank}")
        dims = list(self) + [None] * (rank - len(self))
        return [() if d is None else (d if isinstance(d, tuple) else (d,)) for d in dims]

    def __repr__(self) -> str:
        return f"PartitionSpec({', '.join(map(repr, self))})"


P = PartitionSpec


class Mesh:
    """Devices in an n-dimensional grid with a name per axis: `Mesh(devices[:4], ("data",))`,
    or `Mesh(np.array(devices).reshape(2, 2), ("data", "model"))`."""

    def __init__(self, devices, axis_names: Sequence[str] | str):
        if isinstance(axis_names, str):
            axis_names = (axis_names,)
        grid = np.empty(np.shape(devices), dtype=object)
        flat = list(np.ravel(np.asarray(devices, dtype=object)))
        if not flat:
            raise ValueError("a mesh needs at least one device")
        grid.ravel()[:] = flat
        if grid.ndim != len(axis_names):
            raise ValueError(f"a mesh of shape {grid.shape} needs {grid.ndim} axis names; "
                             f"got {tuple(axis_names)}")
        if len(set(axis_names)) != len(axis_names):
            raise ValueError(f"mesh axis names repeat: {tuple(axis_names)}")
        if len({d.id for d in flat}) != len(flat):
            raise ValueError("a device appears twice in the mesh")
        self.devices = grid
        self.axis_names = tuple(axis_names)

    @property
    def shape(self) -> dict[str, int]:
        return dict(zip(self.axis_names, self.devices.shape, strict=True))

    @property
    def size(self) -> int:
        return self.devices.size

    @property
    def device_list(self) -> tuple:
        """The devices in the program's partition order (row-major over the mesh)."""
        return tuple(self.devices.ravel())

    def sdy_declaration(self) -> str:
        axes = ", ".join(f'"{n}"={s}' for n, s in self.shape.items())
        return f"sdy.mesh @{MESH_NAME} = <[{axes}]>"

    def key(self) -> tuple:
        return (self.axis_names, self.devices.shape, tuple(d.id for d in self.device_list))

    def __eq__(self, other) -> bool:
        return isinstance(other, Mesh) and other.key() == self.key()

    def __hash__(self) -> int:
        return hash(self.key())

    def __repr__(self) -> str:
        shape = ", ".join(f"{n}={s}" for n, s in self.shape.items())
        return f"Mesh({shape})"


class NamedSharding:
    """An array split over a mesh as its PartitionSpec says; mesh axes the spec does not name
    hold copies (the array is replicated over them)."""

    def __init__(self, mesh: Mesh, spec: PartitionSpec | None = None):
        if spec is None:
            spec = PartitionSpec()
        elif not isinstance(spec, PartitionSpec):
            spec = PartitionSpec(*spec)
        used = [n for dim in spec for n in (dim if isinstance(dim, tuple) else (dim,))
                if n is not None]
        unknown = [n for n in used if n not in mesh.axis_names]
        if unknown:
            raise ValueError(f"{spec!r} names {', '.join(map(repr, unknown))}, which "
                             f"{mesh!r} does not have")
        if len(set(used)) != len(used):
            raise ValueError(f"{spec!r} splits over one mesh axis twice")
        self.mesh, self.spec = mesh, spec

    @property
    def device_list(self) -> tuple:
        return self.mesh.device_list

    def shard_shape(self, shape: tuple[int, ...]) -> tuple[int, ...]:
        """Each device's block of an array of `shape` (every split must be even)."""
        counts = self._counts(len(shape))
        for n, (size, count) in enumerate(zip(shape, counts, strict=True)):
            if size % count:
                raise ValueError(
                    f"dimension {n} of an array of shape {tuple(shape)} ({size}) cannot be "
                    f"split evenly over {count} devices ({self.describe()}); pad it to a "
                    f"multiple of {count} or split another dimension")
        return tuple(size // count for size, count in zip(shape, counts, strict=True))

    def _counts(self, rank: int) -> list[int]:
        """Per dimension, how many blocks it is split into."""
        sizes = self.mesh.shape
        return [math.prod(sizes[n] for n in dim) for dim in self.spec.axes(rank)]

    def shard_slices(self, shape: tuple[int, ...]) -> list[tuple[slice, ...]]:
        """Per device (in `device_list` order), the block of an array of `shape` it holds."""
        block = self.shard_shape(shape)
        axes = self.spec.axes(len(shape))
        sizes = self.mesh.shape
        slices = []
        for position in itertools.product(*(range(s) for s in self.mesh.devices.shape)):
            at = dict(zip(self.mesh.axis_names, position, strict=True))
            index = []
            for dim_axes, size in zip(axes, block, strict=True):
                k = 0
                for name in dim_axes:
                    k = k * sizes[name] + at[name]
                index.append(slice(k * size, (k + 1) * size))
            slices.append(tuple(index))
        return slices

    def part_held(self, shape: tuple[int, ...], positions: Sequence[int],
                  holder: str = "these devices") -> tuple[slice, ...]:
        """The part of an array of `shape` that the devices at `positions` (of `device_list`)
        hold between them: one box (how a process's part of an array over several processes
        is read and given). Blocks that are not one box are refused: their holder has no one
        local array (e.g. 3 x 2 blocks over two processes of three devices)."""
        every = self.shard_slices(shape)
        blocks = [every[p] for p in positions]
        if not blocks:
            raise ValueError(f"{self!r} puts nothing on {holder}")
        box = tuple(slice(min(b[k].start for b in blocks), max(b[k].stop for b in blocks))
                    for k in range(len(shape)))
        distinct = {tuple((s.start, s.stop) for s in b) for b in blocks}
        if len(distinct) * math.prod(_sizes(blocks[0])) != math.prod(_sizes(box)):
            raise ValueError(f"{self!r} gives {holder} blocks that are not one box of the "
                             f"{tuple(shape)} array: split it so that each process holds a box")
        return box

    def global_shape(self, local_shape: tuple[int, ...], positions: Sequence[int]
                     ) -> tuple[int, ...]:
        """The shape of the array of which the devices at `positions` hold a part of
        `local_shape`: each dimension times the number of its blocks they do not hold."""
        if not positions:
            raise ValueError(f"{self!r} puts nothing on these devices")
        counts = self._counts(len(local_shape))
        index = [self.shard_slices(tuple(counts))[p] for p in positions]   # (block numbers)
        return tuple(n * count // len({i[k].start for i in index})
                     for k, (n, count) in enumerate(zip(local_shape, counts, strict=True)))

    def hlo_text(self, rank: int) -> str:
        """The HLO sharding (over the program's partitions, numbered in mesh order)."""
        axes = self.spec.axes(rank)
        used = [n for dim in axes for n in dim]
        if not used:
            return "{replicated}"
        unused = [n for n in self.mesh.axis_names if n not in used]
        sizes = self.mesh.shape
        ids = np.arange(self.mesh.size).reshape(self.mesh.devices.shape)
        order = [self.mesh.axis_names.index(n) for n in used + unused]
        tiles = [math.prod(sizes[n] for n in dim) for dim in axes]
        if math.prod(tiles) == 1:       # split over axes of one device each: whole
            return "{replicated}"
        copies = math.prod(sizes[n] for n in unused)
        grid = ids.transpose(order).reshape(tiles + ([copies] if copies > 1 else []))
        last = " last_tile_dim_replicate" if copies > 1 else ""
        return (f"{{devices=[{','.join(map(str, grid.shape))}]"
                f"{','.join(map(str, grid.ravel()))}{last}}}")

    def sdy_text(self, rank: int) -> str:
        dims = ", ".join("{" + ", ".join(f'"{n}"' for n in dim) + "}"
                         for dim in self.spec.axes(rank))
        return f"#sdy.sharding<@{MESH_NAME}, [{dims}]>"

    def is_fully_replicated(self, rank: int) -> bool:
        return self.hlo_text(rank) == "{replicated}"

    def describe(self, rank: int | None = None) -> str:
        """`sharded data=4` (over which axes), `replicated` (over no axis), as a miss reason
        and the report read it."""
        dims = self.spec.axes(rank if rank is not None else len(self.spec))
        used = [n for dim in dims for n in dim]
        if not used:
            return "replicated" if self.mesh.size > 1 else f"on {_device_name(self.mesh)}"
        return "sharded " + " ".join(f"{n}={self.mesh.shape[n]}" for n in used)

    def key(self) -> tuple:
        """Equal for equal layouts: trailing unsplit dimensions do not count."""
        dims = list(self.spec)
        while dims and dims[-1] is None:
            dims.pop()
        return (self.mesh.key(), tuple(dims))

    def __eq__(self, other) -> bool:
        return isinstance(other, NamedSharding) and other.key() == self.key()

    def __hash__(self) -> int:
        return hash(self.key())

    def __repr__(self) -> str:
        return f"NamedSharding({self.mesh!r}, {self.spec!r})"


def _sizes(part: tuple[slice, ...]) -> list[int]:
    return [s.stop - s.start for s in part]


def assemble(sharding: NamedSharding, shape: tuple[int, ...], positions: Sequence[int],
             blocks: Sequence[np.ndarray], holder: str = "these devices") -> np.ndarray:
    """The part of an array of `shape` that the devices at `positions` hold (`part_held`),
    as one NumPy array made of their `blocks` (in the same order)."""
    part = sharding.part_held(shape, positions, holder)
    every = sharding.shard_slices(shape)
    out = np.empty(_sizes(part), dtype=blocks[0].dtype)
    for position, block in zip(positions, blocks, strict=True):
        out[within(part, every[position])] = block
    return out


def within(part: tuple[slice, ...], block: tuple[slice, ...]) -> tuple[slice, ...]:
    """Where `block` (of the whole array) lies in `part` (a box of it holding it)."""
    return tuple(slice(b.start - p.start, b.stop - p.start)
                 for p, b in zip(part, block, strict=True))


def SingleDevice(device) -> NamedSharding:
    """An array on one device (not split, no copies): a mesh of that device alone."""
    return NamedSharding(Mesh([device], ("device",)), PartitionSpec())


def _device_name(mesh: Mesh) -> str:
    device = mesh.device_list[0]
    return f"{getattr(device, 'platform', 'device')}:{device.id}"


def candidate_specs(mesh: Mesh, rank: int):
    """Every PartitionSpec of an array of `rank` over `mesh` that splits each dimension over
    at most one axis (how a sharding XLA chose for a result is named back)."""
    choices = [None, *range(rank)]
    for assignment in itertools.product(choices, repeat=len(mesh.axis_names)):
        dims: list = [[] for _ in range(rank)]
        for name, dim in zip(mesh.axis_names, assignment, strict=True):
            if dim is not None:
                dims[dim].append(name)
        yield PartitionSpec(*[tuple(d) if len(d) > 1 else (d[0] if d else None)
                              for d in dims])


def constrain(x, spec):
    """`x`, laid out as `spec` says (a PartitionSpec over the program's mesh, or a
    NamedSharding) where the program is partitioned: XLA's partitioner moves it there (its
    collectives show in the report). It computes nothing: run as plain Python, or in a
    program of one device, it is `x`."""
    if isinstance(spec, NamedSharding):
        spec = spec.spec
    elif not isinstance(spec, PartitionSpec):
        spec = PartitionSpec(*spec) if isinstance(spec, (tuple, list)) else PartitionSpec(spec)
    if not isinstance(x, Tracer):
        return x
    spec.axes(len(x.shape))         # (more dimensions than x has: refused here)
    return bind(sharding_constraint_p, x, spec=tuple(spec))
