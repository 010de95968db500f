"""An availability profile: free processors over future time, as a step function.

Conservative backfilling books every queued job into it (a reservation) and asks it for the
earliest start where a job fits. Breakpoints ``times`` ascending, ``free[k]`` processors free
over [times[k], times[k + 1]); the last step lasts forever. The profile starts at its origin
``times[0]``: the past is not tracked.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Sequence


class Profile:
    def __init__(self, origin: float, free: int) -> None:
        self.times: list[float] = [origin]
        self.free: list[int] = [free]

    def reset(
        self, t: float, free: int, ends: Sequence[tuple[float, int]], size: Sequence[int]
    ) -> None:
        """The profile of running jobs alone: ``free`` processors now, and each job of ``ends``
        ((planned end, job), ascending) giving back its ``size`` at max(planned end, t)."""
        times = [t]
        counts = [free]
        for planned, job in ends:
            if planned <= t:
                counts[0] += size[job]
            elif planned == times[-1]:
                counts[-1] += size[job]
            else:
                times.append(planned)
                counts.append(counts[-1] + size[job])
        self.times = times
        self.free = counts

    def prune(self, t: float) -> None:
        """Forget the profile before t (the profile then starts at t)."""
        times = self.times
        if times[0] >= t:
            return
        k = bisect_right(times, t) - 1
        if k > 0:
            del times[:k]
            del self.free[:k]
        times[0] = t

    def earliest(self, width: int, duration: float) -> float:
        """Earliest start >= the origin where ``width`` processors stay free for ``duration``
        (for a zero duration: free at that instant); the last step must hold ``width``."""
        times = self.times
        free = self.free
        n = len(times)
        i = 0
        while True:
            if free[i] < width:
                i += 1
                continue
            here = times[i]
            end = here + duration
            j = i + 1
            while j < n and times[j] < end:
                if free[j] < width:
                    break
                j += 1
            else:
                return here
            i = j + 1

    def book(self, width: int, duration: float) -> float:
        """``earliest(width, duration)``, booked there (``add(start, duration, -width)``) in
        the same pass: an arriving job's reservation."""
        times = self.times
        free = self.free
        n = len(times)
        i = 0
        while True:
            if free[i] < width:
                i += 1
                continue
            here = times[i]
            end = here + duration
            j = i + 1
            while j < n and times[j] < end:
                if free[j] < width:
                    break
                j += 1
            else:
                break
            i = j + 1
        if duration <= 0:
            return here
        # [here, end): here is step i's start, j the first step at or after end.
        if j == n or times[j] != end:
            times.insert(j, end)
            free.insert(j, free[j - 1])
        for k in range(i, j):
            free[k] -= width
        if j < len(free) and free[j] == free[j - 1]:
            del times[j]
            del free[j]
        if i > 0 and free[i] == free[i - 1]:
            del times[i]
            del free[i]
        return here

    def first_fit_before(
        self, width: int, duration: float, after: float, before: float, clip: float
    ) -> float | None:
        """Earliest breakpoint s in [after, before) (the scan starts in the segment holding
        ``after``) with ``width`` free processors over [s, min(s + duration, clip))."""
        times = self.times
        free = self.free
        n = len(times)
        i = bisect_right(times, after) - 1
        if i < 0:
            i = 0
        stop = bisect_left(times, before, i)  # the steps from i on that begin before it
        while i < stop:
            if free[i] < width:
                i += 1
                continue
            here = times[i]
            end = here + duration
            if end > clip:
                end = clip
            j = i + 1
            while j < n and times[j] < end:
                if free[j] < width:
                    break
                j += 1
            else:
                return here
            i = j + 1
        return None

    def add(self, begin: float, duration: float, delta: int) -> None:
        """Add ``delta`` free processors over [begin, begin + duration) (clipped to the
        origin)."""
        times = self.times
        origin = times[0]
        if begin < origin:
            duration -= origin - begin
            begin = origin
        if duration <= 0:
            return
        free = self.free
        # Breakpoints at both ends (the origin is <= begin, so first >= 1 if new).
        first = bisect_left(times, begin)
        if first == len(times) or times[first] != begin:
            times.insert(first, begin)
            free.insert(first, free[first - 1])
        finish = begin + duration
        last = bisect_left(times, finish, first)
        if last == len(times) or times[last] != finish:
            times.insert(last, finish)
            free.insert(last, free[last - 1])
        for k in range(first, last):
            free[k] += delta
        # Merge equal neighbours at both ends so the profile stays short.
        if last < len(free) and free[last] == free[last - 1]:
            del times[last]
            del free[last]
        if first > 0 and free[first] == free[first - 1]:
            del times[first]
            del free[first]

    def move(
        self, begin: float, old: float, duration: float, width: int, horizon: float
    ) -> int | None:
        """Move a booking of ``width`` processors for ``duration`` from ``old`` up to
        ``begin`` (origin <= begin < old): the same profile as the two ``add`` calls. Returns
        the most free processors at any instant of the span the move freed, [max(begin +
        duration, old), old + duration), up to ``horizon`` (None: it freed nothing)."""
        if duration <= 0:
            return None
        finish = begin + duration
        times = self.times
        free = self.free
        if finish > old:  # the two bookings overlap: only their ends change
            low, high, freed, stop = begin, old, finish, old + duration
        else:
            low, high, freed, stop = begin, finish, old, old + duration
        # Book [low, high): breakpoints at both ends, then merge equal neighbours there.
        first = bisect_left(times, low)
        if first == len(times) or times[first] != low:
            times.insert(first, low)
            free.insert(first, free[first - 1])
        last = bisect_left(times, high, first)
        if last == len(times) or times[last] != high:
            times.insert(last, high)
            free.insert(last, free[last - 1])
        for k in range(first, last):
            free[k] -= width
        if last < len(free) and free[last] == free[last - 1]:
            del times[last]
            del free[last]
        if first > 0 and free[first] == free[first - 1]:
            del times[first]
            del free[first]
        # Free [freed, stop) (every breakpoint before ``first`` is before ``freed``).
        return self._free_span(first, freed, stop, width, horizon)

    def fit_move(
        self, width: int, duration: float, after: float, before: float, old: float, horizon: float
    ) -> tuple[float, int | None] | None:
        """``first_fit_before(width, duration, after, before, old)`` and, where it finds a
        start, ``move(start, old, duration, width, horizon)``: (start, what ``move``
        returns), or None. One search serves both (the start is a breakpoint, and the end of
        its window where the search stopped)."""
        times = self.times
        free = self.free
        n = len(times)
        i = bisect_right(times, after) - 1
        if i < 0:
            i = 0
        stop = bisect_left(times, before, i)
        while i < stop:
            if free[i] < width:
                i += 1
                continue
            here = times[i]
            end = here + duration
            if end > old:
                end = old
            j = i + 1
            while j < n and times[j] < end:
                if free[j] < width:
                    break
                j += 1
            else:
                break
            i = j + 1
        else:
            return None
        if duration <= 0:
            return here, None
        # Book [here, end) (end: min(here + duration, old)); j is its first step at or
        # after end.
        if j == n or times[j] != end:
            times.insert(j, end)
            free.insert(j, free[j - 1])
        for k in range(i, j):
            free[k] -= width
        if j < len(free) and free[j] == free[j - 1]:
            del times[j]
            del free[j]
        if i > 0 and free[i] == free[i - 1]:
            del times[i]
            del free[i]
        # Free [max(here + duration, old), old + duration).
        freed = here + duration
        if freed < old:
            freed = old
        finish = old + duration
        return here, self._free_span(i, freed, finish, width, horizon)

    def _free_span(self, lo: int, freed: float, stop: float, width: int, horizon: float) -> int:
        """Give ``width`` processors back over [freed, stop) (no breakpoint before index ``lo``
        is at or after ``freed``), merging equal neighbours at both ends; the most free
        processors at any instant of [freed, min(stop, horizon)), the span a move freed."""
        times = self.times
        free = self.free
        first = bisect_left(times, freed, lo)
        if first == len(times) or times[first] != freed:
            times.insert(first, freed)
            free.insert(first, free[first - 1])
        last = bisect_left(times, stop, first)
        if last == len(times) or times[last] != stop:
            times.insert(last, stop)
            free.insert(last, free[last - 1])
        for k in range(first, last):
            free[k] += width
        bound = stop if stop < horizon else horizon
        most = (
            max(free[first : bisect_left(times, bound, first + 1, last)])
            if bound > freed
            else free[first]
        )
        if last < len(free) and free[last] == free[last - 1]:
            del times[last]
            del free[last]
        if free[first] == free[first - 1]:
            del times[first]
            del free[first]
        return most

    def most_free(self, begin: float, end: float) -> int:
        """Most free processors at any instant of [begin, end)."""
        times = self.times
        free = self.free
        k = max(bisect_right(times, begin) - 1, 0)
        most = free[k]
        k += 1
        while k < len(times) and times[k] < end:
            if free[k] > most:
                most = free[k]
            k += 1
        return most
