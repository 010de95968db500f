"""Random: a feasible admissible site drawn uniformly from the policy stream (level 1)."""

from __future__ import annotations

from collections.abc import Sequence

from campaign.models.grid.strategies.base import Strategy


class Random(Strategy):
    name = "random"
    needs_rng = True

    def pick(self, job: int, t: float, candidates: Sequence[int]) -> int:
        return candidates[int(self.broker.rng.integers(len(candidates)))]

    def fast(self, job: int, t: float, candidates: Sequence[int]) -> dict[int, float]:
        """Every site alike: the choice is a draw."""
        return dict.fromkeys(candidates, 0.0)

    plain = fast
