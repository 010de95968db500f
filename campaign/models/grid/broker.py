"""The grid broker: places every job on arrival on one site (parallel-jobs.md section 4).

Fourteen strategies at three information levels: level 1 sees sizes and the jobs already sent,
level 2 adds the broker's estimates, level 3 adds the sites' schedules (a tentative strict-FCFS
schedule per site). Every strategy minimises a score over the admissible feasible sites; ties
go to the smallest site index. Scores are exposed (``scores``) so tests can check them.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Sequence

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


def _end(entry: tuple[int, float, float]) -> float:
    return entry[2]


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
        if strategy.startswith("lbal_"):
            return self._lbal(job, candidates, strategy[-1])
        if LEVEL[strategy] <= 2:
            return {i: self._load(job, i) for i in candidates}
        return {i: self._tentative(job, i, t) for i in candidates}

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
