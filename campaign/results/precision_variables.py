"""A precision campaign's variables in results.nc: per cell, whether it met the target, where it
stands (running, met, stopped at max_replicates, waiting on failed tasks) and the replicates the
stopping rule gave it."""

from __future__ import annotations

import numpy as np
import xarray as xr

from campaign.analysis.stats import Rounds

PRECISION_STATES = {"running": 0, "met": 1, "at_max": 2, "waiting": 3}


def precision_state(rounds: Rounds) -> np.ndarray:
    """Per cell: 0 running, 1 met, 2 stopped at max_replicates, 3 waiting on failed tasks."""
    state = np.zeros(rounds.target.shape, dtype=np.int8)
    for name, code in PRECISION_STATES.items():
        if name != "running":
            state[getattr(rounds, name)] = code
    return state


def precision_variables(rounds: Rounds, raw: xr.Dataset, precision) -> dict[str, xr.DataArray]:
    dims = [d for d in raw["status"].dims if d != "replicate"]
    shape = raw["status"].shape[:-1]
    target = f"{precision.half_width:g}" + (" x |mean|" if precision.relative else "")
    return {
        "precision_met": xr.DataArray(
            rounds.met.reshape(shape).astype(np.int8),
            dims=dims,
            attrs={
                "long_name": "1 if every precision metric's interval half-width met the target",
                "target_half_width": target,
                "confidence": precision.confidence,
                "metrics": " ".join(precision.metrics),
            },
        ),
        "precision_state": xr.DataArray(
            precision_state(rounds).reshape(shape),
            dims=dims,
            attrs={
                "long_name": "where the cell stands against the precision target",
                "flag_values": np.array(list(PRECISION_STATES.values()), dtype=np.int8),
                "flag_meanings": "running met max_replicates waiting_on_failed_tasks",
            },
        ),
        "precision_replicates": xr.DataArray(
            rounds.target.reshape(shape),
            dims=dims,
            attrs={"long_name": "replicates the stopping rule gave the cell (0..n-1)"},
        ),
    }
