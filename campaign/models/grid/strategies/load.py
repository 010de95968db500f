"""MLp, MPL, MLB: the least loaded site, by jobs, processors or work (size * estimate) per
processor, counting its running and queued jobs and the new one (levels 1 and 2)."""

from __future__ import annotations

from collections.abc import Sequence
from itertools import chain

from campaign.models.grid.strategies.base import Strategy


class Load(Strategy):
    """Scores a site by its load per processor (``load``: the plain sum, ``fast_load``: the
    running jobs' terms kept)."""

    def plain(self, job: int, t: float, candidates: Sequence[int]) -> dict[int, float]:
        processors = self.view.processors
        return {i: self.load(job, i) / processors[i] for i in candidates}

    def fast(self, job: int, t: float, candidates: Sequence[int]) -> dict[int, float]:
        processors = self.view.processors
        return {i: self.fast_load(job, i) / processors[i] for i in candidates}

    def load(self, job: int, i: int) -> float:
        raise NotImplementedError

    def fast_load(self, job: int, i: int) -> float:
        raise NotImplementedError


class Mlp(Load):
    name = "mlp"

    def load(self, job: int, i: int) -> float:
        return len(self.active(i)) + (1 if self.view.include_new_job else 0)

    def fast_load(self, job: int, i: int) -> float:
        view = self.view
        site = view.sites[i]
        return len(site.start) + len(site.queue) + (1 if view.include_new_job else 0)


class Mpl(Load):
    name = "mpl"

    def term(self, job: int, begin: float) -> float:
        return self.view.size[job]

    def load(self, job: int, i: int) -> float:
        size = self.view.size
        new = size[job] if self.view.include_new_job else 0
        return sum(size[k] for k in self.active(i)) + new

    def fast_load(self, job: int, i: int) -> float:
        view = self.view
        terms = self.summary(i).by_start.values()
        size = view.size
        queued = (size[k] for k in view.sites[i].queue)
        return sum(chain(terms, queued)) + (size[job] if view.include_new_job else 0)


class Mlb(Load):
    name = "mlb"
    level = 2

    def term(self, job: int, begin: float) -> float:
        view = self.view
        return view.size[job] * view.estimate[job]

    def load(self, job: int, i: int) -> float:
        size = self.view.size
        est = self.view.estimate
        value = sum(size[k] * est[k] for k in self.active(i))
        if self.view.include_new_job:
            value += size[job] * est[job]
        return value

    def fast_load(self, job: int, i: int) -> float:
        view = self.view
        terms = self.summary(i).by_start.values()
        size = view.size
        est = view.estimate
        value = sum(chain(terms, (size[k] * est[k] for k in view.sites[i].queue)))
        if view.include_new_job:
            value += size[job] * est[job]
        return value
