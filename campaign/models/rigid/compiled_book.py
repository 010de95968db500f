"""Conservative backfilling's reservation book kept in arrays between passes, its steps
compiled (``book_kernel``, and ``compression_kernel`` for the compression).

The same book as ``reservations.ReservationBook`` (the same interface, the same
reservations to the last bit); on a saturated queue of thousands of jobs, a compression
moves hundreds of them at every early end, and turning the queue into arrays and back at
every pass cost more than the compression itself. Here the order, the profile and the
reservations stay arrays; Python touches only what a call names.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from campaign.models.rigid import book_kernel, compression_kernel
from campaign.models.rigid.profile import Profile


class CompiledBook:
    """The reservations of the queued jobs of ``site``, compressed by the compiled fast
    compression (``compression_kernel``), or literally when the fast one does not apply."""

    def __init__(self, site, size: Sequence[int], estimate: Sequence[float]) -> None:
        self.site = site
        self.size = size
        self.estimate = estimate
        """Width and estimate per key (the lists; ``_arrays`` holds them as arrays)."""
        self._arrays = KeyArrays()
        self._final = 0
        """Keys below this one have their final width and estimate (booked once: their job
        arrived); a later job's estimate may still change (a predictor writes it at its
        arrival), so the arrays copy no further."""
        self._reservation = np.full(64, np.nan)
        """Reservation start per key still booked (NaN: none)."""
        self._starts = np.empty(64, np.float64)
        self._keys = np.empty(64, np.int64)
        self._count = 0
        """The keys in compression order: sorted (reservation start, key), the first
        ``_count`` entries; the keys due at a pass leave it until ``started`` or ``held``."""
        self._times = np.empty(64, np.float64)
        self._free = np.empty(64, np.int64)
        self._times[0] = 0.0
        self._free[0] = site.processors
        self._steps = 1
        """The availability profile (``Profile``): breakpoints and free processors."""
        self._span_a = np.empty(64, np.float64)
        self._span_b = np.empty(64, np.float64)
        self._spans = 0
        """Spans [a, b) freed since the last compression: the first ``_spans`` entries."""
        self._rebuild = False
        self._instants: set[int] = set()
        """Keys of reservations of no duration (see ``ReservationBook``)."""

    @property
    def reservation(self) -> dict[int, float]:
        """Reservation start per key still booked (a copy, to read: ``ReservationBook``'s
        attribute of that name)."""
        booked = np.flatnonzero(~np.isnan(self._reservation))
        return dict(zip(booked.tolist(), self._reservation[booked].tolist()))

    # ------------------------------------------------------------------ room in the arrays
    def _profile_room(self, more: int) -> None:
        self._times, self._free = _room(self._times, self._free, self._steps + more)

    def _order_room(self, more: int) -> None:
        self._starts, self._keys = _room(self._starts, self._keys, self._count + more)

    def _span_room(self, more: int) -> None:
        self._span_a, self._span_b = _room(self._span_a, self._span_b, self._spans + more)

    def _key_room(self, key: int) -> None:
        if key >= len(self._reservation):
            grown = np.full(max(2 * len(self._reservation), key + 1), np.nan)
            grown[: len(self._reservation)] = self._reservation
            self._reservation = grown

    # ------------------------------------------------------------------ the profile
    def _prune(self, t: float) -> None:
        self._steps = book_kernel.prune(self._times, self._free, self._steps, t)

    def _reset_profile(self, t: float) -> None:
        """The profile of the running jobs alone (``Profile.reset``)."""
        site = self.site
        profile = Profile(t, 0)
        profile.reset(t, site.free, site.ends, site.size)
        count = len(profile.times)
        self._steps = 0
        self._profile_room(count + 2)
        self._times[:count] = profile.times
        self._free[:count] = profile.free
        self._steps = count

    def _add_span(self, begin: float, finish: float, delta: int) -> None:
        """``Profile.add_span``: ``delta`` over [begin, finish), its end the very time given."""
        self._profile_room(2)
        self._steps = book_kernel.add_span(
            self._times, self._free, self._steps, begin, finish, delta
        )

    # ------------------------------------------------------------------ the interface
    def book(self, key: int, t: float) -> float:
        """Book ``key`` at its earliest feasible start given the running jobs and every
        reservation; that start."""
        site = self.site
        self._prune(t)
        if site.ends and site.ends[0][0] < t:
            self._refresh_profile(t)
        est = self.estimate[key]
        if est <= 0:
            self._instants.add(key)
        self._profile_room(2)
        begin, self._steps = book_kernel.book(
            self._times, self._free, self._steps, self.size[key], est
        )
        if key >= self._final:
            self._final = key + 1
        self._key_room(key)
        self._reservation[key] = begin
        self._order_room(1)
        self._count = book_kernel.insort(self._starts, self._keys, self._count, begin, key)
        return begin

    def append(self, width: int, duration: float, t: float) -> int:
        """Book a new key after every key so far; the key."""
        key = len(self.size)
        self.size.append(width)
        self.estimate.append(duration)
        self.book(key, t)
        return key

    def released(self, t: float, planned: float, width: int) -> None:
        """A running job of ``width`` ended at t, before its planned end."""
        if t < planned:
            self._prune(t)
            self._add_span(t, planned, width)
            if self.site.queue:
                self._span_room(1)
                self._span_a[self._spans] = t
                self._span_b[self._spans] = planned
                self._spans += 1

    def rebook(self, size: list[int], estimate: list[float], t: float) -> None:
        """Drop every reservation and book keys 0, 1, ... in turn (``ReservationBook``)."""
        self.size = size
        self.estimate = estimate
        self._arrays = KeyArrays()
        count = len(size)
        self._final = count
        self._reservation = np.full(max(64, count), np.nan)
        self._count = 0
        self._order_room(count)
        self._starts[:count] = 0.0
        self._keys[:count] = np.arange(count)
        self._count = count
        self._reinsert(t)

    def has_instants(self) -> bool:
        """Whether a key still booked has no duration."""
        instants = self._instants
        if instants:
            reservation = self._reservation
            instants.difference_update(
                [key for key in instants if reservation[key] != reservation[key]]
            )
        return bool(instants)

    def due(self, t: float) -> list[int]:
        """The keys whose reservation starts by t, ascending; each must next be ``started``
        or ``held``."""
        count = int(np.searchsorted(self._starts[: self._count], t, side="right"))
        if count == 0:
            return []
        keys = sorted(self._keys[:count].tolist())
        self._count = book_kernel.to_front(self._starts, self._keys, count, self._count)
        return keys

    def started(self, key: int) -> None:
        """A due key's job started: its reservation goes."""
        self._reservation[key] = np.nan

    def held(self, key: int) -> None:
        """A due key's job does not fit: it keeps its reservation and the next compression
        re-inserts every key."""
        self._rebuild = True
        self._order_room(1)
        self._count = book_kernel.insort(
            self._starts, self._keys, self._count, float(self._reservation[key]), key
        )

    def _refresh_profile(self, t: float) -> None:
        """Rebuild the profile from the running jobs and the reservations where they stand."""
        self._reset_profile(t)
        reservation = self._reservation
        for key in np.flatnonzero(reservation == reservation).tolist():
            begin = float(reservation[key])
            self._add_span(begin, begin + self.estimate[key], -self.size[key])

    def compress(self, t: float) -> None:
        """``ReservationBook.compress``, on the arrays."""
        site = self.site
        self._prune(t)
        count = self._count
        ends = site.ends
        overran = bool(ends) and ends[0][0] < t
        stale = count > 0 and self._starts[0] < t
        overfreed = book_kernel.most(self._free, self._steps) > site.processors
        if overran or stale or overfreed or self._rebuild or self.has_instants():
            self._reinsert(t)
            return
        known = self._spans
        if count == 0 or known == 0:
            self._spans = 0
            return
        self._span_room(count + 1)  # after the spans known, one freed per move at most
        self._spans = 0
        size, estimate = self._arrays.of(self.size, self.estimate, self._final)
        keys = self._keys[:count]
        widths = size[keys]
        durations = estimate[keys]
        self._profile_room(3 * count + 4)
        span_most = np.empty(len(self._span_a), np.int64)
        moves = np.zeros(count, np.bool_)
        starts = self._starts[:count]
        self._steps, known, total = compression_kernel.compress(
            self._times, self._free, self._steps, starts, widths, durations, moves,
            self._span_a, self._span_b, span_most, known, t,
        )  # fmt: skip
        # The spans the moves freed may let jobs checked before them move up at the next
        # compression: they are kept for it.
        self._spans = book_kernel.to_front(self._span_a, self._span_b, known, total)
        book_kernel.settle(self._starts, self._keys, count, moves, self._reservation)

    def _reinsert(self, t: float) -> None:
        """The literal compression: every key re-inserted from the running jobs' profile."""
        self._reset_profile(t)
        count = self._count
        self._profile_room(2 * count + 2)
        size, estimate = self._arrays.of(self.size, self.estimate, self._final)
        self._steps = book_kernel.reinsert(
            self._times, self._free, self._steps, self._starts, self._keys, count,
            size, estimate, self._reservation,
        )  # fmt: skip
        self._spans = 0
        self._rebuild = False
        est = self.estimate
        self._instants = {key for key in self._keys[:count].tolist() if est[key] <= 0}


