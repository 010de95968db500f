"""Greedy list scheduling (Garey & Graham with the FCFS order): every job of L that fits
now starts, in L order; nothing is reserved."""

from __future__ import annotations

from campaign.models.rigid.policies.listed import ListPolicy


class ListGreedy(ListPolicy):
    name = "list_greedy"
    mode = "greedy"

    def select(self, t: float) -> list[int]:
        site = self.site
        size = site.size
        listing = self.listing(t)
        started = []
        for job in listing:
            if size[job] <= site.free:
                site.start_job(job, t)
                started.append(job)
                if site.free == 0:
                    break
        return self.started(listing, started)
