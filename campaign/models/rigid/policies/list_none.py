"""A list order without backfilling: start L's head while it fits (head-of-line blocking)."""

from __future__ import annotations

from campaign.models.rigid.policies.listed import ListPolicy


class ListNone(ListPolicy):
    name = "list_none"
    mode = "none"

    def select(self, t: float) -> list[int]:
        site = self.site
        size = site.size
        listing = self.listing(t)
        started = []
        for job in listing:
            if size[job] > site.free:
                break
            site.start_job(job, t)
            started.append(job)
        return self.started(listing, started)
