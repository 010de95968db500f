"""A model of many metrics (``m00`` to ``m39``, multiples of the seeded draw the faulty model
returns), so that one task's record is larger than the campaign's own files."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

METRICS = 40


def run(params: Mapping[str, object], seed: int) -> dict[str, float]:
    value = float(np.random.default_rng(seed).random())
    return {f"m{index:02d}": value * (index + 1) for index in range(METRICS)}
