"""Distributions of the samples a results file keeps: a CDF pooled over replicates.

Each task's sample is stored as its quantiles at every whole percentile (p = 0, 0.01, ..., 1)
and its size (`campaign.results.samples`). A task's CDF is read back as the step function
``F(x) = max{p : q(p) <= x}``; pooling weighs each task by its sample's size, so the pooled
CDF is that of all the tasks' values together. Where the exact pooled ECDF is G,
``|F(x) - G(x)| <= 1/100 + 1/n`` at every x, n the smallest sample pooled (`RESOLUTION`).
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import xarray as xr

from campaign.analysis.query import select
from campaign.results.samples import QUANTILE
from campaign.results.status import STATUS_OK

RESOLUTION = "1/100 + 1/(smallest sample) in probability"


def pooled_cdf(quantiles: np.ndarray, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The pooled CDF of tasks given by their quantiles (tasks x grid) and sample sizes, as
    its values x (every stored quantile, sorted) and F(x); tasks with no values are left out."""
    quantiles = np.asarray(quantiles, dtype=np.float64).reshape(-1, quantiles.shape[-1])
    counts = np.asarray(counts, dtype=np.float64).ravel()
    keep = (counts > 0) & ~np.isnan(quantiles).all(axis=1)
    # a NaN quantile lies halfway between -inf and +inf (`sample_quantiles`): +inf there keeps
    # the row sorted, and its task in the pooled CDF within the resolution
    quantiles, counts = np.where(np.isnan(quantiles[keep]), np.inf, quantiles[keep]), counts[keep]
    if not counts.size:
        return np.array([]), np.array([])
    grid = np.linspace(0.0, 1.0, quantiles.shape[1])
    x = np.unique(quantiles)
    total = np.zeros(x.size)
    for row, count in zip(quantiles, counts):
        # the largest grid index whose quantile is <= x (right-continuous step)
        index = np.searchsorted(row, x, side="right") - 1
        share = np.where(index >= 0, grid[np.clip(index, 0, None)], 0.0)
        total += count * share
    return x, total / counts.sum()


def cell_cdfs(
    dataset: xr.Dataset,
    sample: str,
    by: Sequence[str],
    where: Mapping[str, Sequence[Any]] | None = None,
) -> dict[tuple, tuple[np.ndarray, np.ndarray]]:
    """Per combination of ``by`` levels, the CDF of ``sample`` pooled over replicates (and over
    the factors not in ``by``, within ``where``'s levels); finished tasks only."""
    variable = dataset.get(sample)
    if variable is None or QUANTILE not in variable.dims:
        from campaign.results.samples import samples_of

        raise ValueError(
            f"{sample!r} is not a sample of the results; samples: "
            f"{', '.join(samples_of(dataset)) or 'none'}"
        )
    factors = [d for d in dataset["status"].dims if d != "replicate"]
    for name in [*by, *(where or {})]:
        if name not in factors:
            raise ValueError(f"{name!r} is not a factor; factors: {', '.join(factors)}")
    # by position (`select`): `.sel` takes a list of booleans for a mask, not for levels
    selected = select(
        dataset[[sample, f"{sample}_count", "status"]],
        {name: list(levels) for name, levels in (where or {}).items()},
    )
    out = {}
    for levels in itertools.product(*(selected[name].values.tolist() for name in by)):
        cell = select(selected, {name: [level] for name, level in zip(by, levels)})
        finished = (cell["status"] == STATUS_OK).values.ravel()
        quantiles = cell[sample].transpose(..., QUANTILE).values.reshape(-1, cell.sizes[QUANTILE])
        counts = cell[f"{sample}_count"].values.ravel()
        out[tuple(levels)] = pooled_cdf(quantiles[finished], counts[finished])
    return out
