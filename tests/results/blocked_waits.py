"""A model whose sample holds +inf: the waits of jobs that never start (named in specs as
``blocked_waits:run``; this folder on the path)."""

from __future__ import annotations

import numpy as np


def run(params, seed):
    """100 waits: 84 finite ones, and in about half of the replicates (a draw from the seed)
    16 jobs that never start (wait +inf); ``blocked`` says which."""
    rng = np.random.default_rng(seed)
    wait = rng.exponential(10.0, size=100)
    blocked = bool(rng.random() < 0.5)
    if blocked:
        wait[84:] = np.inf
    return {"wait": wait, "blocked": float(blocked)}
