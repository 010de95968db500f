"""Conservative backfilling: every queued job holds a reservation in an availability profile;
the reservations are compressed every pass (parallel-jobs.md section 3)."""

from __future__ import annotations

from bisect import bisect_right, insort

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
        width = self.size[job]
        begin = profile.earliest(width, est)
        profile.add(begin, est, -width)
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

        Exact shortcut: a job already at its earliest start stays there unless processors
        were freed (an early completion, an earlier job moving up) somewhere before its
        reservation start; such jobs are skipped. A running job past its estimate or
        a reservation left in the past (behind such a job) forces the literal re-insertion of
        all jobs.
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
        if overran or stale or self._rebuild or self.reference:
            profile.reset(t, site.free, ends, site.size)
            for _, job in order:
                begin = profile.earliest(size[job], estimate[job])
                profile.add(begin, estimate[job], -size[job])
                reservation[job] = begin
            self._order = sorted((reservation[job], job) for _, job in order)
            self._freed.clear()
            self._rebuild = False
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
        fit_move = profile.fit_move
        known = len(freed)
        low = min(span[0] for span in freed)
        top = max(span[2] for span in freed)
        # Per width: [reach, until, valid, duration, after, before]: the spans that could
        # let a job of that width move, for an ``old`` (non-decreasing along the order) below
        # ``valid``, the next span that could qualify, kept up to date as spans are freed;
        # then the last failed search (duration None: none since the last move).
        state: dict[int, list] = {}
        known_width_of = state.get
        moved = False
        # Jobs starting by ``low`` cannot move: the first job checked starts after it, and
        # every span freed here starts after a job checked before.
        for position in range(bisect_right(order, (low, _LAST)), len(order)):
            old, job = order[position]
            width = size[job]
            if width > top:
                continue
            # A start s < old only needs free processors over [s, min(s + est, old)): the
            # rest of its window lies in the job's own span. It was infeasible when the job
            # was last placed or checked, so it can only have become feasible through a
            # point p < old freed since then, where the free count now reaches the width;
            # the maximum free count a span had when freed bounds every later value in it.
            known_width = known_width_of(width)
            if known_width is None or old > known_width[2]:
                reach = None
                until = t
                valid = _LAST
                for a, b, most in freed:
                    if most >= width:
                        if a < old:
                            if reach is None or a < reach:
                                reach = a
                            if b > until:
                                until = b
                        elif a < valid:
                            valid = a
                if known_width is None:
                    known_width = state[width] = [reach, until, valid, None, t, t]
                else:
                    known_width[0] = reach
                    known_width[1] = until
                    known_width[2] = valid
            else:
                reach = known_width[0]
                until = known_width[1]
            if reach is None:
                continue
            duration = estimate[job]
            after = reach - duration
            if after < t:
                after = t
            before = until if until < old else old
            # If no start in [after, before) fits a job of this width, none fits a later job
            # (larger old) with an estimate at least as long and an ``after`` at least as
            # late, until something moves.
            scan = after
            failed = known_width[3]
            if failed is not None and duration >= failed and after >= known_width[4]:
                failed = known_width[5]
                if failed >= before:
                    continue
                if failed > after:
                    scan = failed
            found = fit_move(width, duration, scan, before, old, horizon)
            if found is None:
                known_width[3] = duration
                known_width[4] = after
                known_width[5] = before
                continue
            # begin < before <= old: the job moves up.
            begin, most = found
            reservation[job] = begin
            order[position] = (begin, job)  # the order is restored after the loop
            moved = True
            if most is None:
                for entry in state.values():
                    entry[3] = None
                continue
            if most > top:
                top = most
            # The span it freed: coalesced with an overlapping span freed in this compression
            # (a coarser span only lets more jobs through the filter, never fewer).
            freed_from = begin + duration
            if freed_from < old:
                freed_from = old
            end = old + duration
            for k in range(len(freed) - 1, known - 1, -1):  # the latest overlap most often
                a, b, m = freed[k]
                if a <= end and freed_from <= b:
                    if a > freed_from:
                        a = freed_from
                    if end > b:
                        b = end
                    if most > m:
                        m = most
                    freed[k] = (a, b, m)
                    break
            else:
                a, b, m = freed_from, end, most
                freed.append((a, b, m))
            # What every width knew holds with this span added (it covers the one it grew
            # from); its failed search no longer does.
            for other, entry in state.items():
                entry[3] = None
                if m >= other:
                    if a < old:
                        if entry[0] is None or a < entry[0]:
                            entry[0] = a
                        if b > entry[1]:
                            entry[1] = b
                    elif a < entry[2]:
                        entry[2] = a
        if moved:
            order.sort()
        # Spans freed during this compression may let jobs checked before them move up at
        # the next pass: keep them for the next compression.
        self._freed = freed[known:]
