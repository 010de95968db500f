"""Comparing a factor's levels with a baseline: hand-computed intervals, paired (common random
numbers) against Welch, coverage of a known true difference, and the demo's EASY vs FCFS."""

from __future__ import annotations

import numpy as np
import pytest
import xarray as xr
from scipy import stats

import campaign
from campaign.analysis.comparison import bonferroni_note, compare
from campaign.cli.main import main
from campaign.design.tasks import Design, cell_params
from campaign.errors import CampaignError
from campaign.results.assemble import assemble
from campaign.results.netcdf import write_netcdf
from campaign.results.table import failure_table
from campaign.spec.load import load_spec

TINY = """
name: tiny
model: mm1
params: {{service_rate: 1.0}}
factors:
  arrival_rate: [0.5, 0.7]
  customers: [10, 20]
paired: [{paired}]
replicates: 3
seed: 1
output: out
"""


def tiny_results(tmp_path, values, paired="arrival_rate"):
    """Results of a 2 x 2 design whose metric ``v`` takes the given values: a mapping
    (arrival_rate, customers) -> the three replicates' values."""
    path = tmp_path / "tiny.yaml"
    path.write_text(TINY.format(paired=paired))
    design = Design(load_spec(path))
    records = {}
    for task in design.tasks():
        label = design.cell_label(task.cell)
        value = values[(label["arrival_rate"], label["customers"])][task.replicate]
        records[task.key] = {"key": task.key, "status": "ok", "metrics": {"v": value}}
    dataset = assemble(design, records, 0.95, {"v": {"units": "s", "long_name": "a value"}})
    write_netcdf(dataset, tmp_path / "results.nc", failure_table(dataset, design, records))
    return tmp_path / "results.nc"


VALUES = {
    (0.5, 10): [1.0, 2.0, 3.0],
    (0.7, 10): [2.0, 4.0, 6.0],
    (0.5, 20): [5.0, 5.0, 5.0],
    (0.7, 20): [0.0, 10.0, 20.0],
}


def test_a_paired_comparison_is_over_the_per_replicate_differences(tmp_path, capsys):
    path = tiny_results(tmp_path, VALUES)
    result = campaign.compare(path, "arrival_rate", 0.5, "v")
    cell = result.sel(customers=10, arrival_rate=0.7)
    # differences 1, 2, 3: mean 2, std 1, t(0.975, 2 dof) / sqrt(3)
    half = stats.t.ppf(0.975, 2) / np.sqrt(3)
    assert float(cell["difference"]) == 2.0
    assert float(cell["difference_half_width"]) == pytest.approx(half, rel=1e-12)
    assert float(cell["difference_low"]) == pytest.approx(2.0 - half, rel=1e-12)
    # ratio of the means 4 / 2; every y - 2 x is 0, so the ratio is exact
    assert float(cell["ratio"]) == 2.0
    assert float(cell["ratio_low"]) == float(cell["ratio_high"]) == 2.0
    assert int(cell["n"]) == 3 and float(cell["dof"]) == 2.0
    other = result.sel(customers=20, arrival_rate=0.7)
    # differences -5, 5, 15: mean 5, std 10
    assert float(other["difference_half_width"]) == pytest.approx(10 * half, rel=1e-12)
    assert result.attrs["paired"] == 1 and result["difference"].attrs["units"] == "s"

    assert (
        main(
            ["compare", str(path), "--factor", "arrival_rate", "--baseline", "0.5"]
            + ["--metric", "v"]
        )
        == 0
    )
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == (
        "v: each level of arrival_rate against 0.5; difference = level - 0.5, ratio = level / "
        "0.5 (ratio of the means)"
    )
    assert lines[1].startswith("paired: the levels share seeds (common random numbers)")
    assert lines[2].split() == [
        "customers", "arrival_rate", "n", "0.5", "(baseline)", "mean", "difference", "[s]",
        "difference", "interval", "ratio", "ratio", "interval",
    ]  # fmt: skip
    assert lines[4].split() == [
        "10", "0.7", "3", "2", "4", "2", "±", f"{half:.3g}",
        f"[{2 - half:.4g},", f"{2 + half:.4g}]", "2", "[2,", "2]",
    ]  # fmt: skip
    assert lines[-2:] == [
        "warning: some intervals rest on 3 replicate(s) (fewer than 5): too few for an "
        "interval to say much; add replicates",
        "note: the 2 rows' intervals are each at 95% on their own; for all 2 at once at 95%, "
        "use --confidence 0.975 (Bonferroni)",
    ]


