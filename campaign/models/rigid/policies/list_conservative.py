"""Conservative backfilling over a list order: every waiting job holds a reservation; a pass
that recomputes the order rebuilds them all in L order; a pass after a job ended (or with a
running job past its estimate, or after a rebuild) compresses them in order of reservation
start (ties: position in L) and starts the jobs due (list-scheduling.md section 3).

Between two recomputations L only loses started jobs and gains newcomers at its end, so a
rank fixed when a job enters L (its position in the computed order, or the next number for a
newcomer) sorts as its position in L does. With the reservations keyed by rank, the rules
are conservative backfilling's (ties by arrival there, by rank here), and its incremental
profile and compression serve unchanged; a recomputation renumbers the ranks and rebuilds
every reservation. ``Options.reference`` gives the literal rendering
(``list_conservative_literal``), which re-derives every reservation at every such pass.
"""

from __future__ import annotations

from bisect import bisect_right

from campaign.models.rigid.policies.base import Options, Policy
from campaign.models.rigid.policies.conservative import Conservative
from campaign.models.rigid.policies.list_conservative_literal import LiteralListConservative
from campaign.models.rigid.policies.listed import ListPolicy

_LAST = float("inf")
"""Sorts after every rank: (t, _LAST) bisects past all entries (t, rank)."""


class ListConservative(ListPolicy, Conservative):
    name = "list_conservative"
    mode = "conservative"

    @classmethod
    def create(cls, site, options: Options) -> Policy:
        if options.reference:
            return LiteralListConservative(site, options)
        return cls(site, options)

    def __init__(self, site, options: Options) -> None:
        super().__init__(site, options)
        self.jobs: list[int] | None = None
        """The job of every rank (None for the FCFS order, where the rank is the job)."""
        if self._ordering is not None:
            self.jobs = []
            self.size = []
            self.estimate = []
        self._ended = True
        """Whether a job ended since the last compression: without an end, a rebuild, a
        running job past its estimate or a waiting job of no duration (``_instants``), a
        compression moves nothing, so it is skipped."""

    def submitted(self, job: int, t: float) -> None:
        ListPolicy.submitted(self, job, t)
        jobs = self.jobs
        if jobs is None:
            Conservative.submitted(self, job, t)
            return
        jobs.append(job)
        self.size.append(self.site.size[job])
        self.estimate.append(self.site.estimate[job])
        Conservative.submitted(self, len(jobs) - 1, t)

    def completed(self, job: int, t: float, planned: float) -> None:
        Conservative.completed(self, job, t, planned)
        self._ended = True

    def _rebook(self, listing: list[int], t: float) -> None:
        """Drop every reservation, number the jobs of L by position and book them in turn,
        each at its earliest start given the running jobs and the jobs booked before it.

        The compression the rule asks for next moves nothing when every job lasts: a job's
        start s was the earliest given the jobs booked before it in L; every earlier start
        failed at an instant before s (after s the job fits by its own booking), and the jobs
        before it in L but after it in order of start hold nothing before s, so the start is
        still the earliest given the jobs before it in that order. A job of no duration holds
        nothing at its instant, so a job booked after it may take it: then the literal
        compression follows (``_instants``)."""
        site = self.site
        size = [site.size[job] for job in listing]
        estimate = [site.estimate[job] for job in listing]
        self.jobs = list(listing)
        self.size = size
        self.estimate = estimate
        profile = self.profile
        profile.reset(t, site.free, site.ends, site.size)
        reservation = {}
        for rank in range(len(listing)):
            begin = profile.earliest(size[rank], estimate[rank])
            profile.add(begin, estimate[rank], -size[rank])
            reservation[rank] = begin
        self.reservation = reservation
        self._order = sorted((begin, rank) for rank, begin in reservation.items())
        self._freed.clear()
        self._rebuild = False
        self._instants = {rank for rank in reservation if estimate[rank] <= 0}

    def select(self, t: float) -> list[int]:
        site = self.site
        listing = self.listing(t)
        if self.recomputed:
            self._rebook(listing, t)
        self.profile.prune(t)
        ends = site.ends
        instants = self._instants
        if instants:
            instants.intersection_update(self.reservation)
        if self.recomputed or self._ended or (ends and ends[0][0] < t) or instants:
            self._compress(t)
            self._ended = False
        order = self._order
        due = bisect_right(order, (t, _LAST))
        started = []
        if due:
            reservation = self.reservation
            jobs = self.jobs
            size = site.size
            waiting = []
            for rank in sorted(rank for _, rank in order[:due]):  # L order
                job = rank if jobs is None else jobs[rank]
                if size[job] <= site.free:
                    site.start_job(job, t)
                    del reservation[rank]
                    started.append(job)
                else:
                    # Only possible when a running job overran its estimate: the next
                    # compression re-inserts every job.
                    self._rebuild = True
                    waiting.append((reservation[rank], rank))
            order[:due] = sorted(waiting)
        return self.started(listing, started)
