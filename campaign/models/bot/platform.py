"""The grid: processor speeds drawn per heterogeneity level until the grid's power is reached.

Speeds are relative to a reference processor (a task of cost C runs C/speed seconds).
Processor k (draw order) joins site k mod g, so sites get equal proportions of processors.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

GRID_POWER = 1000.0
SITES_MIN, SITES_MAX = 2, 12

# Speed ranges U(low, high) per grid heterogeneity level.
SPEED_TABLES: dict[str, dict[int, tuple[float, float]]] = {
    "paper": {1: (10.0, 10.0), 2: (6.7, 13.5), 4: (4.0, 16.0), 8: (2.2, 17.8)},
    "dissertation": {1: (10.0, 10.0), 2: (6.7, 13.4), 4: (4.0, 16.0), 8: (2.2, 17.6)},
}


@dataclass(frozen=True)
class Platform:
    """Processor speeds and the site of each processor; sites are numbered 0..n_sites-1."""

    speeds: tuple[float, ...]
    sites: tuple[int, ...]
    n_sites: int

    def __post_init__(self) -> None:
        if len(self.speeds) != len(self.sites) or not self.speeds:
            raise ValueError("a platform needs one site per processor and at least one processor")
        if any(not 0 <= s < self.n_sites for s in self.sites):
            raise ValueError(f"processor sites must lie in 0..{self.n_sites - 1}")
        if any(not v > 0 for v in self.speeds):
            raise ValueError("processor speeds must be positive")

    @classmethod
    def from_sites(cls, sites: Sequence[Sequence[float]]) -> Platform:
        """Explicit platform: ``[[speeds of site 0], [speeds of site 1], ...]``; processors
        are numbered site by site in the order given."""
        speeds = [float(v) for site in sites for v in site]
        owner = [i for i, site in enumerate(sites) for _ in site]
        return cls(tuple(speeds), tuple(owner), len(sites))

    @property
    def n_processors(self) -> int:
        return len(self.speeds)

    def site_processors(self, site: int) -> list[int]:
        """Processors of a site in increasing index order."""
        return [p for p, s in enumerate(self.sites) if s == site]


def build_platform(
    rng: np.random.Generator,
    heterogeneity: int,
    table: str = "paper",
    power: float = GRID_POWER,
) -> Platform:
    """Draw speeds one at a time until their sum reaches ``power`` (the last one is kept),
    then the number of sites g ~ U{2..12}.

    The speeds are drawn as one block of the largest count that could be needed and cut
    after the first prefix whose sum reaches ``power``: the same values as one-at-a-time draws,
    with one numpy call.
    """
    low, high = SPEED_TABLES[table][heterogeneity]
    block = math.ceil(power / low) + 1
    draws = rng.uniform(low, high, size=block)
    total = np.cumsum(draws)
    count = int(np.searchsorted(total, power, side="left")) + 1
    speeds = tuple(float(v) for v in draws[:count])
    n_sites = int(rng.integers(SITES_MIN, SITES_MAX + 1))
    return Platform(speeds, tuple(k % n_sites for k in range(count)), n_sites)