def test_an_unpaired_comparison_is_welchs(tmp_path):
    path = tiny_results(tmp_path, VALUES, paired="")
    cell = campaign.compare(path, "arrival_rate", 0.5, "v").sel(customers=10, arrival_rate=0.7)
    a, b = 4.0 / 3, 1.0 / 3  # variances of the two means: sample variances 4 and 1, n = 3
    dof = (a + b) ** 2 / (a**2 / 2 + b**2 / 2)
    half = stats.t.ppf(0.975, dof) * np.sqrt(a + b)
    assert float(cell["dof"]) == pytest.approx(dof, rel=1e-12)
    assert float(cell["difference_half_width"]) == pytest.approx(half, rel=1e-12)
    # the ratio's delta-method variance: var(mean y) + R^2 var(mean x), over mean x squared
    ratio_a, ratio_b = a, 4.0 * b
    ratio_dof = (ratio_a + ratio_b) ** 2 / (ratio_a**2 / 2 + ratio_b**2 / 2)
    ratio_half = stats.t.ppf(0.975, ratio_dof) * np.sqrt(ratio_a + ratio_b) / 2.0
    assert float(cell["ratio_high"]) == pytest.approx(2.0 + ratio_half, rel=1e-12)
    with pytest.raises(CampaignError, match="is not paired in these results"):
        campaign.compare(path, "arrival_rate", 0.5, "v", paired=True)


def test_by_pools_the_other_factors_replicate_by_replicate(tmp_path):
    path = tiny_results(tmp_path, VALUES)
    pooled = campaign.compare(path, "arrival_rate", 0.5, "v", by=[]).sel(arrival_rate=0.7)
    # per replicate, the mean over customers: baseline 3, 3.5, 4; level 1, 7, 13
    differences = np.array([1.0 - 3.0, 7.0 - 3.5, 13.0 - 4.0])
    assert float(pooled["difference"]) == pytest.approx(differences.mean(), rel=1e-12)
    half = stats.t.ppf(0.975, 2) * differences.std(ddof=1) / np.sqrt(3)
    assert float(pooled["difference_half_width"]) == pytest.approx(half, rel=1e-12)
    assert float(pooled["ratio"]) == pytest.approx(7.0 / 3.5, rel=1e-12)


LEVELS = "levels: 0.5, 0.7"


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--factor", "nope"], "--factor 'nope' is not a factor; factors: arrival_rate, customers"),
        (["--baseline", "0.9"], f"--baseline '0.9' is not a level of arrival_rate; {LEVELS}"),
        (["--metric", "w"], "--metric 'w' is not in the results; metrics: v"),
        (["--by", "arrival_rate"], "--by 'arrival_rate' is the compared factor; give another "
         "factor"),
        (["--where", "customers=30"], "--where 'customers=30': '30' is not a level of customers; "
         "levels: 10, 20"),
    ],
)  # fmt: skip
def test_bad_options_are_one_line(tmp_path, capsys, argv, message):
    path = tiny_results(tmp_path, VALUES)
    options = {"--factor": "arrival_rate", "--baseline": "0.5", "--metric": "v"}
    for flag, value in zip(argv[::2], argv[1::2]):
        options[flag] = value
    command = ["compare", str(path), *[x for item in options.items() for x in item]]
    assert main(command) == 2
    assert capsys.readouterr().err == f"campaign: error: {message}\n"


def analytic(params, seed):
    """A cheap model whose true means are known: 100 + instance + shift, with noise of standard
    deviation 5 shared by every task of the same seed (common random numbers) and 1 of the
    task's own."""
    common = np.random.default_rng(seed).standard_normal()
    own_key = int(round(1000 + 10 * params["shift"]))
    own = np.random.default_rng([seed, own_key]).standard_normal()
    return {"y": 100.0 + params["instance"] + params["shift"] + 5.0 * common + own}


ANALYTIC = """
name: analytic
model: analytic:run
factors:
  shift: {{base: 0.0, better: -1.0}}
  instance: [{cells}]
paired: [{paired}]
replicates: 8
seed: 2024
output: out
"""
CELLS = 400


def analytic_results(tmp_path, paired: str):
    path = tmp_path / "analytic.yaml"
    path.write_text(ANALYTIC.format(cells=", ".join(map(str, range(CELLS))), paired=paired))
    design = Design(load_spec(path))
    records = {
        task.key: {
            "key": task.key,
            "status": "ok",
            "metrics": analytic(cell_params(design.spec, task.cell), task.seed),
        }
        for task in design.tasks()
    }
    return assemble(design, records, 0.95)


