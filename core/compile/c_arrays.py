"""Array work in host loops: each rule writes one equation on arrays of static shapes as C
loops over the elements. A rule is `rule(em, eqn)`, `em` the `loop_c.Emitter` that holds the
loop's values (not imported here: loop_c imports this table).

Elementwise equations apply the scalar rule of `c_rules` to each element; they, slices,
broadcasts, iotas and concatenations make formulas (`Emitter.lazy`: c_values.Lazy), which
the equation reading them computes in its own loop. Sums and products
(`reduce_sum`, `dot_general`, `window_dot`, `window_matvec`) add their terms one at a time
in row-major order from +0.0, without fused multiply-adds: the order is neither NumPy's
(pairwise, or BLAS's) nor XLA's, so their last bits may differ from both, as XLA's already
differ from NumPy's (README, "What works"); integer ones are exact. Index arguments are
clamped into range as XLA clamps them (`dynamic_slice`, `dynamic_update_slice`, a line of
`window_dot`), and windows clipped as their primitives say.
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from ..ir import Eqn, ShapedArray
from .c_rules import SCALAR_RULES, Refused, ctype, expression, literal
from .c_values import Array


def _elementwise(em, eqn: Eqn) -> None:
    name, out = eqn.prim.name, eqn.outs[0]
    for a in eqn.inputs:
        if em.is_array(a) and a.aval.shape != out.aval.shape:
            raise Refused(f"`{name}` of shapes {a.aval.shape} and {out.aval.shape}")
    operands = [em.readable(a) if em.is_array(a) else em.scalar(a) for a in eqn.inputs]
    em.lazy(out, lambda idx: expression(eqn, [o.at(idx) if not isinstance(o, str) else o
                                              for o in operands]), eqn.inputs)


def _view(em, eqn: Eqn) -> None:
    """reshape and friends: the same elements in the same order (of a formula, only where
    the shapes differ by axes of length 1)."""
    x, out = eqn.inputs[0], eqn.outs[0]
    source = em.readable(x)
    if isinstance(source, Array):
        em.bind(out, source)
        return
    kept = [d for d, n in enumerate(x.aval.shape) if n != 1]
    if [n for n in x.aval.shape if n != 1] != [n for n in out.aval.shape if n != 1]:
        em.bind(out, em.array(x))
        return
    out_kept = [d for d, n in enumerate(out.aval.shape) if n != 1]

    def element(idx):
        at = ["0"] * x.aval.ndim
        for d, e in zip(kept, out_kept, strict=True):
            at[d] = idx[e]
        return source.at(at)
    em.lazy(out, element, [x])


def _broadcast(em, eqn: Eqn) -> None:
    x, out = eqn.inputs[0], eqn.outs[0]
    dims = eqn.params["broadcast_dimensions"]
    if not em.is_array(x):
        value = em.scalar(x)
        em.lazy(out, lambda idx: value, [])
        return
    source = em.readable(x)
    em.lazy(out, lambda idx: source.at([idx[d] if n != 1 else "0"
                                        for d, n in zip(dims, x.aval.shape, strict=True)]),
            [x])


def _iota(em, eqn: Eqn) -> None:
    out, d = eqn.outs[0], eqn.params["dimension"]
    em.lazy(out, lambda idx: f"({ctype(out.aval)})({idx[d]})", [])


_INDEX = ShapedArray((), np.dtype(np.int64))


def _clamped_starts(em, shape, starts, sizes) -> list[str]:
    """The start of a window of `sizes` in `shape`, each moved into range as XLA moves it."""
    return [em.declare(_INDEX, f"psc_clamp((int64_t)({em.scalar(s)}), {int(d) - int(n)})")
            for s, d, n in zip(starts, shape, sizes, strict=True)]


def _dynamic_slice(em, eqn: Eqn) -> None:
    x, *starts = eqn.inputs
    out = eqn.outs[0]
    if not em.is_array(x):
        em.bind(out, em.scalar(x))
        return
    begin = _clamped_starts(em, x.aval.shape, starts, eqn.params["slice_sizes"])
    _copy_window(em, x, out, lambda idx: [f"{b} + {i}" for b, i in zip(begin, idx, strict=True)])


def _slice(em, eqn: Eqn) -> None:
    x, out = eqn.inputs[0], eqn.outs[0]
    if not em.is_array(x):
        em.bind(out, em.scalar(x))
        return
    starts, strides = eqn.params["start_indices"], eqn.params["strides"]
    _copy_window(em, x, out, lambda idx: [
        f"{int(s)} + {i} * {int(st)}" for s, i, st in zip(starts, idx, strides, strict=True)])


def _copy_window(em, x, out, where: Callable) -> None:
    """`out` made of `x`'s elements: result index -> `where(index)` in x."""
    source = em.readable(x)
    if not em.is_array(out):
        em.bind(out, em.declare(out.aval, source.at(where(["0"] * len(source.shape)))))
        return
    em.lazy(out, lambda idx: source.at(where(idx)), [x])


