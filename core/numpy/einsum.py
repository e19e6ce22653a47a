"""np.einsum on tracers.

einsum is planned here (diagonals of repeated labels, sums of private labels, pairwise
dot_generals left to right, a final transpose) and checked by NumPy itself: NumPy's einsum
runs once on tiny stand-in arrays whose sizes keep every equality and every size-1 dimension
of the real operands, so errors, the result's dtype and its scalar-or-array type are NumPy's.
"""
from __future__ import annotations

import string

import numpy as np

from ..tracing import Tracer
from .base import (as_array, as_kind, assign_into, convert, dot_general, implements, reshape,
                   stand_in, sum_axes, transpose)
from .matrices import diagonal_last
from .ufuncs import call_ufunc

_SUBLIST_LETTERS = string.ascii_uppercase + string.ascii_lowercase


def _sublist_text(sublist) -> str:
    parts = []
    for s in sublist:
        if s is Ellipsis:
            parts.append("...")
        else:
            i = int(s)
            if not 0 <= i < len(_SUBLIST_LETTERS):
                raise ValueError(f"subscript is not within the valid range [0, 52), got {i}")
            parts.append(_SUBLIST_LETTERS[i])
    return "".join(parts)


def _einsum_arguments(args):
    """(subscripts text, operands) from either of NumPy's calling conventions."""
    if isinstance(args[0], str):
        return args[0].replace(" ", ""), list(args[1:])
    operands = list(args[0::2])
    sublists = list(args[1::2])
    output = None
    if len(args) % 2 == 1:
        output = operands.pop()
    text = ",".join(_sublist_text(s) for s in sublists)
    if output is not None:
        text += "->" + _sublist_text(output)
    return text, operands


def _tokens(term: str) -> list:
    """Labels of one subscript term; '...' stays one token."""
    out, i = [], 0
    while i < len(term):
        if term.startswith("...", i):
            out.append("...")
            i += 3
        else:
            out.append(term[i])
            i += 1
    return out


def _labels(tokens, ndim: int) -> list:
    """Per axis: a letter, or ('...', j) for the j-th broadcast axis counted from the right."""
    if "..." not in tokens:
        return list(tokens)
    at = tokens.index("...")
    n_ell = ndim - (len(tokens) - 1)
    return tokens[:at] + [("...", n_ell - 1 - j) for j in range(n_ell)] + tokens[at + 1:]


def _output_labels(text: str, input_labels) -> list:
    n_ell = max([label[1] + 1 for labels in input_labels for label in labels
                 if isinstance(label, tuple)] or [0])
    ellipsis = [("...", n_ell - 1 - j) for j in range(n_ell)]
    if "->" in text:
        tokens = _tokens(text.split("->")[1])
        return [lab for t in tokens for lab in (ellipsis if t == "..." else [t])]
    letters = [lab for labels in input_labels for lab in labels if not isinstance(lab, tuple)]
    once = sorted(lab for lab in set(letters) if letters.count(lab) == 1)
    return ellipsis + once


def _numpy_check(text, operands, kwargs):
    """Run NumPy's einsum on tiny stand-ins (sizes renumbered, equalities and 0s and 1s kept):
    NumPy raises its own errors; returns its result (for dtype and scalar-or-array type)."""
    sizes = sorted({d for op in operands for d in op.shape} | {0, 1})
    small = {d: i for i, d in enumerate(sizes)}
    stand_ins = [stand_in(tuple(small[d] for d in op.shape), op.dtype) for op in operands]
    checked = {k: v for k, v in kwargs.items() if k in ("dtype", "casting", "optimize")}
    return np.einsum(text, *stand_ins, **checked)


