"""The EASY variant of AccaSim 1.1.3, for cross-checking against that simulator.

The blocked head's reservation time is computed once; until that time any queued job that
fits now is started without protecting the head; from that time on the head is tried first.
With no event left and a job waiting, the clock steps by one second at a time, as AccaSim's.
"""

from __future__ import annotations

from campaign.models.rigid.policies.base import Policy
from campaign.models.rigid.policies.widths import Widths


class AccasimEasy(Policy):
    name = "accasim_easy"

    def __init__(self, site) -> None:
        super().__init__(site)
        self._blocked: int | None = None
        self._reserved_at: float | None = None
        self._widths = Widths(site.size)
        """The queue's widths, for the pass to visit only the jobs that fit."""

    def wakeup(self, t: float) -> float | None:
        return t + 1.0

    def select(self, t: float) -> list[int]:
        site = self.site
        started: list[int] = []
        queue = site.queue
        size = site.size
        widths = self._widths
        followed = widths.step(queue)  # a short queue is walked job by job
        gone = widths.gone
        rest_from = 0
        if self._reserved_at is not None and self._reserved_at <= t:
            head = queue[0]
            if size[head] <= site.free:
                site.start_job(head, t)
                started.append(head)
                gone.append(0)
                self._blocked = None
                self._reserved_at = None
            rest_from = 1
        if self._blocked is None:
            position = rest_from
            while position < len(queue) and size[queue[position]] <= site.free:
                site.start_job(queue[position], t)
                started.append(queue[position])
                gone.append(position)
                position += 1
            if position == len(queue):
                return started
            self._blocked = queue[position]
            if self._reserved_at is None:
                self._reserved_at = self._slot(self._blocked)
            rest_from = position + 1
        else:
            rest_from = 1
        # The jobs that fit, in queue order (with no processor free, the first job alone is
        # looked at, as AccaSim's loop does).
        if followed and site.free:
            position = widths.fitting(rest_from, site.free)
        else:
            position = rest_from
        while 0 <= position < len(queue):
            job = queue[position]
            if size[job] <= site.free:
                site.start_job(job, t)
                started.append(job)
                gone.append(position)
            if site.free == 0:
                break
            position = widths.fitting(position + 1, site.free) if followed else position + 1
        return started

    def _slot(self, job: int) -> float:
        """AccaSim's reservation time: the first planned end s + est (not clipped to now)
        after which the job fits; the free processors now count first."""
        site = self.site
        available = site.free
        need = site.size[job]
        for end, other in site.ends:
            available += site.size[other]
            if available >= need:
                return end
        raise RuntimeError(f"job {job} is wider than site {site.index}")