def _dynamic_update_slice(em, eqn: Eqn) -> None:
    x, update, *starts = eqn.inputs
    out = eqn.outs[0]
    if not em.is_array(x):                # the whole of a one-element value
        em.bind(out, em.scalar(update))
        return
    target = em.array(x)
    if not target.storage.writable:
        raise Refused("a write to an array the loop only reads")
    begin = _clamped_starts(em, x.aval.shape, starts, update.aval.shape)
    em.before_write(target.storage)
    if em.is_array(update):
        source = _apart_from(em, update, target)
        with em.loops(update.aval.shape) as idx:
            em.emit(f"{target.at([f'{b} + {i}' for b, i in zip(begin, idx, strict=True)])} = "
                    f"{source.at(idx)};")
    else:
        em.emit(f"{target.at(begin)} = {em.scalar(update)};")
    em.written(out, target)


def _apart_from(em, atom, target: Array):
    """An operand written into `target`'s storage, as it was before the write: a copy when
    it is a view of that storage (a formula reading it was written out by `before_write`)."""
    source = em.readable(atom)
    if isinstance(source, Array) and source.storage is target.storage:
        return em.copy(source)
    return source


def _concatenate(em, eqn: Eqn) -> None:
    out, axis = eqn.outs[0], eqn.params["dimension"]
    pieces, starts, at = [], [], 0
    for piece in eqn.inputs:
        pieces.append(em.readable(piece) if em.is_array(piece) else em.scalar(piece))
        starts.append(at)
        at += piece.aval.shape[axis]

    def element(idx):           # (the piece is known when the index along the axis is)
        position = idx[axis]
        options = []
        for k, (piece, start) in enumerate(zip(pieces, starts, strict=True)):
            n = eqn.inputs[k].aval.shape[axis]
            inner = list(idx)
            inner[axis] = f"({position}) - {start}" if start else position
            value = piece if isinstance(piece, str) else piece.at(inner)
            if position.isdigit():
                if start <= int(position) < start + n:
                    return value
                continue
            options.append((start + n, value))
        text = options[-1][1]
        for end, value in reversed(options[:-1]):
            text = f"(({position}) < {end} ? {value} : {text})"
        return text
    em.lazy(out, element, eqn.inputs)


def _rev(em, eqn: Eqn) -> None:
    x, dims = eqn.inputs[0], eqn.params["dimensions"]
    _copy_window(em, x, eqn.outs[0], lambda idx: [
        f"{n - 1} - {i}" if d in dims else i
        for d, (i, n) in enumerate(zip(idx, x.aval.shape, strict=True))])


def _pad(em, eqn: Eqn) -> None:
    x, value = eqn.inputs
    out, p = eqn.outs[0], eqn.params
    target = em.new_array(out.aval)
    fill = em.scalar(value)
    with em.loops((out.aval.size,)) as (k,):
        em.emit(f"{target.storage.pointer}[{k}] = {fill};")
    if x.aval.size:
        source = em.array(x) if em.is_array(x) else None
        with em.loops(x.aval.shape) as idx:
            place = [f"{int(lo)} + {i} * {int(it) + 1}"
                     for i, lo, it in zip(idx, p["low"], p["interior"], strict=True)]
            inside = " && ".join(f"({q}) >= 0 && ({q}) < {n}"
                                 for q, n in zip(place, out.aval.shape, strict=True)) or "1"
            element = source.at(idx) if source is not None else em.scalar(x)
            em.emit(f"if ({inside}) {target.at(place)} = {element};")
    em.bind(out, target)


