"""Degradation ranking: Example E of parallel-jobs.md section 8, replicates, instances, and
metrics below 0."""

from __future__ import annotations

import json

import numpy as np
import pytest
import xarray as xr
from scipy import stats

import campaign
from campaign.analysis.ranking import degradation, friedman_test, ranking_notes
from campaign.analysis.ranking_text import rank_levels
from campaign.render.ranking import render_ranking

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
    table = render_ranking(result)
    assert table.splitlines()[1].split() == ["1", "A", "11.11", "11.11", "nan", "nan", "1"]
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


def scores(values: list[list[float]]) -> xr.Dataset:
    """A metric per strategy x replicate, paired, as a results file holds it."""
    return xr.Dataset(
        {"score": (("strategy", "replicate"), np.array(values, dtype=float))},
        {"strategy": ["A", "B", "C"], "replicate": np.arange(len(values[0]))},
        attrs={"headline_metrics": "score", "paired": "strategy"},
    )


def test_negative_values_are_degraded_from_the_magnitude_of_the_best():
    # Smaller is better: A (-10, -8, -12) is best in every replicate. Each deg is
    # 100 (value - best) / |best|, job by job: B 1/10, 1/8, 2/12; C 5/10, 4/8, 6/12.
    result = degradation(scores([[-10, -8, -12], [-9, -7, -10], [-5, -4, -6]]))
    # on cell means A -10, B -26/3, C -5
    assert result["deg"].sel(metric="score").values.tolist() == pytest.approx(
        [0, 100 * (4 / 3) / 10, 50]
    )
    assert result["D"].values.tolist() == pytest.approx([0, 40 / 3, 50])
    assert result["rank"].values.tolist() == [1, 2, 3]
    per_replicate = [100 / 10, 100 / 8, 200 / 12]
    assert float(result["D_paired_mean"].sel(strategy="B")) == pytest.approx(np.mean(per_replicate))
    half = np.std(per_replicate, ddof=1) / np.sqrt(3) * stats.t.ppf(0.975, 2)
    assert float(result["D_ci_low"].sel(strategy="B")) == pytest.approx(
        np.mean(per_replicate) - half
    )
    assert result["D_ci_low"].sel(strategy="C").item() == pytest.approx(50)
    assert result["D_ci_high"].sel(strategy="C").item() == pytest.approx(50)
    assert not bool(result["near_zero"].any())
    table = render_ranking(result)
    assert [line.split()[:3] for line in table.splitlines()[1:4]] == [
        ["1", "A", "0.00"],
        ["2", "B", "13.33"],
        ["3", "C", "50.00"],
    ]
    # as `campaign query --rank` and the report print it
    results = scores([[-10, -8, -12], [-9, -7, -10], [-5, -4, -6]])
    results["status"] = xr.ones_like(results["score"], dtype=np.int8)
    printed = campaign.table(campaign.rank(results, "strategy", "score")).splitlines()
    assert [line.split()[:4] for line in printed[2:5]] == [
        ["1", "A", "0.00", "0.00"],
        ["2", "B", "13.33", "13.06"],
        ["3", "C", "50.00", "50.00"],
    ]


def test_values_straddling_zero_keep_their_order_and_a_best_near_zero_warns():
    # A below 0, B and C above: deg 100 (value + 2) / 2
    result = degradation(scores([[-2.0], [1.0], [4.0]]))
    assert result["D"].values.tolist() == pytest.approx([0, 150, 300])
    assert result["rank"].values.tolist() == [1, 2, 3]
    # a best of -0.01 beside 1 and 5: C exceeds it by 501 |best|, B by 101: deg 10100, 50100
    result = degradation(scores([[-0.01], [1.0], [5.0]]))
    assert result["D"].values.tolist() == pytest.approx([0, 10100, 50100])
    assert bool(result["near_zero"].item())
    assert ranking_notes(result, paired=True)[-1] == (
        "warning: score: the best strategy's value is near 0 beside another level's (which "
        "exceeds it by more than 99 |best|, on cell means or within a replicate): degradations "
        "there exceed 9900% and dominate D; relative degradations explode near 0: rank on a "
        "metric away from 0, or compare differences with `campaign compare`"
    )
    # a best of -1 beside 5: far enough from 0 (deg 600), no warning
    assert not bool(degradation(scores([[-1.0], [5.0], [2.0]]))["near_zero"].item())


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


