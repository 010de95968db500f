"""Conservative backfilling over a list order: every waiting job holds a reservation; a pass
that recomputes the order rebuilds them all in L order; a pass after a job ended (or with a
running job past its estimate, or after a rebuild) compresses them in order of reservation
start (ties: position in L) and starts the jobs due (list-scheduling.md section 3).

Between two recomputations L only loses started jobs and gains newcomers at its end, so a
rank fixed when a job enters L (its position in the computed order, or the next number for a
newcomer) sorts as its position in L does. With the reservations keyed by rank, the rules
are conservative backfilling's (ties by arrival there, by rank here), and its reservation
book (``reservations.ReservationBook``) serves unchanged; a recomputation renumbers the ranks
and rebuilds every reservation. ``ListOptions.reference`` gives the literal rendering
(``list_conservative_literal``), which re-derives every reservation at every such pass.
"""

from __future__ import annotations

from campaign.models.rigid.policies.base import Policy
from campaign.models.rigid.policies.list_conservative_literal import LiteralListConservative
from campaign.models.rigid.policies.listed import ListOptions, ListPolicy
from campaign.models.rigid.reservations import open_book


class ListConservative(ListPolicy):
    name = "list_conservative"
    mode = "conservative"

    @classmethod
    def create(cls, site, options: ListOptions) -> Policy:
        if options.reference:
            return LiteralListConservative(site, options)
        return cls(site, options)

    def __init__(self, site, options: ListOptions) -> None:
        super().__init__(site, options)
        self.jobs: list[int] | None = None
        """The job of every rank (None for the FCFS order, where the rank is the job)."""
        if self._ordering is None:
            self.book = open_book(site, site.size, site.estimate)
        else:
            self.jobs = []
            self.book = open_book(site, [], [])
        """The reservations, keyed by rank."""
        self._ended = True
        """Whether a job ended since the last compression: without an end, a rebuild, a
        running job past its estimate or a waiting job of no duration, a compression moves
        nothing, so it is skipped."""

    def submitted(self, job: int, t: float) -> None:
        super().submitted(job, t)
        jobs = self.jobs
        if jobs is None:
            self.book.book(job, t)
            return
        jobs.append(job)
        self.book.append(self.site.size[job], self.site.estimate[job], t)

    def completed(self, job: int, t: float, planned: float) -> None:
        self.book.released(t, planned, self.site.size[job])
        self._ended = True

    def _rebook(self, listing: list[int], t: float) -> None:
        """Number the jobs of L by position and book them in turn, each at its earliest
        start given the running jobs and the jobs booked before it.

        The compression the rule asks for next moves nothing when every job lasts: a job's
        start s was the earliest given the jobs booked before it in L; every earlier start
        failed at an instant before s (after s the job fits by its own booking), and the jobs
        before it in L but after it in order of start hold nothing before s, so the start is
        still the earliest given the jobs before it in that order. A job of no duration holds
        nothing at its instant, so a job booked after it may take it: then the literal
        compression follows (``ReservationBook.has_instants``)."""
        site = self.site
        self.jobs = list(listing)
        size = [site.size[job] for job in listing]
        estimate = [site.estimate[job] for job in listing]
        self.book.rebook(size, estimate, t)

    def select(self, t: float) -> list[int]:
        site = self.site
        book = self.book
        listing = self.listing(t)
        if self.recomputed:
            self._rebook(listing, t)
        ends = site.ends
        instants = book.has_instants()
        if self.recomputed or self._ended or (ends and ends[0][0] < t) or instants:
            book.compress(t)
            self._ended = False
        due = book.due(t)
        started = []
        if due:
            jobs = self.jobs
            size = site.size
            for rank in due:  # L order
                job = rank if jobs is None else jobs[rank]
                if size[job] <= site.free:
                    site.start_job(job, t)
                    book.started(rank)
                    started.append(job)
                else:
                    # Only possible when a running job overran its estimate: the next
                    # compression re-inserts every job.
                    book.held(rank)
        return self.started(listing, started)
