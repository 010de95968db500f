"""Preemptive FCFS (list-scheduling.md section 5.2): jobs start in arrival order; a wide job
at the head that waited ``delay`` seconds suspends enough running jobs (its victims) and runs
on their processors, alternating with them every ``slice`` seconds for at most
``max_preemptions`` switches. Jobs keep the processors of their first start for life.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from campaign.models.rigid.policies.base import Options, Policy

IDLE, WAIT, RUN_WIDE, RUN_SMALL = "idle", "wait", "run_wide", "run_small"


@dataclass(frozen=True)
class PfcfsParams:
    """The parameters of section 5.2 (defaults: preset pfcfs1)."""

    wide: float = 0.5
    """x: a job is wide iff size > x * processors."""
    max_preemptions: int | None = None
    """n: switches per wide job (None: no limit)."""
    delay: float = 600.0
    """D: wait of a wide job at the head before it preempts."""
    slice: float | None = 600.0
    """G: gang length between switches (None: the delay D)."""
    penalty: float = 0.0
    """s: time a switch costs the jobs it makes run."""
    preempt: str = "greedy"
    """Victims: ``greedy`` (few jobs) or ``all`` (every running job)."""
    wait_half: bool = False
    """Start a wide job's clock only once half the processors are free."""


PRESETS: dict[str, PfcfsParams] = {
    "pfcfs1": PfcfsParams(0.5, None, 600.0, 600.0),
    "pfcfs2": PfcfsParams(0.5, 2, 60.0, 60.0),
    "pfcfs3": PfcfsParams(0.5, 1, 600.0, 600.0),
    "theory": PfcfsParams(0.5, None, 600.0, None, preempt="all", wait_half=True),
}
"""Section 5.4 (theory: the slice is the delay, whatever delay is given)."""


