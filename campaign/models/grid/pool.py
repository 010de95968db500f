"""One central EASY queue over several machines: job sharing and multi-site co-allocation
(parallel-jobs.md section 6).

A job starts on the BestFit machine (fewest nodes left free; ties lowest index). With
``multisite``, a job no single machine can hold right now but the free nodes of all machines
can is co-allocated: machines by free nodes descending (ties index), all their free nodes, the
last one only what is missing, over at most ``max_parts`` machines; it then runs (and is
planned) ``1 + overhead`` times longer. Only the queue head is protected: a later job starts
iff the head's shadow time (earliest time some placement of the head exists, given planned
ends) does not increase.

With ``place_on_arrival`` (the source's grid scheduler) a job is placed when it arrives: if
a placement exists now it starts at once, even ahead of earlier queued jobs; only a job that
cannot start waits in the EASY queue. Arrivals are placed in arrival order at the start of
the pass of their time, which is the same thing: nothing happens between an arrival and the
pass of its time (the completions of that time come first).
"""

from __future__ import annotations

from collections.abc import Sequence

Parts = tuple[tuple[int, int], ...]


class Pool:
    """Machines of ``machines`` nodes behind one queue; drives like a :class:`Site`."""

    def __init__(
        self,
        machines: Sequence[int],
        size: Sequence[int],
        estimate: Sequence[float],
        multisite: bool = False,
        overhead: float = 0.0,
        max_parts: int | None = None,
        place_on_arrival: bool = False,
    ) -> None:
        self.machines = [int(m) for m in machines]
        self.processors = sum(self.machines)
        self.size = size
        self.estimate = estimate
        self.multisite = multisite
        self.overhead = float(overhead)
        self.max_parts = max_parts if max_parts is not None else len(self.machines)
        self.place_on_arrival = place_on_arrival
        self._arrived: list[int] = []
        """Jobs that arrived since the last pass (with ``place_on_arrival``)."""
        self.free = list(self.machines)
        self.queue: list[int] = []
        self.start: dict[int, float] = {}
        self.parts: dict[int, Parts] = {}
        """Where every started job runs: (machine, nodes) pairs; kept after completion."""
        self.jobs_backfilled = 0
        self._running: dict[int, Parts] = {}

    def factor(self, job: int) -> float:
        """Runtime stretch of a started job: 1 + overhead when co-allocated, else 1."""
        return 1.0 + self.overhead if len(self.parts[job]) > 1 else 1.0

    # ------------------------------------------------------------------ events
    def submit(self, job: int, t: float) -> None:
        self.queue.append(job)
        if self.place_on_arrival:
            self._arrived.append(job)

    def complete(self, job: int, t: float) -> None:
        for machine, nodes in self._running.pop(job):
            self.free[machine] += nodes
        del self.start[job]

    def wakeup(self, t: float) -> None:
        return None

    # ------------------------------------------------------------------ placement
    def placement(self, width: int, free: Sequence[int] | None = None) -> Parts | None:
        """BestFit machine, else (multisite) a co-allocation, else None."""
        free = self.free if free is None else free
        best = -1
        for machine, nodes in enumerate(free):
            if nodes >= width and (best < 0 or nodes < free[best]):
                best = machine
        if best >= 0:
            return ((best, width),)
        if not self.multisite or sum(free) < width:
            return None
        order = sorted(range(len(free)), key=lambda m: (-free[m], m))
        parts = []
        missing = width
        for machine in order[: self.max_parts]:
            take = min(free[machine], missing)
            if take > 0:
                parts.append((machine, take))
                missing -= take
            if missing == 0:
                return tuple(parts)
        return None

    def _fits(self, width: int, free: Sequence[int]) -> bool:
        if max(free) >= width:
            return True
        if not self.multisite:
            return False
        if self.max_parts >= len(free):
            return sum(free) >= width
        return sum(sorted(free, reverse=True)[: self.max_parts]) >= width

    def shadow(self, job: int, t: float, extra: tuple[int, Parts] | None = None) -> float:
        """Earliest time >= t at which the job has a placement, given the planned ends
        max(s + est * stretch, t) of the running jobs (and of ``extra`` started at t)."""
        width = self.size[job]
        free = list(self.free)
        events = []
        for k, parts in self._running.items():
            stretch = 1.0 + self.overhead if len(parts) > 1 else 1.0
            events.append((max(self.start[k] + self.estimate[k] * stretch, t), k, parts))
        if extra is not None:
            k, parts = extra
            stretch = 1.0 + self.overhead if len(parts) > 1 else 1.0
            for machine, nodes in parts:
                free[machine] -= nodes
            events.append((t + self.estimate[k] * stretch, k, parts))
        if self._fits(width, free):
            return t
        events.sort()
        position = 0
        while position < len(events):
            now = events[position][0]
            while position < len(events) and events[position][0] == now:
                for machine, nodes in events[position][2]:
                    free[machine] += nodes
                position += 1
            if self._fits(width, free):
                return now
        raise ValueError(f"job {job} (size {width}) can never run on machines {self.machines}")

    def _begin(self, job: int, parts: Parts, t: float) -> None:
        for machine, nodes in parts:
            self.free[machine] -= nodes
        self.start[job] = t
        self.parts[job] = parts
        self._running[job] = parts

    # ------------------------------------------------------------------ scheduling pass
    def schedule(self, t: float) -> list[int]:
        """EASY pass at time t; returns the jobs started now, in start order."""
        started = self._place_arrivals(t)
        if started:
            placed = set(started)
            self.queue = [job for job in self.queue if job not in placed]
        queue = self.queue
        position = 0
        while position < len(queue):
            parts = self.placement(self.size[queue[position]])
            if parts is None:
                break
            self._begin(queue[position], parts, t)
            started.append(queue[position])
            position += 1
        if position < len(queue) and sum(self.free) > 0:
            head = queue[position]
            limit = self.shadow(head, t)
            for job in queue[position + 1 :]:
                parts = self.placement(self.size[job])
                if parts is None:
                    continue
                stretch = 1.0 + self.overhead if len(parts) > 1 else 1.0
                if t + self.estimate[job] * stretch > limit:
                    if self.shadow(head, t, (job, parts)) > limit:
                        continue
                self._begin(job, parts, t)
                started.append(job)
                if sum(self.free) == 0:
                    break
        if started:
            chosen = set(started)
            self.queue = [job for job in queue if job not in chosen]
            if self.queue:
                first = self.queue[0]
                self.jobs_backfilled += sum(1 for job in started if job > first)
        return started

    def _place_arrivals(self, t: float) -> list[int]:
        """Start every job that arrived at t and has a placement now, in arrival order."""
        started = []
        for job in self._arrived:
            parts = self.placement(self.size[job])
            if parts is not None:
                self._begin(job, parts, t)
                started.append(job)
        self._arrived.clear()
        return started
