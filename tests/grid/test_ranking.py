"""Degradation ranking: Example E of parallel-jobs.md section 8, replicates and instances."""

from __future__ import annotations

import numpy as np
import pytest
import xarray as xr

from campaign.ranking import degradation, format_ranking

METRICS = ("mean_wait", "mean_bsld", "swct_w")


def example_e(replicates: int = 1) -> xr.Dataset:
    values = np.array([[100, 2.0, 1000], [150, 1.5, 1000], [400, 3.0, 1100]])
    data = np.repeat(values[:, :, None], replicates, axis=2)
    coords = {"strategy": ["A", "B", "C"], "replicate": np.arange(replicates)}
    return xr.Dataset(
        {m: (("strategy", "replicate"), data[:, k, :]) for k, m in enumerate(METRICS)},
        coords,
        attrs={"headline_metrics": " ".join(METRICS)},  # as a results file of the model has
    )


def test_example_e():
    result = degradation(example_e())
    assert result["deg"].sel(metric="mean_wait").values.tolist() == pytest.approx([0, 50, 300])
    assert result["deg"].sel(metric="mean_bsld").values.tolist() == pytest.approx([100 / 3, 0, 100])
    assert result["deg"].sel(metric="swct_w").values.tolist() == pytest.approx([0, 0, 10])
    assert result["D"].values.tolist() == pytest.approx([100 / 9, 50 / 3, 410 / 3])
    assert result["rank"].values.tolist() == [1, 2, 3]
    assert np.isnan(result["D_ci_low"]).all()  # one replicate: no interval
    table = format_ranking(result)
    assert table.splitlines()[1].split() == ["1", "A", "11.11", "11.11", "nan", "nan"]
    assert table.splitlines()[3].split()[:4] == ["3", "C", "136.67", "136.67"]


def test_replicate_interval_and_instances():
    # Two instances (grids): on g2 the order of A and B is reversed and stronger.
    ds = example_e(3)
    ds["mean_wait"] = ds["mean_wait"] + xr.DataArray([0.0, 10.0, -10.0], dims="replicate")
    g2 = ds.copy(deep=True)
    g2["mean_wait"] = g2["mean_wait"].copy(data=g2["mean_wait"].values[[1, 0, 2]] * [[1], [4], [1]])
    both = xr.concat([ds, g2], dim=xr.DataArray(["g1", "g2"], dims="grid", name="grid"))
    result = degradation(both)
    assert result["D_instance"].dims == ("strategy", "grid")
    assert result["rank_instance"].sel(grid="g1").values.tolist() == [1, 2, 3]
    d1 = result["D_instance"].sel(grid="g1")
    d2 = result["D_instance"].sel(grid="g2")
    assert result["D"].values == pytest.approx(((d1 + d2) / 2).values)
    assert (result["D_ci_low"] <= result["D"]).all() and (result["D"] <= result["D_ci_high"]).all()
    assert (result["D_n"] == 3).all()

    one = degradation(both, instance_dims=[])
    assert one["D"].dims == ("strategy", "grid")


def test_paired_replicates():
    # mean_wait of every strategy shifted by 0, +10, -10 in replicates 0, 1, 2: B's deg on
    # mean_wait is 50, 500/11 and 500/9 per replicate; its other degs are 0.
    ds = example_e(3)
    ds["mean_wait"] = ds["mean_wait"] + xr.DataArray([0.0, 10.0, -10.0], dims="replicate")
    result = degradation(ds)
    assert float(result["D"].sel(strategy="B")) == pytest.approx(50 / 3)
    paired = (50 + 500 / 11 + 500 / 9) / 9
    assert float(result["D_paired_mean"].sel(strategy="B")) == pytest.approx(paired)
    spread = np.std([50 / 3, 500 / 33, 500 / 27], ddof=1) / np.sqrt(3) * 4.302652729911275
    assert float(result["D_ci_high"].sel(strategy="B")) == pytest.approx(paired + spread)


def test_zero_best_and_missing_values():
    ds = example_e()
    ds["mean_wait"][:] = [[0.0], [0.0], [5.0]]
    result = degradation(ds, metrics=("mean_wait",))
    assert result["deg"].sel(metric="mean_wait").values.tolist()[:2] == [0.0, 0.0]
    assert np.isnan(result["deg"].sel(metric="mean_wait").values[2])
    assert np.isnan(result["D"].values[2]) and np.isnan(result["rank"].values[2])
    with pytest.raises(ValueError, match="awrt"):
        degradation(ds, metrics=("awrt",))


def test_metrics_default_to_the_headline_metrics_the_results_name():
    ds = example_e()
    assert degradation(ds).attrs["metrics"] == "mean_wait,mean_bsld,swct_w"
    ds.attrs["headline_metrics"] = "mean_wait"
    assert degradation(ds)["deg"]["metric"].values.tolist() == ["mean_wait"]
    del ds.attrs["headline_metrics"]
    with pytest.raises(ValueError, match="names no headline metrics: give the metrics"):
        degradation(ds)
