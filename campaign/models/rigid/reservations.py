"""Conservative backfilling's reservation book: every queued job's reservation in an
availability profile, and their compression (parallel-jobs.md section 3).

A reservation is named by a key, an integer indexing the book's ``size`` and ``estimate``:
the job itself for conservative backfilling, a rank in the list order for list conservative
(whose book holds its own widths and estimates by rank). Ties of reservation start go by key.
Both policies hold a book and start the jobs it says are due; neither touches its profile.
"""

from __future__ import annotations

from bisect import bisect_right, insort
from collections.abc import Sequence

from campaign.models.rigid import compression
from campaign.models.rigid.profile import Profile

try:
    from campaign.models.rigid.compiled_book import CompiledBook
except ImportError:  # numba missing: the pure-Python book
    CompiledBook = None

COMPILED = CompiledBook is not None
"""Whether books are compiled (``compiled_book``) or pure Python (``ReservationBook``, the
reference the tests compare them against)."""

_LAST = float("inf")
"""Sorts after every key: (t, _LAST) bisects past all entries (t, key)."""


def open_book(site, size: Sequence[int], estimate: Sequence[float], literal: bool = False):
    """The reservation book of ``site``: compiled when numba is there, else pure Python;
    ``literal``: the definition's re-insertion of every job at every compression."""
    if COMPILED and not literal:
        return CompiledBook(site, size, estimate)
    return ReservationBook(site, size, estimate, literal)


