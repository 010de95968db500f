"""FCFS: start jobs in arrival order until the first one that does not fit."""

from __future__ import annotations

from campaign.models.rigid.policies.base import Policy


def start_heads(site, t: float) -> list[int]:
    """Start the queue's leading jobs, in arrival order, while they fit."""
    started = []
    size = site.size
    for job in site.queue:
        if size[job] > site.free:
            break
        site.start_job(job, t)
        started.append(job)
    return started


class Fcfs(Policy):
    name = "fcfs"

    def select(self, t: float) -> list[int]:
        return start_heads(self.site, t)
