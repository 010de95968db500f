"""The grid broker: places every job on arrival on one site (parallel-jobs.md section 4).

Fourteen strategies at three information levels: level 1 sees sizes and the jobs already sent,
level 2 adds the broker's estimates, level 3 adds the sites' schedules (a tentative strict-FCFS
schedule per site). Every strategy minimises a score over the admissible feasible sites; ties
go to the smallest site index. Scores are exposed (``scores``) so tests can check them.

Speed: a site's running jobs change far less often than jobs arrive, so what the scores need
from them (their planned ends in order, free processors, the running part of every sum) is
kept per site until a job starts or ends there; each arrival then only plans the queue and
the new job. Every sum adds the same terms in the same order as the plain computation
(``reference=True``, kept to check against), so the scores are bit for bit the same.
"""

from __future__ import annotations

import heapq
import math
from bisect import bisect_left, insort
from collections.abc import Sequence
from functools import reduce
from itertools import chain
from operator import add

import numpy as np

from campaign.models.rigid.site import Site

STRATEGIES = (
    "random",
    "mlp",
    "mpl",
    "lbal_s",
    "lbal_t",
    "lbal_w",
    "mlb",
    "mct",
    "mwt",
    "mwwt_s",
    "mwwt_t",
    "mwwt_w",
    "mst",
    "mswct_w",
)
LEVEL = {
    "random": 1,
    "mlp": 1,
    "mpl": 1,
    "lbal_s": 1,
    "lbal_t": 2,
    "lbal_w": 2,
    "mlb": 2,
    "mct": 3,
    "mwt": 3,
    "mwwt_s": 3,
    "mwwt_t": 3,
    "mwwt_w": 3,
    "mst": 3,
    "mswct_w": 3,
}
SCOPES = ("active", "cumulative")


_COLUMN = {"mwt": 1, "mwwt_s": 2, "mwwt_t": 3, "mwwt_w": 4}


def _end(entry: tuple[int, float, float]) -> float:
    return entry[2]


_SHORT = 8
"""Rows shorter than this are summed by numpy one element after the other (longer ones
pairwise), the order ``_population_std`` follows."""


def _population_std(row: list[float]) -> float:
    """``numpy.std(row)`` bit for bit for a row shorter than ``_SHORT``, without building an
    array: the sums run from 0.0 in order, the mean and the variance divide by the length."""
    n = len(row)
    total = 0.0
    for x in row:
        total += x
    mean = total / n
    square = 0.0
    for x in row:
        d = x - mean
        square += d * d
    return math.sqrt(square / n)