def _transpose(em, eqn: Eqn) -> None:
    perm = eqn.params["permutation"]

    def place(idx):         # source axis perm[d] runs with the result's axis d
        at = [""] * len(perm)
        for d, p in enumerate(perm):
            at[p] = idx[d]
        return at
    _copy_window(em, eqn.inputs[0], eqn.outs[0], place)


def _point(em, indices, row: list[str], x_shape, k: int) -> tuple[list[str], str]:
    """The k indexed places of one row of gather/scatter's indices, clipped into x (and
    whether all were in range before clipping)."""
    ind = em.readable(indices) if em.is_array(indices) else None
    raw = [ind.at(row + [str(d)]) if ind is not None else em.scalar(indices)
           for d in range(k)]
    inside = " && ".join(f"({r}) >= 0 && ({r}) < {x_shape[d]}" for d, r in enumerate(raw))
    return [f"psc_clamp((int64_t)({r}), {x_shape[d] - 1})" for d, r in enumerate(raw)], \
        inside or "1"


def _gather(em, eqn: Eqn) -> None:
    x, indices = eqn.inputs
    out, k = eqn.outs[0], eqn.params["num_indexed"]
    source = em.readable(x)
    batch = indices.aval.shape[:-1]
    target = em.new_array(out.aval) if em.is_array(out) else None
    with em.loops(out.aval.shape) as idx:
        place, _ = _point(em, indices, list(idx[:len(batch)]), x.aval.shape, k)
        value = source.at(place + list(idx[len(batch):]))
        if target is None:
            em.bind(out, em.declare(out.aval, value))
            return
        em.emit(f"{target.at(idx)} = {value};")
    em.bind(out, target)


def _scatter(em, eqn: Eqn) -> None:
    """Each update in order, into x's storage (in place): set (the last of equal indices
    wins, as NumPy's assignment), add (one at a time, as np.add.at), or drop an update whose
    index is out of range ("drop")."""
    x, indices, updates = eqn.inputs
    out, p = eqn.outs[0], eqn.params
    k, mode = p["num_indexed"], p["mode"]
    target = em.array(x)
    if not target.storage.writable:
        raise Refused("a write to an array the loop only reads")
    em.before_write(target.storage)
    source = _apart_from(em, updates, target) if em.is_array(updates) else None
    batch = indices.aval.shape[:-1]
    aval = x.aval.update(shape=())
    with em.loops(updates.aval.shape) as idx:
        place, inside = _point(em, indices, list(idx[:len(batch)]), x.aval.shape, k)
        cell = target.at(place + list(idx[len(batch):]))
        value = source.at(idx) if source is not None else em.scalar(updates)
        if mode == "add":
            value = SCALAR_RULES["add"](cell, value, [aval, aval], aval)
        guard = f"if ({inside}) " if mode == "drop" else ""
        em.emit(f"{guard}{cell} = {value};")
    em.written(out, target)


_REDUCE = {"reduce_sum": ("add", "zero"), "reduce_prod": ("multiply", "one"),
           "reduce_max": ("maximum", "lowest"), "reduce_min": ("minimum", "highest"),
           "reduce_and": ("logical_and", "one"), "reduce_or": ("logical_or", "zero")}


def _start(kind: str, dtype: np.dtype) -> str:
    if kind == "zero":
        return literal(0, dtype)
    if kind == "one":
        return literal(1, dtype)
    if dtype.kind == "f":
        return literal(-np.inf if kind == "lowest" else np.inf, dtype)
    info = np.iinfo(dtype)
    return literal(info.min if kind == "lowest" else info.max, dtype)


