"""The aligned text tables (what `campaign run`, `query`, `compare` and `query --rank` print,
and the report's analysis shows), and a comparison's table for a paper, write each number down
to the place its interval needs: a mean of 31234490.5 ± 2.48 s is not 3.12345e+07, which
another mean 40 s away would share."""

from __future__ import annotations

import numpy as np
import xarray as xr
from scipy import stats

import campaign

DEVIATIONS = np.array([-3.0, -2.0, -1.0, 1.0, 2.0, 3.0])


def makespans(b_deviations=DEVIATIONS) -> xr.Dataset:
    """Two strategies' makespans, 6 replicates each, 40 s apart around 3.1e7 s."""
    values = np.array([31234490.5 + DEVIATIONS, 31234530.5 + b_deviations])
    return xr.Dataset(
        {
            "makespan": (("strategy", "replicate"), values, {"units": "s"}),
            "status": (("strategy", "replicate"), np.ones((2, 6), dtype="i1")),
        },
        {"strategy": ["a", "b"], "replicate": np.arange(6)},
        attrs={"confidence": 0.95},
    )


def test_a_query_writes_each_mean_to_the_place_of_its_half_width():
    # sd of the deviations sqrt(28 / 5); half-width t(0.975, 5) sd / sqrt(6) = 2.4834
    assert campaign.table(campaign.query(makespans())).splitlines() == [
        "strategy  makespan           n",
        "--------  -----------------  -",
        "a         31234490.5 ± 2.48  6",
        "b         31234530.5 ± 2.48  6",
        "mean ± half-width of the 95% confidence interval (Student t) over n replicates",
    ]


def test_a_comparison_writes_the_means_and_the_ratio_to_the_place_of_their_intervals():
    result = campaign.compare(makespans(), "strategy", "a", "makespan")
    row = campaign.table(result).splitlines()[4].split("  ")
    cells = [cell.strip() for cell in row if cell.strip()]
    # Welch: se sqrt(2 x 5.6 / 6), 10 degrees of freedom: 40 ± 2.228 x 1.3663 = 40 ± 3.044
    low, high = float(result["ratio_low"].item()), float(result["ratio_high"].item())
    assert 1.0000011 < low < 1.0000012806 < high < 1.0000014
    assert cells == [
        "b",
        "6",
        "31234490.5",
        "31234530.5",
        "40 ± 3.04",
        "[36.96, 43.04]",
        "1.000001281",  # 31234530.5 / 31234490.5, not 1
        f"[{low:.10g}, {high:.10g}]",  # not [1, 1]
    ]


def test_a_ranking_writes_its_percentages_to_the_place_of_the_narrowest_interval():
    reversed_ = makespans(DEVIATIONS[::-1])
    ranking = campaign.rank(reversed_, "strategy", "makespan")
    lines = campaign.table(ranking).splitlines()
    best = 31234490.5 + DEVIATIONS
    degradation = 100 * (31234530.5 + DEVIATIONS[::-1] - best) / best  # per replicate, %
    half = stats.t.ppf(0.975, 5) * degradation.std(ddof=1) / np.sqrt(6)  # 1.59e-5 %
    mean = 100 * 40 / 31234490.5
    assert lines[2].split() == ["1", "a", *["0.000000"] * 4, "6"]
    assert lines[3].split() == [
        "2",
        "b",
        f"{mean:.6f}",  # 0.000128, not 0.00
        f"{degradation.mean():.6f}",
        f"{degradation.mean() - half:.6f}",  # 0.000112
        f"{degradation.mean() + half:.6f}",  # 0.000144
        "6",
    ]


def test_a_comparison_for_a_paper_writes_the_means_to_the_place_of_the_difference():
    result = campaign.compare(makespans(), "strategy", "a", "makespan")
    row = campaign.table(result, "markdown").splitlines()[2]
    # 31234490.5 and 31234530.5, 40 ± 3.04 apart: not 3.123×10⁷ twice
    assert [cell.strip() for cell in row.strip("|").split("|")][:5] == [
        "b",
        "6",
        "3.12344905×10⁷",
        "3.12345305×10⁷",
        "40.0 ± 3.0",
    ]
