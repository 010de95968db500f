"""Conservative backfilling: every queued job holds a reservation in an availability profile;
the reservations are compressed every pass (parallel-jobs.md section 3)."""

from __future__ import annotations

from bisect import bisect_right, insort

from campaign.models.rigid.compression import compress
from campaign.models.rigid.policies.base import Options, Policy
from campaign.models.rigid.profile import Profile

_LAST = float("inf")
"""Sorts after every job index: (t, _LAST) bisects past all entries (t, job)."""


class Conservative(Policy):
    """A job arriving is booked at its earliest feasible start given the running jobs and
    every reservation; a pass re-inserts every queued job in order of reservation start
    (ties: arrival) at its earliest start, then starts the jobs whose reservation is due."""

    name = "conservative"

    def __init__(self, site, reference: bool = False) -> None:
        super().__init__(site)
        self.reference = reference
        """Re-insert every queued job at every pass (the literal definition)."""
        self.reservation: dict[int, float] = {}
        """Reservation start per queued job."""
        self.size = site.size
        self.estimate = site.estimate
        """Width and estimate per reservation key: the job here; a subclass may key its
        reservations otherwise (the key breaks ties of reservation start)."""
        self._order: list[tuple[float, int]] = []
        """The queued jobs in compression order: sorted (reservation start, job)."""
        self.profile = Profile(0.0, site.processors)
        self._freed: list[tuple[float, float, int]] = []
        """Spans [a, b) freed since the last compression, with the most free processors
        they had when freed."""
        self._rebuild = False
        self._instants: set[int] = set()
        """Keys of reservations of no duration (maybe started since): such a reservation
        holds no processors, so a job booked later may take its instant and push it back,
        which only the literal compression follows."""

    @classmethod
    def create(cls, site, options: Options) -> Policy:
        return cls(site, options.reference)

    def submitted(self, job: int, t: float) -> None:
        site = self.site
        profile = self.profile
        profile.prune(t)
        if site.ends and site.ends[0][0] < t:
            self._refresh_profile(t)
        est = self.estimate[job]
        if est <= 0:
            self._instants.add(job)
        begin = profile.book(self.size[job], est)
        self.reservation[job] = begin
        insort(self._order, (begin, job))

    def completed(self, job: int, t: float, planned: float) -> None:
        if t < planned:
            # Ended before its estimate: its processors are free earlier than planned.
            self.profile.prune(t)
            self.profile.add(t, planned - t, self.site.size[job])
            if self.site.queue:  # later arrivals are placed knowing these processors are free
                self._freed.append((t, planned, 0))

    def select(self, t: float) -> list[int]:
        site = self.site
        self.profile.prune(t)
        self._compress(t)
        reservation = self.reservation
        order = self._order
        due = bisect_right(order, (t, _LAST))
        if due == 0:
            return []
        started = []
        waiting = []
        size = site.size
        for job in sorted(job for _, job in order[:due]):  # arrival order
            if size[job] <= site.free:
                site.start_job(job, t)
                del reservation[job]
                started.append(job)
            else:
                # Only possible when a running job overran its estimate: plan again next pass.
                self._rebuild = True
                waiting.append((reservation[job], job))
        order[:due] = sorted(waiting)
        return started

    def _refresh_profile(self, t: float) -> None:
        """Rebuild the profile from the running jobs (ending at max(s + est, t)) and the
        reservations where they stand."""
        site = self.site
        profile = self.profile
        profile.reset(t, site.free, site.ends, site.size)
        for job, begin in self.reservation.items():
            profile.add(begin, self.estimate[job], -self.size[job])

    def _compress(self, t: float) -> None:
        """Re-insert every queued job, in order of reservation start (ties: arrival), at
        its earliest feasible start given the running jobs and the jobs re-inserted before.

        Exact shortcut (``compression.compress``): a job already at its earliest start
        stays there unless processors were freed (an early completion, an earlier job moving
        up) somewhere before its reservation start; such jobs are skipped. A running job
        past its estimate, a reservation left in the past (behind such a job) or a queued
        job of no duration (whose reservation a later one may push back) forces the literal
        re-insertion of all jobs.
        """
        site = self.site
        profile = self.profile
        reservation = self.reservation
        order = self._order
        size = self.size
        estimate = self.estimate
        ends = site.ends
        overran = bool(ends) and ends[0][0] < t
        stale = bool(order) and order[0][0] < t
        instants = self._instants
        if instants:
            instants.intersection_update(reservation)
        if overran or stale or self._rebuild or self.reference or instants:
            profile.reset(t, site.free, ends, site.size)
            for _, job in order:
                begin = profile.earliest(size[job], estimate[job])
                profile.add(begin, estimate[job], -size[job])
                reservation[job] = begin
            self._order = sorted((reservation[job], job) for _, job in order)
            self._freed.clear()
            self._rebuild = False
            self._instants = {job for _, job in order if estimate[job] <= 0}
            return
        # Only points before the last reservation start matter (p < old for every job):
        # bound each span by its current free counts up to there.
        horizon = order[-1][0] if order else t
        most_free = profile.most_free
        freed = [
            (a, b, most_free(a, min(b, horizon)))
            for a, b, _ in self._freed
            if b > t and a < horizon
        ]
        self._freed = []
        if not freed:
            return
        known = len(freed)
        moved = compress(profile, order, reservation, size, estimate, freed, t, horizon)
        if moved:
            order.sort()
        # Spans freed during this compression may let jobs checked before them move up at
        # the next pass: keep them for the next compression.
        self._freed = freed[known:]
