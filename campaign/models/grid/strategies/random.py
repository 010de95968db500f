"""Random: a feasible admissible site drawn uniformly from the policy stream (level 1)."""

from __future__ import annotations

from collections.abc import Sequence

from campaign.models.grid.strategies.base import Strategy


class Random(Strategy):
    """Every site scores alike: the broker draws one (``draws``)."""

    name = "random"
    draws = True

    def fast(self, job: int, t: float, candidates: Sequence[int]) -> dict[int, float]:
        return dict.fromkeys(candidates, 0.0)

    plain = fast
