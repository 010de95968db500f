"""The reservations of one machine and what offers ask of them (economic.md sections 1, 3, 4).

A reservation holds a set of processors over [b, e). Reservations of finished jobs lie before
every later request (``now``) and change nothing it asks, so `release` drops them; what is
left is stored as arrays (begin, end, processors as a boolean row). Sorted by end, two
prefix tables answer every question of a request: per processor the latest end so far (a_q)
and the earliest begin still to come (whether it is free over a window, and b_q); they are
built once per change of the reservations, so each question is a lookup of one row per
candidate time rather than a loop over processors or reservations.
"""

from __future__ import annotations

import numpy as np

CHUNK = 32
"""Candidate start times tested together."""


class MachineSchedule:
    """Reservations of one machine of ``processors`` identical processors numbered 0.."""

    def __init__(self, processors: int) -> None:
        self.processors = int(processors)
        self.count = 0
        capacity = 16
        self.begin = np.empty(capacity)
        self.end = np.empty(capacity)
        self.done = np.empty(capacity)
        """When the reservation's job really ends (its reservation shrinks to it then)."""
        self.width = np.empty(capacity)
        self.hold = np.zeros((capacity, self.processors), dtype=bool)
        self._cache: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None

    # ------------------------------------------------------------------ bookkeeping
    def book(self, processors: np.ndarray, begin: float, end: float, done: float) -> None:
        """Reserve ``processors`` (numbers) over [begin, end); the job really ends at
        ``done``. An empty window holds nothing and is not stored."""
        if end <= begin:
            return
        if self.count == len(self.begin):
            self._grow()
        r = self.count
        self.begin[r], self.end[r], self.done[r] = begin, end, done
        self.width[r] = len(processors)
        self.hold[r] = False
        self.hold[r, processors] = True
        self.count += 1
        self._cache = None

    def _grow(self) -> None:
        capacity = 2 * len(self.begin)
        for name in ("begin", "end", "done", "width"):
            old = getattr(self, name)
            new = np.empty(capacity)
            new[: self.count] = old[: self.count]
            setattr(self, name, new)
        hold = np.zeros((capacity, self.processors), dtype=bool)
        hold[: self.count] = self.hold[: self.count]
        self.hold = hold

    def release(self, now: float) -> None:
        """Forget the reservations of jobs finished by ``now`` (completions come first)."""
        n = self.count
        keep = self.done[:n] > now
        if keep.all():
            return
        index = np.flatnonzero(keep)
        m = len(index)
        for name in ("begin", "end", "done", "width", "hold"):
            array = getattr(self, name)
            array[:m] = array[index]
        self.count = m
        self._cache = None

    # ------------------------------------------------------------------ questions
    def horizon(self, now: float) -> float:
        """H_k: the end of the schedule, max(now, largest reservation end)."""
        ends = self._tables()[0]
        return max(now, float(ends[-1])) if len(ends) else now

    def starts(self, now: float) -> np.ndarray:
        """T_k: now and every reservation end after it, ascending."""
        ends = self._tables()[0]
        later = ends[ends > now]
        if len(later) > 1:
            later = later[np.concatenate(([True], later[1:] != later[:-1]))]
        return np.concatenate(([now], later))

    def free(self, times: np.ndarray, length: float) -> np.ndarray:
        """Per time x of ``times`` (rows), which processors are free over [x, x + length)."""
        if self.count == 0 or length <= 0:
            return np.ones((len(times), self.processors), dtype=bool)
        ends, _, pending = self._tables()
        # A processor is free iff the first of its reservations ending after x begins at
        # x + length or later (reservations of one processor never overlap).
        return pending[np.searchsorted(ends, times, side="right")] >= (times + length)[:, None]

    def feasible(self, times: np.ndarray, length: float, size: int, wanted: int):
        """The first ``wanted`` times of ``times`` at which ``size`` processors are free over
        [x, x + length), with their free processors (mask per time)."""
        found: list[tuple[float, np.ndarray]] = []
        for first in range(0, len(times), CHUNK):
            chunk = times[first : first + CHUNK]
            masks = self.free(chunk, length)
            for i in np.flatnonzero(masks.sum(axis=1) >= size):
                found.append((float(chunk[i]), masks[i]))
                if len(found) == wanted:
                    return found
        return found

    def _tables(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Reservation ends ascending; per prefix of them each processor's latest end (row 0:
        none); per suffix each processor's earliest begin (last row: none). Kept until the
        reservations change."""
        if self._cache is None:
            n = self.count
            by_end = np.argsort(self.end[:n], kind="stable")
            ends = self.end[:n][by_end]
            hold = self.hold[:n][by_end]
            latest = np.full((n + 1, self.processors), -np.inf)
            latest[1:] = np.where(hold, ends[:, None], -np.inf)
            np.maximum.accumulate(latest, axis=0, out=latest)
            pending = np.full((n + 1, self.processors), np.inf)
            pending[:n] = np.where(hold, self.begin[:n][by_end][:, None], np.inf)
            pending[::-1] = np.minimum.accumulate(pending[::-1], axis=0)
            self._cache = (ends, latest, pending)
        return self._cache

    def last_ends(self, times: np.ndarray, now: float) -> np.ndarray:
        """a_q(x) per time x (rows) and processor: max(now, latest end <= x of a reservation
        holding q)."""
        ends, latest, _ = self._tables()
        return np.maximum(latest[np.searchsorted(ends, times, side="right")], now)

    def pending_begins(self, times: np.ndarray) -> np.ndarray:
        """Per time x (rows) and processor: the earliest begin of its reservations that end
        after x (inf if none). For a processor free over [x, x + length) this is
        b_q(x + length) (and b_q(x)): none of its reservations meets the window."""
        ends, _, pending = self._tables()
        return pending[np.searchsorted(ends, times, side="right")]

    def next_begins(self, times: np.ndarray) -> np.ndarray:
        """b_q(x) per time x (rows) and processor: earliest begin >= x of a reservation
        holding q (inf if none), read from every reservation (for empty windows, where a
        processor counts as free even while a reservation holds it)."""
        n = self.count
        begins = np.where(
            self.hold[None, :n] & (self.begin[None, :n] >= times[:, None])[:, :, None],
            self.begin[None, :n, None],
            np.inf,
        )
        return begins.min(axis=1, initial=np.inf)

    def busy_area(self, starts: np.ndarray, length: float) -> np.ndarray:
        """Per window [s, s + length): processor-time covered by reservations within it."""
        n = self.count
        if n == 0:
            return np.zeros(len(starts))
        overlap = np.minimum(self.end[None, :n], starts[:, None] + length) - np.maximum(
            self.begin[None, :n], starts[:, None]
        )
        return np.maximum(overlap, 0.0) @ self.width[:n]

    def booked_area(self, now: float, until: float) -> float:
        """Processor-time reserved within [now, until)."""
        n = self.count
        if n == 0:
            return 0.0
        overlap = np.minimum(self.end[:n], until) - np.maximum(self.begin[:n], now)
        return float(np.maximum(overlap, 0.0) @ self.width[:n])