def covered(result) -> tuple[int, int]:
    """How many cells' intervals hold the true difference (-1) and the true ratio."""
    instance = result["instance"].values
    truth = (99.0 + instance) / (100.0 + instance)
    low, high = result["difference_low"].values.ravel(), result["difference_high"].values.ravel()
    ratio_low, ratio_high = result["ratio_low"].values.ravel(), result["ratio_high"].values.ravel()
    return int(((low <= -1) & (-1 <= high)).sum()), int(
        ((ratio_low <= truth) & (truth <= ratio_high)).sum()
    )


def test_intervals_cover_a_known_difference_at_the_nominal_rate_paired_or_not(tmp_path):
    """400 cells, each with its 95% interval of 8 replicates: the count that holds the true
    difference must lie in the central 99.9% of Binomial(400, 0.95), paired and Welch alike,
    and so must the count of ratio intervals holding the true ratio."""
    low, high = stats.binom.interval(0.999, CELLS, 0.95)
    (tmp_path / "paired").mkdir()
    (tmp_path / "unpaired").mkdir()
    paired = compare(analytic_results(tmp_path / "paired", "shift"), "shift", "base", "y")
    welch = compare(analytic_results(tmp_path / "unpaired", ""), "shift", "base", "y")
    assert paired.attrs["paired"] == 1 and welch.attrs["paired"] == 0
    for result in (paired, welch):
        differences, ratios = covered(result)
        assert low <= differences <= high, (result.attrs["method"], differences)
        assert low <= ratios <= high, (result.attrs["method"], ratios)


def test_common_random_numbers_make_the_paired_interval_tighter(tmp_path):
    dataset = analytic_results(tmp_path, "shift")
    paired = compare(dataset, "shift", "base", "y")
    ignoring = compare(dataset, "shift", "base", "y", paired=False)
    assert "unpaired on request" in ignoring.attrs["method"]
    ratio = paired["difference_half_width"] / ignoring["difference_half_width"]
    # sd of a paired difference sqrt(2) x 1, of an unpaired one sqrt(2 (25 + 1)): about 0.2
    assert float(ratio.max()) < 1  # tighter in every one of the 400 cells
    assert 0.15 < float(ratio.median()) < 0.3
    assert np.array_equal(paired["difference"].values, ignoring["difference"].values)


DEMO = """
name: demo-compare
model: jobs
params: {workload: synthetic, jobs: 400, processors: 128}
factors:
  scheduler: [fcfs, easy]
  load: [1.5, 2.0]
paired: [scheduler]
replicates: 6
seed: 20260101
metrics: [mean_wait]
output: out
"""


