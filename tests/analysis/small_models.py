"""Small models for the tests of breakdowns, samples and selections (named in specs as
``small_models:classes``, ``small_models:waits`` and ``small_models:starving``; this folder
on the path)."""

from __future__ import annotations

import numpy as np


def classes(params, seed):
    """A breakdown ``cls`` whose classes share the task's large random level (sd 10) and
    differ by 1 plus a small noise of their own (sd 0.5): paired, the difference of b and a
    is sharp; unpaired, it drowns in the shared level."""
    rng = np.random.default_rng(seed)
    common = rng.normal(0, 10.0)
    return {
        "total": common,
        "cls": {
            "a": {"m": 50 + common + rng.normal(0, 0.5)},
            "b": {"m": 51 + common + rng.normal(0, 0.5)},
        },
    }


def waits(params, seed):
    """A sample ``wait`` of 50 exponential values, of mean 3 where ``slow`` else 1."""
    rng = np.random.default_rng(seed)
    return {"wait": rng.exponential(3.0 if params["slow"] else 1.0, size=50)}


def starving(params, seed):
    """A normal draw of mean ``means[system]``, sd 1; but the system ``starving`` never
    finishes its work: its value is +inf (a wait that never ends)."""
    if params["system"] == params["starving"]:
        return {"value": float("inf")}
    return {"value": params["means"][params["system"]] + np.random.default_rng(seed).normal()}
