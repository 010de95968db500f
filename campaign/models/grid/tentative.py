"""A site's tentative strict-FCFS schedule with a new job last (parallel-jobs.md section 4):
what the level-3 strategies score, computed from scratch (the broker's ``tentative`` and the
strategies' plain scores; their fast scores keep the planned queue between arrivals).

The running jobs keep their real start and end at max(s + est, t); the queued jobs follow in
queue order, each starting no earlier than the previous one, then the new job.
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from campaign.models.rigid.site import Site


def tentative(
    site: Site, size: Sequence[int], est: Sequence[float], job: int, t: float
) -> list[tuple[int, float, float]]:
    """Strict-FCFS tentative schedule of ``site`` with ``job`` last: (job, S, C) per job."""
    pop = heapq.heappop
    push = heapq.heappush
    ends: list[tuple[float, int]] = []
    plan: list[tuple[int, float, float]] = []
    free = site.processors
    for k, begin in sorted(site.start.items()):
        end = begin + est[k]
        if end < t:
            end = t
        width = size[k]
        plan.append((k, begin, end))
        ends.append((end, width))
        free -= width
    heapq.heapify(ends)
    now = t
    for k in [*site.queue, job]:
        width = size[k]
        while free < width:
            end, released = pop(ends)
            if end > now:
                now = end
            free += released
        end = now + est[k]
        plan.append((k, now, end))
        push(ends, (end, width))
        free -= width
    return plan