class Pfcfs(Policy):
    name = "pfcfs"
    preemptive = True

    @classmethod
    def create(cls, site, options: Options) -> Policy:
        params = options.pfcfs if options.pfcfs is not None else PRESETS["pfcfs1"]
        return cls(site, params)

    def __init__(self, site, params: PfcfsParams) -> None:
        super().__init__(site)
        self.params = params
        m = site.processors
        self._wide = params.wide * m
        self._limit = math.inf if params.max_preemptions is None else params.max_preemptions
        self.use = [0] * m
        """Running or suspended jobs whose processors include each processor (a wide job
        shares its victims'); a processor is free at 0."""
        self.free = list(range(m))
        """The free processors, ascending."""
        self.procs: dict[int, tuple[int, ...]] = {}
        """Processors of every running or suspended job (h: the ones it runs on)."""
        self.running: dict[int, float] = {}
        """Executing jobs and their first start."""
        self.suspended: set[int] = set()
        self.first: dict[int, float] = {}
        self.mode = IDLE
        self.head: int | None = None
        self.clock: float | None = None
        self.victims: list[int] = []
        self.switches = 0
        self.end = math.inf
        self.last = -math.inf
        self.n_preemptions = 0
        self.preempted: set[int] = set()
        self.segments: dict[int, tuple[tuple, ...]] = {}
        """Per job its executions (begin, end, processors) (end None while it runs)."""

    # ------------------------------------------------------------------ processors
    def _free(self) -> list[int]:
        return self.free

    def _sync(self) -> None:
        self.site.free = len(self.free)

    def _run(self, job: int, at: float) -> None:
        # Tuples, not lists: the collector untracks them, and with one record per job a
        # tracked list each made its passes the largest cost of a run.
        segment = (at, None, self.procs[job])  # a job's processors never change
        parts = self.segments.get(job)
        self.segments[job] = (segment,) if parts is None else parts + (segment,)

    def _stop(self, job: int, t: float) -> None:
        parts = self.segments[job]
        begin, _, procs = parts[-1]
        last = ((begin, t, procs),)
        self.segments[job] = last if len(parts) == 1 else parts[:-1] + last

    def _start(self, job: int, t: float, procs: list[int]) -> None:
        """Start ``job`` from the queue on ``procs`` (the site dequeues it)."""
        self.site.start_job(job, t)
        use = self.use
        taken = False
        for p in procs:
            if not use[p]:
                taken = True
            use[p] += 1
        if taken:
            free = self.free
            if free[: len(procs)] == procs:
                del free[: len(procs)]
            else:
                self.free = [p for p in free if not use[p]]
        self.procs[job] = tuple(procs)
        self.running[job] = t
        self.first[job] = t
        self._run(job, t)

    def _suspend(self, job: int, t: float) -> None:
        del self.running[job]
        self.suspended.add(job)
        self.n_preemptions += 1
        self.preempted.add(job)
        self.site.moves.append((job, None))
        self._stop(job, t)

    def _resume(self, job: int, t: float) -> None:
        at = t + self.params.penalty
        self.suspended.discard(job)
        self.running[job] = self.first[job]
        self.site.moves.append((job, at))
        self._run(job, at)

    # ------------------------------------------------------------------ events
    def completed(self, job: int, t: float, planned: float) -> None:
        del self.running[job]
        self._stop(job, t)
        use = self.use
        back = []
        for p in self.procs.pop(job):
            use[p] -= 1
            if not use[p]:
                back.append(p)
        free = self.free
        if back:  # one merge of two sorted runs, not an insertion per processor
            free += back
            free.sort()
        self.site.free = len(free)

    def _timer(self) -> float | None:
        """The pass the policy asks for (``site.alarm``), after a pass."""
        if self.mode == WAIT and self.clock is not None and self._limit >= 1:
            moment = self.clock + self.params.delay
        elif self.mode in (RUN_WIDE, RUN_SMALL) and self.end < math.inf:
            moment = self.end
        else:
            return None
        return moment if moment > self.last else None

    def _victims(self, need: int) -> list[int]:
        size = self.site.size
        running = self.running
        if self.params.preempt == "all":
            return sorted(running, key=lambda job: (running[job], job))
        candidates = set(running)
        chosen = []
        while need > 0:
            fits = [job for job in candidates if size[job] >= need]
            if fits:
                pick = min(fits, key=lambda job: (size[job], -running[job], -job))
            else:
                pick = max(candidates, key=lambda job: (size[job], running[job], job))
            chosen.append(pick)
            candidates.discard(pick)
            need -= size[pick]
        return chosen

    def _next_end(self, t: float) -> float:
        if self.switches < self._limit:
            return t + (self.params.delay if self.params.slice is None else self.params.slice)
        return math.inf

    def _idle_pass(self, t: float) -> bool:
        """Whether the pass at t would start, suspend and resume nothing (the cheap checks
        of ``select``'s loop, without its set-up)."""
        mode = self.mode
        if mode == IDLE:
            return not self.site.queue
        if mode == WAIT:
            return (
                self.clock is not None
                and self.site.size[self.head] > len(self.free)
                and (self._limit < 1 or t < self.clock + self.params.delay)
            )
        if t >= self.end:
            return False
        if mode == RUN_WIDE:
            return self.head in self.procs
        mine = set(self.procs[self.head])  # RUN_SMALL: does a running job hold h's processors?
        procs = self.procs
        return any(not mine.isdisjoint(procs[job]) for job in self.running)

    def select(self, t: float) -> list[int]:
        self.last = t
        site = self.site
        if self._idle_pass(t):  # the pass at every event: most change nothing
            site.free = len(self.free)
            site.alarm = self._timer()
            return []
        size = site.size
        queue = site.queue
        started: list[int] = []
        m = site.processors
        while True:
            if self.mode == IDLE:
                if len(started) == len(queue):
                    break
                h = queue[len(started)]
                if size[h] <= self._wide:
                    free = self._free()
                    if size[h] > len(free):
                        break
                    self._start(h, t, free[: size[h]])
                    started.append(h)
                    continue
                self.mode, self.head, self.clock = WAIT, h, None
            if self.mode == WAIT:
                h = self.head
                free = self._free()
                if self.clock is None:
                    if self.params.wait_half and len(free) < m / 2:
                        break
                    self.clock = t
                if size[h] <= len(free):
                    self._start(h, t, free[: size[h]])
                    started.append(h)
                    self.mode = IDLE
                    continue
                if self._limit >= 1 and t >= self.clock + self.params.delay:
                    victims = self._victims(size[h] - len(free))
                    for job in victims:
                        self._suspend(job, t)
                    procs = list(free) + [p for job in victims for p in sorted(self.procs[job])]
                    self._start(h, t, sorted(procs[: size[h]]))
                    started.append(h)
                    if self.params.penalty > 0:
                        self._suspend_for_penalty(h, t)
                    self.victims = victims
                    self.switches = 1
                    self.mode = RUN_WIDE
                    self.end = self._next_end(t)
                break
            if self.mode == RUN_WIDE:
                h = self.head
                if h not in self.procs:  # h is done
                    for job in self.victims:
                        self._resume(job, t)
                    self.mode, self.end = IDLE, math.inf
                    continue
                if t >= self.end:
                    self._suspend(h, t)
                    for job in self.victims:
                        self._resume(job, t)
                    self.switches += 1
                    self.mode = RUN_SMALL
                    self.end = self._next_end(t)
                break
            if self.mode == RUN_SMALL:
                h = self.head
                mine = set(self.procs[h])
                holding = [j for j in self.running if mine.intersection(self.procs[j])]
                if not holding:
                    self._resume(h, t)
                    self.mode, self.end = IDLE, math.inf
                    continue
                if t >= self.end:
                    victims = list(self.running) if self.params.preempt == "all" else holding
                    victims.sort(key=lambda job: (self.running[job], job))
                    for job in victims:
                        self._suspend(job, t)
                    self._resume(h, t)
                    self.victims = victims
                    self.switches += 1
                    self.mode = RUN_WIDE
                    self.end = self._next_end(t)
                break
        self._sync()
        site.alarm = self._timer()
        return started

    def _suspend_for_penalty(self, job: int, t: float) -> None:
        """A wide job started by a switch runs from t + penalty (not a preemption)."""
        self.site.moves.append((job, None))
        self.site.moves.append((job, t + self.params.penalty))
        parts = self.segments[job]
        _, end, procs = parts[-1]
        self.segments[job] = parts[:-1] + ((t + self.params.penalty, end, procs),)