def _room(first: np.ndarray, second: np.ndarray, needed: int):
    """Two arrays of the same length, grown (doubled at least) to hold ``needed`` entries."""
    if needed <= len(first):
        return first, second
    capacity = max(2 * len(first), needed)
    return _grown(first, capacity), _grown(second, capacity)


def _grown(array: np.ndarray, capacity: int) -> np.ndarray:
    grown = np.empty(capacity, array.dtype)
    grown[: len(array)] = array
    return grown


class KeyArrays:
    """``size`` and ``estimate`` as numpy arrays, extended as the lists grow (a list
    conservative book appends a key per newcomer) or as more keys become final (a job's
    estimate is final once it arrived); keys already read never change."""

    def __init__(self) -> None:
        self._count = 0
        self.size = np.zeros(0, np.int64)
        self.estimate = np.zeros(0, np.float64)

    def of(
        self, size: Sequence[int], estimate: Sequence[float], count: int
    ) -> tuple[np.ndarray, np.ndarray]:
        """The arrays of the book's lists, their first ``count`` keys read (a new
        ``KeyArrays`` when the book takes new lists)."""
        if count > self._count:
            self.size, self.estimate = _room(self.size, self.estimate, count)
            done = self._count
            self.size[done:count] = np.asarray(size[done:count], np.int64)
            self.estimate[done:count] = np.asarray(estimate[done:count], np.float64)
            self._count = count
        return self.size, self.estimate