def replicated(values: np.ndarray, paired: str = "strategy") -> xr.Dataset:
    """mean_wait per strategy x grid x replicate, as a results file holds it."""
    strategies, grids, replicates = values.shape
    return xr.Dataset(
        {"mean_wait": (("strategy", "grid", "replicate"), values)},
        {
            "strategy": ["A", "B", "C"][:strategies],
            "grid": [f"g{i}" for i in range(grids)],
            "replicate": np.arange(replicates),
        },
        attrs={"headline_metrics": "mean_wait", "paired": paired},
    )


def test_notes_warn_of_unpaired_levels_few_replicates_and_a_best_near_zero():
    rng = np.random.default_rng(1)
    base = 100 + rng.random((3, 2, 2))
    result = degradation(replicated(base * [[[1]], [[2]], [[3]]]))
    notes = ranking_notes(result, paired=False)
    assert notes[0].startswith("warning: strategy is not paired (its levels have seeds of their")
    assert notes[1] == (
        "warning: the intervals rest on 2 replicates (fewer than 5): too few for an interval to "
        "mean much; add replicates"
    )
    assert notes[2].startswith("Friedman test over 2 instances") and len(notes) == 3
    # five replicates, paired, one instance (no Friedman test): nothing to say
    enough = degradation(replicated(100 + rng.random((3, 1, 5))))
    assert ranking_notes(enough, paired=True) == []
    # A's value near 0 on g1 (0.5 against 100): degradations of 19900%
    values = 100 + rng.random((3, 2, 5))
    values[0, 1] = 0.5
    notes = ranking_notes(degradation(replicated(values)), paired=True)
    assert notes[:-1] == [
        "warning: mean_wait: in 1 of 2 instances (e.g. grid=g1) the best strategy's value is "
        "near 0 beside another level's (which exceeds it by more than 99 |best|, on cell means "
        "or within a replicate): degradations there exceed 9900% and dominate D; relative "
        "degradations explode near 0: rank on a metric away from 0, or compare differences with "
        "`campaign compare`"
    ]
    # within one replicate only: B at 0.2 in replicate 3 of g0
    values = 100 + rng.random((3, 2, 5))
    values[1, 0, 3] = 0.2
    result = degradation(replicated(values))
    assert result["near_zero"].sel(metric="mean_wait").values.tolist() == [True, False]
    # a best of exactly 0 beside a level that is not
    values[1, 0, 3] = 0.0
    assert bool(degradation(replicated(values))["near_zero"].sel(grid="g0").item())


def test_friedman_test_across_instances():
    rng = np.random.default_rng(2)
    values = 100 + rng.random((3, 4, 5)) * 10
    values[2] += 50  # C worst everywhere
    result = degradation(replicated(values))
    statistic, p_value, instances = friedman_test(result)
    table = result["D_instance"].transpose("grid", "strategy").values
    expected = stats.friedmanchisquare(*table.T)
    assert (statistic, p_value, instances) == (
        pytest.approx(expected.statistic),
        pytest.approx(expected.pvalue),
        4,
    )
    assert ranking_notes(result, paired=True)[-1] == (
        f"Friedman test over 4 instances (the levels ranked by D within each): chi-square "
        f"{statistic:.4g}, p = {p_value:.3g}"
    )
    assert friedman_test(degradation(replicated(values[:2]))) is None  # two levels
    assert friedman_test(degradation(replicated(values[:, :1]))) is None  # one instance


