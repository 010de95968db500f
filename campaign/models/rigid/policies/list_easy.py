"""EASY backfilling over a list order: the first job of L that does not fit is protected by
its shadow time; later jobs of L start iff they end by it or fit in the processors left over
at it (parallel-jobs.md section 3 with the queue in L order)."""

from __future__ import annotations

from campaign.models.rigid.policies.listed import ListPolicy


class ListEasy(ListPolicy):
    name = "list_easy"
    mode = "easy"

    def select(self, t: float) -> list[int]:
        site = self.site
        size = site.size
        estimate = site.estimate
        listing = self.listing(t)
        started = []
        k = 0
        for job in listing:
            if size[job] > site.free:
                break
            site.start_job(job, t)
            started.append(job)
            k += 1
        if k < len(listing) and site.free > 0:
            shadow, extra = site.shadow(listing[k], t)
            for job in listing[k + 1 :]:
                width = size[job]
                if width > site.free:
                    continue
                if t + estimate[job] <= shadow:
                    site.start_job(job, t)
                    started.append(job)
                elif width <= extra:
                    extra -= width
                    site.start_job(job, t)
                    started.append(job)
                if site.free == 0:
                    break
        return self.started(listing, started)
