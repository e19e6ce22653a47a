"""What each thunk of XLA:CPU's runtime took in one profiled call, read from the plane of
jaxlib's profile that compile/xla/ hands over (no jaxlib import here)."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ThunkEvent:
    """One run of one thunk: `name` is the HLO instruction it runs (a fusion, a loop, ...)."""
    name: str
    start_ns: int
    duration_ns: int
    device: int = 0     # the device (ordinal) whose run it is: a partitioned program has one
                        # run per device


@dataclass(frozen=True)
class ThunkTrace:
    """The thunk events of one module seen by one profiler session. `note` says in one line
    why there are none (no profiler, another session active, ...) or what was left unread."""
    events: tuple[ThunkEvent, ...] = ()
    note: str | None = None


def thunk_events(plane, module: str, max_events: int) -> ThunkTrace:
    """The events of HLO module `module` on the profile's CPU plane (None: no such plane),
    at most `max_events` of them; the note says what was left unread, or why none."""
    events, left = [], 0
    for line in plane.lines if plane is not None else ():
        for event in line.events:
            stats = dict(event.stats)
            if stats.get("hlo_module") != module or "hlo_op" not in stats:
                continue
            if len(events) >= max_events:
                left += 1
                continue
            events.append(ThunkEvent(str(stats["hlo_op"]), int(event.start_ns),
                                     int(event.duration_ns),
                                     int(stats.get("device_ordinal", 0))))
    if not events:
        return ThunkTrace(note="jaxlib's profiler recorded no kernel of this program")
    note = f"{left:,} kernel runs past the budget of {max_events:,} were not read" \
        if left else None
    return ThunkTrace(tuple(events), note)


CPU_PLANE = "/host:CPU"     # the plane of jaxlib's profile where XLA:CPU's thunks run


def thunk_trace(read_xspace, data: bytes, module: str, max_events: int) -> ThunkTrace:
    """The thunk events of HLO module `module` in a serialized profile (`read_xspace`: jaxlib's
    reader of one, handed over by compile/xla/), at most `max_events`."""
    try:
        plane = read_xspace(data).find_plane_with_name(CPU_PLANE)
    except Exception as err:    # jaxlib's own error type for a profile it cannot read
        return ThunkTrace(note=f"jaxlib's profile could not be read ({err})")
    return thunk_events(plane, module, max_events)


COLLECTIVE_THUNKS = ("all-reduce", "all-gather", "reduce-scatter", "all-to-all",
                     "collective-permute")


@dataclass(frozen=True)
class DeviceTime:
    """One device's share of a partitioned run: the time its kernels took, and of it the
    time in collectives (which includes waiting there for the other devices)."""
    device: int
    busy_ns: int
    collective_ns: int

    @property
    def collective_share(self) -> float:
        return self.collective_ns / self.busy_ns if self.busy_ns else 0.0


def device_times(trace: ThunkTrace) -> tuple[DeviceTime, ...]:
    """Per device (by ordinal), what its run's kernels took and the collectives' part."""
    busy: dict[int, list[int]] = {}
    for event in trace.events:
        totals = busy.setdefault(event.device, [0, 0])
        totals[0] += event.duration_ns
        if event.name.startswith(COLLECTIVE_THUNKS):
            totals[1] += event.duration_ns
    return tuple(DeviceTime(d, b, c) for d, (b, c) in sorted(busy.items()))
