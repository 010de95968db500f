"""Background load: the fraction of each processor and of the link left to the grid over time.

``Dedicated`` leaves everything at 1. ``Synthetic`` redraws every value from U(a_min, 1) at
the epochs t = k*period (k = 0, 1, ...), one block per epoch from the availability stream:
processors in index order, then the link. Epoch k's values are the same whatever happens in
the simulation, so every heuristic sees the same background load for one seed.
"""

from __future__ import annotations

import numpy as np


class Dedicated:
    """No background load."""

    period: float | None = None

    def values(self, epoch: int) -> tuple[list[float], float]:
        raise RuntimeError("a dedicated grid has no availability epochs")


class Synthetic:
    """Availability redrawn from U(a_min, 1) every ``period`` seconds, per processor and link."""

    def __init__(
        self, rng: np.random.Generator, n_processors: int, a_min: float, period: float
    ) -> None:
        if not 0 < a_min <= 1:
            raise ValueError("availability minimum must lie in (0, 1]")
        if not period > 0:
            raise ValueError("availability period must be positive")
        self.period: float | None = float(period)
        self._rng = rng
        self._n = n_processors
        self._a_min = a_min
        self._drawn: list[tuple[list[float], float]] = []

    def values(self, epoch: int) -> tuple[list[float], float]:
        """Processor availabilities and the link's availability during epoch ``epoch``."""
        while len(self._drawn) <= epoch:
            block = self._rng.uniform(self._a_min, 1.0, size=self._n + 1)
            self._drawn.append(([float(a) for a in block[:-1]], float(block[-1])))
        return self._drawn[epoch]


Availability = Dedicated | Synthetic
