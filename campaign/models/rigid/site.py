"""One site of identical processors under a local scheduling policy (parallel-jobs.md
section 3).

A :class:`Site` is driven from outside by the event loop: ``submit`` a job when it arrives,
``complete`` it when it ends, and call ``schedule`` once per event time after all completions
and arrivals of that time; it returns the jobs that start now. The site keeps the machine
state and hands every decision to its policy (``policies``). Its state (``queue``, ``start``,
``free``, ``planned_end``, ``running``) is public so that a grid broker driving several sites
from one loop can inspect queues and running jobs before placing a new job.

Jobs are integer indices into per-job sequences shared by all sites of a simulation
(``size``, ``estimate``); the queue is kept in arrival order, which is index order because
jobs are numbered by arrival.
"""

from __future__ import annotations

from bisect import bisect_left, insort
from collections.abc import Sequence

import numpy as np

from campaign.models.rigid.policies import Policy, PolicyOptions, make_policy


class Site:
    """A site with ``processors`` processors and the local scheduling ``policy`` of that name.

    ``rng`` (a ``numpy.random.Generator``, the policy stream) is needed by the policies that
    draw (``random``) only, so every other policy stays deterministic without one.
    ``options``: the policy's own options (``PolicyOptions`` or the subclass the policy
    declares, e.g. ``EasyOptions``, ``ListOptions``); None: its defaults.
    """

    def __init__(
        self,
        processors: int,
        policy: str,
        size: Sequence[int],
        estimate: Sequence[float],
        index: int = 0,
        rng: np.random.Generator | None = None,
        options: PolicyOptions | None = None,
    ) -> None:
        self.processors = int(processors)
        self.index = index
        self.size = size
        self.estimate = estimate
        self.free = self.processors
        self.queue: list[int] = []
        self.start: dict[int, float] = {}
        """Running jobs and their start times."""
        self.ends: list[tuple[float, int]] = []
        """Running jobs sorted by planned end s + est: (planned end, job)."""
        self.jobs_backfilled = 0
        self.ended = 0
        """Jobs ended here so far (a policy's memo can tell whether anything ended since)."""
        self.rng = rng
        """The policy stream (policies that draw)."""
        self.policy = make_policy(policy, self, options)
        if processors <= 0:
            raise ValueError(f"a site needs at least one processor, got {processors}")
        kind = type(self.policy)
        # Hooks a policy does not override are skipped: the event path stays short.
        self._submitted = self.policy.submitted if kind.submitted is not Policy.submitted else None
        self._completed = self.policy.completed if kind.completed is not Policy.completed else None
        self._select = self.policy.select
        self._count = not kind.counts_backfilled
        self.preemptive = kind.preemptive
        """Whether the policy suspends and resumes running jobs (see ``loop.replay``)."""
        self.moves: list[tuple[int, float | None]] = []
        """Jobs suspended (job, None) or resumed (job, time it runs again) since the loop
        last asked."""
        self.alarm: float | None = None
        """When a preemptive policy wants a pass of its own (None: no timer); the policy
        keeps it up to date, and the loop reads it before every event."""

    # ------------------------------------------------------------------ state for brokers
    def planned_end(self, job: int, t: float) -> float:
        """Estimated end of a running job at time t: max(s + est, t)."""
        return max(self.start[job] + self.estimate[job], t)

    def running(self) -> list[int]:
        """Running jobs in order of planned end (ties: job index)."""
        return [job for _, job in self.ends]

    def shadow(self, job: int, t: float) -> tuple[float, int]:
        """Shadow time S of a blocked job and the processors left over at S.

        S is the earliest time >= t at which ``job`` fits, given the planned ends of the
        running jobs; every job planned to end by S counts in the left-over processors.
        """
        need = self.size[job]
        available = self.free
        if available >= need:
            return t, available - need
        ends = self.ends
        size = self.size
        k = 0
        while available < need:
            end, other = ends[k]
            available += size[other]
            k += 1
        shadow = max(end, t)
        while k < len(ends) and ends[k][0] <= shadow:
            available += size[ends[k][1]]
            k += 1
        return shadow, available - need

    def wakeup(self, t: float) -> float | None:
        """When this site wants another pass although no event is left (or None)."""
        return self.policy.wakeup(t) if self.queue else None

    # ------------------------------------------------------------------ events
    def submit(self, job: int, t: float) -> None:
        """A job arrives at this site (before this time's scheduling pass)."""
        self.queue.append(job)
        if self._submitted is not None:
            self._submitted(job, t)

    def complete(self, job: int, t: float) -> None:
        """A running job ends at time t (before this time's arrivals and pass)."""
        begin = self.start.pop(job)
        planned = begin + self.estimate[job]
        del self.ends[bisect_left(self.ends, (planned, job))]
        self.free += self.size[job]
        self.ended += 1
        if self._completed is not None:
            self._completed(job, t, planned)

    def schedule(self, t: float) -> list[int]:
        """One scheduling pass at time t; returns the jobs started now, in start order."""
        if not self.queue and not self.preemptive:
            return []
        started = self._select(t)
        if started:
            queue = self.queue
            k = 0
            while k < len(started) and started[k] == queue[k]:
                k += 1
            del queue[:k]
            if k < len(started):  # else every job started was ahead of those left
                for job in started[k:]:  # the queue is sorted (index order)
                    del queue[bisect_left(queue, job)]
                if queue and self._count:
                    head = queue[0]
                    self.jobs_backfilled += sum(1 for job in started if job > head)
        return started

    def take_moves(self) -> list[tuple[int, float | None]]:
        """The suspensions and resumptions since the last call (a preemptive policy's)."""
        moves = self.moves
        self.moves = []
        return moves

    def start_job(self, job: int, t: float) -> None:
        """Start a queued job now (a policy's pass calls this; the site then dequeues it)."""
        self.free -= self.size[job]
        self.start[job] = t
        insort(self.ends, (t + self.estimate[job], job))
