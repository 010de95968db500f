"""MWT, MWWT_s, MWWT_t, MWWT_w: the least mean wait over the site's tentative schedule with
the new job (cumulative: with the finished jobs' waits), each wait weighted by 1, the size,
the estimate or the work (level 3)."""

from __future__ import annotations

from typing import ClassVar

from campaign.models.grid.strategies.tentative import Tentative


class MeanWait(Tentative):
    """``column``: the weight, and the column of the finished jobs' sums (``Broker.done``):
    1 none, 2 size, 3 estimate, 4 size * estimate."""

    name = "mwt"
    column: ClassVar[int] = 1
    weighs_waits = True

    def term(self, job: int, begin: float) -> float:
        """The job's wait from its submission to ``begin``, weighted by the column's weight."""
        view = self.view
        wait = begin - view.submit[job]
        column = self.column
        if column == 2:
            wait *= view.size[job]
        elif column == 3:
            wait *= view.estimate[job]
        elif column == 4:
            wait *= view.size[job] * view.estimate[job]
        return wait

    def queued_terms(self, starts, terms: list[float], total: float) -> float:
        term = self.term
        for k, begin_k, _ in starts:
            total += term(k, begin_k)
        return total

    def plain_score(self, plan, done) -> float:
        column = self.column
        total = 0.0
        for k, s, _ in plan:
            total += self.term(k, s)
        count = len(plan)
        if done is not None:
            total += done[column]
            count += done[0]
        return total / count

    def score(self, job, i, t, summary, now, last, terms, total, done) -> float:
        column = self.column
        total += self.term(job, now)
        count = len(summary.jobs) + len(self.view.sites[i].queue) + 1
        if done is not None:
            total += done[column]
            count += done[0]
        return total / count


class MeanWaitBySize(MeanWait):
    name = "mwwt_s"
    column = 2


class MeanWaitByEstimate(MeanWait):
    name = "mwwt_t"
    column = 3


class MeanWaitByWork(MeanWait):
    name = "mwwt_w"
    column = 4
