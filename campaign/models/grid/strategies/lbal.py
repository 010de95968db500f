"""LBAL_s, LBAL_t, LBAL_w: the site that leaves the per-processor loads (sizes, estimates or
work of the running and queued jobs) of all sites most even, by their population standard
deviation with the new job on the candidate (levels 1 and 2)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from itertools import chain

import numpy as np

from campaign.models.grid.strategies.base import Strategy

SHORT = 8
"""Rows shorter than this are summed by numpy one element after the other (longer ones
pairwise), the order ``population_std`` follows."""


def population_std(row: list[float]) -> float:
    """``numpy.std(row)`` bit for bit for a row shorter than ``SHORT``, without building an
    array: the sums run from 0.0 in order, the mean and the variance divide by the length."""
    n = len(row)
    total = 0.0
    for x in row:
        total += x
    mean = total / n
    square = 0.0
    for x in row:
        d = x - mean
        square += d * d
    return math.sqrt(square / n)


class Lbal(Strategy):
    """A job's measure is ``measure`` (a float); a site's load is the sum over its running
    and queued jobs, per processor."""

    def measure(self, k: int) -> float:
        raise NotImplementedError

    def term(self, job: int, begin: float) -> float:
        return self.measure(job)

    def plain(self, job: int, t: float, candidates: Sequence[int]) -> dict[int, float]:
        """Population std over all sites of the per-processor load with the job on site q."""
        measure = self.measure
        base = [sum(measure(k) for k in self.active(i)) for i in range(len(self.view.sites))]
        extra = measure(job)
        out = {}
        for q in candidates:
            load = np.array(
                [
                    (b + (extra if i == q else 0.0)) / m
                    for i, (b, m) in enumerate(zip(base, self.view.processors))
                ]
            )
            out[q] = float(load.std())
        return out

    def fast(self, job: int, t: float, candidates: Sequence[int]) -> dict[int, float]:
        """``plain`` with the running jobs' terms kept, and numpy's std computed in Python
        for fewer than ``SHORT`` sites."""
        measure = self.measure
        view = self.view
        base = []
        for i, site in enumerate(view.sites):
            summary = self.summary(i)
            key = (summary.key, len(site.queue))
            if summary.queued is None or summary.queued[0] != key:
                queued = map(measure, site.queue)
                summary.queued = (key, sum(chain(summary.by_start.values(), queued)))
            base.append(summary.queued[1])
        extra = measure(job)
        processors = view.processors
        if len(base) >= SHORT:
            rows = [
                [
                    (b + (extra if i == q else 0.0)) / m
                    for i, (b, m) in enumerate(zip(base, processors))
                ]
                for q in candidates
            ]
            return dict(zip(candidates, np.array(rows).std(axis=1).tolist()))
        loads = [b / m for b, m in zip(base, processors)]  # b + 0.0 is b: loads are >= 0
        out = {}
        for q in candidates:
            row = loads.copy()
            row[q] = (base[q] + extra) / processors[q]
            out[q] = population_std(row)
        return out


class LbalS(Lbal):
    name = "lbal_s"

    def measure(self, k: int) -> float:
        return float(self.view.size[k])


class LbalT(Lbal):
    name = "lbal_t"
    level = 2

    def measure(self, k: int) -> float:
        return float(self.view.estimate[k])


class LbalW(Lbal):
    name = "lbal_w"
    level = 2

    def measure(self, k: int) -> float:
        view = self.view
        return float(view.size[k] * view.estimate[k])