class _Running:
    """What one strategy's scores need from one site's running jobs, brought up to date
    from the jobs that started or ended there since it was last asked (``key``: jobs ended
    there, jobs running there, changes with every start and end)."""

    def __init__(self, broker: Broker, site: Site) -> None:
        self.site = site
        self.size = broker.size
        self.estimate = broker.estimate
        self.submit = broker.submit
        strategy = broker.strategy
        self.kind = strategy[-1] if strategy.startswith("lbal_") else strategy
        self.column = _COLUMN.get(strategy, 0)
        self.level = LEVEL[strategy]
        self.key = (-1, -1)
        self.begin: dict[int, float] = {}
        """The running jobs seen and their starts."""
        self.jobs: list[int] = []
        """Level 3: the running jobs in job order (the order the plain sums add them)."""
        self.ends: list[tuple[float, int]] = []
        """Level 3: (planned end s + est, processors) ascending: a valid heap as it is."""
        self.free = site.processors
        self.terms: list[float] = []
        """Level 3: per running job in job order, its term of the strategy's sum."""
        self.plan: list[tuple[float, int, float]] = []
        """MSWCT_w: (planned end, processors, estimate) per running job in job order."""
        self.by_start: dict[int, float] = {}
        """Levels 1-2: per running job in start order (the site's order), its term."""
        self._total: float | None = 0.0
        self.queued: tuple | None = None
        """Level 3: the site's queue planned behind the running jobs (``Broker._queued``);
        LBAL: (key, the site's load)."""

    def update(self) -> _Running:
        site = self.site
        key = (site.ended, len(site.start))
        if key == self.key:
            return self
        self.key = key
        running = site.start
        seen = self.begin
        for job in seen.keys() - running.keys():
            self._remove(job, seen.pop(job))
        new = running.keys() - seen.keys()
        if len(new) > 1:
            new = [job for job in running if job in new]  # the site's (start) order
        for job in new:
            seen[job] = running[job]
            self._add(job, running[job])
        self._total = None
        return self

    def _term(self, job: int, begin: float) -> float:
        if self.level <= 2:
            kind = self.kind
            if kind in ("mpl", "s"):
                return self.size[job] if kind == "mpl" else float(self.size[job])
            if kind == "mlb":
                return self.size[job] * self.estimate[job]
            if kind == "t":
                return float(self.estimate[job])
            return float(self.size[job] * self.estimate[job])  # lbal_w
        if self.kind == "mswct_w":
            return (begin + self.estimate[job]) * self.size[job] * self.estimate[job]
        wait = begin - self.submit[job]
        column = self.column
        if column == 2:
            wait *= self.size[job]
        elif column == 3:
            wait *= self.estimate[job]
        elif column == 4:
            wait *= self.size[job] * self.estimate[job]
        return wait

    def _add(self, job: int, begin: float) -> None:
        if self.level <= 2:
            self.by_start[job] = self._term(job, begin)
            return
        width = self.size[job]
        end = begin + self.estimate[job]
        self.free -= width
        insort(self.ends, (end, width))
        position = bisect_left(self.jobs, job)
        self.jobs.insert(position, job)
        self.terms.insert(position, self._term(job, begin))
        if self.kind == "mswct_w":
            self.plan.insert(position, (end, width, self.estimate[job]))

    def _remove(self, job: int, begin: float) -> None:
        if self.level <= 2:
            del self.by_start[job]
            return
        width = self.size[job]
        self.free += width
        del self.ends[bisect_left(self.ends, (begin + self.estimate[job], width))]
        position = bisect_left(self.jobs, job)
        del self.jobs[position]
        del self.terms[position]
        if self.kind == "mswct_w":
            del self.plan[position]

    @property
    def total(self) -> float:
        """MWT family: the running jobs' waits added one by one in job order, from 0.0."""
        if self._total is None:
            self._total = reduce(add, self.terms, 0.0)
        return self._total


