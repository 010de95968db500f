"""Conservative backfilling: every queued job holds a reservation in an availability profile;
the reservations are compressed every pass (parallel-jobs.md section 3)."""

from __future__ import annotations

from campaign.models.rigid.policies.base import Policy, PolicyOptions
from campaign.models.rigid.reservations import open_book


class Conservative(Policy):
    """A job arriving is booked at its earliest feasible start given the running jobs and
    every reservation; a pass re-inserts every queued job in order of reservation start
    (ties: arrival) at its earliest start, then starts the jobs whose reservation is due."""

    name = "conservative"

    def __init__(self, site, reference: bool = False) -> None:
        super().__init__(site)
        self.book = open_book(site, site.size, site.estimate, literal=reference)
        """The reservations, keyed by job (``reference``: the literal compression)."""

    @classmethod
    def create(cls, site, options: PolicyOptions) -> Policy:
        return cls(site, options.reference)

    def submitted(self, job: int, t: float) -> None:
        self.book.book(job, t)

    def completed(self, job: int, t: float, planned: float) -> None:
        self.book.released(t, planned, self.site.size[job])

    def select(self, t: float) -> list[int]:
        site = self.site
        book = self.book
        book.compress(t)
        due = book.due(t)
        if not due:
            return []
        started = []
        size = site.size
        for job in due:  # arrival order
            if size[job] <= site.free:
                site.start_job(job, t)
                book.started(job)
                started.append(job)
            else:
                # Only possible when a running job overran its estimate: plan again next pass.
                book.held(job)
        return started
