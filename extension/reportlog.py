"""The reports a session keeps (`ReportLog`), bounded however long it runs."""
from __future__ import annotations

from collections import OrderedDict, deque

from .core import RunReport


class ReportLog:
    """The reports a session keeps, bounded however long it runs: the last KEEP_PER_CELL of
    each of the last KEEP_CELLS cells, and the latest timed report of each (cell, signature)
    that left them (for %psc_timings), at most KEEP_TIMED. Iterating gives the timed ones
    first, then each cell's recent ones, oldest first."""
    KEEP_PER_CELL = 3
    KEEP_CELLS = 64
    KEEP_TIMED = 256

    def __init__(self):
        self._recent: OrderedDict[str, deque[RunReport]] = OrderedDict()
        self._timed: OrderedDict[tuple[str, str | None], RunReport] = OrderedDict()

    def add(self, cell: str, report: RunReport) -> None:
        recent = self._recent.pop(cell, None) or deque()
        self._recent[cell] = recent
        recent.append(report)
        while len(recent) > self.KEEP_PER_CELL:
            self._keep_if_timed(recent.popleft())
        while len(self._recent) > self.KEEP_CELLS:
            for old in self._recent.popitem(last=False)[1]:
                self._keep_if_timed(old)

    def _keep_if_timed(self, report: RunReport) -> None:
        if report.timings is not None:
            self._timed.pop((report.name, report.signature), None)
            self._timed[(report.name, report.signature)] = report
            while len(self._timed) > self.KEEP_TIMED:
                self._timed.popitem(last=False)

    def __iter__(self):
        yield from self._timed.values()
        for recent in self._recent.values():
            yield from recent

    def __len__(self) -> int:
        return len(self._timed) + sum(len(recent) for recent in self._recent.values())
