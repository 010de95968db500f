"""EASY backfilling: only the queue head is protected; its shadow time is recomputed every
pass (parallel-jobs.md section 3)."""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from itertools import islice

from campaign.models.rigid.policies.base import Policy, PolicyOptions
from campaign.models.rigid.policies.fcfs import start_heads
from campaign.models.rigid.policies.widths import Widths


@dataclass(frozen=True)
class EasyOptions(PolicyOptions):
    backfill_after_start: bool = True
    """Backfill in a pass that started the queue head (false: the datacenter reference
    simulator's rule, ``DatacenterEasy``, which ``make_policy`` builds for it)."""


class Easy(Policy):
    """After the leading jobs that fit, a later job starts iff it ends by the blocked head's
    shadow time or fits in the processors left over at that time."""

    name = "easy"
    options_type = EasyOptions
    backfill_after_start = True
    """Whether a pass that started the queue head still backfills."""

    def __init__(self, site) -> None:
        super().__init__(site)
        self._memo: tuple[int, float, int, int, int] | None = None
        """(blocked head, shadow time, left-over processors, last job examined, jobs ended
        at the site by then)."""
        self._widths = Widths(site.size, site.estimate)
        """The queue's widths, for backfilling to visit only the jobs that fit."""

    def select(self, t: float) -> list[int]:
        site = self.site
        queue = site.queue
        widths = self._widths if self._widths.step(queue) else None
        started = start_heads(site, t)
        if widths is not None:
            widths.gone.extend(range(len(started)))
        if len(started) == len(queue) or site.free == 0:
            self._memo = None
            return started
        if started and not self.backfill_after_start:
            self._memo = None
            return started
        head = queue[len(started)]
        memo = self._memo
        if memo is not None and memo[0] == head and memo[1] >= t and memo[4] == site.ended:
            # Nothing ended since the last pass and the shadow time is still ahead: the jobs
            # rejected then are rejected now (t only grew), so only newcomers are candidates.
            _, shadow, extra, last, _ = memo
            first = bisect_right(queue, last)
        else:
            shadow, extra = site.shadow(head, t)
            first = len(started) + 1
        if widths is None:  # a short queue, walked job by job
            extra = backfill(site, islice(queue, first, None), t, shadow, extra, started)
        else:
            extra = backfill_from(site, queue, widths, first, t, shadow, extra, started)
        self._memo = (head, shadow, extra, queue[-1], site.ended) if site.free > 0 else None
        return started


def backfill(
    site, candidates: Iterable[int], t: float, shadow: float, extra: int, started: list[int]
) -> int:
    """EASY's backfilling over ``candidates`` in order: start each job that fits now and ends
    by the shadow time or fits in the ``extra`` processors the head leaves (appended to
    ``started``); the extra processors left. Plain EASY and list EASY share it."""
    size = site.size
    estimate = site.estimate
    for job in candidates:
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
    return extra


def backfill_from(
    site,
    listing: list[int],
    widths: Widths,
    first: int,
    t: float,
    shadow: float,
    extra: int,
    started: list[int],
) -> int:
    """``backfill`` over ``listing`` from position ``first``, visiting only the jobs that
    fit (``widths`` in step with ``listing``; the positions started join ``widths.gone``)."""
    size = site.size
    estimate = site.estimate
    gone = widths.gone
    if widths.estimates is not None and len(listing) - first > 64:
        # On a long list, the jobs that may start are picked out by numpy at once (starts
        # only shrink the free and extra processors: no other job becomes one).
        positions = widths.easy_candidates(first, t, shadow, site.free, extra)
    else:
        positions = fitting_positions(widths, first, site)
    for k in positions:
        job = listing[k]
        width = size[job]
        if width > site.free:
            continue
        if t + estimate[job] <= shadow:
            site.start_job(job, t)
            started.append(job)
            gone.append(k)
        elif width <= extra:
            extra -= width
            site.start_job(job, t)
            started.append(job)
            gone.append(k)
        if site.free == 0:
            break
    return extra


def fitting_positions(widths: Widths, first: int, site) -> Iterator[int]:
    """The positions from ``first`` on whose jobs may fit in the site's free processors,
    each found after the jobs before it started (the free processors as they are then)."""
    fitting = widths.fitting
    k = fitting(first, site.free)
    while k >= 0:
        yield k
        k = fitting(k + 1, site.free)
