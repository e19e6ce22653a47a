"""NumPy's shape functions on tracers: reshape, transpose, concatenate, stack, and kin.

Reshapes, ravels, transposes, flips and broadcasts of a traced array are *views* of it where
NumPy makes views: an in-place update through them reaches the array they came from (see
`tracing.ViewStep`). Whether a reshape or ravel is a view follows NumPy's rule on the array's
memory layout (`layout.Layout`), worked out by arithmetic.
"""
from __future__ import annotations

import operator

import numpy as np

from ..primitives import (broadcast_in_dim_p, complex_p, concatenate_p, imag_p, real_p, rev_p,
                          transpose_p)
from ..layout import Layout, ViewOp
from ..tracing import Tracer, ViewStep, bind, caller_source, entangle
from .base import (as_kind, broadcast_to, convert, ensure_tracer, imag_part, implements,
                   normalize_axes, real_part, reshape, result_type, unsupported)


def _resolve_shape(shape, size: int) -> tuple[int, ...]:
    if isinstance(shape, (int, np.integer)):
        shape = (shape,)
    shape = [operator.index(d) for d in shape]
    if shape.count(-1) > 1:
        raise ValueError("can only specify one unknown dimension")
    if -1 in shape:
        known = int(np.prod([d for d in shape if d != -1], dtype=np.int64))
        if known == 0 or size % known:
            raise ValueError(f"cannot reshape array of size {size} into shape {tuple(shape)}")
        shape[shape.index(-1)] = size // known
    if int(np.prod(shape, dtype=np.int64)) != size:
        raise ValueError(f"cannot reshape array of size {size} into shape {tuple(shape)}")
    return tuple(shape)


def view_answer(a: Tracer, question) -> bool | None:
    """question(layout) for every layout a may have: True or False when they agree, else None
    (NumPy's answer depends on a layout psc_jit does not follow)."""
    a._buffer.trace.root.layout_questions += 1
    answers = {question(layout) for layout in a.possible_layouts()}
    return answers.pop() if len(answers) == 1 else None


def copy_for_view(a: Tracer, value: Tracer, is_view: bool | None, what: str) -> Tracer:
    """value as the fresh C-ordered array NumPy makes when `what` copies; entangled with a when
    NumPy might have made a view instead."""
    result = value.detached("array", c_order=True)
    if is_view is None:
        source = caller_source()
        where = f" at line {source.line}" if source is not None else ""
        entangle(a._buffer, result._buffer, f"{what}{where} is a view or a copy in NumPy "
                 "depending on the memory layout NumPy chose for an earlier result")
    return result


@implements(np.reshape)
def np_reshape(a, shape=None, order="C", *, newshape=None, copy=None):
    if order != "C":
        raise unsupported(f"np.reshape(..., order={order!r})")
    a = ensure_tracer(a)
    shape = _resolve_shape(shape if shape is not None else newshape, a.size)
    is_view = view_answer(a, lambda layout: layout.reshape(shape) is not None)
    if copy is False and is_view is not True:
        if is_view is False:
            raise ValueError("Unable to avoid creating a copy while reshaping.")
        raise unsupported("np.reshape(..., copy=False) of an array whose layout NumPy chose")
    if copy or is_view is not True:
        return copy_for_view(a, reshape(a, shape), None if copy else is_view, "a reshape")
    old_shape = a.shape
    step = ViewStep(read=lambda base: reshape(base, shape),
                    write=lambda base, new: reshape(new, old_shape),
                    op=ViewOp("reshape", shape),
                    describe=f"reshape{shape}")
    return a.view_step(step)