def test_an_instance_where_a_level_has_no_value_is_left_out_of_every_levels_d():
    """C has no value on g1 (its tasks failed). Judged there among A and B, B was best on g1
    and got D 25 beside A's 62.5, with C's D over g0 alone: B ranked above A. Every level is
    now judged on g0, the instance they all have: A 25, B 50, C 0, and the interval is over
    the 4 replicates of g0."""
    values = np.empty((3, 2, 4))
    values[:, 0] = np.array([[10.0], [12.0], [8.0]]) + [0.0, 0.4, -0.4, 0.0]
    values[:, 1] = np.array([[20.0], [10.0], [np.nan]])
    data = replicated(values)
    result = degradation(data, instance_dims=["grid"])
    assert result["D"].values == pytest.approx([25.0, 50.0, 0.0])
    assert result["rank"].values.tolist() == [2.0, 3.0, 1.0]
    assert result["D_n"].values.tolist() == [4, 4, 4]
    assert int(result["D_left_out"].sum()) == 0
    per_replicate = 100 * (values[:2, 0] - values[2, 0]) / values[2, 0]
    assert result["D_paired_mean"].values[:2] == pytest.approx(per_replicate.mean(axis=1))
    assert (result.attrs["instances"], result.attrs["instances_left_out"]) == (2, 1)
    data["status"] = xr.ones_like(data["mean_wait"], dtype=np.int8)
    ranking = rank_levels(data, "strategy", ["mean_wait"])
    assert ranking.notes[1] == (
        "1 of 2 instances left out of D_means (some strategy or metric has no value there: "
        "failed, missing or NaN), so that every strategy is judged on the same instances"
    )


def test_a_level_with_no_value_anywhere_is_unranked_and_sets_no_instance_aside():
    """C failed everywhere: A and B are judged on both instances, as without C (A best on g0,
    B 20 % worse; B best on g1, A 25 % worse: D 12.5 and 10), with their interval over the 4
    replicates; C is unranked and a note says so."""
    values = np.empty((3, 2, 4))
    values[:, 0] = np.array([[10.0], [12.0], [np.nan]]) + [0.0, 0.4, -0.4, 0.0]
    values[:, 1] = np.array([[25.0], [20.0], [np.nan]]) + [0.0, 0.4, -0.4, 0.0]
    data = replicated(values)
    result = degradation(data, instance_dims=["grid"])
    np.testing.assert_allclose(result["D"].values[:2], [12.5, 10.0])
    assert np.isnan(result["D"].values[2])
    assert result["rank"].values[:2].tolist() == [2.0, 1.0]
    assert result["D_n"].values.tolist() == [4, 4, 0]
    assert (result.attrs["instances"], result.attrs["instances_left_out"]) == (2, 0)
    data["status"] = xr.ones_like(data["mean_wait"], dtype=np.int8)
    ranking = rank_levels(data, "strategy", ["mean_wait"])
    assert ranking.notes[1] == (
        "unranked: C (no value in any instance: every task failed, missing or NaN)"
    )
    assert "warning: the intervals rest on 4 replicates (fewer than 5)" in ranking.notes[2]


def test_a_metric_whose_largest_value_is_best_is_degraded_from_the_largest():
    """Example E with a utilization beside it (0.8, 0.5, 0.4): maximised, its degradations are
    100 (0.8 - v) / 0.8 = 0, 37.5, 50 and A ranks first; minimised (the default), 0.4 would be
    its best and B would."""
    data = example_e().assign(
        utilization=(("strategy", "replicate"), [[0.8], [0.5], [0.4]]),
        status=(("strategy", "replicate"), np.ones((3, 1), dtype="i1")),  # as results have
    )
    data.attrs["headline_metrics"] += " utilization"
    result = degradation(data, maximize=["utilization"])
    assert result["deg"].sel(metric="utilization").values.tolist() == pytest.approx([0, 37.5, 50])
    assert result["deg"].sel(metric="mean_wait").values.tolist() == pytest.approx([0, 50, 300])
    d = [(100 / 3) / 4, (50 + 37.5) / 4, (300 + 100 + 10 + 50) / 4]
    assert result["D"].values.tolist() == pytest.approx(d)
    assert result["rank"].values.tolist() == [1, 2, 3]
    assert result.attrs["maximized"] == "utilization"
    smallest = degradation(data)  # utilization minimised: 100 (v - 0.4) / 0.4
    assert smallest["deg"].sel(metric="utilization").values.tolist() == pytest.approx([100, 25, 0])
    assert smallest["rank"].values.tolist() == [2, 1, 3]
    ranking = campaign.rank(data, "strategy", maximize="utilization")
    assert ranking.title.endswith("best: the smallest value (the largest of utilization)")
    assert "100 (best - value) / |best| where the largest is best" in ranking.notes[0]
    only = campaign.rank(data, "strategy", "utilization", maximize=["utilization"])
    assert only.title.endswith("best: the largest value")
    assert only.result["rank"].values.tolist() == [1, 2, 3]
    with pytest.raises(campaign.CampaignError) as refused:
        campaign.rank(data, "strategy", "mean_wait", maximize="utilization")
    assert str(refused.value) == (
        "maximize 'utilization' is not a metric ranked; metrics ranked: mean_wait"
    )


