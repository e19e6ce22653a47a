"""The items of the user's mutable containers, saved and put back in place: what a trace must
leave as it found (a helper that adds to a set, a `Counter` or a `deque` of the notebook's
runs once while tracing; the cell then runs again as plain Python, or compiled code could
not make the change again on later runs), and what the timing comparison's plain runs must
leave as the cell's own run left it.

Lists and dicts read from outside are handed to traced code as watched copies
(`effects.watched`), so the user's own never change; these are the containers that are not
(sets, byte arrays, deques, arrays of the `array` module, subclasses of list and dict), the
lists and dicts held in an object's attributes (which library code changes unseen), and
every list and dict a timed run's helpers write into.
"""
from __future__ import annotations

import array
import collections
import operator


def _same_items(a, b) -> bool:
    return len(a) == len(b) and all(x is y for x, y in zip(a, b, strict=True))


def _same_mapping(a, b) -> bool:
    return a.keys() == b.keys() and all(a[k] is b[k] for k in b)


def _put_set(target: set, items: set) -> None:
    set.clear(target)
    set.update(target, items)


def _put_array(target: array.array, items: bytes) -> None:
    del target[:]
    target.frombytes(items)


def _put_deque(target: collections.deque, items: list) -> None:
    collections.deque.clear(target)
    collections.deque.extend(target, items)


def _put_list(target: list, items: list) -> None:
    list.__setitem__(target, slice(None), items)


def _put_dict(target: dict, items: dict) -> None:
    dict.clear(target)
    dict.update(target, items)


def _put_bytes(target: bytearray, items: bytes) -> None:
    bytearray.__setitem__(target, slice(None), items)


# a container type: (a copy of its items, whether the items are still those, put them back),
# each through the base type's own methods (a subclass's overrides are not asked)
_KINDS = (
    (set, set, operator.eq, _put_set),
    (bytearray, bytes, operator.eq, _put_bytes),
    (array.array, array.array.tobytes, operator.eq, _put_array),
    (collections.deque, list, _same_items, _put_deque),
    (list, list, _same_items, _put_list),
    (dict, dict, _same_mapping, _put_dict),
)


class Contents:
    """The items of one mutable container as they are now."""
    __slots__ = ("target", "items", "_same", "_put")

    def __init__(self, target, take, same, put):
        self.target, self.items = target, take(target)
        self._same, self._put = same, put

    def changed(self) -> bool:
        return not self._same(self.target, self.items)

    def put_back(self) -> bool:
        """Put the items back if they changed; whether they had."""
        if not self.changed():
            return False
        self._put(self.target, self.items)
        return True


def contents(value) -> Contents | None:
    """The items of value now, when it is a mutable container (None: it is not one)."""
    for kind, take, same, put in _KINDS:
        if isinstance(value, kind):
            return Contents(value, take, same, put)
    return None