def test_on_the_demo_easy_against_fcfs_paired_intervals_are_narrower(
    tmp_path, scheduler_address, capsys
):
    path = tmp_path / "demo.yaml"
    path.write_text(DEMO)
    campaign.run(path, scheduler=scheduler_address, progress=False)
    results = tmp_path / "out"
    paired = campaign.compare(results, "scheduler", "fcfs", "mean_wait")
    welch = campaign.compare(results, "scheduler", "fcfs", "mean_wait", paired=False)
    assert (paired["difference_half_width"] < welch["difference_half_width"]).all()
    assert (paired["difference"] < 0).all()  # EASY waits less than FCFS
    argv = ["compare", str(results), "--factor", "scheduler", "--baseline", "fcfs"]
    assert main([*argv, "--metric", "mean_wait"]) == 0
    assert "paired: the levels share seeds" in capsys.readouterr().out
    assert main([*argv, "--metric", "mean_wait", "--unpaired", "--format", "csv"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == (
        "load,scheduler,baseline_mean,mean,difference,difference_half_width,difference_low,"
        "difference_high,ratio,ratio_low,ratio_high,n,n_baseline,dof,ci_level,ci_method"
    )
    assert [line.split(",")[:2] for line in lines[1:]] == [["1.5", "easy"], ["2.0", "easy"]]


def test_the_few_replicates_warning_counts_what_each_interval_rests_on():
    """Welch's interval rests on the baseline's replicates too; a row without an interval
    (no replicate of its level) has none to warn of."""
    values = np.array([[10.0, 11, 12, 13, 14, 15], [20, 22, *[np.nan] * 4], [np.nan] * 6])
    dataset = xr.Dataset(
        {
            "y": (("s", "replicate"), values),
            "status": (("s", "replicate"), np.isfinite(values).astype("i1")),
        },
        {"s": ["a", "b", "c"], "replicate": np.arange(6)},
        attrs={"confidence": 0.95},
    )
    warning = (
        "warning: some intervals rest on 2 replicate(s) (fewer than 5): too few for an interval "
        "to say much; add replicates"
    )
    against_a = campaign.table(campaign.compare(dataset, "s", "a", "y")).splitlines()
    assert against_a[-2] == warning  # b's 2 replicates, not c's 0
    assert against_a[-1] == (  # c's row is all nan: said why
        "note: 1 row(s) have no value of the level or of the baseline (failed, missing or NaN): "
        "nothing to compare (nan)"
    )
    assert against_a[-3].split()[:2] == ["c", "0/6"] and against_a[-4].split()[:2] == ["b", "2/6"]
    against_b = campaign.compare(dataset.sel(s=["a", "b"]), "s", "b", "y")
    assert campaign.table(against_b, "markdown").splitlines()[-1] == warning  # 6 against 2
    only_none = campaign.table(campaign.compare(dataset.sel(s=["a", "c"]), "s", "a", "y"))
    assert "warning" not in only_none


def test_rows_without_pairs_say_they_have_nothing_to_compare():
    """Paired levels: b finished only where the baseline failed (no pair): its row is nan, and
    a note says why; c shares one finished replicate with it (a difference, no interval)."""
    nan = np.nan
    values = np.array([[1.0, nan, 3.0, nan], [nan, 5.0, nan, 7.0], [2.0, nan, nan, nan]])
    dataset = xr.Dataset(
        {
            "y": (("s", "replicate"), values),
            "status": (("s", "replicate"), np.where(np.isfinite(values), 1, 2).astype("i1")),
            "seed": ("replicate", np.arange(4) + 10),
        },
        {"s": ["a", "b", "c"], "replicate": np.arange(4)},
        attrs={"confidence": 0.95, "paired": "s"},
    )
    result = campaign.compare(dataset, "s", "a", "y")
    assert result.attrs["paired"] == 1
    assert result["n"].values.tolist() == [0, 1]
    assert np.isnan(result["difference"].values[0]) and result["difference"].values[1] == 1.0
    lines = campaign.table(result).splitlines()
    assert lines[-3:] == [
        "warning: 1 row(s) rest on 1 replicate, without an interval; add replicates",
        "note: 1 row(s) have no replicate where both the level and the baseline have a value "
        "(failed, missing or NaN): nothing to compare (nan)",
        "note: 1 value left out, its replicate lacking the value of the level or of the "
        "baseline (failed, missing or NaN): each row's means are over its n pairs, not over "
        "every value of the cell",
    ]  # c's row: a's value of replicate 2 has no pair
    welch = campaign.table(campaign.compare(dataset, "s", "a", "y", paired=False)).splitlines()
    assert not [line for line in welch if line.startswith("note")]  # b's 2 values against a's 2


def test_a_row_on_one_replicate_says_it_has_no_interval():
    """A difference over one replicate (one pair; or one value of the level or the baseline,
    unpaired) has no interval: a warning says so, as the query's table does for a mean."""
    values = np.array([[10.0, 11, 12], [20, np.nan, np.nan], [30, 31, 33]])
    dataset = xr.Dataset(
        {
            "y": (("s", "replicate"), values),
            "status": (("s", "replicate"), np.isfinite(values).astype("i1")),
        },
        {"s": ["a", "b", "c"], "replicate": np.arange(3)},
        attrs={"confidence": 0.95, "paired": "s"},
    )
    single = "warning: 1 row(s) rest on 1 replicate, without an interval; add replicates"
    for paired, difference in ((True, "10"), (False, "9")):
        lines = campaign.table(campaign.compare(dataset, "s", "a", "y", paired=paired))
        lines = [line for line in lines.splitlines() if "values left out" not in line]
        row = lines[-4].split()  # b's, above c's and the warnings on 3 and on 1 replicate
        assert row[:2] == ["b", "1" if paired else "1/3"] and row[4:6] == [difference, "-"]
        assert lines[-2].startswith("warning: some intervals rest on 3 replicate(s)")
        assert lines[-1] == single
    one = dataset.isel(replicate=[0])
    lines = campaign.table(campaign.compare(one, "s", "a", "y")).splitlines()
    assert lines[-1] == "warning: 2 row(s) rest on 1 replicate, without an interval; add replicates"


def test_the_level_the_bonferroni_note_advises_covers_a_family_of_rows_at_once(tmp_path):
    """400 independent cells in families of 5: at 95% each, all 5 intervals of a family hold
    the true difference in 0.95^5 = 77% of the families; at the level the note advises
    (0.99), in 0.99^5 >= 95% of them, as Bonferroni promises."""
    dataset = analytic_results(tmp_path, "shift")
    note = bonferroni_note(5, 0.95)
    assert note == (
        "note: the 5 rows' intervals are each at 95% on their own; for all 5 at once at 95%, "
        "use --confidence 0.99 (Bonferroni)"
    )
    advised = float(note.split("--confidence ")[1].split()[0])
    families = CELLS // 5
    held = {}
    for level in (0.95, advised):
        result = compare(dataset, "shift", "base", "y", confidence=level)
        low, high = (
            result["difference_low"].values.ravel(),
            result["difference_high"].values.ravel(),
        )
        held[level] = int(((low <= -1) & (-1 <= high)).reshape(families, 5).all(axis=1).sum())
        expected = stats.binom.interval(0.999, families, level**5)
        assert expected[0] <= held[level] <= expected[1], (level, held[level])
    assert held[0.95] < 0.95 * families <= held[advised] + 2  # binomial noise of 80 families
    shown = campaign.table(compare(dataset, "shift", "base", "y", confidence=0.975))
    assert "each interval (97.5%, Student t)" in shown  # not "98%"
    assert shown.splitlines()[-1] == (
        "note: the 400 rows' intervals are each at 97.5% on their own; for all 400 at once at "
        "97.5%, use --confidence 0.999938 (Bonferroni)"
    )


def test_values_without_their_pair_are_counted_as_left_out_of_the_paired_means():
    """A paired level failed in replicate 1 where the baseline did not: the baseline's value
    there has no pair, so the comparison's baseline mean is over the 3 pairs (8/3), not over
    the 4 values `query` averages (2.5); a note says so, where nothing did."""
    values = np.array([[1.0, 2.0, 3.0, 4.0], [2.0, np.nan, 4.0, 6.0]])
    dataset = xr.Dataset(
        {
            "y": (("s", "replicate"), values),
            "status": (("s", "replicate"), np.where(np.isfinite(values), 1, 2).astype("i1")),
            "seed": ("replicate", np.arange(4) + 10),
        },
        {"s": ["a", "b"], "replicate": np.arange(4)},
        attrs={"confidence": 0.95, "paired": "s"},
    )
    result = campaign.compare(dataset, "s", "a", "y")
    assert float(result["baseline_mean"].item()) == pytest.approx(8 / 3)
    assert int(result["n"].item()) == 3
    assert result.attrs["left_out_unpaired"] == 1
    note = (
        "note: 1 value left out, its replicate lacking the value of the level or of the "
        "baseline (failed, missing or NaN): each row's means are over its n pairs, not over "
        "every value of the cell"
    )
    assert note in campaign.table(result).splitlines()
    assert note in campaign.table(result, "markdown").splitlines()
    welch = campaign.compare(dataset, "s", "a", "y", paired=False)
    assert float(welch["baseline_mean"].item()) == 2.5  # every value: nothing left out
    assert welch.attrs["left_out_unpaired"] == 0
    assert not [line for line in campaign.table(welch).splitlines() if "left out" in line]


def test_a_pair_infinite_on_both_sides_leaves_no_interval():
    """Replicate 2 never ends under either level (+inf, a job that never starts): its
    difference inf - inf is undefined, so the row has no interval, as a cell with an infinite
    replicate has none. It had a half-width over the 2 finite differences with t at 2 degrees
    of freedom and n 3 (2.63 in CSV and JSON beside a difference of nan)."""
    inf = np.inf
    values = np.array([[1.0, 2.0, inf, 4.0], [2.0, 4.5, inf, 5.0]])
    dataset = xr.Dataset(
        {
            "y": (("s", "replicate"), values),
            "status": (("s", "replicate"), np.ones(values.shape, dtype="i1")),
        },
        {"s": ["a", "b"], "replicate": np.arange(4)},
        attrs={"confidence": 0.95, "paired": "s"},
    )
    row = campaign.compare(dataset, "s", "a", "y").sel(s="b")
    assert int(row["n"]) == 4 and np.isnan(float(row["difference"]))
    for name in ("difference_half_width", "difference_low", "difference_high", "ratio_low"):
        assert np.isnan(float(row[name])), name
    finite = campaign.compare(dataset.isel(replicate=[0, 1, 3]), "s", "a", "y").sel(s="b")
    assert float(finite["difference_half_width"]) == pytest.approx(
        stats.t.ppf(0.975, 2) * np.std([1.0, 2.5, 1.0], ddof=1) / np.sqrt(3), rel=1e-12
    )
