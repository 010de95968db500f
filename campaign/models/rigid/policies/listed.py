"""What every list policy shares: the list L of waiting jobs in a computed order, recomputed
on-line by the re-ordering trigger (list-scheduling.md section 2.4), and the count of jobs
started ahead of their turn in L."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from campaign.models.rigid.orders import ORDERS
from campaign.models.rigid.policies.base import Policy, PolicyOptions

WEIGHTS = ("unit", "work")


@dataclass(frozen=True)
class ListOptions(PolicyOptions):
    order: str = "fcfs"
    """The order of the waiting jobs (``rigid.orders``; fcfs = arrival)."""
    weight: str = "unit"
    """Scheduler weight of a job, ``unit`` (1) or ``work`` (size * estimate)."""
    reorder_ratio: float | None = 2 / 3
    """Recompute the order at an arrival once more than this share of the last computed
    order has started (None: at every arrival)."""
    smart_gamma: float = 2.0
    """SMART orders: ratio of consecutive estimate bins."""


class ListPolicy(Policy):
    """A policy that serves the waiting jobs in the order of ``ListOptions.order``;
    subclasses set ``mode`` (the backfilling mode a spec names) and ``select``."""

    mode: ClassVar[str] = ""
    options_type = ListOptions
    counts_backfilled = True

    @classmethod
    def create(cls, site, options: ListOptions) -> Policy:
        return cls(site, options)

    def __init__(self, site, options: ListOptions) -> None:
        super().__init__(site)
        if options.order != "fcfs" and options.order not in ORDERS:
            raise ValueError(f"unknown order {options.order!r}; allowed: fcfs, {', '.join(ORDERS)}")
        if options.weight not in WEIGHTS:
            raise ValueError(f"unknown weight {options.weight!r}; allowed: {', '.join(WEIGHTS)}")
        self._ordering = ORDERS.get(options.order)
        self._work = options.weight == "work"
        self._ratio = options.reorder_ratio
        self._gamma = options.smart_gamma
        self._rank: dict[int, int] = {}
        """Position in the last computed order O of its jobs still waiting."""
        self._computed_size = 0  # N
        self._used = 0  # U
        self._arrived = False
        self._list: list[int] = []
        """L as of the last pass, without the jobs started since."""
        self._newcomers: list[int] = []
        self._order_now: list[int] = []
        """Jobs arrived since the last pass, in arrival order."""
        self.orders_computed = 0
        self.recomputed = False
        """Whether the last ``listing`` recomputed the order."""

    def submitted(self, job: int, t: float) -> None:
        self._arrived = True
        self._newcomers.append(job)

    def listing(self, t: float) -> list[int]:
        """L at this pass: the jobs of O still waiting in O's order, then the other waiting
        jobs in arrival order; O is recomputed first if the trigger fires."""
        queue = self.site.queue
        self.recomputed = False
        if self._ordering is None:
            self._newcomers.clear()
            return queue  # read only: the site dequeues after the pass
        if self._arrived:
            self._arrived = False
            n = self._computed_size
            if n == 0 or self._ratio is None or self._used > self._ratio * n:
                self._compute(queue)
                self._list = list(self._order_now)
                self._newcomers.clear()
        if self._newcomers:
            # Jobs not in O follow O's jobs in arrival order: newcomers go at the end.
            self._list.extend(self._newcomers)
            self._newcomers.clear()
        return self._list

    def _compute(self, queue: list[int]) -> None:
        site = self.site
        if len(queue) == 1:
            # Every order of one job is that job (the most frequent case on a light load).
            order = list(queue)
        else:
            size = site.size
            estimate = site.estimate
            if self._work:
                weight = {job: size[job] * estimate[job] for job in queue}
            else:
                weight = dict.fromkeys(queue, 1.0)
            order = self._ordering(queue, size, estimate, weight, site.processors, self._gamma)
        self._order_now = order
        self._rank = {job: k for k, job in enumerate(order)}
        self._computed_size = len(queue)
        self._used = 0
        self.orders_computed += 1
        self.recomputed = True

    def started(
        self, listing: list[int], started: list[int], positions: list[int] | None = None
    ) -> list[int]:
        """Book-keeping after a pass over ``listing`` that started ``started`` (in L order,
        as every mode scans L; ``positions``: their positions in L, if the pass kept them):
        U grows by the jobs of O among them, and every started job with a job ahead of it in
        L still waiting counts as backfilled. Returns ``started``."""
        if not started:
            return started
        rank = self._rank
        if rank:
            for job in started:
                if rank.pop(job, None) is not None:
                    self._used += 1
        # ``started`` is a subsequence of L: past their common prefix, L's next job waits
        # and every later started job is behind it.
        n = len(started)
        k = 0
        while k < n and listing[k] == started[k]:
            k += 1
        self.site.jobs_backfilled += n - k
        if self._ordering is not None:
            remaining = self._list
            if k < n:
                if positions is not None:
                    spots = positions[k:]
                else:
                    spots = []
                    at = k
                    for job in started[k:]:
                        at = remaining.index(job, at + 1)
                        spots.append(at)
                for at in reversed(spots):
                    del remaining[at]
            del remaining[:k]
        return started
