"""Student-t intervals over replicates, pooling per replicate and paired differences."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest
import xarray as xr
from scipy import stats

from campaign.analysis.stats import (
    StoppingRule,
    interval,
    judge,
    paired_difference,
    pooled,
    precision_rounds,
)

ROOT = Path(__file__).resolve().parents[2]


def test_interval_matches_the_textbook_formula():
    values = np.array([2.0, 4.0, 4.0, 5.0, 7.0, 9.0])
    result = interval(xr.DataArray(values, dims="replicate"), "replicate", 0.9)
    mean, sd, n = values.mean(), values.std(ddof=1), len(values)
    half = stats.t.ppf(0.95, n - 1) * sd / np.sqrt(n)
    assert float(result["mean"]) == pytest.approx(mean, rel=1e-15)
    assert float(result["std"]) == pytest.approx(sd, rel=1e-15)
    assert int(result["n"]) == 6
    assert float(result["ci_low"]) == pytest.approx(mean - half, rel=1e-14)
    assert float(result["ci_high"]) == pytest.approx(mean + half, rel=1e-14)
    low, high = stats.t.interval(0.9, n - 1, loc=mean, scale=stats.sem(values))
    assert (float(result["ci_low"]), float(result["ci_high"])) == pytest.approx((low, high))


def test_missing_values_are_ignored_and_one_value_has_no_interval():
    data = xr.DataArray([[1.0, np.nan, 3.0], [5.0, np.nan, np.nan]], dims=("cell", "replicate"))
    result = interval(data, "replicate", 0.95)
    assert result["n"].values.tolist() == [2, 1]
    assert result["mean"].values.tolist() == [2.0, 5.0]
    assert np.isnan(result["ci_low"].values[1]) and np.isnan(result["std"].values[1])


def test_identical_replicates_give_their_value_and_a_zero_width_interval():
    value = 0.931905  # five copies do not sum to exactly five times it
    assert np.sum([value] * 5) / 5 != value
    data = xr.DataArray([[value] * 5, [1.0, 2.0, 3.0, 4.0, 5.0]], dims=("cell", "replicate"))
    result = interval(data, "replicate", 0.95)
    assert result["mean"].values.tolist() == [value, 3.0]
    assert result["std"].values[0] == 0.0 and result["std"].values[1] > 0
    assert result["ci_low"].values[0] == value == result["ci_high"].values[0]


def test_infinite_replicates_give_no_spread_and_no_interval():
    """inf - inf is undefined: a cell with an infinite value has a NaN std and interval (never
    the zero std of identical replicates), its mean inf, or NaN when both signs occur."""
    inf = np.inf
    data = xr.DataArray(
        [[inf, inf, inf], [inf, 1.0, 2.0], [-inf, inf, 1.0], [-inf, -inf, np.nan], [2.0] * 3],
        dims=("cell", "replicate"),
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # and no RuntimeWarning on the way
        result = interval(data, "replicate", 0.95)
    assert result["mean"].values.tolist() == pytest.approx(
        [inf, inf, np.nan, -inf, 2.0], nan_ok=True
    )
    assert result["n"].values.tolist() == [3, 3, 3, 2, 3]
    for stat in ("std", "half_width", "ci_low", "ci_high"):
        assert np.isnan(result[stat].values[:4]).all(), stat
    assert result["std"].values[4] == 0.0 and result["ci_low"].values[4] == 2.0


def test_pooled_averages_other_factors_within_each_replicate():
    data = xr.DataArray(
        np.arange(12.0).reshape(2, 2, 3),
        dims=("a", "b", "replicate"),
        coords={"a": [1, 2], "b": ["x", "y"]},
    )
    result = pooled(data, ["a"], 0.95)
    per_replicate = data.mean("b")
    assert result["mean"].values.tolist() == per_replicate.mean("replicate").values.tolist()
    assert result["n"].values.tolist() == [3, 3]


def test_paired_difference_is_tighter_than_unpaired_with_common_noise():
    rng = np.random.default_rng(1)
    noise = rng.normal(0, 10, 30)
    data = xr.DataArray(
        np.stack([noise + 1.0, noise]), dims=("s", "replicate"), coords={"s": ["a", "b"]}
    )
    diff = paired_difference(data, "s", "a", "b", 0.95)
    assert float(diff["mean"]) == pytest.approx(1.0)
    assert float(diff["half_width"]) < 1e-12


def test_a_factor_may_be_named_like_a_statistic():
    data = xr.DataArray(
        np.arange(6.0).reshape(2, 3), dims=("mean", "replicate"), coords={"mean": [1.0, 5.0]}
    )
    result = interval(data, "replicate", 0.95)
    assert result["mean"].values.tolist() == [1.0, 4.0]
    assert result["n"].sel(mean=5.0).item() == 3
    assert pooled(data.rename(mean="n"), ["n"], 0.95)["std"].values.tolist() == [1.0, 1.0]


def test_a_summary_of_metrics_in_blocks_equals_one_interval_per_metric(monkeypatch):
    """Many metrics are summarised a block at a time; each value is the one `interval` gives
    for that metric alone, bit for bit, across block boundaries, NaN and identical values."""
    from campaign.analysis import stats as stats_module

    rng = np.random.default_rng(3)
    values = rng.normal(5.0, 2.0, size=(7, 3, 2, 4))
    values[0, 1, 0, 1] = np.nan
    values[2, 2, 1, :3] = np.nan  # a single value: no interval
    values[4, 0, 0, :] = 1.25  # identical replicates: their value, zero std
    names = [f"m{i}" for i in range(len(values))]
    raw = xr.Dataset(
        {
            name: (("strategy", "load", "replicate"), column, {"units": "s"})
            for name, column in zip(names, values)
        },
        coords={"strategy": ["a", "b", "c"], "load": [0.5, 1.0]},
    )
    monkeypatch.setattr(stats_module, "SUMMARY_BLOCK_VALUES", 3 * raw["m0"].size)
    summary = stats_module.summarize(raw, names, 0.9)
    for name in names:
        alone = interval(raw[name], "replicate", 0.9)
        for stat in ("mean", "std", "n", "ci_low", "ci_high"):
            got = summary[f"{name}_{stat}"]
            assert got.dims == ("strategy", "load")
            assert got.dtype == alone[stat].dtype
            assert np.array_equal(got.values, alone[stat].values, equal_nan=True), (name, stat)
            assert got.attrs["cell_methods"].startswith("realization: ")
    assert summary["m4_std"].values[0, 0] == 0.0 and summary["m4_mean"].values[0, 0] == 1.25
    assert summary["m2_n"].values[2, 1] == 1 and np.isnan(summary["m2_ci_low"].values[2, 1])
    assert summary["m0_mean"].attrs["units"] == "s" and "units" not in summary["m0_n"].attrs


def sequential_coverage(draw, half_width, relative, min_replicates, most=100):
    """The share of 10,000 cells of mean 10 whose final 95% interval, after the precision
    target's rounds over ``draw``'s replicate values, holds 10; and the median replicates."""
    values = draw(np.random.default_rng(1), (10_000, most))
    rule = StoppingRule(half_width, relative, min_replicates, most, 0.95)
    done = np.ones(values.shape, dtype=bool)
    rounds = precision_rounds([values], done, ~done, rule)
    judged = judge(np.where(np.arange(most) < rounds.target[:, None], values, np.nan), rule)
    return np.mean(np.abs(judged.mean - 10) <= judged.half_width), np.median(rounds.target)


def test_the_coverage_of_sequential_intervals_is_what_the_documentation_says():
    """A precision target's intervals cover the mean less often than their nominal level:
    docs/explanation/statistics.md quotes these measured figures."""
    normal = lambda rng, shape: rng.normal(10, 3, shape)  # noqa: E731
    exponential = lambda rng, shape: rng.exponential(10, shape)  # noqa: E731
    rows = [
        ("normal, mean 10, sd 3", "half-width 0.2 (relative)", normal, 0.2, True, 100),
        ("exponential, mean 10", "half-width 4 (absolute)", exponential, 4.0, False, 100),
        ("exponential, mean 10", "half-width 0.2 (relative)", exponential, 0.2, True, 400),
    ]
    page = (ROOT / "docs" / "explanation" / "statistics.md").read_text()
    for values, target, draw, half_width, relative, most in rows:
        measured = [
            sequential_coverage(draw, half_width, relative, start, most) for start in (2, 5, 10)
        ]
        cells = [f"{100 * coverage:.1f}%" for coverage, _ in measured]
        row = f"| {values} | {target} | {measured[1][1]:.0f} | {' | '.join(cells)} |"
        assert row in page.splitlines()
    values = exponential(np.random.default_rng(1), (10_000, 21))
    low, high = stats.t.interval(0.95, 20, values.mean(1), stats.sem(values, axis=1))
    fixed = f"{100 * np.mean((low <= 10) & (10 <= high)):.1f}%"
    assert f"gives {fixed} on 21 exponential ones" in " ".join(page.split())
