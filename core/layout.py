"""Memory layouts as arithmetic: where a view's elements are, without any memory behind it.

A `Layout` is what NumPy keeps about an array's memory: shape, strides in bytes, the byte
offset of its first element from its base's first element, and the item size. Whether NumPy
hands back a view or a copy (`a.reshape(...)`, `a.ravel()`) and how a later result is laid out
depend only on these numbers, so psc_jit answers those questions on a Layout, never on an
ndarray built over memory it does not own (reading one element of such an array past its
one-element buffer crashed the kernel).

`ViewOp` names one step from an array to a view of it (an index, a reshape, a transpose, ...)
as data: `on_array` takes it on a real ndarray (rebuilding a returned view of the caller's
array), `on_layout` on a Layout. Both give NumPy's answer, errors included.
"""
from __future__ import annotations

import operator
from dataclasses import dataclass
from typing import Any

import numpy as np


def c_strides_of(shape: tuple[int, ...], itemsize: int) -> tuple[int, ...]:
    """The strides NumPy gives a fresh C-ordered array (axes of length 0 count as 1)."""
    strides, step = [], itemsize
    for n in reversed(shape):
        strides.append(step)
        step *= max(n, 1)
    return tuple(reversed(strides))


@dataclass(frozen=True)
class Layout:
    shape: tuple[int, ...]
    strides: tuple[int, ...]     # bytes
    offset: int = 0              # bytes from the base's first element to this one's
    itemsize: int = 8

    @classmethod
    def c_order(cls, shape, itemsize: int = 1) -> Layout:
        shape = tuple(int(n) for n in shape)
        return cls(shape, c_strides_of(shape, itemsize), 0, itemsize)

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))

    # flags -------------------------------------------------------------------------------
    @property
    def c_contiguous(self) -> bool:
        """NumPy's C_CONTIGUOUS flag: axes of length 1 ignored, any empty array contiguous."""
        if 0 in self.shape:
            return True
        expected = self.itemsize
        for n, stride in zip(reversed(self.shape), reversed(self.strides), strict=True):
            if n != 1:
                if stride != expected:
                    return False
                expected *= n
        return True

    @property
    def in_c_order(self) -> bool:
        """Are the axes laid out in C order (longest stride first, ignoring axes of length 1
        and broadcast axes)? Then NumPy's order='K' gives a result computed from it C order."""
        strides = [abs(s) for s, n in zip(self.strides, self.shape, strict=True) if n > 1 and s]
        return all(a >= b for a, b in zip(strides, strides[1:], strict=False))

    # views -------------------------------------------------------------------------------
    def __getitem__(self, index) -> Layout:
        """Basic indexing (ints, slices, None, Ellipsis) as NumPy does it, errors included."""
        shape, strides, offset = [], [], self.offset
        axis = 0
        for entry in expand_basic_index(index, self.ndim):
            if entry is None:
                shape.append(1)
                strides.append(0)
                continue
            n, stride = self.shape[axis], self.strides[axis]
            if isinstance(entry, slice):
                start, stop, step = entry.indices(n)
                length = len(range(start, stop, step))
                if length == 0:                 # NumPy points an empty slice at the start
                    start, step = 0, 1
                shape.append(length)
                strides.append(stride * step)
                offset += start * stride
            else:
                offset += _wrapped_index(entry, n, axis) * stride
            axis += 1
        return Layout(tuple(shape), tuple(strides), offset, self.itemsize)

    def reshape(self, shape) -> Layout | None:
        """NumPy's reshape (order 'C') as a view, or None when NumPy would copy."""
        shape = tuple(int(n) for n in shape)
        if shape == self.shape:
            return self
        if int(np.prod(shape, dtype=np.int64)) != self.size:
            raise ValueError(f"cannot reshape array of size {self.size} into shape {shape}")
        if self.c_contiguous:
            return Layout(shape, c_strides_of(shape, self.itemsize), self.offset, self.itemsize)
        strides = _nocopy_strides(self, shape)
        return None if strides is None else Layout(shape, strides, self.offset, self.itemsize)

    def reshape_or_copy(self, shape) -> Layout:
        """The layout of np.reshape(a, shape): a view of a, or a fresh C-ordered array."""
        return self.reshape(shape) or Layout.c_order(shape, self.itemsize)

    def transpose(self, axes) -> Layout:
        axes = tuple(axes)
        if sorted(axes) != list(range(self.ndim)):
            raise ValueError("axes don't match array")
        return Layout(tuple(self.shape[i] for i in axes), tuple(self.strides[i] for i in axes),
                      self.offset, self.itemsize)

    def broadcast_to(self, shape) -> Layout:
        """np.broadcast_to's view; NumPy's own ValueError when the shapes do not fit."""
        shape = tuple(int(n) for n in shape)
        if not _broadcasts(self.shape, shape):
            np.broadcast_to(np.broadcast_to(np.zeros((), np.uint8), self.shape), shape)
            raise ValueError(f"cannot broadcast {self.shape} to {shape}")  # NumPy raised above
        lead = len(shape) - self.ndim
        strides = [0] * lead + [0 if n == 1 else s for n, m, s in zip(
            self.shape, shape[lead:], self.strides, strict=True)]
        return Layout(shape, tuple(strides), self.offset, self.itemsize)

    def sliding_window(self, window_shape, axes) -> Layout:
        """sliding_window_view's view: each windowed axis shortened by its window, and one
        axis per window appended, with the stride of the axis it slides along."""
        shape = list(self.shape)
        for w, ax in zip(window_shape, axes, strict=True):
            shape[ax] -= w - 1
        return Layout(tuple(shape) + tuple(window_shape),
                      self.strides + tuple(self.strides[ax] for ax in axes), self.offset,
                      self.itemsize)

    def flip(self, axes) -> Layout:
        """np.flip(a, axes): a[..., ::-1, ...] on each axis."""
        index = tuple(slice(None, None, -1) if i in axes else slice(None)
                      for i in range(self.ndim))
        return self[index]

    @property
    def real(self) -> Layout:
        """The real part of a complex array (the array itself when it is not complex: the
        caller knows the dtype and asks only of complex arrays)."""
        return Layout(self.shape, self.strides, self.offset, self.itemsize // 2)

    @property
    def imag(self) -> Layout:
        half = self.itemsize // 2
        return Layout(self.shape, self.strides, self.offset + half, half)


def _broadcasts(shape, target) -> bool:
    if len(shape) > len(target):
        return False
    return all(n in (1, m) for n, m in zip(reversed(shape), reversed(target), strict=False))


def _nocopy_strides(layout: Layout, shape: tuple[int, ...]) -> tuple[int, ...] | None:
    """NumPy's `_attempt_nocopy_reshape` (C order): strides of the new shape over the same
    memory, or None when the old axes that merge into one new axis are not evenly spaced."""
    old = [(n, s) for n, s in zip(layout.shape, layout.strides, strict=True) if n != 1]
    new_strides = [0] * len(shape)
    oi, oj, ni, nj = 0, 1, 0, 1
    while ni < len(shape) and oi < len(old):
        np_, op = shape[ni], old[oi][0]
        while np_ != op:
            if np_ < op:
                np_ *= shape[nj]
                nj += 1
            else:
                op *= old[oj][0]
                oj += 1
        for k in range(oi, oj - 1):
            if old[k][1] != old[k + 1][0] * old[k + 1][1]:
                return None
        new_strides[nj - 1] = old[oj - 1][1]
        for k in range(nj - 1, ni, -1):
            new_strides[k - 1] = new_strides[k] * shape[k]
        ni, oi = nj, oj
        nj, oj = nj + 1, oj + 1
    last = new_strides[ni - 1] if ni >= 1 else layout.itemsize
    for k in range(ni, len(shape)):
        new_strides[k] = last
    return tuple(new_strides)


# -- basic indices ----------------------------------------------------------------------------

def _is_int(entry) -> bool:
    return isinstance(entry, (int, np.integer)) and not isinstance(entry, (bool, np.bool_))


def expand_basic_index(index, ndim: int) -> tuple:
    """A basic index as one entry per axis (None entries kept): Ellipsis and the missing
    trailing axes become `slice(None)`. NumPy's IndexError when it does not fit."""
    entries = index if isinstance(index, tuple) else (index,)
    for entry in entries:
        if not (entry is None or entry is Ellipsis or isinstance(entry, slice) or _is_int(entry)):
            raise IndexError("only integers, slices (`:`), ellipsis (`...`), numpy.newaxis "
                             "(`None`) and integer or boolean arrays are valid indices")
    if sum(e is Ellipsis for e in entries) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    consumed = sum(e is not None and e is not Ellipsis for e in entries)
    if consumed > ndim:
        raise IndexError(f"too many indices for array: array is {ndim}-dimensional, but "
                         f"{consumed} were indexed")
    fill = (slice(None),) * (ndim - consumed)
    at = next((i for i, e in enumerate(entries) if e is Ellipsis), len(entries))
    return entries[:at] + fill + entries[at + 1:]


def _wrapped_index(entry, n: int, axis: int) -> int:
    i = operator.index(entry)
    if not -n <= i < n:
        raise IndexError(f"index {i} is out of bounds for axis {axis} with size {n}")
    return i % n if n else i


# -- view steps as data -----------------------------------------------------------------------

@dataclass(frozen=True)
class ViewOp:
    """One step from an array to a view of it, taken on an ndarray or on a Layout.

    name: "index" (arg: a basic index), "reshape" (arg: shape), "flat" (arg: None; a view
    only where the reshape is one), "transpose" (arg: axes), "broadcast_to" (arg: shape),
    "flip" (arg: axes), "sliding_window" (arg: (window shape, axes)), "real", "imag" (of a
    complex array), "imag_of_real" (zeros: a fresh array), "dtype" (arg: a dtype of the same
    size: the bytes read as it), "identity"."""
    name: str
    arg: Any = None

    def on_array(self, arr: np.ndarray) -> np.ndarray:
        if self.name == "index":
            return arr[self.arg]
        if self.name == "reshape":
            return np.reshape(arr, self.arg)
        if self.name == "flat":
            return np.reshape(arr, -1)
        if self.name == "transpose":
            return np.transpose(arr, self.arg)
        if self.name == "broadcast_to":
            return np.broadcast_to(arr, self.arg)
        if self.name == "flip":
            return np.flip(arr, self.arg)
        if self.name == "sliding_window":
            return np.lib.stride_tricks.sliding_window_view(arr, *self.arg)
        if self.name in ("real", "imag", "imag_of_real"):
            return arr.real if self.name == "real" else arr.imag
        if self.name == "dtype":
            return arr.view(self.arg)
        return arr.view()                  # "identity": a new array object, as NumPy's view

    def on_layout(self, layout: Layout) -> Layout:
        if self.name == "index":
            return layout[self.arg]
        if self.name == "reshape":
            return layout.reshape_or_copy(self.arg)
        if self.name == "flat":
            return layout.reshape_or_copy((layout.size,))
        if self.name == "transpose":
            return layout.transpose(self.arg)
        if self.name == "broadcast_to":
            return layout.broadcast_to(self.arg)
        if self.name == "flip":
            return layout.flip(self.arg)
        if self.name == "sliding_window":
            return layout.sliding_window(*self.arg)
        if self.name in ("real", "imag"):
            return getattr(layout, self.name)
        if self.name == "imag_of_real":
            return Layout.c_order(layout.shape, layout.itemsize)
        return layout
