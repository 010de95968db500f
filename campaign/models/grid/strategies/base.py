"""The interface every grid allocation strategy implements (parallel-jobs.md section 4).

A strategy scores the admissible feasible sites for an arriving job (lower is better); the
broker asks for the scores, places the job on the best site (ties to the smallest site index)
and keeps the state they read. A strategy sees that state through a :class:`BrokerView`, never
the broker itself. Each strategy has a fast score, from what it keeps per site between
arrivals (``RunningJobs``), and a plain one (``Broker(reference=True)``) walking every job at
every arrival: both add the same terms in the same order, so the scores are bit for bit the
same.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from campaign.models.grid.strategies.running import RunningJobs

if TYPE_CHECKING:
    from campaign.models.rigid.site import Site


@dataclass(frozen=True, slots=True)
class BrokerView:
    """What a strategy may read of its broker. The sequences are the broker's own: the sites
    run and the broker writes estimates (a predictor, at arrival) and finished jobs' sums
    into them; a strategy only reads them."""

    sites: Sequence[Site]
    """The sites, in index order (ascending size)."""
    processors: Sequence[int]
    """Processors per site."""
    size: Sequence[int]
    """Per job: its width."""
    submit: Sequence[float]
    """Per job: its submission time."""
    estimate: Sequence[float]
    """Per job: the runtime the broker believes (``broker_estimate``)."""
    include_new_job: bool
    """Whether the load of levels 1 and 2 counts the arriving job."""
    done: Sequence[Sequence[float]] | None
    """Cumulative tentative scope: per site, the finished jobs' count, sums of wait * v for v
    in (1, size, est, size * est), largest end and sum of end * size * est (``Broker.done``);
    None in the active scope."""


class Strategy:
    """Scores sites for one broker; subclasses set ``name``, ``level`` and the scores."""

    name: ClassVar[str] = ""
    level: ClassVar[int] = 1
    """Information level: 1 sizes and jobs sent, 2 adds estimates, 3 the sites' schedules."""
    draws: ClassVar[bool] = False
    """Whether the broker draws the site from the policy stream (its ``rng``) instead of
    placing the job on the lowest score."""
    keeps_plan: ClassVar[bool] = False
    """Whether the running summaries keep (planned end, width, estimate) per job."""

    def __init__(self, view: BrokerView) -> None:
        self.view = view
        self._running: list[RunningJobs | None] = [None] * len(view.sites)
        """Per site: what the scores need from its running jobs, while they stay the same."""

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
            view = self.view
            summary = self._running[i] = RunningJobs(
                view.sites[i],
                view.size,
                view.estimate,
                self.term,
                planned=self.level >= 3,
                keeps_plan=self.keeps_plan,
            )
        return summary.update()

    def active(self, i: int) -> list[int]:
        """Site i's running then queued jobs."""
        site = self.view.sites[i]
        return [*site.start, *site.queue]
