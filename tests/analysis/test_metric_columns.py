"""A query's columns of many metrics, computed in blocks, are those of each metric alone."""

from __future__ import annotations

import numpy as np
import pytest
import xarray as xr

from campaign.analysis import metric_columns as columns_module
from campaign.analysis.metric_columns import metric_columns, metric_stats


def arrays(metrics: int) -> dict[str, xr.DataArray]:
    """Metrics over two factors and 7 replicates: values far from 0, NaN, inf and cells that
    hold one value only, so every pooled and left-out path is taken."""
    rng = np.random.default_rng(11)
    shape = (3, 4, 7)
    coords = {"load": [0.5, 0.7, 0.9], "policy": ["a", "b", "c", "d"]}
    out = {}
    for index in range(metrics):
        values = 1e9 + rng.standard_normal(shape) * 10 ** (index % 5)
        values[rng.random(shape) < 0.15] = np.nan
        values[0, index % 4, :6] = np.nan
        if index % 7 == 3:
            values[1, 2, 3] = np.inf
        out[f"m{index}"] = xr.DataArray(values, dims=("load", "policy", "replicate"), coords=coords)
    return out


@pytest.mark.parametrize("by", [["load", "policy"], ["load"], ["policy"], []])
def test_blocks_give_each_metrics_columns_bit_for_bit(by, monkeypatch):
    values = arrays(23)
    finished = xr.DataArray(
        np.random.default_rng(3).random((3, 4, 7)) < 0.9, dims=("load", "policy", "replicate")
    )
    monkeypatch.setattr(columns_module, "SUMMARY_BLOCK_VALUES", 84 * 5)  # blocks of 5 metrics
    blocked = metric_columns(values, list(values), finished, by, 0.9)
    assert list(blocked) == list(values)
    for metric, array in values.items():
        alone = metric_stats(array, finished, by, 0.9)
        assert blocked[metric].keys() == alone.keys()
        for stat, column in alone.items():
            assert blocked[metric][stat].dims == column.dims, (metric, stat)
            assert np.array_equal(blocked[metric][stat].values, column.values, equal_nan=True)