def set_shape(a: Tracer, shape) -> None:
    """`a.shape = shape`: NumPy reshapes the array object itself, without copying, or raises
    AttributeError. The tracer becomes that view (other names of the same object see it; views
    made before keep their shape, as in NumPy)."""
    if a.kind != "array":
        raise AttributeError("attribute 'shape' of 'numpy.generic' objects is not writable")
    if not a.is_view and any(b is a._buffer for b in a._buffer.trace.buffers):
        raise unsupported("setting .shape of an array passed in (it would reshape the "
                          "caller's array)", "reshape a local name instead: x = x.reshape(...)")
    shape = _resolve_shape(shape, a.size)
    settable = view_answer(a, lambda layout: _shape_settable(layout, shape))
    if settable is None:
        raise unsupported("setting .shape of an array whose memory layout NumPy chose",
                          "use x = x.reshape(...)")
    if not settable:
        raise AttributeError("Incompatible shape for in-place modification. Use `.reshape()` "
                             "to make a copy with the desired shape.")
    a.become(np_reshape(a, shape))


def _shape_settable(layout: Layout, shape) -> bool:
    """NumPy sets .shape in place exactly when the reshape needs no copy."""
    return layout.reshape(shape) is not None


@implements(np.ravel)
def np_ravel(a, order="C"):
    """A view only when a is C-contiguous (unlike reshape(-1), which views strided arrays)."""
    if order != "C":
        raise unsupported(f"np.ravel(..., order={order!r})")
    a = ensure_tracer(a)
    is_view = view_answer(a, lambda layout: layout.c_contiguous)
    if is_view is not True:
        return copy_for_view(a, reshape(a, (a.size,)), is_view, "a ravel")
    return np_reshape(a, (a.size,))


def flat_view(a) -> Tracer:
    """`a.flat` as an array: always writes through to a (a flat iterator over any layout)."""
    a = ensure_tracer(a)
    old_shape = a.shape
    step = ViewStep(read=lambda base: reshape(base, (base.size,)),
                    write=lambda base, new: reshape(new, old_shape),
                    op=ViewOp("flat"), describe="flat", exact=False)
    return a.view_step(step)


def _complex_part_view(val, part: str):
    """val.real / val.imag of a complex array: a view, as in NumPy (writes reach val)."""
    prims = {"real": real_p, "imag": imag_p}
    other = "imag" if part == "real" else "real"

    def write(base, new):
        parts = {part: new, other: bind(prims[other], base)}
        return bind(complex_p, parts["real"], parts["imag"])
    step = ViewStep(read=lambda base: bind(prims[part], base), write=write,
                    op=ViewOp(part), describe=part)
    return val.view_step(step)


@implements(np.real)
def np_real(val):
    """val.real: a view of a complex array; val itself otherwise (as in NumPy)."""
    val = ensure_tracer(val)
    if val.kind != "array" or val.dtype.kind != "c":
        return real_part(val)
    return _complex_part_view(val, "real")


@implements(np.imag)
def np_imag(val):
    """val.imag: a view of a complex array; read-only zeros otherwise (as in NumPy)."""
    val = ensure_tracer(val)
    if val.kind != "array":
        return imag_part(val)
    if val.dtype.kind == "c":
        return _complex_part_view(val, "imag")
    step = ViewStep(read=lambda base: imag_part(base), write=read_only,
                    op=ViewOp("imag_of_real"), describe="imag")
    return val.view_step(step)


def transpose_view(a: Tracer, permutation) -> Tracer:
    permutation = tuple(permutation)
    if permutation == tuple(range(a.ndim)):
        return a.view_step(ViewStep(lambda b: b, lambda b, new: new, ViewOp("identity"), "identity"))
    inverse = tuple(np.argsort(permutation))
    step = ViewStep(read=lambda base: bind(transpose_p, base, permutation=permutation),
                    write=lambda base, new: bind(transpose_p, new, permutation=inverse),
                    op=ViewOp("transpose", permutation),
                    describe=f"transpose{permutation}")
    return a.view_step(step)


@implements(np.transpose)
def np_transpose(a, axes=None):
    a = ensure_tracer(a)
    perm = tuple(reversed(range(a.ndim))) if axes is None else normalize_axes(axes, a.ndim)
    if len(perm) != a.ndim:
        raise ValueError("axes don't match array")
    return transpose_view(a, perm)


