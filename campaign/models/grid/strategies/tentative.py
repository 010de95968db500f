"""MCT, MST, MSWCT_w and the MWT family: the site whose tentative strict-FCFS schedule with
the new job last (``grid.tentative``) scores best (level 3). The plain scores plan the whole
schedule at every arrival; the fast ones keep each site's queue planned behind its running
jobs (``Tentative.queued``) and plan only the new job."""

from __future__ import annotations

import heapq
import math
from collections.abc import Sequence
from itertools import chain

from campaign.models.grid.strategies.base import Strategy
from campaign.models.grid.strategies.running import RunningJobs
from campaign.models.grid.tentative import tentative


def _end(entry: tuple[int, float, float]) -> float:
    return entry[2]


class Tentative(Strategy):
    """Scores from the tentative schedule: ``plain_score`` from the whole plan, ``score``
    from the running summary, the planned queue (``queued``) and the new job's start."""

    level = 3
    weighs_waits = False
    """Whether the score sums the jobs' waits (the running jobs' in ``RunningJobs.total``)."""

    def term(self, job: int, begin: float) -> float:
        return begin - self.view.submit[job]

    def plain(self, job: int, t: float, candidates: Sequence[int]) -> dict[int, float]:
        view = self.view
        size = view.size
        est = view.estimate
        out = {}
        for i in candidates:
            plan = tentative(view.sites[i], size, est, job, t)
            done = view.done[i] if view.done is not None else None
            out[i] = self.plain_score(plan, done)
        return out

    def fast(self, job: int, t: float, candidates: Sequence[int]) -> dict[int, float]:
        return {i: self._fast_score(job, i, t) for i in candidates}

    def plain_score(self, plan: list[tuple[int, float, float]], done: list | None) -> float:
        raise NotImplementedError

    def score(self, job, i, t, summary, now, last, terms, total, done) -> float:
        """The score of site i given the new job's start ``now`` and the planned queue."""
        raise NotImplementedError

    def queued_terms(self, starts, terms: list[float], total: float) -> float:
        """Add the newly planned queued jobs' ``starts`` ((job, S, C)) to the queue's terms
        (in place) or to the total of waits; the total."""
        return total

    def _fast_score(self, job: int, i: int, t: float) -> float:
        """Only the new job is planned at each arrival, behind the site's planned queue."""
        view = self.view
        summary = self.summary(i)
        _, _, _, free, now, left, last, terms, total = self.queued(summary, i, t)
        if now is None:
            now = t
        width = view.size[job]
        if free < width:
            for end, released in left:
                free += released
                if free >= width:
                    if end > now:
                        now = end
                    break
        done = view.done[i] if view.done is not None else None
        return self.score(job, i, t, summary, now, last, terms, total, done)

    def queued(self, summary: RunningJobs, i: int, t: float) -> tuple:
        """Site i's queue planned strict FCFS behind its running jobs at t: (key, t, bound,
        free, now, left, last, terms, total), where ``left`` is the heap left (sorted),
        ``now`` the last queued start (None: no queue), ``last`` the latest queued end,
        ``terms`` the queued jobs' MSWCT_w terms and ``total`` the MWT family's sum over the
        running and queued jobs. Which jobs a start waits for does not depend on t, only the
        starts do, through the first one: the plan holds for any t up to ``bound``, the end
        after t the first queued job waits for (the order among equal planned ends does not
        change any start). Jobs joining the queue are planned after those already planned."""
        view = self.view
        queue = view.sites[i].queue
        plan = summary.queued
        planned = 0
        if plan is not None and plan[0][0] == summary.key and (t == plan[1] or t <= plan[2]):
            planned = plan[0][1]
            if planned == len(queue):
                return plan
        if 0 < planned < len(queue):
            # No job started here since: the queue only grew, so plan just the newcomers.
            _, begin, bound, free, now, heap, last, terms, total = plan
            heap = heap.copy()
            terms = terms.copy()
        else:
            planned = 0
            begin = t
            bound = -math.inf
            free = summary.free
            now = t
            heap = None
            last = -math.inf
            terms = []
            total = summary.total if self.weighs_waits else 0.0
        size = view.size
        est = view.estimate
        pop = heapq.heappop
        push = heapq.heappush
        starts = []
        for position in range(planned, len(queue)):
            k = queue[position]
            width = size[k]
            if free < width:
                if heap is None:
                    heap = summary.ends.copy()
                while free < width:
                    end, released = pop(heap)
                    if end > now:
                        now = end
                    free += released
                if position == 0 and now > t:
                    bound = now
            end = now + est[k]
            if heap is None:
                heap = summary.ends.copy()
            push(heap, (end, width))
            free -= width
            if end > last:
                last = end
            starts.append((k, now, end))
        total = self.queued_terms(starts, terms, total)
        left = sorted(heap) if heap is not None else summary.ends
        key = (summary.key, len(queue))
        plan = (key, begin, bound, free, now if queue else None, left, last, terms, total)
        summary.queued = plan
        return plan


class Mst(Tentative):
    """The earliest start of the new job."""

    name = "mst"

    def plain_score(self, plan, done) -> float:
        return plan[-1][1]

    def score(self, job, i, t, summary, now, last, terms, total, done) -> float:
        return now


class Mct(Tentative):
    """The earliest completion of the site's whole tentative schedule (cumulative: no
    earlier than its last finished job)."""

    name = "mct"

    def plain_score(self, plan, done) -> float:
        value = max(plan, key=_end)[2]
        return max(value, done[5]) if done is not None else value

    def score(self, job, i, t, summary, now, last, terms, total, done) -> float:
        value = now + self.view.estimate[job]
        if last > value:
            value = last
        running = summary.ends
        if running:  # the running jobs end at max(s + est, t)
            ending = running[-1][0]
            if ending < t:
                ending = t
            if ending > value:
                value = ending
        return max(value, done[5]) if done is not None else value


class Mswct(Tentative):
    """The sum of completion times weighted by work (size * estimate)."""

    name = "mswct_w"
    keeps_plan = True

    def term(self, job: int, begin: float) -> float:
        est = self.view.estimate
        return (begin + est[job]) * self.view.size[job] * est[job]

    def queued_terms(self, starts, terms: list[float], total: float) -> float:
        size = self.view.size
        est = self.view.estimate
        terms += [end * size[k] * est[k] for k, _, end in starts]
        return total

    def plain_score(self, plan, done) -> float:
        size = self.view.size
        est = self.view.estimate
        value = sum(c * size[k] * est[k] for k, _, c in plan)
        return value + done[6] if done is not None else value

    def score(self, job, i, t, summary, now, last, terms, total, done) -> float:
        size = self.view.size
        est = self.view.estimate
        finish = now + est[job]
        running = summary.ends
        if not running or running[0][0] >= t:
            before = summary.terms
        else:
            before = [(end if end >= t else t) * w * x for end, w, x in summary.plan]
        value = sum(chain(before, terms, (finish * size[job] * est[job],)))
        return value + done[6] if done is not None else value
