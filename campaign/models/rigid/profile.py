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

    def add(self, begin: float, duration: float, delta: int) -> None:
        """Add ``delta`` free processors over [begin, begin + duration) (clipped to the
        origin)."""
        self.add_span(begin, begin + duration, delta)

    def add_span(self, begin: float, finish: float, delta: int) -> None:
        """Add ``delta`` free processors over [begin, finish) (clipped to the origin).

        Its end is the very time it is given: a job's processors given back from an early
        end at t to its planned end must end at that planned end, which t + (planned - t)
        may miss by a rounding step, leaving a sliver of the profile busy (or free) that
        no job holds."""
        times = self.times
        if begin < times[0]:
            begin = times[0]
        if finish <= begin:
            return
        free = self.free
        # Breakpoints at both ends (the origin is <= begin, so first >= 1 if new).
        first = bisect_left(times, begin)
        if first == len(times) or times[first] != begin:
            times.insert(first, begin)
            free.insert(first, free[first - 1])
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
