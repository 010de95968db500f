"""Models outside the contract's randomness rule: ``run`` draws from numpy's legacy global
generator and from Python's `random`, never from its seed; ``clocked`` also returns a reading
of a clock, which no seed makes the same twice."""

from __future__ import annotations

import random
import time
from collections.abc import Mapping

import numpy as np


def run(params: Mapping[str, object], seed: int) -> dict[str, float]:
    return {
        "numpy_global": float(np.random.random()),
        "numpy_normal": float(np.random.standard_normal()),
        "python_random": random.random(),
    }


def clocked(params: Mapping[str, object], seed: int) -> dict[str, float]:
    return {**run(params, seed), "clock": float(time.perf_counter_ns() % 1_000_003)}