def test_an_instance_where_every_level_is_infinite_ties_them():
    """On g1 no strategy's jobs ever start (+inf for each): every level there is as good as
    the best, a degradation of 0 (inf - inf gave NaN, and g1 fell out of every level's D
    with no note, as if there were one instance)."""
    values = np.empty((3, 2, 4))
    values[:, 0] = np.array([[10.0], [12.0], [8.0]]) + [0.0, 0.4, -0.4, 0.0]
    values[:, 1] = np.inf
    result = degradation(replicated(values), instance_dims=["grid"])
    assert result["D_instance"].sel(grid="g1").values.tolist() == [0.0, 0.0, 0.0]
    assert result["D"].values == pytest.approx([12.5, 25.0, 0.0])
    per_replicate = 100 * (values[:2, 0] - values[2, 0]) / values[2, 0] / 2
    assert result["D_paired_mean"].values[:2] == pytest.approx(per_replicate.mean(axis=1))
    assert result["D_n"].values.tolist() == [4, 4, 4]
    assert (result.attrs["instances"], result.attrs["instances_left_out"]) == (2, 0)
    assert not bool(result["near_zero"].any())


def test_an_infinite_level_is_no_best_near_zero():
    """C's jobs never start on g1 (+inf) beside A's 10 and B's 12: C's D is inf, but A's 10 is
    not near 0, and the ranking said it was ("the best strategy's value is near 0 ... rank on
    a metric away from 0")."""
    values = np.empty((3, 2, 4))
    values[:, 0] = np.array([[10.0], [12.0], [8.0]]) + [0.0, 0.4, -0.4, 0.0]
    values[:, 1] = np.array([[10.0], [12.0], [np.inf]]) + [0.0, 0.4, -0.4, 0.0]
    result = degradation(replicated(values), instance_dims=["grid"])
    assert np.isinf(result["D"].values[2]) and result["rank"].values.tolist() == [1.0, 2.0, 3.0]
    assert not bool(result["near_zero"].any())
    assert not [line for line in ranking_notes(result, True) if "near 0" in line]


def test_the_friedman_test_is_over_the_ranked_levels():
    """D failed everywhere (unranked, judged nowhere): the Friedman test is that of A, B and C
    over the 5 instances, as without D; D's empty column set every instance aside, and the
    test was left out without a word."""
    values = np.random.default_rng(1).random((4, 5, 3)) * 10 + np.arange(4)[:, None, None] * 3
    values[3] = np.nan
    data = xr.Dataset(
        {"mean_wait": (("strategy", "grid", "replicate"), values)},
        {"strategy": list("ABCD"), "grid": [f"g{i}" for i in range(5)], "replicate": range(3)},
        attrs={"headline_metrics": "mean_wait", "paired": "strategy"},
    )
    result = degradation(data, instance_dims=["grid"])
    without = degradation(data.isel(strategy=[0, 1, 2]), instance_dims=["grid"])
    assert friedman_test(result) == friedman_test(without)
    assert friedman_test(result)[2] == 5
    assert ranking_notes(result, True)[-1].startswith("Friedman test over 5 instances")


def test_csv_and_json_keep_numeric_levels_numbers():
    """A level -0.5 of a numeric factor was written '-0.5 in CSV (text kept from a
    spreadsheet's formulas) and "-0.5" in JSON, matching no level of the export or query."""
    data = example_e(2).assign_coords(strategy=[-0.5, 0.0, 2.0])
    result = degradation(data.rename(strategy="load"), "load")
    lines = render_ranking(result, "csv").splitlines()
    assert [line.split(",")[1] for line in lines] == ["load", "-0.5", "0.0", "2.0"]
    assert [row["load"] for row in json.loads(render_ranking(result, "json"))] == [-0.5, 0.0, 2.0]
    assert render_ranking(degradation(example_e(2)), "csv").splitlines()[1].split(",")[1] == "A"