@implements(np.swapaxes)
def np_swapaxes(a, axis1, axis2):
    a = ensure_tracer(a)
    perm = list(range(a.ndim))
    i, j = normalize_axes((axis1,), a.ndim)[0], normalize_axes((axis2,), a.ndim)[0]
    perm[i], perm[j] = perm[j], perm[i]
    return transpose_view(a, perm)


@implements(np.unstack)
def np_unstack(x, /, *, axis=0):
    """The arrays along `axis`, as NumPy's unstack gives them: views x[..., i, ...]."""
    x = ensure_tracer(x)
    if x.ndim == 0:
        raise ValueError("Input array must be at least 1-d.")
    (ax,) = normalize_axes(axis, x.ndim)
    moved = np_moveaxis(x, ax, 0)
    return tuple(moved[i] for i in range(moved.shape[0]))


@implements(np.moveaxis)
def np_moveaxis(a, source, destination):
    a = ensure_tracer(a)
    src = normalize_axes(source, a.ndim)
    dst = normalize_axes(destination, a.ndim)
    order = [n for n in range(a.ndim) if n not in src]
    for d, s in sorted(zip(dst, src, strict=True)):
        order.insert(d, s)
    return transpose_view(a, order)


@implements(np.expand_dims)
def np_expand_dims(a, axis):
    a = ensure_tracer(a)
    out_ndim = a.ndim + (1 if isinstance(axis, (int, np.integer)) else len(axis))
    axes = normalize_axes(axis, out_ndim)
    shape = iter(a.shape)
    new_shape = tuple(1 if i in axes else next(shape) for i in range(out_ndim))
    return np_reshape(a, new_shape)


@implements(np.squeeze)
def np_squeeze(a, axis=None):
    a = ensure_tracer(a)
    if axis is None:
        axes = tuple(i for i, d in enumerate(a.shape) if d == 1)
    else:
        axes = normalize_axes(axis, a.ndim)
        if any(a.shape[i] != 1 for i in axes):
            raise ValueError("cannot select an axis to squeeze out which has size not equal to one")
    return np_reshape(a, tuple(d for i, d in enumerate(a.shape) if i not in axes))


def read_only(base, new):
    raise ValueError("assignment destination is read-only")


@implements(np.broadcast_to)
def np_broadcast_to(array, shape, subok=False):
    """A read-only view, as in NumPy: it follows later writes to array, and refuses writes."""
    shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
    array = ensure_tracer(array)
    array.layout().broadcast_to(shape)     # NumPy's own error for shapes that do not fit
    step = ViewStep(read=lambda base: broadcast_to(base, shape), write=read_only,
                    op=ViewOp("broadcast_to", shape), describe=f"broadcast{shape}")
    return array.with_kind("array").view_step(step)


@implements(np.atleast_1d)
def np_atleast_1d(*arys):
    out = [np_reshape(a, (1,)) if np.ndim(a) == 0 and not isinstance(a, Tracer) or
           isinstance(a, Tracer) and a.ndim == 0 else ensure_tracer(a) for a in arys]
    return out[0] if len(out) == 1 else out


@implements(np.atleast_2d)
def np_atleast_2d(*arys):
    out = []
    for a in arys:
        a = ensure_tracer(a)
        out.append(np_reshape(a, (1,) * (2 - a.ndim) + a.shape) if a.ndim < 2 else a)
    return out[0] if len(out) == 1 else out


def _common(arrays, dtype=None):
    arrays = [ensure_tracer(a) for a in arrays]
    if not arrays:
        raise ValueError("need at least one array to concatenate")
    dtype = np.dtype(dtype) if dtype is not None else result_type(*arrays)
    return [ensure_tracer(convert(a, dtype)).with_kind("array") for a in arrays]


@implements(np.concatenate)
def np_concatenate(arrays, axis=0, out=None, dtype=None, casting="same_kind"):
    if out is not None:
        raise unsupported("np.concatenate(..., out=...)")
    arrays = _common(arrays, dtype)
    if axis is None:
        arrays = [reshape(a, (a.size,)) for a in arrays]
        axis = 0
    if any(a.ndim == 0 for a in arrays):
        raise ValueError("zero-dimensional arrays cannot be concatenated")
    (ax,) = normalize_axes(axis, arrays[0].ndim)
    if len(arrays) == 1:
        return arrays[0]
    return as_kind(bind(concatenate_p, *arrays, dimension=ax), "array")


