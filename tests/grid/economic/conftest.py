"""The schedules of the worked example of economic.md section 9, shared by its tests."""

from __future__ import annotations

import numpy as np
import pytest

from campaign.models.grid.economic import EconomicGrid, EconomicOptions


def _example_grid(size: int, estimate: float, **options) -> EconomicGrid:
    """Two machines of 4 processors at now = 0: machine 1 holds a on {0, 1} [0, 6) and b on
    {0, 1, 2} [8, 12); machine 2 holds c on {0, 1, 2, 3} [0, 3) and d on {2, 3} [5, 9). Job 0
    is the request (home machine 1, 0-based 0); full graph, two hops, K = Z = 3."""
    settings = {"hops": 2, "topology": "full", "offers_per_machine": 3, "shifts": 3, **options}
    grid = EconomicGrid((4, 4), [size], [estimate], [estimate], [0], EconomicOptions(**settings))
    first, second = grid.schedules
    first.book(np.array([0, 1]), 0.0, 6.0, 6.0)
    first.book(np.array([0, 1, 2]), 8.0, 12.0, 12.0)
    second.book(np.array([0, 1, 2, 3]), 0.0, 3.0, 3.0)
    second.book(np.array([2, 3]), 5.0, 9.0, 9.0)
    return grid


@pytest.fixture
def example_grid():
    """Makes the example's grid for a request of (size, estimate) and the given settings."""
    return _example_grid
