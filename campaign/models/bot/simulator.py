"""Event-driven simulation of a sequence of jobs on the grid.

The simulator owns time, processors, site data servers, the shared link and the copies of
tasks; a heuristic only decides which copy starts where (see heuristics.py). Event times are
computed exactly from rates (no time stepping). Events at one instant are handled in this
order: transfer ends, then compute ends (earliest assignment first, then lowest processor, so
the first of tied copies wins), then availability changes, then the next job's release; the
heuristic is invoked once after all of them.

An optional scheduler latency holds each new copy's processor for a fixed time before its
transfer (or computation) begins; the missing bytes are looked up when it begins.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Protocol

from .availability import Availability, Dedicated
from .link import SharedLink
from .platform import Platform
from .workload import Workload

LINK_BYTES_PER_S = 125_000.0  # 1 Mbps home link

DISPATCH, TRANSFER, COMPUTE, WON, KILLED = "dispatch", "transfer", "compute", "won", "killed"
_COMPUTE_END, _DISPATCHED, _EPOCH = 0, 1, 2


class Copy:
    """One execution of a task (original or replica) on one processor."""

    __slots__ = (
        "task",
        "job",
        "proc",
        "site",
        "assigned",
        "replica",
        "state",
        "bytes",
        "moved",
        "handle",
        "compute_start",
        "work",
        "last",
        "version",
        "ended",
        "whole_file",
        "began",
    )

    def __init__(self, task: int, job: int, proc: int, site: int, assigned: float) -> None:
        self.task = task
        self.job = job
        self.proc = proc
        self.site = site
        self.assigned = assigned
        self.replica = False
        self.state = DISPATCH
        self.bytes = 0.0  # bytes this copy has to move over the link
        self.moved = 0.0  # bytes it did move
        self.handle: list | None = None
        self.compute_start = math.nan
        self.work = 0.0  # reference seconds computed up to ``last``
        self.last = math.nan
        self.version = 0
        self.ended = math.nan
        self.whole_file = False
        self.began = math.nan  # end of the scheduler latency: transfer or computation begins

    def __repr__(self) -> str:
        return (
            f"Copy(job={self.job}, task={self.task}, proc={self.proc}, "
            f"assigned={self.assigned}, ended={self.ended}, state={self.state})"
        )


@dataclass
class JobRecord:
    """What happened to one job of the sequence."""

    release: float
    cost: float  # total cost of its tasks (reference seconds)
    size: float  # total input bytes of its tasks
    end: float = math.nan
    completions: list[float] = field(default_factory=list)  # per task, generation order
    wasted_work: float = 0.0  # reference seconds computed by killed copies
    wasted_bytes: float = 0.0  # bytes moved for copies that did not win
    transferred_bytes: float = 0.0
    copies: int = 0
    replicas: int = 0

    @property
    def makespan(self) -> float:
        return self.end - self.release


@dataclass
class SimResult:
    """The record of a run: one entry per job, every copy in start order."""

    jobs: list[JobRecord]
    copies: list[Copy]
    events: int  # job releases, transfer ends, latency ends, compute ends, kills, epochs
    n_processors: int
    n_sites: int
    n_tasks: int


class Heuristic(Protocol):
    def start_job(self, sim: Simulator) -> None: ...

    def dispatch(self, sim: Simulator) -> None: ...

    def file_arrived(self, sim: Simulator, task: int, site: int) -> None: ...

    def processor_freed(self, sim: Simulator, proc: int) -> None: ...


class Simulator:
    """Runs ``workload``'s job sequence on ``platform`` under ``heuristic``.

    ``placement`` (site -> tasks whose files it already holds) is a warm start; the default is
    empty servers. ``latency`` (s) delays the start of every copy's transfer. Heuristics use
    the read-only state below and ``take_idle``/``start_copy``.
    """

    def __init__(
        self,
        platform: Platform,
        workload: Workload,
        heuristic: Heuristic,
        *,
        link_capacity: float = LINK_BYTES_PER_S,
        placement: Mapping[int, Iterable[int]] | None = None,
        availability: Availability | None = None,
        latency: float = 0.0,
    ) -> None:
        if not latency >= 0:
            raise ValueError("scheduler latency must be >= 0")
        self.latency = float(latency)
        self.platform = platform
        self.workload = workload
        self.heuristic = heuristic
        self.speeds = list(platform.speeds)
        self.proc_site = list(platform.sites)
        self.n_sites = platform.n_sites
        self.n_procs = len(self.speeds)
        self.site_procs = [platform.site_processors(i) for i in range(self.n_sites)]
        self.sizes = list(workload.sizes)
        self.n = len(self.sizes)
        self.link = SharedLink(link_capacity)
        self.availability = availability if availability is not None else Dedicated()

        # Data servers: present[i][t] = 1 when site i holds task t's file; holders[t] sorted.
        self.present = [bytearray(self.n) for _ in range(self.n_sites)]
        self.holders: list[list[int]] = [[] for _ in range(self.n)]
        for site, tasks in (placement or {}).items():
            for t in tasks:
                self._store(t, site)

        # Processors: lazy per-site min-heaps of idle processors (validated by ``is_idle``).
        self.is_idle = bytearray([1]) * self.n_procs
        self.idle_heaps = [list(procs) for procs in self.site_procs]
        self.site_idle = [len(procs) for procs in self.site_procs]
        self.n_idle = self.n_procs
        self.running: list[Copy | None] = [None] * self.n_procs
        self.proc_avail = [1.0] * self.n_procs

        self.now = 0.0
        self._heap: list[tuple] = []
        self._seq = 0
        self.events = 0
        self.copies: list[Copy] = []
        self.records: list[JobRecord] = []
        self.job = -1
        self.active = False

    # ----------------------------------------------------------------- state for heuristics
    def idle_sites(self) -> list[int]:
        return [i for i in range(self.n_sites) if self.site_idle[i]]

    def take_idle(self, site: int) -> int:
        """The lowest-index idle processor of ``site`` (which must have one)."""
        heap = self.idle_heaps[site]
        while True:
            proc = heapq.heappop(heap)
            if self.is_idle[proc]:
                return proc

    def rate(self, proc: int) -> float:
        """Current speed of a processor, background load included."""
        return self.speeds[proc] * self.proc_avail[proc]

    # ------------------------------------------------------------------------- main loop
    def run(self) -> SimResult:
        if self.availability.period is not None:
            self._apply_epoch(0)
            self._push(self.availability.period, _EPOCH, 0.0, 0, 1)
        self._release(0)
        self.heuristic.dispatch(self)
        while self.active:
            t_link = self.link.next_time()
            t_heap = self._heap[0][0] if self._heap else math.inf
            now = min(t_link, t_heap)
            if now == math.inf:
                raise RuntimeError("simulation stalled with unfinished tasks")
            self.now = now
            if t_link <= now:
                for copy in self.link.pop_finished(now):
                    self.events += 1
                    self._transfer_done(copy)
            heap = self._heap
            while heap and heap[0][0] <= now:
                _, kind, _, _, _, payload, version = heapq.heappop(heap)
                if kind == _COMPUTE_END:
                    if payload.state == COMPUTE and payload.version == version:
                        self.events += 1
                        self._compute_done(payload)
                elif kind == _DISPATCHED:
                    if payload.state == DISPATCH:
                        self.events += 1
                        self._begin(payload)
                else:
                    self.events += 1
                    self._apply_epoch(payload)
                    if self.active:  # epoch k begins at k * period exactly
                        start = (payload + 1) * self.availability.period
                        self._push(start, _EPOCH, 0.0, 0, payload + 1)
            if self.active and self.n_idle:
                self.heuristic.dispatch(self)
        return SimResult(self.records, self.copies, self.events, self.n_procs, self.n_sites, self.n)

    def _push(self, time: float, kind: int, assigned: float, proc: int, payload, version=0):
        heapq.heappush(self._heap, (time, kind, assigned, proc, self._seq, payload, version))
        self._seq += 1

    # ------------------------------------------------------------------------ jobs
    def _release(self, job: int) -> None:
        self.events += 1
        self.job = job
        self.active = True
        self.cost = list(self.workload.costs[job])
        self.done = bytearray(self.n)
        self.task_copies: list[list[Copy]] = [[] for _ in range(self.n)]
        self.replicas = [0] * self.n
        self.left = self.n
        self.record = JobRecord(self.now, math.fsum(self.cost), math.fsum(self.sizes))
        self.record.completions = [math.nan] * self.n
        self.records.append(self.record)
        self.heuristic.start_job(self)

    def _job_done(self) -> None:
        self.record.end = self.now
        if self.job + 1 < self.workload.n_jobs:
            self._release(self.job + 1)
        else:
            self.active = False

    # ------------------------------------------------------------------------ copies
    def start_copy(self, task: int, proc: int, whole_file: bool = False) -> Copy:
        """Start a copy of ``task`` on idle processor ``proc`` now. After the scheduler
        latency it moves the bytes of the file missing at its site (all of them when
        ``whole_file``), then computes."""
        if not self.is_idle[proc]:
            raise RuntimeError(f"processor {proc} is busy")
        if self.done[task]:
            raise RuntimeError(f"task {task} already completed")
        site = self.proc_site[proc]
        self.is_idle[proc] = 0
        self.site_idle[site] -= 1
        self.n_idle -= 1
        copy = Copy(task, self.job, proc, site, self.now)
        self.running[proc] = copy
        self.copies.append(copy)
        siblings = self.task_copies[task]  # every copy started stays active until completion
        if siblings:
            copy.replica = True
            self.replicas[task] += 1
            self.record.replicas += 1
        self.record.copies += 1
        siblings.append(copy)
        copy.whole_file = whole_file
        if self.latency > 0:
            copy.state = DISPATCH
            self._push(self.now + self.latency, _DISPATCHED, copy.assigned, proc, copy)
        else:
            self._begin(copy)
        return copy

    def _begin(self, copy: Copy) -> None:
        """Move the missing bytes, or compute at once when there are none."""
        copy.began = self.now
        missing = copy.whole_file or not self.present[copy.site][copy.task]
        copy.bytes = self.sizes[copy.task] if missing else 0.0
        if copy.bytes > 0:
            copy.state = TRANSFER
            copy.handle = self.link.start(self.now, copy.bytes, copy)
        else:
            self._start_compute(copy)

    def _start_compute(self, copy: Copy) -> None:
        copy.state = COMPUTE
        copy.compute_start = self.now
        copy.last = self.now
        end = self.now + self.cost[copy.task] / self.rate(copy.proc)
        self._push(end, _COMPUTE_END, copy.assigned, copy.proc, copy, copy.version)

    def _transfer_done(self, copy: Copy) -> None:
        copy.moved = copy.bytes
        copy.handle = None
        self.record.transferred_bytes += copy.bytes
        if not self.present[copy.site][copy.task]:
            self._store(copy.task, copy.site)
            self.heuristic.file_arrived(self, copy.task, copy.site)
        self._start_compute(copy)

    def _store(self, task: int, site: int) -> None:
        self.present[site][task] = 1
        holders = self.holders[task]
        holders.append(site)
        holders.sort()

    def _compute_done(self, winner: Copy) -> None:
        task = winner.task
        winner.work = self.cost[task]
        winner.state = WON
        winner.ended = self.now
        self.record.completions[task] = self.now
        self.done[task] = 1
        for copy in self.task_copies[task]:
            if copy is not winner:
                self._kill(copy)
        self.task_copies[task] = []
        self._free(winner.proc)
        self.left -= 1
        if self.left == 0:
            self._job_done()

    def _kill(self, copy: Copy) -> None:
        self.events += 1
        record = self.record
        if copy.state == TRANSFER:
            copy.moved = self.link.cancel(self.now, copy.handle)
            copy.handle = None
            record.transferred_bytes += copy.moved
        elif copy.state == COMPUTE:
            copy.work += self.rate(copy.proc) * (self.now - copy.last)
            copy.last = self.now
            record.wasted_work += copy.work
        record.wasted_bytes += copy.moved
        copy.state = KILLED
        copy.ended = self.now
        self._free(copy.proc)

    def _free(self, proc: int) -> None:
        self.running[proc] = None
        self.is_idle[proc] = 1
        site = self.proc_site[proc]
        heapq.heappush(self.idle_heaps[site], proc)
        self.site_idle[site] += 1
        self.n_idle += 1
        self.heuristic.processor_freed(self, proc)

    # ------------------------------------------------------------------------ availability
    def _apply_epoch(self, epoch: int) -> None:
        """Switch to epoch ``epoch``'s availability; running computations keep the work done
        so far and get a new end time."""
        procs, link = self.availability.values(epoch)
        now = self.now
        self.link.set_availability(now, link)
        for proc, copy in enumerate(self.running):
            if copy is not None and copy.state == COMPUTE:
                copy.work += self.rate(proc) * (now - copy.last)
                copy.last = now
            self.proc_avail[proc] = procs[proc]
            if copy is not None and copy.state == COMPUTE:
                copy.version += 1
                left = max(self.cost[copy.task] - copy.work, 0.0)
                end = now + left / self.rate(proc)
                self._push(end, _COMPUTE_END, copy.assigned, proc, copy, copy.version)
