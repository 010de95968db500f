"""SJF: shortest estimate first (ties: arrival); a job that does not fit ends the pass."""

from __future__ import annotations

from bisect import bisect_right, insort

from campaign.models.rigid.policies.base import Policy


class Sjf(Policy):
    name = "sjf"

    def __init__(self, site) -> None:
        super().__init__(site)
        self._by_estimate: list[tuple[float, int]] = []
        """Queued jobs sorted by (estimate, job)."""
        self._sorted_upto = -1
        """The last job inserted there."""

    def select(self, t: float) -> list[int]:
        site = self.site
        order = self._by_estimate
        queue = site.queue
        estimate = site.estimate
        # The queue is in index order: jobs after the last one sorted are newcomers, whose
        # estimates are final by now (a predictor rewrites them at arrival).
        for job in queue[
            bisect_right(queue, self._sorted_upto) :
        ]:  # islice would step over the head
            insort(order, (estimate[job], job))
        self._sorted_upto = queue[-1]
        started = []
        size = site.size
        for _, job in order:
            if size[job] > site.free:
                break
            site.start_job(job, t)
            started.append(job)
        del order[: len(started)]
        return started