def _reduce(em, eqn: Eqn) -> None:
    x, out = eqn.inputs[0], eqn.outs[0]
    op, start = _REDUCE[eqn.prim.name]
    if (x.aval.dtype == np.bool_) != (op in ("logical_and", "logical_or")):
        raise Refused(f"`{eqn.prim.name}` of {x.aval.dtype}")
    if not em.is_array(x):             # one element: NumPy's one step from its start value
        aval = x.aval.update(shape=())
        em.bind(out, em.declare(out.aval, SCALAR_RULES[op](_start(start, aval.dtype),
                                                           em.scalar(x), [aval, aval], aval)))
        return
    axes = set(eqn.params["axes"])
    kept = [d for d in range(x.aval.ndim) if d not in axes]
    rule, aval = SCALAR_RULES[op], x.aval.update(shape=())
    source = em.array(x)
    if op == "add" and aval.dtype.kind == "f" and axes == set(range(len(kept), x.aval.ndim)):
        _pairwise_rows(em, source, out, len(kept))
        return
    if em.is_array(out):
        target = em.new_array(out.aval)
        with em.loops((out.aval.size,)) as (k,):
            em.emit(f"{target.storage.pointer}[{k}] = {_start(start, x.aval.dtype)};")
        with em.loops(x.aval.shape) as idx:
            place = target.at([idx[d] for d in kept])
            em.emit(f"{place} = {rule(place, source.at(idx), [aval, aval], aval)};")
        em.bind(out, target)
        return
    acc = em.fresh("s")
    em.emit(f"{ctype(aval)} {acc} = {_start(start, x.aval.dtype)};")
    with em.loops(x.aval.shape) as idx:
        em.emit(f"{acc} = {rule(acc, source.at(idx), [aval, aval], aval)};")
    em.bind(out, acc)


def _pairwise_rows(em, source, out, n_kept: int) -> None:
    """A float sum over the trailing axes, each row (contiguous) in NumPy's pairwise order
    from +0.0: the sum NumPy's add.reduce makes of a contiguous row, to the bit."""
    rows = int(np.prod(source.shape[:n_kept], dtype=np.int64))
    m = int(np.prod(source.shape[n_kept:], dtype=np.int64))
    dtype = out.aval.dtype.name
    zero = literal(0, out.aval.dtype)
    if not em.is_array(out):
        em.bind(out, em.declare(out.aval, f"{zero} + psc_sum_{dtype}({source.storage.pointer}, "
                                          f"1, {m})"))
        return
    target = em.new_array(out.aval)
    with em.loops((rows,)) as (k,):
        em.emit(f"{target.storage.pointer}[{k}] = {zero} + psc_sum_{dtype}("
                f"{source.storage.pointer} + {k} * {m}, 1, {m});")
    em.bind(out, target)


def _dot(aval, a: str, sa, b: str, sb, n) -> str:
    """+0.0 plus the products of n elements of a and b (addresses, strides), pairwise."""
    return f"{literal(0, aval.dtype)} + psc_dot_{aval.dtype.name}({a}, {sa}, {b}, {sb}, {n})"


def _stride(shape, axis: int) -> int:
    return int(np.prod(shape[axis + 1:], dtype=np.int64))


def _places(ndim: int, batch_dims, free_dims, batch, free) -> list[str]:
    place = ["0"] * ndim
    for d, i in zip(batch_dims, batch, strict=True):
        place[d] = i
    for d, i in zip(free_dims, free, strict=True):
        place[d] = i
    return place


def _dot_general(em, eqn: Eqn) -> None:
    lhs, rhs = eqn.inputs
    out = eqn.outs[0]
    (lc, rc), (lb, rb) = eqn.params["contracting"], eqn.params["batch"]
    if lhs.aval.dtype != out.aval.dtype or rhs.aval.dtype != out.aval.dtype \
            or out.aval.dtype == np.bool_:
        raise Refused("a product of mixed or bool dtypes")
    l_free = [d for d in range(lhs.aval.ndim) if d not in lc and d not in lb]
    r_free = [d for d in range(rhs.aval.ndim) if d not in rc and d not in rb]
    a, b = em.array(lhs), em.array(rhs)
    target = em.new_array(out.aval) if em.is_array(out) else None
    aval = out.aval.update(shape=())
    with em.loops(out.aval.shape) as idx:
        nb, nl = len(lb), len(l_free)
        li = _places(lhs.aval.ndim, lb, l_free, idx[:nb], idx[nb:nb + nl])
        ri = _places(rhs.aval.ndim, rb, r_free, idx[:nb], idx[nb + nl:])
        if len(lc) == 1 and aval.dtype.kind == "f":     # pairwise, as NumPy sums
            total = em.declare(aval, _dot(aval, f"&{a.at(li)}", _stride(a.shape, lc[0]),
                                          f"&{b.at(ri)}", _stride(b.shape, rc[0]),
                                          lhs.aval.shape[lc[0]]))
        else:                                           # term by term (exact for integers)
            total = em.fresh("s")
            em.emit(f"{ctype(aval)} {total} = {literal(0, aval.dtype)};")
            with em.loops([lhs.aval.shape[d] for d in lc]) as ks:
                for dl, dr, k in zip(lc, rc, ks, strict=True):
                    li[dl], ri[dr] = k, k
                term = SCALAR_RULES["multiply"](a.at(li), b.at(ri), [aval, aval], aval)
                em.emit(f"{total} = {SCALAR_RULES['add'](total, term, [aval, aval], aval)};")
        if target is not None:
            em.emit(f"{target.at(idx)} = {total};")
    em.bind(out, target if target is not None else total)


