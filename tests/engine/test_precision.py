"""Precision targets: replicates are added per cell until its interval is narrow enough."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

import campaign
from campaign.cli import main
from campaign.errors import CampaignError
from campaign.runner import make_plan
from campaign.spec import parse_spec
from campaign.stats import replicates_needed


def test_stopping_rule_cases():
    rng = np.random.default_rng(0)
    narrow = 10 + rng.normal(0, 0.01, 8)
    wide = 10 + rng.normal(0, 5.0, 8)
    few = np.array([1.0, 2.0, np.nan, np.nan, np.nan, np.nan, np.nan, np.nan])
    values = np.stack([narrow, wide, few])
    need, met = replicates_needed(values, 0.05, True, 5, 100, 0.95)
    assert met.tolist() == [True, False, False]
    assert need[0] == 8  # met: no more replicates
    assert need[2] == 5  # below the minimum
    half = stats.t.ppf(0.975, 7) * wide.std(ddof=1) / np.sqrt(8)
    estimate = int(np.ceil(8 * (half / (0.05 * abs(wide.mean()))) ** 2))
    assert need[1] == min(max(estimate, 9), 16)  # at most doubling per round
    need, _ = replicates_needed(values, 0.05, True, 5, 10, 0.95)
    assert need[1] == 10  # never beyond max_replicates


@pytest.mark.parametrize(
    ("precision", "message"),
    [
        ({"metrics": ["w"], "half_width": 0}, "precision.half_width: 0 is not allowed"),
        ({"metrics": [], "half_width": 0.1, "max_replicates": 9}, "precision.metrics: expected"),
        (
            {"metrics": ["w"], "half_width": 0.1, "min_replicates": 1, "max_replicates": 9},
            "precision.min_replicates: 1 is not allowed; use an integer >= 2",
        ),
        (
            {"metrics": ["w"], "half_width": 0.1, "max_replicates": 3},
            "precision.max_replicates: 3 is not allowed; use an integer >= min_replicates (5)",
        ),
        (
            {"metrics": ["w"], "half_width": 0.1, "max_replicates": 9, "tol": 1},
            "precision: unknown key 'tol'",
        ),
    ],
)
def test_precision_errors(precision, message):
    data = {"name": "p", "model": "mm1", "seed": 1, "precision": precision}
    with pytest.raises(CampaignError) as info:
        parse_spec(data, check_model=False)
    assert message in str(info.value)
    with pytest.raises(CampaignError, match="replicates .* or precision .*, not both"):
        parse_spec({**data, "replicates": 3}, check_model=False)


def test_campaign_runs_until_every_interval_meets_the_target(write_spec, scheduler_address, capsys):
    path = write_spec(
        """
        name: precise
        model: mm1
        params: {service_rate: 1.0, customers: 1000}
        factors: {arrival_rate: [0.3, 0.8]}
        precision: {metrics: [mean_wait], half_width: 0.05, min_replicates: 5,
                    max_replicates: 300}
        seed: 8
        output: out
        """
    )
    ds = campaign.run(path, scheduler=scheduler_address, progress=False)
    relative = (ds["mean_wait_ci_high"] - ds["mean_wait_mean"]) / ds["mean_wait_mean"]
    assert (relative <= 0.05).all()
    assert ds["precision_met"].values.tolist() == [1, 1]
    n = ds["mean_wait_n"].values
    assert 5 <= n[0] < n[1] < 300
    # every cell ran replicates 0..n-1 and nothing beyond; the file has no unused replicates
    for cell, count in enumerate(n):
        assert ds["status"].values[cell, :count].tolist() == [1] * count
        assert (ds["status"].values[cell, count:] == 0).all()
    assert ds.sizes["replicate"] == n.max()
    assert main(["status", str(path)]) == 0
    assert "at most 300; 'missing' counts every replicate" in capsys.readouterr().out
    # a rerun finds every target met and runs nothing
    before = make_plan(path).done
    again = campaign.run(path, scheduler=scheduler_address, progress=False)
    assert make_plan(path).done == before == int(n.sum())
    assert np.array_equal(again["mean_wait"].values, ds["mean_wait"].values, equal_nan=True)