@implements(np.stack)
def np_stack(arrays, axis=0, out=None, dtype=None, casting="same_kind"):
    if out is not None:
        raise unsupported("np.stack(..., out=...)")
    arrays = _common(arrays, dtype)
    shapes = {a.shape for a in arrays}
    if len(shapes) != 1:
        raise ValueError("all input arrays must have the same shape")
    (ax,) = normalize_axes(axis, arrays[0].ndim + 1)
    expanded = [reshape(a, a.shape[:ax] + (1,) + a.shape[ax:]) for a in arrays]
    if len(expanded) == 1:
        return as_kind(expanded[0], "array")
    return as_kind(bind(concatenate_p, *expanded, dimension=ax), "array")


@implements(np.hstack)
def np_hstack(tup, dtype=None, casting="same_kind"):
    arrays = [ensure_tracer(a) for a in tup]
    arrays = [reshape(a, (1,)) if a.ndim == 0 else a for a in arrays]
    return np_concatenate(arrays, axis=0 if arrays[0].ndim == 1 else 1, dtype=dtype)


@implements(np.vstack)
def np_vstack(tup, dtype=None, casting="same_kind"):
    arrays = [ensure_tracer(a) for a in tup]
    arrays = [reshape(a, (1,) * (2 - a.ndim) + a.shape) if a.ndim < 2 else a for a in arrays]
    return np_concatenate(arrays, axis=0, dtype=dtype)


@implements(np.column_stack)
def np_column_stack(tup):
    arrays = [ensure_tracer(a) for a in tup]
    arrays = [reshape(a, (a.size, 1)) if a.ndim < 2 else a for a in arrays]
    return np_concatenate(arrays, axis=1)


@implements(np.flip)
def np_flip(m, axis=None):
    """A view, as in NumPy: writing into it writes into m."""
    m = ensure_tracer(m).with_kind("array")
    axes = normalize_axes(axis, m.ndim)
    if m.ndim == 0:                  # NumPy indexes m[()]: a NumPy scalar
        return m.detached().with_kind("scalar")
    if not axes:
        return m.view_step(ViewStep(lambda b: b, lambda b, new: new, ViewOp("identity"), "identity"))
    step = ViewStep(read=lambda base: bind(rev_p, base, dimensions=axes),
                    write=lambda base, new: bind(rev_p, new, dimensions=axes),
                    op=ViewOp("flip", axes), describe=f"flip{axes}")
    return m.view_step(step)


@implements(np.fliplr)
def np_fliplr(m):
    return np_flip(m, 1)


@implements(np.flipud)
def np_flipud(m):
    return np_flip(m, 0)


def _full_like(value_of):
    def like(a, *args, dtype=None, order="K", subok=True, shape=None, **kwargs):
        value, args = value_of(args, kwargs)
        a_dtype = a.dtype if isinstance(a, Tracer) else np.asarray(a).dtype
        dtype = np.dtype(dtype) if dtype is not None else a_dtype
        shape = np.shape(a) if shape is None and not isinstance(a, Tracer) else (
            a.shape if shape is None else ((shape,) if isinstance(shape, int) else tuple(shape)))
        if isinstance(value, Tracer):
            return as_kind(broadcast_to(convert(value, dtype), shape), "array")
        return as_kind(bind(broadcast_in_dim_p, np.asarray(value, dtype), shape=shape,
                            broadcast_dimensions=()), "array")
    return like


implements(np.zeros_like)(_full_like(lambda args, kw: (0, args)))
implements(np.ones_like)(_full_like(lambda args, kw: (1, args)))
implements(np.empty_like)(_full_like(lambda args, kw: (0, args)))
implements(np.full_like)(_full_like(
    lambda args, kw: (args[0] if args else kw.pop("fill_value"), args[1:])))
