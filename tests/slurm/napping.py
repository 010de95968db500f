"""A model for the batch-system tests: sleeps ``nap_ms`` (so a campaign lasts minutes without
keeping the CPUs busy) and returns a draw from its seed."""

from __future__ import annotations

import time
from collections.abc import Mapping

import numpy as np


def run(params: Mapping[str, object], seed: int) -> dict[str, float]:
    time.sleep(float(params.get("nap_ms", 1000.0)) / 1000.0)
    return {"value": float(np.random.default_rng(seed).random())}