class ReservationBook:
    """The reservations of the queued jobs of ``site``, compressed fast (``compression``)
    or, with ``literal``, by re-inserting every job at every compression (the definition)."""

    def __init__(
        self, site, size: Sequence[int], estimate: Sequence[float], literal: bool = False
    ) -> None:
        self.site = site
        self.literal = literal
        self.size = size
        self.estimate = estimate
        """Width and estimate per key."""
        self.reservation: dict[int, float] = {}
        """Reservation start per key still booked."""
        self._order: list[tuple[float, int]] = []
        """The keys in compression order: sorted (reservation start, key); the keys due
        at a pass leave it until ``started`` or ``held``."""
        self.profile = Profile(0.0, site.processors)
        self._freed: list[tuple[float, float, int]] = []
        """Spans [a, b) freed since the last compression, with the most free processors
        they had when freed."""
        self._rebuild = False
        self._instants: set[int] = set()
        """Keys of reservations of no duration (maybe started since): such a reservation
        holds no processors, so a job booked later may take its instant and push it back,
        which only the literal compression follows."""

    def book(self, key: int, t: float) -> float:
        """Book ``key`` at its earliest feasible start given the running jobs and every
        reservation; that start."""
        site = self.site
        profile = self.profile
        profile.prune(t)
        if site.ends and site.ends[0][0] < t:
            self._refresh_profile(t)
        est = self.estimate[key]
        if est <= 0:
            self._instants.add(key)
        begin = profile.book(self.size[key], est)
        self.reservation[key] = begin
        insort(self._order, (begin, key))
        return begin

    def append(self, width: int, duration: float, t: float) -> int:
        """Book a new key after every key so far (the book's own ``size`` and ``estimate``
        lists, as ``rebook`` leaves them); the key."""
        key = len(self.size)
        self.size.append(width)
        self.estimate.append(duration)
        self.book(key, t)
        return key

    def released(self, t: float, planned: float, width: int) -> None:
        """A running job of ``width`` ended at t, before its planned end: its processors are
        free earlier than booked."""
        if t < planned:
            self.profile.prune(t)
            self.profile.add_span(t, planned, width)
            if self.site.queue:  # later arrivals are placed knowing these processors are free
                self._freed.append((t, planned, 0))

    def rebook(self, size: list[int], estimate: list[float], t: float) -> None:
        """Drop every reservation and book keys 0, 1, ... (``size`` and ``estimate`` per key,
        kept as the book's own) in turn, each at its earliest start given the running jobs
        and the keys booked before it."""
        site = self.site
        self.size = size
        self.estimate = estimate
        profile = self.profile
        profile.reset(t, site.free, site.ends, site.size)
        reservation = {}
        for key in range(len(size)):
            begin = profile.earliest(size[key], estimate[key])
            profile.add(begin, estimate[key], -size[key])
            reservation[key] = begin
        self.reservation = reservation
        self._order = sorted((begin, key) for key, begin in reservation.items())
        self._freed.clear()
        self._rebuild = False
        self._instants = {key for key in reservation if estimate[key] <= 0}

    def has_instants(self) -> bool:
        """Whether a key still booked has no duration (a compression may then move it)."""
        instants = self._instants
        if instants:
            instants.intersection_update(self.reservation)
        return bool(instants)

    def due(self, t: float) -> list[int]:
        """The keys whose reservation starts by t, ascending; each must next be ``started``
        or ``held``."""
        order = self._order
        due = bisect_right(order, (t, _LAST))
        if due == 0:
            return []
        keys = sorted(key for _, key in order[:due])
        del order[:due]
        return keys

    def started(self, key: int) -> None:
        """A due key's job started: its reservation goes."""
        del self.reservation[key]

    def held(self, key: int) -> None:
        """A due key's job does not fit (a running job overran its estimate): it keeps its
        reservation and the next compression re-inserts every key."""
        self._rebuild = True
        insort(self._order, (self.reservation[key], key))

    def _refresh_profile(self, t: float) -> None:
        """Rebuild the profile from the running jobs (ending at max(s + est, t)) and the
        reservations where they stand."""
        site = self.site
        profile = self.profile
        profile.reset(t, site.free, site.ends, site.size)
        for key, begin in self.reservation.items():
            profile.add(begin, self.estimate[key], -self.size[key])

    def compress(self, t: float) -> None:
        """Re-insert every key, in order of reservation start (ties: key), at its earliest
        feasible start given the running jobs and the keys re-inserted before.

        Exact shortcut (``compression.compress``): a job already at its earliest start
        stays there unless processors were freed (an early completion, an earlier job moving
        up) somewhere before its reservation start; such jobs are skipped. A running job
        past its estimate, a reservation left in the past (behind such a job) or a queued
        job of no duration (whose reservation a later one may push back) forces the literal
        re-insertion of all jobs.
        """
        site = self.site
        profile = self.profile
        profile.prune(t)
        order = self._order
        ends = site.ends
        overran = bool(ends) and ends[0][0] < t
        stale = bool(order) and order[0][0] < t
        # More processors free than the site has: a profile no job history can give (it
        # once came from early ends given back a rounding step past their planned end, now
        # exact: ``released``); should it happen, the literal re-insertion, which rebuilds
        # the profile, is sound.
        overfreed = max(profile.free) > site.processors
        if overran or stale or overfreed or self._rebuild or self.literal or self.has_instants():
            self._reinsert(t)
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
        reservation = self.reservation
        moved = compression.compress(
            profile, order, reservation, self.size, self.estimate, freed, t, horizon
        )
        if moved:
            order.sort()
        # Spans freed during this compression may let jobs checked before them move up at
        # the next pass: keep them for the next compression.
        self._freed = freed[known:]

    def _reinsert(self, t: float) -> None:
        """The literal compression: every key re-inserted from the running jobs' profile."""
        site = self.site
        profile = self.profile
        reservation = self.reservation
        order = self._order
        size = self.size
        estimate = self.estimate
        profile.reset(t, site.free, site.ends, site.size)
        for _, key in order:
            begin = profile.earliest(size[key], estimate[key])
            profile.add(begin, estimate[key], -size[key])
            reservation[key] = begin
        self._order = sorted((reservation[key], key) for _, key in order)
        self._freed.clear()
        self._rebuild = False
        self._instants = {key for _, key in order if estimate[key] <= 0}
