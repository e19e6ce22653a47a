"""Lists and dicts read from outside the trace (a global, an attribute, an item), handed to
the traced code as watched copies whose items are read through the recorder
(`reads.Recorder.read`): an item taken by iteration, `sum`, a slice or `.values()` is read as
`item` reads one, and one compared in C (`L.index(v)`, `v in L`) is guarded by value."""
from __future__ import annotations

import operator

from .effects import WatchedDict, WatchedList


class ReadList(WatchedList):
    """A watched list read from outside whose items the code takes without an index (iterating,
    `sum`, `max`, a slice) are read through the recorder (`_psc_item(index, value)`), as
    `item` reads them."""

    def __iter__(self):
        for i in range(len(self)):
            yield self._psc_item(i, list.__getitem__(self, i))

    def __reversed__(self):
        for i in reversed(range(len(self))):
            yield self._psc_item(i, list.__getitem__(self, i))

    def __getitem__(self, index):
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        value = list.__getitem__(self, index)
        return self._psc_item(operator.index(index) % len(self), value)

    def _compared(self) -> list:
        """The items, each guarded by value: what follows compares them in C (`L.index(v)`,
        `v in L`, `L == M`), where no read is seen."""
        for i in range(len(self)):
            self._psc_guard(i, list.__getitem__(self, i))
        return list(list.__iter__(self))

    def index(self, *args):
        return self._compared().index(*args)

    def count(self, value):
        return self._compared().count(value)

    def __contains__(self, value):
        return value in self._compared()

    def __eq__(self, other):
        return self._compared() == other

    def __ne__(self, other):
        return self._compared() != other

    __hash__ = None


class ReadDict(WatchedDict):
    """A watched dict read from outside: its values read through the recorder (its keys are
    guarded already)."""

    def __getitem__(self, key):
        return self._psc_item(key, dict.__getitem__(self, key))

    def get(self, key, default=None):
        return self[key] if key in self else default

    def values(self):
        return [self[k] for k in dict.keys(self)]

    def items(self):
        return [(k, self[k]) for k in dict.keys(self)]
