"""Conservative backfilling over a list order, rendered literally (list-scheduling.md section 3):
every waiting job holds a reservation; a pass that recomputes the order rebuilds them all in L
order; a pass after a job ended compresses them in order of reservation start (ties: position
in L) and starts the jobs due.

The reservations are re-derived from the running jobs at every such pass, written for
clarity, not speed: ``list_conservative`` with ``ListOptions(reference=True)``, against which
the fast ``ListConservative`` is checked."""

from __future__ import annotations

from campaign.models.rigid.policies.listed import ListOptions, ListPolicy
from campaign.models.rigid.profile import Profile


class LiteralListConservative(ListPolicy):
    name = "list_conservative"
    mode = "conservative"

    def __init__(self, site, options: ListOptions) -> None:
        super().__init__(site, options)
        self.reservation: dict[int, float] = {}
        """Reservation start per waiting job."""
        self._ended = True
        """Whether a job ended since the last compression: without an end, a rebuild, a
        running job past its estimate or a waiting job of no duration, a compression moves
        nothing (every reservation is where the last one left it, and newcomers were booked
        around them), so it is skipped. A reservation of no duration holds no processors:
        a job booked after it may take its instant and a compression push it back."""

    def completed(self, job: int, t: float, planned: float) -> None:
        self._ended = True

    def _running(self, t: float) -> Profile:
        """The profile of the running jobs alone (each frees its processors at max(s + est,
        t))."""
        site = self.site
        profile = Profile(t, site.free)
        profile.reset(t, site.free, site.ends, site.size)
        return profile

    def _place(self, jobs: list[int], t: float) -> None:
        """Book ``jobs`` in turn, each at its earliest start given the running jobs and the
        jobs booked before it."""
        site = self.site
        size = site.size
        estimate = site.estimate
        reservation = self.reservation
        profile = self._running(t)
        for job in jobs:
            begin = profile.earliest(size[job], estimate[job])
            profile.add(begin, estimate[job], -size[job])
            reservation[job] = begin

    def submitted(self, job: int, t: float) -> None:
        super().submitted(job, t)
        site = self.site
        size = site.size
        estimate = site.estimate
        profile = self._running(t)
        for other, begin in self.reservation.items():
            profile.add(begin, estimate[other], -size[other])
        self.reservation[job] = profile.earliest(size[job], estimate[job])

    def select(self, t: float) -> list[int]:
        site = self.site
        size = site.size
        reservation = self.reservation
        listing = self.listing(t)
        if self.recomputed:
            self._place(listing, t)
        ends = site.ends
        estimate = site.estimate
        if (
            self.recomputed
            or self._ended
            or (ends and ends[0][0] < t)
            or any(estimate[job] <= 0 for job in listing)
        ):
            position = {job: k for k, job in enumerate(listing)}
            self._place(sorted(listing, key=lambda job: (reservation[job], position[job])), t)
            self._ended = False
        started = []
        for job in listing:
            if reservation[job] <= t and size[job] <= site.free:
                site.start_job(job, t)
                del reservation[job]
                started.append(job)
        return self.started(listing, started)