class Broker:
    """Allocation strategy over ``sites`` (Site objects, index order = site order).

    ``size``, ``submit`` and ``estimate`` are per-job sequences; ``estimate`` is what the
    broker believes (``broker_estimate``); it may be updated at arrival by a predictor.
    """

    def __init__(
        self,
        strategy: str,
        sites: Sequence[Site],
        size: Sequence[int],
        submit: Sequence[float],
        estimate: Sequence[float],
        rng: np.random.Generator | None = None,
        include_new_job: bool = True,
        tentative_scope: str = "active",
        admissibility: float | None = None,
        reference: bool = False,
    ) -> None:
        if strategy not in STRATEGIES:
            raise ValueError(f"unknown strategy {strategy!r}; allowed: {', '.join(STRATEGIES)}")
        if tentative_scope not in SCOPES:
            raise ValueError(
                f"unknown tentative_scope {tentative_scope!r}; allowed: active, cumulative"
            )
        if strategy == "random" and rng is None:
            raise ValueError("strategy 'random' needs the policy random stream")
        self.strategy = strategy
        self.sites = list(sites)
        self.processors = [site.processors for site in self.sites]
        self.size = size
        self.submit = submit
        self.estimate = estimate
        self.rng = rng
        self.include = include_new_job
        self.cumulative = tentative_scope == "cumulative"
        self.alpha = admissibility
        # Finished jobs per site (cumulative scope): count, sum of wait * v for v in
        # (1, size, est, size * est), largest end, sum of end * size * est.
        self._done = [[0, 0.0, 0.0, 0.0, 0.0, -math.inf, 0.0] for _ in self.sites]
        self._start: dict[int, float] = {}
        self.reference = reference
        """Score with the plain code (every running job walked at every arrival)."""
        self._running: list[_Running | None] = [None] * len(self.sites)
        """Per site: what the scores need from its running jobs, while they stay the same."""

    # ------------------------------------------------------------------ loop hooks
    def place(self, job: int, t: float, sites: Sequence[Site]) -> int:
        """The chosen site index (smallest index among equal scores)."""
        candidates = self.candidates(job)
        if not candidates:
            raise ValueError(f"job {job} (size {self.size[job]}) fits on no site")
        if self.strategy == "random":
            return candidates[int(self.rng.integers(len(candidates)))]
        scores = self.scores(job, t, candidates)
        best = candidates[0]
        for i in candidates[1:]:
            if scores[i] < scores[best]:
                best = i
        return best

    def started(self, job: int, t: float) -> None:
        self._start[job] = t

    def completed(self, job: int, site: int, t: float) -> None:
        """Record a finished job for the cumulative tentative scope."""
        if not self.cumulative:
            return
        start = self._start.pop(job)
        wait = start - self.submit[job]
        size = self.size[job]
        est = self.estimate[job]
        done = self._done[site]
        done[0] += 1
        done[1] += wait
        done[2] += wait * size
        done[3] += wait * est
        done[4] += wait * size * est
        done[5] = max(done[5], t)
        done[6] += t * size * est

    # ------------------------------------------------------------------ scores
    def candidates(self, job: int) -> list[int]:
        """Feasible sites (m_i >= size), restricted by the admissibility alpha if set."""
        size = self.size[job]
        feasible = [i for i, m in enumerate(self.processors) if m >= size]
        if self.alpha is None or not feasible:
            return feasible
        first = feasible[0]
        total = sum(self.processors[first:])
        kept = 0
        for last in range(first, len(self.processors)):
            kept += self.processors[last]
            if kept >= self.alpha * total:
                break
        return [i for i in feasible if i <= last]

    def scores(
        self, job: int, t: float, candidates: Sequence[int] | None = None
    ) -> dict[int, float]:
        """Score of every candidate site for the new job (lower is better)."""
        if candidates is None:
            candidates = self.candidates(job)
        strategy = self.strategy
        if self.reference:
            if strategy.startswith("lbal_"):
                return self._lbal(job, candidates, strategy[-1])
            if LEVEL[strategy] <= 2:
                return {i: self._load(job, i) for i in candidates}
            return {i: self._tentative(job, i, t) for i in candidates}
        if strategy.startswith("lbal_"):
            return self._lbal_fast(job, candidates, strategy[-1])
        if LEVEL[strategy] <= 2:
            return {i: self._load_fast(job, i) for i in candidates}
        return {i: self._tentative_fast(job, i, t) for i in candidates}

    def _active(self, i: int) -> list[int]:
        site = self.sites[i]
        return [*site.start, *site.queue]

    def _load(self, job: int, i: int) -> float:
        """MLp, MPL, MLB: jobs, processors or work at the site (with the new job) per processor."""
        active = self._active(i)
        strategy = self.strategy
        if strategy == "mlp":
            value = len(active) + (1 if self.include else 0)
        elif strategy == "mpl":
            value = sum(self.size[k] for k in active) + (self.size[job] if self.include else 0)
        else:  # mlb
            value = sum(self.size[k] * self.estimate[k] for k in active)
            if self.include:
                value += self.size[job] * self.estimate[job]
        return value / self.processors[i]

    def _load_fast(self, job: int, i: int) -> float:
        """``_load`` with the running jobs' terms kept from one arrival to the next."""
        site = self.sites[i]
        strategy = self.strategy
        if strategy == "mlp":
            value = len(site.start) + len(site.queue) + (1 if self.include else 0)
        else:
            terms = self._summary(i).by_start.values()
            size = self.size
            if strategy == "mpl":
                queued = (size[k] for k in site.queue)
                value = sum(chain(terms, queued)) + (size[job] if self.include else 0)
            else:  # mlb
                est = self.estimate
                value = sum(chain(terms, (size[k] * est[k] for k in site.queue)))
                if self.include:
                    value += size[job] * est[job]
        return value / self.processors[i]

    def _lbal_fast(self, job: int, candidates: Sequence[int], kind: str) -> dict[int, float]:
        """``_lbal`` with the running jobs' terms kept, every candidate in one array."""
        measure = self._measure
        base = []
        for i, site in enumerate(self.sites):
            summary = self._summary(i)
            key = (summary.key, len(site.queue))
            if summary.queued is None or summary.queued[0] != key:
                queued = (measure(k, kind) for k in site.queue)
                summary.queued = (key, sum(chain(summary.by_start.values(), queued)))
            base.append(summary.queued[1])
        extra = measure(job, kind)
        processors = self.processors
        if len(base) >= _SHORT:
            rows = [
                [
                    (b + (extra if i == q else 0.0)) / m
                    for i, (b, m) in enumerate(zip(base, processors))
                ]
                for q in candidates
            ]
            return dict(zip(candidates, np.array(rows).std(axis=1).tolist()))
        loads = [b / m for b, m in zip(base, processors)]  # b + 0.0 is b: loads are >= 0
        out = {}
        for q in candidates:
            row = loads.copy()
            row[q] = (base[q] + extra) / processors[q]
            out[q] = _population_std(row)
        return out

    def _measure(self, k: int, kind: str) -> float:
        if kind == "s":
            return float(self.size[k])
        if kind == "t":
            return float(self.estimate[k])
        return float(self.size[k] * self.estimate[k])

    def _lbal(self, job: int, candidates: Sequence[int], kind: str) -> dict[int, float]:
        """Population std over all sites of the per-processor load with the job on site q."""
        base = [
            sum(self._measure(k, kind) for k in self._active(i)) for i in range(len(self.sites))
        ]
        extra = self._measure(job, kind)
        out = {}
        for q in candidates:
            load = np.array(
                [
                    (b + (extra if i == q else 0.0)) / m
                    for i, (b, m) in enumerate(zip(base, self.processors))
                ]
            )
            out[q] = float(load.std())
        return out

    def tentative(self, job: int, i: int, t: float) -> list[tuple[int, float, float]]:
        """Strict-FCFS tentative schedule of site i with the new job last: (job, S, C).

        Running jobs keep their real start and end at max(s + est, t); queued jobs follow in
        queue order, each starting no earlier than the previous one.
        """
        site = self.sites[i]
        size = self.size
        est = self.estimate
        pop = heapq.heappop
        push = heapq.heappush
        ends: list[tuple[float, int]] = []
        plan: list[tuple[int, float, float]] = []
        free = site.processors
        for k, begin in sorted(site.start.items()):
            end = begin + est[k]
            if end < t:
                end = t
            width = size[k]
            plan.append((k, begin, end))
            ends.append((end, width))
            free -= width
        heapq.heapify(ends)
        now = t
        for k in [*site.queue, job]:
            width = size[k]
            while free < width:
                end, released = pop(ends)
                if end > now:
                    now = end
                free += released
            end = now + est[k]
            plan.append((k, now, end))
            push(ends, (end, width))
            free -= width
        return plan

    def _summary(self, i: int) -> _Running:
        summary = self._running[i]
        if summary is None:
            summary = self._running[i] = _Running(self, self.sites[i])
        return summary.update()

    def _queued(self, summary: _Running, i: int, t: float) -> tuple:
        """Site i's queue planned strict FCFS behind its running jobs at t: (key, t, bound,
        free, now, left, last, terms, total), where ``left`` is the heap left (sorted),
        ``now`` the last queued start (None: no queue), ``last`` the latest queued end,
        ``terms`` the queued jobs' MSWCT_w terms and ``total`` the MWT family's sum over the
        running and queued jobs. Which jobs a start waits for does not depend on t, only the
        starts do, through the first one: the plan holds for any t up to ``bound``, the end
        after t the first queued job waits for (the order among equal planned ends does not
        change any start). Jobs joining the queue are planned after those already planned."""
        site = self.sites[i]
        queue = site.queue
        key = (summary.key, len(queue))
        plan = summary.queued
        planned = 0
        if plan is not None and plan[0][0] == summary.key and (t == plan[1] or t <= plan[2]):
            planned = plan[0][1]
            if planned == len(queue):
                return plan
        strategy = self.strategy
        column = _COLUMN.get(strategy, 0)
        if 0 < planned < len(queue):
            # No job started here since: the queue only grew, so plan just the newcomers.
            _, begin, bound, free, now, heap, last, terms, total = plan
            heap = heap.copy()
            terms = terms.copy()
        else:
            planned = 0
            begin = t
            bound = -math.inf
            free = summary.free
            now = t
            heap = None
            last = -math.inf
            terms = []
            total = summary.total if column else 0.0
        size = self.size
        est = self.estimate
        pop = heapq.heappop
        push = heapq.heappush
        starts = []
        for position in range(planned, len(queue)):
            k = queue[position]
            width = size[k]
            if free < width:
                if heap is None:
                    heap = summary.ends.copy()
                while free < width:
                    end, released = pop(heap)
                    if end > now:
                        now = end
                    free += released
                if position == 0 and now > t:
                    bound = now
            end = now + est[k]
            if heap is None:
                heap = summary.ends.copy()
            push(heap, (end, width))
            free -= width
            if end > last:
                last = end
            starts.append((k, now, end))
        if strategy == "mswct_w":
            terms += [end * size[k] * est[k] for k, _, end in starts]
        elif column:
            submit = self.submit
            for k, begin_k, _ in starts:
                wait = begin_k - submit[k]
                if column == 2:
                    wait *= size[k]
                elif column == 3:
                    wait *= est[k]
                elif column == 4:
                    wait *= size[k] * est[k]
                total += wait
        left = sorted(heap) if heap is not None else summary.ends
        plan = (key, begin, bound, free, now if queue else None, left, last, terms, total)
        summary.queued = plan
        return plan

    def _tentative_fast(self, job: int, i: int, t: float) -> float:
        """``_tentative`` from the site's running summary and its planned queue: only the new
        job is planned at each arrival."""
        summary = self._summary(i)
        _, _, _, free, now, left, last, terms, total = self._queued(summary, i, t)
        if now is None:
            now = t
        width = self.size[job]
        if free < width:
            for end, released in left:
                free += released
                if free >= width:
                    if end > now:
                        now = end
                    break
        strategy = self.strategy
        if strategy == "mst":
            return now
        size = self.size
        est = self.estimate
        finish = now + est[job]
        done = self._done[i] if self.cumulative else None
        running = summary.ends
        if strategy == "mct":
            value = finish
            if last > value:
                value = last
            if running:  # the running jobs end at max(s + est, t)
                ending = running[-1][0]
                if ending < t:
                    ending = t
                if ending > value:
                    value = ending
            return max(value, done[5]) if done is not None else value
        if strategy == "mswct_w":
            if not running or running[0][0] >= t:
                before = summary.terms
            else:
                before = [(end if end >= t else t) * w * x for end, w, x in summary.plan]
            value = sum(chain(before, terms, (finish * size[job] * est[job],)))
            return value + done[6] if done is not None else value
        column = _COLUMN[strategy]
        wait = now - self.submit[job]
        if column == 2:
            wait *= size[job]
        elif column == 3:
            wait *= est[job]
        elif column == 4:
            wait *= size[job] * est[job]
        total += wait
        count = len(summary.jobs) + len(self.sites[i].queue) + 1
        if done is not None:
            total += done[column]
            count += done[0]
        return total / count

    def _tentative(self, job: int, i: int, t: float) -> float:
        plan = self.tentative(job, i, t)
        strategy = self.strategy
        if strategy == "mst":
            return plan[-1][1]
        size = self.size
        est = self.estimate
        submit = self.submit
        done = self._done[i] if self.cumulative else None
        if strategy == "mct":
            value = max(plan, key=_end)[2]
            return max(value, done[5]) if done is not None else value
        if strategy == "mswct_w":
            value = sum(c * size[k] * est[k] for k, _, c in plan)
            return value + done[6] if done is not None else value
        column = {"mwt": 1, "mwwt_s": 2, "mwwt_t": 3, "mwwt_w": 4}[strategy]
        total = 0.0
        for k, s, _ in plan:
            wait = s - submit[k]
            if column == 2:
                wait *= size[k]
            elif column == 3:
                wait *= est[k]
            elif column == 4:
                wait *= size[k] * est[k]
            total += wait
        count = len(plan)
        if done is not None:
            total += done[column]
            count += done[0]
        return total / count