class _Operand:
    def __init__(self, value: Tracer, labels: list):
        self.value, self.labels = value, labels

    def take_diagonals(self):
        while len(set(self.labels)) != len(self.labels):
            label = next(lab for lab in self.labels if self.labels.count(lab) > 1)
            i = self.labels.index(label)
            j = self.labels.index(label, i + 1)
            self.value = diagonal_last(self.value, i, j)
            self.labels = [lab for k, lab in enumerate(self.labels) if k not in (i, j)] + [label]

    def drop_broadcast_axes(self, sizes):
        """A size-1 axis whose label is longer elsewhere: the operand is constant along it."""
        keep = [k for k, lab in enumerate(self.labels)
                if not (self.value.shape[k] == 1 and sizes[lab] != 1)]
        if len(keep) != len(self.labels):
            self.value = reshape(self.value, tuple(self.value.shape[k] for k in keep))
            self.labels = [self.labels[k] for k in keep]

    def sum_out(self, needed):
        axes = [k for k, lab in enumerate(self.labels) if lab not in needed]
        self.value = sum_axes(self.value, axes)
        self.labels = [lab for lab in self.labels if lab in needed]


def _contract(acc: _Operand, other: _Operand, needed) -> _Operand:
    common = [lab for lab in acc.labels if lab in other.labels]
    batch = [lab for lab in common if lab in needed]
    contract = [lab for lab in common if lab not in needed]
    value = dot_general(acc.value, other.value,
                        (tuple(acc.labels.index(c) for c in contract),
                         tuple(other.labels.index(c) for c in contract)),
                        (tuple(acc.labels.index(b) for b in batch),
                         tuple(other.labels.index(b) for b in batch)))
    labels = batch + [lab for lab in acc.labels if lab not in common] + [
        lab for lab in other.labels if lab not in common]
    return _Operand(value, labels)


def _compute_dtype(dtype: np.dtype) -> np.dtype:
    """Bools are summed as integers (then != 0); float16 is accumulated in float32."""
    if dtype == np.bool_:
        return np.dtype(np.int64)
    if dtype == np.float16:
        return np.dtype(np.float32)
    return dtype


@implements(np.einsum)
def np_einsum(*args, out=None, optimize=False, **kwargs):
    unknown = set(kwargs) - {"dtype", "casting", "order"}
    if unknown:
        raise TypeError(f"Did not understand the following kwargs: {sorted(unknown)}")
    text, operands = _einsum_arguments(args)
    operands = [as_array(op) for op in operands]
    reference = _numpy_check(text, operands, dict(kwargs, optimize=optimize))
    dtype = reference.dtype
    result = _einsum_value(text, operands, dtype)
    kind = "array" if isinstance(reference, np.ndarray) else "scalar"
    result = as_kind(result, kind if result.ndim == 0 else "array")
    return assign_into(out, result, "np.einsum(..., out=...)") if out is not None else result


def _einsum_value(text, operands, dtype) -> Tracer:
    terms = text.split("->")[0].split(",")
    compute = _compute_dtype(dtype)
    ops = [_Operand(convert(op, compute), _labels(_tokens(term), op.ndim))
           for op, term in zip(operands, terms, strict=True)]
    output = _output_labels(text, [op.labels for op in ops])
    sizes: dict = {}
    for op in ops:
        op.take_diagonals()
        for lab, d in zip(op.labels, op.value.shape, strict=True):
            if sizes.get(lab, 1) == 1:      # (NumPy checked: the sizes agree or are 1)
                sizes[lab] = d
    for op in ops:
        op.drop_broadcast_axes(sizes)
    acc = ops[0]
    acc.sum_out(set(output).union(*(o.labels for o in ops[1:])))
    for n, op in enumerate(ops[1:], start=1):
        later = set(output).union(*(o.labels for o in ops[n + 1:]))
        op.sum_out(later | set(acc.labels))
        acc = _contract(acc, op, later)
        acc.sum_out(later)
    value = transpose(acc.value, [acc.labels.index(lab) for lab in output])
    if dtype == np.bool_:
        return call_ufunc(np.not_equal, value, np.zeros((), compute))
    return convert(value, dtype)
