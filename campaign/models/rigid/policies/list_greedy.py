"""Greedy list scheduling (Garey & Graham with the FCFS order): every job of L that fits
now starts, in L order; nothing is reserved."""

from __future__ import annotations

from campaign.models.rigid.policies.listed import ListOptions, ListPolicy
from campaign.models.rigid.policies.widths import Widths


class ListGreedy(ListPolicy):
    name = "list_greedy"
    mode = "greedy"

    def __init__(self, site, options: ListOptions) -> None:
        super().__init__(site, options)
        self._widths = Widths(site.size)
        """L's widths, for a pass to visit only the jobs that fit."""
        self._reference = options.reference
        """Look at every job of L at every pass (the literal rule the fast pass is checked
        against)."""

    def select(self, t: float) -> list[int]:
        site = self.site
        size = site.size
        listing = self.listing(t)
        if self._reference:
            started = []
            for job in listing:
                if size[job] <= site.free:
                    site.start_job(job, t)
                    started.append(job)
                    if site.free == 0:
                        break
            return self.started(listing, started)
        widths = self._widths
        widths.follow(listing, self.recomputed)
        gone = widths.gone
        started = []
        k = widths.fitting(0, site.free)
        while k >= 0:
            job = listing[k]
            if size[job] <= site.free:
                site.start_job(job, t)
                started.append(job)
                gone.append(k)
                if site.free == 0:
                    break
            k = widths.fitting(k + 1, site.free)
        return self.started(listing, started, gone)
