"""What a strategy's scores need from one site's running jobs, kept from one arrival to the
next: a site's running jobs change far less often than jobs arrive."""

from __future__ import annotations

from bisect import bisect_left, insort
from collections.abc import Callable, Sequence
from functools import reduce
from operator import add
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from campaign.models.rigid.site import Site


class RunningJobs:
    """One site's running jobs as one strategy scores them, brought up to date from the jobs
    that started or ended there since it was last asked (``key``: jobs ended there, jobs
    running there, changes with every start and end). Each job's term of the strategy's sum
    is ``term(job, start)``; ``size`` and ``estimate`` are the broker's per-job sequences."""

    def __init__(
        self,
        site: Site,
        size: Sequence[int],
        estimate: Sequence[float],
        term: Callable[[int, float], float],
        planned: bool,
        keeps_plan: bool,
    ) -> None:
        self.site = site
        self.size = size
        self.estimate = estimate
        self.term = term
        self.planned = planned
        """Level 3: the running jobs in job order, their planned ends and free processors."""
        self.keeps_plan = keeps_plan
        """MSWCT_w: (planned end, width, estimate) per running job too."""
        self.key = (-1, -1)
        self.begin: dict[int, float] = {}
        """The running jobs seen and their starts."""
        self.jobs: list[int] = []
        """Level 3: the running jobs in job order (the order the plain sums add them)."""
        self.ends: list[tuple[float, int]] = []
        """Level 3: (planned end s + est, processors) ascending: a valid heap as it is."""
        self.free = site.processors
        self.terms: list[float] = []
        """Level 3: per running job in job order, its term of the strategy's sum."""
        self.plan: list[tuple[float, int, float]] = []
        """MSWCT_w: (planned end, processors, estimate) per running job in job order."""
        self.by_start: dict[int, float] = {}
        """Levels 1-2: per running job in start order (the site's order), its term."""
        self._total: float | None = 0.0
        self.queued: tuple | None = None
        """Level 3: the site's queue planned behind the running jobs
        (``Tentative.queued``); LBAL: (key, the site's load)."""

    def update(self) -> RunningJobs:
        site = self.site
        key = (site.ended, len(site.start))
        if key == self.key:
            return self
        self.key = key
        running = site.start
        seen = self.begin
        for job in seen.keys() - running.keys():
            self._remove(job, seen.pop(job))
        new = running.keys() - seen.keys()
        if len(new) > 1:
            new = [job for job in running if job in new]  # the site's (start) order
        for job in new:
            seen[job] = running[job]
            self._add(job, running[job])
        self._total = None
        return self

    def _add(self, job: int, begin: float) -> None:
        if not self.planned:
            self.by_start[job] = self.term(job, begin)
            return
        width = self.size[job]
        end = begin + self.estimate[job]
        self.free -= width
        insort(self.ends, (end, width))
        position = bisect_left(self.jobs, job)
        self.jobs.insert(position, job)
        self.terms.insert(position, self.term(job, begin))
        if self.keeps_plan:
            self.plan.insert(position, (end, width, self.estimate[job]))

    def _remove(self, job: int, begin: float) -> None:
        if not self.planned:
            del self.by_start[job]
            return
        width = self.size[job]
        self.free += width
        del self.ends[bisect_left(self.ends, (begin + self.estimate[job], width))]
        position = bisect_left(self.jobs, job)
        del self.jobs[position]
        del self.terms[position]
        if self.keeps_plan:
            del self.plan[position]

    @property
    def total(self) -> float:
        """MWT family: the running jobs' waits added one by one in job order, from 0.0."""
        if self._total is None:
            self._total = reduce(add, self.terms, 0.0)
        return self._total
