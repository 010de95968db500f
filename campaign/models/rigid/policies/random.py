"""Random: each pass draws a waiting job uniformly from the policy stream and starts it while
it fits; a pass draws only while a processor is free, since no draw could start a job
otherwise."""

from __future__ import annotations

import numpy as np

from campaign.models.rigid.policies.base import Policy, PolicyOptions


class Random(Policy):
    name = "random"
    needs_rng = True

    def __init__(self, site, rng: np.random.Generator) -> None:
        super().__init__(site)
        self.rng = rng

    @classmethod
    def create(cls, site, options: PolicyOptions) -> Policy:
        return cls(site, site.rng)

    def select(self, t: float) -> list[int]:
        site = self.site
        waiting = site.queue  # read only: copied at the first start (most passes start none)
        draw = self.rng.integers
        size = site.size
        started = []
        while waiting and site.free > 0:
            drawn = int(draw(len(waiting)))
            job = waiting[drawn]
            if size[job] > site.free:
                break
            if not started:
                waiting = list(waiting)
            del waiting[drawn]  # by position: a search by value would read the whole queue
            site.start_job(job, t)
            started.append(job)
        return started
