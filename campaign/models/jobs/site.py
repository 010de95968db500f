"""One site of identical processors running a local scheduler (parallel-jobs.md section 3).

A :class:`Site` is driven from outside by an event loop: ``submit`` a job when it arrives,
``complete`` it when it ends, and call ``schedule`` once per event time after all completions
and arrivals of that time; it returns the jobs that start now. Its state (``queue``,
``start``, ``free``, ``planned_end``) is public so that a grid broker driving several sites
from one loop can inspect queues and running jobs before placing a new job.

Jobs are integer indices into per-job sequences shared by all sites of a simulation
(``size``, ``estimate``); the queue is kept in arrival order, which is index order because
jobs are numbered by arrival.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right, insort
from collections.abc import Sequence
from itertools import islice

import numpy as np

POLICIES = ("fcfs", "easy", "conservative", "accasim_easy", "sjf", "random")
_LAST = float("inf")
"""Sorts after every job index: (t, _LAST) bisects past all entries (t, job)."""


class Site:
    """A site with ``processors`` processors and a local scheduling ``policy``.

    Policies: ``fcfs``; ``easy`` (EASY backfilling: only the queue head is protected, its
    shadow time recomputed every pass); ``conservative`` (every queued job holds a
    reservation; the reservations are compressed every pass); ``accasim_easy`` (the EASY
    variant of AccaSim 1.1.3, for cross-checking against that simulator: the blocked head's
    reservation time is computed once; until that time any queued job that fits now is
    started without protecting the head; from that time on the head is tried first);
    ``sjf`` (shortest estimate first, ties by arrival; a blocked head blocks the rest);
    ``random`` (each pass draws a waiting job uniformly from ``rng`` and starts it while it
    fits; a pass draws only while a processor is free, since no draw could start a job
    otherwise). ``rng`` (a ``numpy.random.Generator``, the policy stream) is needed by
    ``random`` only, so every other policy stays deterministic without one.
    ``backfill_after_start`` false gives ``easy`` the rule of the datacenter reference
    simulator: a pass that started a job at the head of the queue backfills nothing.
    """

    def __init__(
        self,
        processors: int,
        policy: str,
        size: Sequence[int],
        estimate: Sequence[float],
        index: int = 0,
        rng: np.random.Generator | None = None,
        backfill_after_start: bool = True,
    ) -> None:
        if policy not in POLICIES:
            raise ValueError(f"unknown scheduler {policy!r}; allowed: {', '.join(POLICIES)}")
        if policy == "random" and rng is None:
            raise ValueError("scheduler 'random' needs a random generator (the policy stream)")
        if processors <= 0:
            raise ValueError(f"a site needs at least one processor, got {processors}")
        self.processors = int(processors)
        self.policy = policy
        self.index = index
        self.size = size
        self.estimate = estimate
        self.free = self.processors
        self.queue: list[int] = []
        self.start: dict[int, float] = {}
        """Running jobs and their start times."""
        self.jobs_backfilled = 0
        # Running jobs sorted by planned end s + est: (planned end, job).
        self._ends: list[tuple[float, int]] = []
        self._pass = {
            "fcfs": self._pass_fcfs,
            "easy": self._pass_easy,
            "conservative": self._pass_conservative,
            "accasim_easy": self._pass_accasim,
            "sjf": self._pass_sjf,
            "random": self._pass_random,
        }[policy]
        self.rng = rng
        self.backfill_after_start = backfill_after_start
        # sjf: queued jobs sorted by (estimate, job), and the last job inserted there.
        self._by_estimate: list[tuple[float, int]] = []
        self._sorted_upto = -1
        # conservative: reservation start per queued job, availability profile, freed spans.
        self.reservation: dict[int, float] = {}
        # The queued jobs in compression order: sorted (reservation start, job).
        self._order: list[tuple[float, int]] = []
        self._prof_t: list[float] = [0.0]
        self._prof_f: list[int] = [self.processors]
        self._freed: list[tuple[float, float]] = []
        self._rebuild = False
        # easy: (blocked head, shadow time, left-over processors, last job examined).
        self._easy_memo: tuple[int, float, int, int] | None = None
        # accasim_easy: the blocked head and its reservation time.
        self._blocked: int | None = None
        self._reserved_at: float | None = None

    # ------------------------------------------------------------------ state for brokers
    def planned_end(self, job: int, t: float) -> float:
        """Estimated end of a running job at time t: max(s + est, t)."""
        return max(self.start[job] + self.estimate[job], t)

    def running(self) -> list[int]:
        """Running jobs in order of planned end (ties: job index)."""
        return [job for _, job in self._ends]

    def wakeup(self, t: float) -> float | None:
        """When this site wants another pass although no event is left (or None).

        Only ``accasim_easy`` can hold a blocked head on an idle site until its reservation
        time; like AccaSim, it then steps the clock by one second at a time.
        """
        if self.queue and self.policy == "accasim_easy":
            return t + 1.0
        return None

    # ------------------------------------------------------------------ events
    def submit(self, job: int, t: float) -> None:
        """A job arrives at this site (before this time's scheduling pass)."""
        self.queue.append(job)
        if self.policy == "conservative":
            self._prune(t)
            if self._ends and self._ends[0][0] < t:
                self._refresh_profile(t)
            est = self.estimate[job]
            begin = self._earliest(self.size[job], est)
            self._add(begin, est, -self.size[job])
            self.reservation[job] = begin
            insort(self._order, (begin, job))

    def complete(self, job: int, t: float) -> None:
        """A running job ends at time t (before this time's arrivals and pass)."""
        begin = self.start.pop(job)
        planned = begin + self.estimate[job]
        del self._ends[bisect_left(self._ends, (planned, job))]
        self.free += self.size[job]
        self._easy_memo = None
        if self.policy == "conservative" and t < planned:
            # Ended before its estimate: its processors are free earlier than planned.
            self._prune(t)
            self._add(t, planned - t, self.size[job])
            if self.queue:  # later arrivals are placed knowing these processors are free
                self._freed.append((t, planned, 0))

    def schedule(self, t: float) -> list[int]:
        """One scheduling pass at time t; returns the jobs started now, in start order."""
        if not self.queue:
            return []
        started = self._pass(t)
        if started:
            queue = self.queue
            k = 0
            while k < len(started) and started[k] == queue[k]:
                k += 1
            del queue[:k]
            if k < len(started):
                chosen = set(started[k:])
                queue[:] = [job for job in queue if job not in chosen]
            if queue:
                head = queue[0]
                self.jobs_backfilled += sum(1 for job in started if job > head)
        return started

    def _start(self, job: int, t: float) -> None:
        self.free -= self.size[job]
        self.start[job] = t
        insort(self._ends, (t + self.estimate[job], job))

    # ------------------------------------------------------------------ fcfs and easy
    def _start_heads(self, t: float) -> list[int]:
        started = []
        size = self.size
        for job in self.queue:
            if size[job] > self.free:
                break
            self._start(job, t)
            started.append(job)
        return started

    def _pass_fcfs(self, t: float) -> list[int]:
        return self._start_heads(t)

    def shadow(self, job: int, t: float) -> tuple[float, int]:
        """Shadow time S of a blocked job and the processors left over at S.

        S is the earliest time >= t at which ``job`` fits, given the planned ends of the
        running jobs; every job planned to end by S counts in the left-over processors.
        """
        need = self.size[job]
        available = self.free
        if available >= need:
            return t, available - need
        ends = self._ends
        size = self.size
        k = 0
        while available < need:
            end, other = ends[k]
            available += size[other]
            k += 1
        shadow = max(end, t)
        while k < len(ends) and ends[k][0] <= shadow:
            available += size[ends[k][1]]
            k += 1
        return shadow, available - need

    def _pass_easy(self, t: float) -> list[int]:
        started = self._start_heads(t)
        queue = self.queue
        if len(started) == len(queue) or self.free == 0:
            self._easy_memo = None
            return started
        if started and not self.backfill_after_start:
            self._easy_memo = None
            return started
        head = queue[len(started)]
        memo = self._easy_memo
        if memo is not None and memo[0] == head and memo[1] >= t:
            # Nothing ended since the last pass and the shadow time is still ahead: the jobs
            # rejected then are rejected now (t only grew), so only newcomers are candidates.
            _, shadow, extra, last = memo
            first = bisect_right(queue, last)
        else:
            shadow, extra = self.shadow(head, t)
            first = len(started) + 1
        size = self.size
        estimate = self.estimate
        for job in islice(queue, first, None):
            width = size[job]
            if width > self.free:
                continue
            if t + estimate[job] <= shadow:
                self._start(job, t)
                started.append(job)
            elif width <= extra:
                extra -= width
                self._start(job, t)
                started.append(job)
            if self.free == 0:
                break
        self._easy_memo = (head, shadow, extra, queue[-1]) if self.free > 0 else None
        return started

    # ------------------------------------------------------------------ sjf and random
    def _pass_sjf(self, t: float) -> list[int]:
        """Start jobs in order of estimate (ties: arrival) until one does not fit."""
        order = self._by_estimate
        queue = self.queue
        estimate = self.estimate
        # The queue is in index order: jobs after the last one sorted are newcomers, whose
        # estimates are final by now (a predictor rewrites them at arrival).
        for job in islice(queue, bisect_right(queue, self._sorted_upto), None):
            insort(order, (estimate[job], job))
        self._sorted_upto = queue[-1]
        started = []
        size = self.size
        for _, job in order:
            if size[job] > self.free:
                break
            self._start(job, t)
            started.append(job)
        del order[: len(started)]
        return started

    def _pass_random(self, t: float) -> list[int]:
        """Draw a waiting job uniformly; start it if it fits, else end the pass."""
        waiting = list(self.queue)
        draw = self.rng.integers
        size = self.size
        started = []
        while waiting and self.free > 0:
            job = waiting[int(draw(len(waiting)))]
            if size[job] > self.free:
                break
            waiting.remove(job)
            self._start(job, t)
            started.append(job)
        return started

    # ------------------------------------------------------------------ accasim_easy
    def _pass_accasim(self, t: float) -> list[int]:
        started: list[int] = []
        queue = self.queue
        size = self.size
        rest_from = 0
        if self._reserved_at is not None and self._reserved_at <= t:
            head = queue[0]
            if size[head] <= self.free:
                self._start(head, t)
                started.append(head)
                self._blocked = None
                self._reserved_at = None
            rest_from = 1
        if self._blocked is None:
            position = rest_from
            while position < len(queue) and size[queue[position]] <= self.free:
                self._start(queue[position], t)
                started.append(queue[position])
                position += 1
            if position == len(queue):
                return started
            self._blocked = queue[position]
            if self._reserved_at is None:
                self._reserved_at = self._accasim_slot(self._blocked)
            rest_from = position + 1
        else:
            rest_from = 1
        for job in queue[rest_from:]:
            if size[job] <= self.free:
                self._start(job, t)
                started.append(job)
            if self.free == 0:
                break
        return started

    def _accasim_slot(self, job: int) -> float:
        """AccaSim's reservation time: the first planned end s + est (not clipped to now)
        after which the job fits; the free processors now count first."""
        available = self.free
        need = self.size[job]
        for end, other in self._ends:
            available += self.size[other]
            if available >= need:
                return end
        raise RuntimeError(f"job {job} is wider than site {self.index}")

    # ------------------------------------------------------------------ conservative
    def _prune(self, t: float) -> None:
        """Forget the availability profile before t (the profile then starts at t)."""
        times = self._prof_t
        if times[0] >= t:
            return
        k = bisect_right(times, t) - 1
        if k > 0:
            del times[:k]
            del self._prof_f[:k]
        times[0] = t

    def _earliest(
        self,
        width: int,
        duration: float,
        after: float | None = None,
        own: tuple[float, float] | None = None,
        before: float = float("inf"),
    ) -> float | None:
        """Earliest start >= profile origin where ``width`` processors stay free for
        ``duration`` (for a zero duration: free at that instant).

        ``after``: no start before it can be feasible, so the scan begins there. ``own``: the
        job's current span [begin, end), whose processors count as free (the job is being
        moved); the profile must have breakpoints at both ends of it. ``before``: only starts
        before it are wanted; None when there is none.
        """
        times = self._prof_t
        free = self._prof_f
        n = len(times)
        i = 0 if after is None else max(bisect_right(times, after) - 1, 0)
        low, high = own if own is not None else (0.0, 0.0)
        while True:
            here = times[i]
            if here >= before:
                return None
            if free[i] + (width if low <= here < high else 0) < width:
                i += 1
                continue
            end = here + duration
            j = i + 1
            while j < n and times[j] < end:
                if free[j] + (width if low <= times[j] < high else 0) < width:
                    break
                j += 1
            else:
                return here
            i = j + 1

    def _first_fit_before(
        self, width: int, duration: float, after: float, before: float, clip: float
    ) -> float | None:
        """Earliest breakpoint s in [after, before) (the scan starts in the segment holding
        ``after``) with ``width`` free processors over [s, min(s + duration, clip))."""
        times = self._prof_t
        free = self._prof_f
        n = len(times)
        i = bisect_right(times, after) - 1
        if i < 0:
            i = 0
        while i < n:
            here = times[i]
            if here >= before:
                return None
            if free[i] < width:
                i += 1
                continue
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

    def _add(self, begin: float, duration: float, delta: int) -> None:
        """Add ``delta`` free processors over [begin, begin + duration) (clipped to the
        profile origin: the past is not tracked)."""
        origin = self._prof_t[0]
        if begin < origin:
            duration -= origin - begin
            begin = origin
        if duration <= 0:
            return
        times = self._prof_t
        free = self._prof_f
        # Breakpoints at both ends (the profile origin is <= begin, so first >= 1 if new).
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

    def _build_profile(self, t: float) -> None:
        """The profile of the running jobs alone, each ending at max(s + est, t)."""
        times = [t]
        free = [self.free]
        for planned, job in self._ends:
            if planned <= t:
                free[0] += self.size[job]
            elif planned == times[-1]:
                free[-1] += self.size[job]
            else:
                times.append(planned)
                free.append(free[-1] + self.size[job])
        self._prof_t = times
        self._prof_f = free

    def _refresh_profile(self, t: float) -> None:
        """Rebuild the profile from the running jobs (ending at max(s + est, t)) and the
        reservations where they stand."""
        self._build_profile(t)
        for job, begin in self.reservation.items():
            self._add(begin, self.estimate[job], -self.size[job])

    def _compress(self, t: float) -> None:
        """Re-insert every queued job, in order of reservation start (ties: arrival), at
        its earliest feasible start given the running jobs and the jobs re-inserted before.

        Exact shortcut: a job already at its earliest start stays there unless processors
        were freed (an early completion, an earlier job moving up) somewhere before its
        reservation start; such jobs are skipped. A running job past its estimate or
        a reservation left in the past (behind such a job) forces the literal re-insertion of
        all jobs.
        """
        reservation = self.reservation
        order = self._order
        size = self.size
        estimate = self.estimate
        overran = bool(self._ends) and self._ends[0][0] < t
        stale = bool(order) and order[0][0] < t
        if overran or stale or self._rebuild:
            self._build_profile(t)
            for _, job in order:
                begin = self._earliest(size[job], estimate[job])
                self._add(begin, estimate[job], -size[job])
                reservation[job] = begin
            self._order = sorted((reservation[job], job) for _, job in order)
            self._freed.clear()
            self._rebuild = False
            return
        # Only points before the last reservation start matter (p < old for every job):
        # bound each span by its current free counts up to there.
        horizon = order[-1][0] if order else t
        freed = [
            (a, b, self._span_max(a, min(b, horizon)))
            for a, b, _ in self._freed
            if b > t and a < horizon
        ]
        self._freed = []
        if not freed:
            return
        known = len(freed)
        low = min(span[0] for span in freed)
        top = max(span[2] for span in freed)
        failed: dict[int, tuple[float, float, float]] = {}
        spans: dict[int, tuple[float | None, float, float]] = {}
        # Jobs starting by ``low`` cannot move; ``low`` only drops when a job after them moves.
        moved = False
        for position in range(bisect_right(order, (low, _LAST)), len(order)):
            old, job = order[position]
            duration = estimate[job]
            end = old + duration
            width = size[job]
            if old <= low or width > top:
                continue
            # A start s < old only needs free processors over [s, min(s + est, old)): the
            # rest of its window lies in the job's own span. It was infeasible when the job
            # was last placed or checked, so it can only have become feasible through a
            # point p < old freed since then, where the free count now reaches the width;
            # the maximum free count a span had when freed bounds every later value in it.
            # (reach, until) of a width stay valid while ``freed`` is unchanged and ``old``
            # (non-decreasing along the order) stays below the next span that could qualify.
            cached = spans.get(width)
            if cached is not None and old <= cached[2]:
                reach, until, _ = cached
            else:
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
                spans[width] = (reach, until, valid)
            if reach is None:
                continue
            after = reach - duration
            if after < t:
                after = t
            before = until if until < old else old
            # If no start in [after, before) fits a job of this width, none fits a later job
            # (larger old) with an estimate at least as long and an ``after`` at least as
            # late, until something moves.
            scan = after
            memo = failed.get(width)
            if memo is not None and duration >= memo[0] and after >= memo[1]:
                if memo[2] >= before:
                    continue
                if memo[2] > after:
                    scan = memo[2]
            begin = self._first_fit_before(width, duration, scan, before, old)
            if begin is None:
                failed[width] = (duration, after, before)
                continue
            if begin != old:
                failed.clear()
                if begin + duration > old:  # the spans overlap: only the ends change
                    self._add(begin, old - begin, -width)
                    self._add(begin + duration, old - begin, width)
                else:
                    self._add(old, duration, width)
                    self._add(begin, duration, -width)
                reservation[job] = begin
                order[position] = (begin, job)  # the order is restored after the loop
                moved = True
                freed_from = begin + duration
                if freed_from < old:
                    freed_from = old
                if end > freed_from:
                    most = self._span_max(freed_from, end if end < horizon else horizon)
                    if freed_from < low:
                        low = freed_from
                    if most > top:
                        top = most
                    spans.clear()
                    # Coalesce with an overlapping span freed in this compression (a
                    # coarser span only lets more jobs through the filter, never fewer).
                    for k in range(known, len(freed)):
                        a, b, m = freed[k]
                        if a <= end and freed_from <= b:
                            freed[k] = (min(a, freed_from), max(b, end), max(m, most))
                            break
                    else:
                        freed.append((freed_from, end, most))
        if moved:
            order.sort()
        # Spans freed during this compression may let jobs checked before them move up at
        # the next pass: keep them for the next compression.
        self._freed = freed[known:]

    def _span_max(self, begin: float, end: float) -> int:
        """Most free processors at any instant of [begin, end)."""
        times = self._prof_t
        free = self._prof_f
        k = max(bisect_right(times, begin) - 1, 0)
        most = free[k]
        k += 1
        while k < len(times) and times[k] < end:
            if free[k] > most:
                most = free[k]
            k += 1
        return most

    def _pass_conservative(self, t: float) -> list[int]:
        self._prune(t)
        self._compress(t)
        reservation = self.reservation
        order = self._order
        due = bisect_right(order, (t, _LAST))
        if due == 0:
            return []
        started = []
        waiting = []
        for job in sorted(job for _, job in order[:due]):  # arrival order
            if self.size[job] <= self.free:
                self._start(job, t)
                del reservation[job]
                started.append(job)
            else:
                # Only possible when a running job overran its estimate: plan again next pass.
                self._rebuild = True
                waiting.append((reservation[job], job))
        order[:due] = sorted(waiting)
        return started
