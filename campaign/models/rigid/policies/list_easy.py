"""EASY backfilling over a list order: the first job of L that does not fit is protected by
its shadow time; later jobs of L start iff they end by it or fit in the processors left over
at it (parallel-jobs.md section 3 with the queue in L order)."""

from __future__ import annotations

from itertools import islice

from campaign.models.rigid.policies.easy import backfill, backfill_from
from campaign.models.rigid.policies.listed import ListOptions, ListPolicy
from campaign.models.rigid.policies.widths import Widths


class ListEasy(ListPolicy):
    name = "list_easy"
    mode = "easy"

    def __init__(self, site, options: ListOptions) -> None:
        super().__init__(site, options)
        self._memo: tuple[int, float, int, int, int] | None = None
        """(blocked head, shadow time, left-over processors, length of L after the pass,
        jobs ended at the site by then)."""
        self._reference = options.reference
        """Scan all of L at every pass, job by job (the literal rule; the memo and the
        widths are checked against it)."""
        self._widths = Widths(site.size, site.estimate)
        """L's widths, for backfilling to visit only the jobs that fit."""

    def select(self, t: float) -> list[int]:
        site = self.site
        size = site.size
        listing = self.listing(t)
        widths = None if self._reference else self._widths
        if widths is not None:
            widths.follow(listing, self.recomputed)
        started = []
        k = 0
        for job in listing:
            if size[job] > site.free:
                break
            site.start_job(job, t)
            started.append(job)
            k += 1
        if widths is not None:
            widths.gone.extend(range(k))
        if k == len(listing) or site.free == 0:
            self._memo = None
            return self.started(listing, started)
        head = listing[k]
        memo = self._memo
        if (
            memo is not None
            and not self._reference
            and not self.recomputed
            and memo[0] == head
            and memo[1] >= t
            and memo[4] == site.ended
        ):
            # Nothing ended since the last pass, L was not reordered and the shadow time is
            # still ahead: the jobs rejected then are rejected now (t only grew, the free and
            # left-over processors only shrank), so only the newcomers (at L's end) are
            # candidates.
            _, shadow, extra, first, _ = memo
        else:
            shadow, extra = site.shadow(head, t)
            first = k + 1
        if widths is None:
            extra = backfill(site, islice(listing, first, None), t, shadow, extra, started)
        else:
            extra = backfill_from(site, listing, widths, first, t, shadow, extra, started)
        self._memo = (
            (head, shadow, extra, len(listing) - len(started), site.ended)
            if site.free > 0
            else None
        )
        return self.started(listing, started, None if widths is None else widths.gone)
