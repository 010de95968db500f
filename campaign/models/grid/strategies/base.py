"""The interface every grid allocation strategy implements (parallel-jobs.md section 4).

A strategy scores the admissible feasible sites for an arriving job (lower is better); the
broker places the job on the best one, ties to the smallest site index. Each strategy has a
fast score, from what it keeps per site between arrivals (``RunningJobs``), and a plain one
(``Broker(reference=True)``) walking every job at every arrival: both add the same terms in
the same order, so the scores are bit for bit the same.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, ClassVar

from campaign.models.grid.strategies.running import RunningJobs

if TYPE_CHECKING:
    from campaign.models.grid.broker import Broker


class Strategy:
    """Scores sites for one broker; subclasses set ``name``, ``level`` and the scores."""

    name: ClassVar[str] = ""
    level: ClassVar[int] = 1
    """Information level: 1 sizes and jobs sent, 2 adds estimates, 3 the sites' schedules."""
    needs_rng: ClassVar[bool] = False
    """Whether the strategy draws from the policy stream (the broker's ``rng``)."""
    keeps_plan: ClassVar[bool] = False
    """Whether the running summaries keep (planned end, width, estimate) per job."""

    def __init__(self, broker: Broker) -> None:
        self.broker = broker
        self.sites = broker.sites
        self.processors = broker.processors
        self.size = broker.size
        self.submit = broker.submit
        self.estimate = broker.estimate
        self.include = broker.include
        self._running: list[RunningJobs | None] = [None] * len(self.sites)
        """Per site: what the scores need from its running jobs, while they stay the same."""

    def pick(self, job: int, t: float, candidates: Sequence[int]) -> int:
        """The candidate of the lowest score (the broker's, which a test may watch); ties to
        the smallest index."""
        scores = self.broker.scores(job, t, candidates)
        best = candidates[0]
        for i in candidates[1:]:
            if scores[i] < scores[best]:
                best = i
        return best

    def fast(self, job: int, t: float, candidates: Sequence[int]) -> dict[int, float]:
        """The score of every candidate from the kept summaries."""
        raise NotImplementedError

    def plain(self, job: int, t: float, candidates: Sequence[int]) -> dict[int, float]:
        """The score of every candidate computed from scratch (the reference)."""
        raise NotImplementedError

    def term(self, job: int, begin: float) -> float:
        """A running job's term of the strategy's sum (``RunningJobs``)."""
        return 0.0

    def summary(self, i: int) -> RunningJobs:
        """Site i's running jobs as this strategy scores them, up to date."""
        summary = self._running[i]
        if summary is None:
            summary = self._running[i] = RunningJobs(self, self.sites[i])
        return summary.update()

    def active(self, i: int) -> list[int]:
        """Site i's running then queued jobs."""
        site = self.sites[i]
        return [*site.start, *site.queue]
