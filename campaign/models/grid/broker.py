"""The grid broker: places every job on arrival on one site (parallel-jobs.md section 4).

Fourteen strategies at three information levels: level 1 sees sizes and the jobs already sent,
level 2 adds the broker's estimates, level 3 adds the sites' schedules (a tentative strict-FCFS
schedule per site). Every strategy minimises a score over the admissible feasible sites; ties
go to the smallest site index. Scores are exposed (``scores``) so tests can check them.

Each strategy is a class of ``grid.strategies`` found by name. The broker keeps what all share
(the admissible sites, the finished jobs of the cumulative scope), asks the strategy for the
scores and picks the lowest; the strategy reads the broker's state through a read-only
``BrokerView`` and never calls back. The tentative schedule is ``grid.tentative``.

Speed: a site's running jobs change far less often than jobs arrive, so what the scores need
from them is kept per site until a job starts or ends there; each arrival then only plans the
queue and the new job. Every sum adds the same terms in the same order as the plain
computation (``reference=True``, kept to check against), so the scores are bit for bit the
same.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from campaign.models.grid.strategies import REGISTRY, BrokerView
from campaign.models.grid.tentative import tentative
from campaign.models.rigid.site import Site

STRATEGIES = tuple(REGISTRY)
LEVEL = {name: kind.level for name, kind in REGISTRY.items()}
SCOPES = ("active", "cumulative")


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
        kind = REGISTRY.get(strategy)
        if kind is None:
            raise ValueError(f"unknown strategy {strategy!r}; allowed: {', '.join(STRATEGIES)}")
        if tentative_scope not in SCOPES:
            raise ValueError(
                f"unknown tentative_scope {tentative_scope!r}; allowed: active, cumulative"
            )
        if kind.draws and rng is None:
            raise ValueError(f"strategy {strategy!r} needs the policy random stream")
        self.strategy = strategy
        self.sites = list(sites)
        self.processors = [site.processors for site in self.sites]
        self.size = size
        self.submit = submit
        self.estimate = estimate
        self.rng = rng
        self.cumulative = tentative_scope == "cumulative"
        self.alpha = admissibility
        self.done = [[0, 0.0, 0.0, 0.0, 0.0, -math.inf, 0.0] for _ in self.sites]
        """Finished jobs per site (cumulative scope): count, sum of wait * v for v in
        (1, size, est, size * est), largest end, sum of end * size * est."""
        self._start: dict[int, float] = {}
        self.reference = reference
        """Score with the plain code (every running job walked at every arrival)."""
        self.view = BrokerView(
            sites=tuple(self.sites),
            processors=tuple(self.processors),
            size=size,
            submit=submit,
            estimate=estimate,
            include_new_job=include_new_job,
            done=self.done if self.cumulative else None,
        )
        """What the strategy may read."""
        self.scorer = kind(self.view)
        """The strategy (``grid.strategies``)."""
        self._draws = kind.draws

    # ------------------------------------------------------------------ loop hooks
    def place(self, job: int, t: float, sites: Sequence[Site]) -> int:
        """The chosen site index: the lowest score (ties to the smallest index), or a draw
        from the policy stream for a strategy that draws."""
        candidates = self.candidates(job)
        if not candidates:
            raise ValueError(f"job {job} (size {self.size[job]}) fits on no site")
        if self._draws:
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
        done = self.done[site]
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
        if self.reference:
            return self.scorer.plain(job, t, candidates)
        return self.scorer.fast(job, t, candidates)

    def tentative(self, job: int, i: int, t: float) -> list[tuple[int, float, float]]:
        """Strict-FCFS tentative schedule of site i with the new job last: (job, S, C).

        Running jobs keep their real start and end at max(s + est, t); queued jobs follow in
        queue order, each starting no earlier than the previous one.
        """
        return tentative(self.sites[i], self.size, self.estimate, job, t)