def _line(em, atom, line, at) -> tuple[Callable[[str], str], int]:
    """Window_dot's vector operand: (the address of its element k, the stride between its
    elements): the vector itself, or a line of the matrix (its index clamped)."""
    array = em.array(atom)
    if line is None:
        return (lambda k: f"&{array.at([k])}"), 1
    index = em.declare(at.aval, f"psc_clamp((int64_t)({em.scalar(at)}), "
                                f"{atom.aval.shape[1 - line] - 1})")
    if line == 1:
        return (lambda k: f"&{array.at([index, k])}"), 1
    return (lambda k: f"&{array.at([k, index])}"), atom.aval.shape[1]


def _bounds(em, lo, hi, n: int) -> tuple[str, str]:
    low = em.declare(lo.aval, f"psc_clamp((int64_t)({em.scalar(lo)}), {n})")
    high = em.declare(hi.aval, f"psc_clamp((int64_t)({em.scalar(hi)}), {n})")
    return low, high


def _window_dot(em, eqn: Eqn) -> None:
    a, b, lo, hi, *at = eqn.inputs
    lines, out = eqn.params["lines"], eqn.outs[0]
    ats = iter(at)
    u, su = _line(em, a, lines[0], next(ats) if lines[0] is not None else None)
    v, sv = _line(em, b, lines[1], next(ats) if lines[1] is not None else None)
    n = a.aval.shape[0] if lines[0] is None else a.aval.shape[lines[0]]
    low, high = _bounds(em, lo, hi, n)
    aval = out.aval.update(shape=())
    total = _dot(aval, u(low), su, v(low), sv, f"{high} - {low}")
    em.bind(out, em.declare(aval, f"{high} > {low} ? {total} : {literal(0, aval.dtype)}"))


def _window_matvec(em, eqn: Eqn) -> None:
    a, x, out_lo, out_hi, k_lo, k_hi = eqn.inputs
    transposed, out = eqn.params["transposed"], eqn.outs[0]
    matrix, vector = em.array(a), em.array(x)
    rows, cols = a.aval.shape[::-1] if transposed else a.aval.shape
    ol, oh = _bounds(em, out_lo, out_hi, rows)
    kl, kh = _bounds(em, k_lo, k_hi, cols)
    target = em.new_array(out.aval)
    aval = out.aval.update(shape=())
    zero = literal(0, aval.dtype)
    with em.loops((rows,)) as (i,):
        element = f"&{matrix.at([kl, i] if transposed else [i, kl])}"
        total = _dot(aval, element, a.aval.shape[1] if transposed else 1,
                     f"&{vector.at([kl])}", 1, f"{kh} - {kl}")
        em.emit(f"{target.at([i])} = ({i} >= {ol} && {i} < {oh} && {kh} > {kl}) ? {total} "
                f": {zero};")
    em.bind(out, target)


ARRAY_RULES: dict[str, Callable] = {
    **{name: _elementwise for name in SCALAR_RULES}, "select": _elementwise,
    "reshape": _view, "squeeze": _view, "expand_dims": _view,
    "broadcast_in_dim": _broadcast, "iota": _iota,
    "dynamic_slice": _dynamic_slice, "slice": _slice,
    "dynamic_update_slice": _dynamic_update_slice,
    "concatenate": _concatenate, "rev": _rev, "pad": _pad, "transpose": _transpose,
    "gather": _gather, "scatter": _scatter,
    **{name: _reduce for name in _REDUCE},
    "dot_general": _dot_general, "window_dot": _window_dot, "window_matvec": _window_matvec,
}
