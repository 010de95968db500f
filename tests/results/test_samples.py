"""Samples: a model's per-job values kept as quantiles, their percentiles as metrics, and the
demo's pooled wait CDF checked against the waits recomputed from the model."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import xarray as xr

import campaign
from campaign.analysis.distributions import cell_cdfs, pooled_cdf
from campaign.errors import CampaignError
from campaign.models.jobs import run as jobs_run
from campaign.render.sample_ecdf import plot_ecdf
from campaign.results.names import QUANTILE_GRID, metric_values
from campaign.spec.load import load_spec

DEMO = Path(__file__).resolve().parents[2] / "specs" / "demo.yaml"


@pytest.fixture(scope="module")
def demo(tmp_path_factory, scheduler_address):
    """The demo with two replicates of 1000 jobs (it keeps the per-job waits)."""
    folder = tmp_path_factory.mktemp("demo")
    text = DEMO.read_text().replace("replicates: 20", "replicates: 2")
    text = text.replace("jobs: 3000", "jobs: 1000")
    assert "replicates: 2\n" in text and "jobs: 1000\n" in text
    spec = folder / "demo.yaml"
    spec.write_text(text + "output: out\n")
    campaign.run(spec, scheduler=scheduler_address, progress=False)
    return spec, folder / "out" / "results.nc"


def exact_ecdf(values: np.ndarray, x: np.ndarray) -> np.ndarray:
    return np.searchsorted(np.sort(values), x, side="right") / values.size


def test_demo_pooled_wait_cdf_matches_the_models_waits(demo):
    spec_path, path = demo
    spec = load_spec(spec_path)
    samples, results = campaign.open_samples(path), xr.load_dataset(path)
    cdfs = cell_cdfs(samples, "wait", by=["scheduler"], where={"load": [1.5]})
    assert sorted(cdfs) == [("conservative",), ("easy",), ("fcfs",)]
    # the figure draws these CDFs, one step line per scheduler
    figure = plot_ecdf(samples, "wait", by="scheduler", where=["load=1.5"])
    lines = {line.get_label(): line for line in figure.axes[0].lines}
    assert sorted(lines) == ["conservative", "easy", "fcfs"]
    # load is held at 1.5, not pooled; the replicates are
    assert figure.axes[0].get_title().splitlines()[0] == (
        "wait: CDF pooled over replicates (load=1.5)"
    )
    assert figure.axes[0].get_xlabel() == "Waiting time of each job (s)"
    # waits span decades: a symlog axis labelled in plain numbers, not 10^k
    figure.canvas.draw()
    labels = [t.get_text() for t in figure.axes[0].get_xticklabels() if t.get_text()]
    assert labels[:4] == ["0", "1", "10", "100"] and not any("$" in t for t in labels)
    for scheduler, line in lines.items():
        np.testing.assert_array_equal(line.get_xdata(), cdfs[(scheduler,)][0])
        np.testing.assert_array_equal(line.get_ydata(), cdfs[(scheduler,)][1])
    for scheduler in ("fcfs", "easy", "conservative"):
        cell = results.sel(scheduler=scheduler, load=1.5)
        waits = []
        for replicate in (0, 1):
            seed = int(cell["seed"].sel(replicate=replicate))
            params = {**spec.params, "scheduler": scheduler, "load": 1.5}
            wait = np.asarray(jobs_run(params, seed)["wait"])
            stored = samples["wait"].sel(scheduler=scheduler, load=1.5, replicate=replicate)
            stored = stored.values
            # each replicate's quantiles are exactly NumPy's of the recomputed waits
            np.testing.assert_array_equal(stored, np.quantile(wait, QUANTILE_GRID))
            assert float(cell["wait_count"].sel(replicate=replicate)) == wait.size == 1000
            assert float(cell["mean_wait"].sel(replicate=replicate)) == pytest.approx(
                wait.mean(), rel=1e-12
            )
            assert float(cell["wait_p95"].sel(replicate=replicate)) == np.percentile(wait, 95)
            waits.append(wait)
        pooled = np.concatenate(waits)
        x, drawn = cdfs[(scheduler,)]
        # the drawn CDF within the stated resolution of the exact pooled ECDF, everywhere
        points = np.unique(np.concatenate([pooled, x, pooled - 1e-6]))
        at = np.searchsorted(x, points, side="right") - 1
        drawn_at = np.where(at >= 0, drawn[np.clip(at, 0, None)], 0.0)
        gap = np.abs(drawn_at - exact_ecdf(pooled, points)).max()
        assert gap <= 0.01 + 1 / 1000
        assert drawn[-1] == 1.0 and x[-1] == pooled.max() and x[0] == pooled.min()
        # and exact at the stored quantiles' probabilities where waits are distinct
        assert cell["wait_p50_mean"].item() == pytest.approx(
            np.mean([np.percentile(w, 50) for w in waits])
        )


def test_percentile_metrics_have_intervals_and_declared_names(demo):
    _, path = demo
    results = xr.load_dataset(path)
    for name in ("wait_p50", "wait_p95", "wait_p99", "bsld_p99"):
        assert results[name].dims == results["status"].dims
        assert {f"{name}_{s}" for s in ("mean", "ci_low", "ci_high", "n")} <= set(results)
    assert results["wait_p95"].attrs == {
        "units": "s",
        "long_name": "95th percentile of waiting time of each job",
    }
    samples = xr.load_dataset(path, group="samples")
    assert sorted(samples.data_vars) == ["bsld", "wait"]  # the samples the spec keeps
    assert samples["wait"].dims == ("scheduler", "load", "replicate", "quantile")
    np.testing.assert_array_equal(samples["quantile"].values, np.arange(101) / 100)
    assert samples["wait"].attrs["units"] == "s"


def test_the_root_group_is_one_row_per_task_and_the_samples_are_a_group(demo):
    """A researcher's frame of results.nc counts tasks: the quantiles' own dimension lies in
    the group ``samples``, not in the root."""
    _, path = demo
    with xr.open_dataset(path) as root:  # closed before the next open (see test_breakdown)
        assert "quantile" not in root.dims
        frame = root.to_dataframe()
    assert len(frame) == 3 * 3 * 2  # schedulers x loads x replicates
    assert frame.index.names == ["scheduler", "load", "replicate"]
    samples = xr.load_dataset(path, group="samples")
    assert len(samples.to_dataframe()) == 3 * 3 * 2 * 101
    with xr.open_datatree(path) as tree:  # the groups align with the root: one tree
        assert sorted(tree.children) == ["failures", "resources", "samples"]
    # each task's p95 in the root is its quantile 0.95 in the group, bit for bit
    np.testing.assert_array_equal(
        frame["wait_p95"].to_numpy(),
        samples["wait"].sel(quantile=0.95).to_dataframe()["wait"].to_numpy(),
    )
    assert campaign.open_results(path).sizes == {"scheduler": 3, "load": 3, "replicate": 2}


def test_a_file_of_the_earlier_layout_reads_the_same(demo, tmp_path):
    """A results.nc written when samples lay in the root reads as one of today: the root one
    row per task, the samples whole."""
    _, path = demo
    root, samples = xr.load_dataset(path), xr.load_dataset(path, group="samples")
    old = tmp_path / "results.nc"
    root.merge(samples).to_netcdf(old)  # the earlier layout: the quantiles beside the metrics
    assert "quantile" in xr.load_dataset(old).dims
    assert campaign.open_results(old).identical(campaign.open_results(path))
    assert campaign.open_samples(old).identical(campaign.open_samples(path))
    assert len(campaign.open_results(old).to_dataframe()) == 18


def test_plot_draws_a_samples_cdf_from_its_group(demo, tmp_path, capsys):
    from campaign.cli.main import main

    _, path = demo
    out = tmp_path / "wait.png"
    assert (
        main(["plot", str(path), "--metric", "wait", "--by", "scheduler", "--out", str(out)]) == 0
    )
    assert capsys.readouterr().out == f"plot: {out}\n"
    assert out.stat().st_size > 10_000


def assert_a_panel_per_load_a_series_per_scheduler(figure, samples) -> None:
    """The demo's waits drawn as each load's own CDFs, one step line per scheduler: nothing
    else is pooled than the replicates."""
    assert [a.get_title() for a in figure.axes] == ["load = 1", "load = 1.5", "load = 2"]
    assert figure.get_suptitle().splitlines()[0] == "wait: CDF pooled over replicates"
    for load, panel in zip((1.0, 1.5, 2.0), figure.axes):
        cdfs = cell_cdfs(samples, "wait", by=["scheduler"], where={"load": [load]})
        lines = {line.get_label(): line for line in panel.lines}
        assert sorted(lines) == ["conservative", "easy", "fcfs"]
        for scheduler, line in lines.items():
            np.testing.assert_array_equal(line.get_xdata(), cdfs[(scheduler,)][0])
            np.testing.assert_array_equal(line.get_ydata(), cdfs[(scheduler,)][1])


def test_a_samples_cdf_in_panels_per_facet_level_is_each_levels_own_cdf(demo, tmp_path, capsys):
    from campaign.cli.main import main

    _, path = demo
    samples = campaign.open_samples(path)
    assert_a_panel_per_load_a_series_per_scheduler(
        plot_ecdf(samples, "wait", by="scheduler", facet="load"), samples
    )
    out = tmp_path / "wait.png"
    args = ["plot", str(path), "--metric", "wait", "--by", "scheduler", "--out", str(out)]
    assert main([*args, "--facet", "load"]) == 0
    assert capsys.readouterr().out == f"plot: {out}\n"
    # an x axis other than the sample's values is refused in one line
    assert main([*args, "--x", "load"]) == 2
    assert "a sample's CDF has the sample's values on its x axis" in capsys.readouterr().err
    # a series or panels by what is no factor of the tasks' samples: the option named
    for option in ("--by", "--facet"):
        argv = ["plot", str(path), "--metric", "wait", option, "job_class", "--out", str(out)]
        assert main(argv) == 2
        assert capsys.readouterr().err == (
            f"campaign: error: {option} 'job_class' is not a factor; factors: scheduler, load\n"
        )


BLOCKED = """
name: blocked
model: blocked_waits:run
factors:
  load: [1.0]
replicates: 6
seed: 3
output: out
"""


def test_a_sample_holding_inf_keeps_its_upper_percentiles_and_their_mean_is_inf(
    tmp_path, scheduler_address, capsys
):
    """A replicate whose jobs never start has p84..p100 = +inf (not NaN, left out as undefined):
    the mean of p99 over replicates is then +inf, never the mean of the finite ones."""
    import site

    from distributed import Client

    from campaign.cli.main import main

    folder = str(Path(__file__).resolve().parent)
    with Client(scheduler_address) as client:
        client.run(site.addsitedir, folder)
    site.addsitedir(folder)
    (tmp_path / "spec.yaml").write_text(BLOCKED)
    campaign.run(tmp_path / "spec.yaml", scheduler=scheduler_address, progress=False)
    path = tmp_path / "out" / "results.nc"
    root, samples = xr.load_dataset(path), xr.load_dataset(path, group="samples")
    blocked = root["blocked"].sel(load=1.0).values == 1
    assert 0 < blocked.sum() < 6  # the seed gives both kinds of replicates
    for replicate in range(6):
        stored = samples["wait"].sel(load=1.0, replicate=replicate).values
        p99 = float(root["wait_p99"].sel(load=1.0, replicate=replicate))
        if blocked[replicate]:
            # the ranks 99 p of p84 and beyond reach the 16 infinite waits (indices 84..99)
            assert np.all(stored[84:] == np.inf) and p99 == np.inf
            assert np.all(np.isfinite(stored[:84]))
        else:
            assert np.all(np.isfinite(stored))
    assert float(root["wait_p99_mean"].sel(load=1.0)) == np.inf
    assert int(root["wait_p99_n"].sel(load=1.0)) == 6
    assert int(root["wait_p99_nan"].sel(load=1.0)) == 0
    assert main(["query", str(path), "--metric", "wait_p99", "--format", "csv"]) == 0
    row = capsys.readouterr().out.splitlines()[1].split(",")
    assert row[:3] == ["1.0", "inf", ""]  # load, mean, half-width: no interval of inf
    # the CDF figure says what share of the waits it cannot draw at +inf
    pooled = campaign.open_samples(path)
    x, cdf = cell_cdfs(pooled, "wait", ["load"])[(1.0,)]
    share = 1 - cdf[np.isfinite(x)][-1]
    # 16 of a blocked replicate's 100 waits, within the stored quantiles' resolution
    assert share == pytest.approx(16 * blocked.sum() / 600, abs=0.01 + 1 / 100)
    figure = plot_ecdf(pooled, "wait", by="load")
    labels = figure.legends[0].get_texts()
    texts = {text.get_text() for text in labels}
    assert texts == {f"1 ({100 * share:.3g}% at +inf not drawn)"}
    single = plot_ecdf(pooled, "wait", where=["load=1.0"])
    notes = [text.get_text() for text in single.axes[0].texts]
    assert notes == [f"{100 * share:.3g}% at +inf not drawn"]


def test_quantiles_of_samples_with_infinities_follow_the_order_statistics():
    """NumPy's interpolation gives NaN next to an infinite value; the rule here: on an order
    statistic its value, between finite ones NumPy's, next to an infinite one that one."""
    from campaign.results.names import sample_quantiles

    finite = np.random.default_rng(1).exponential(size=77)
    np.testing.assert_array_equal(sample_quantiles(finite), np.quantile(finite, QUANTILE_GRID))
    with np.errstate(invalid="ignore"):
        assert np.isnan(np.quantile([1.0, 2.0, np.inf], QUANTILE_GRID)).any()
    # n = 4: the rank of p is 3 p; x = -inf, 1, 2, +inf
    values = dict(zip(QUANTILE_GRID, sample_quantiles(np.array([np.inf, 1.0, -np.inf, 2.0]))))
    assert values[0.0] == values[0.33] == -np.inf  # rank 0.99: between -inf and 1
    assert values[0.34] == pytest.approx(1.02) and values[0.5] == 1.5
    assert values[0.66] == pytest.approx(1.98)
    assert values[0.67] == values[1.0] == np.inf  # rank 2.01: between 2 and +inf
    # between -inf and +inf: the nearer, undefined (NaN) exactly halfway
    both = dict(zip(QUANTILE_GRID, sample_quantiles(np.array([-np.inf, np.inf]))))
    assert both[0.49] == -np.inf and both[0.51] == np.inf and np.isnan(both[0.5])
    assert np.all(sample_quantiles(np.array([np.inf, np.inf])) == np.inf)
    entries = metric_values({"wait": [1.0, np.inf]})
    assert entries["wait@q0"] == 1.0 and entries["wait@q1"] == np.inf
    assert entries["wait@q100"] == np.inf and entries["wait@n"] == 2.0


def test_a_whole_rank_next_to_an_infinite_value_gives_its_order_statistic():
    """The rank (n - 1) p in floats misses whole ranks (25 x 0.56 = 14.000000000000002, 90 x
    0.7 = 62.99999999999999): the percentile there is x[14] (x[63]), never its infinite
    neighbour."""
    waits = np.concatenate([np.arange(15.0) * 10, np.full(11, np.inf)])  # x[14] = 140
    entries = metric_values({"wait": np.random.default_rng(2).permutation(waits)})
    assert (entries["wait@q50"], entries["wait@q56"], entries["wait@q57"]) == (125.0, 140.0, np.inf)
    low = np.concatenate([np.full(63, -np.inf), np.arange(28.0)])  # n = 91, x[63] = 0
    values = metric_values({"wait": low})
    assert (values["wait@q69"], values["wait@q70"]) == (-np.inf, 0.0)
    assert values["wait@q71"] == pytest.approx(0.9)  # rank 63.9: between x[63] and x[64]
    finite = np.arange(26.0)  # whole ranks of finite samples stay NumPy's
    assert metric_values({"wait": finite})["wait@q56"] == np.quantile(finite, 0.56)


def test_a_sample_is_kept_as_its_size_and_quantiles():
    values = metric_values({"mean": 2.0, "wait": np.array([3.0, 1.0, 2.0, 10.0])})
    assert len(values) == 1 + 1 + 101
    assert values["wait@n"] == 4.0
    assert values["wait@q0"] == 1.0 and values["wait@q100"] == 10.0
    assert values["wait@q50"] == 2.5
    with pytest.raises(ValueError, match="sample 'wait' holds NaN"):
        metric_values({"wait": [1.0, float("nan")]})
    with pytest.raises(TypeError, match="2 dimensions"):
        metric_values({"wait": np.zeros((2, 2))})
    with pytest.raises(ValueError, match="'wait_p95' has the name of a metric results derive"):
        metric_values({"wait": [1.0, 2.0], "wait_p95": 2.0})
    breakdown = {"job_class": {"wide": {"mean_wait": 1.0}}, "mean_wait_by_job_class": 1.0}
    with pytest.raises(ValueError, match="'mean_wait_by_job_class' has the name results give"):
        metric_values(breakdown)
    assert metric_values({"job_class": {"wide": {"mean_wait": 1.0}}}) == {
        "mean_wait@job_class=wide": 1.0
    }


@pytest.mark.parametrize("name", ["x@n", "wait@q95", "wait@q0"])
def test_a_metric_named_as_a_samples_stored_entry_is_refused(name):
    """A record keeps a sample ``wait`` as ``wait@n`` and ``wait@q0`` to ``wait@q100``: a
    number returned under such a name was taken for a sample's entry, and assembling the
    results failed on the quantiles it lacked (KeyError: 'x@q0'), after every task ran."""
    with pytest.raises(ValueError) as refused:
        metric_values({"y": 1.0, name: 5.0})
    assert str(refused.value) == (
        f"metric name {name!r} has the form of a sample's stored entry (NAME@n, NAME@q<k>); "
        "rename it"
    )
    assert metric_values({"y": 1.0, "x@site": 5.0, "x@nodes": 2.0}) == {
        "y": 1.0,
        "x@site": 5.0,
        "x@nodes": 2.0,
    }


def test_pooled_cdf_weighs_tasks_by_their_sample_size():
    small = np.quantile([0.0, 10.0], QUANTILE_GRID)
    large = np.quantile(np.full(8, 20.0), QUANTILE_GRID)
    x, cdf = pooled_cdf(np.stack([small, large]), np.array([2, 8]))
    assert cdf[np.searchsorted(x, 10.0)] == pytest.approx(0.2)
    assert cdf[-1] == 1.0 and x[-1] == 20.0


def test_a_sample_of_minus_and_plus_infinity_is_pooled_not_left_out():
    """The rank halfway between -inf and +inf has no value (NaN); the task's other quantiles
    still place its values: pooled, its -inf are at most any finite x, its +inf none."""
    from campaign.results.names import sample_quantiles

    infinite = sample_quantiles(np.array([-np.inf, np.inf]))
    assert np.isnan(infinite[50])
    finite = sample_quantiles(np.array([1.0, 2.0]))
    x, cdf = pooled_cdf(np.stack([infinite, finite]), np.array([2, 2]))
    # F(x) = max{p : q(p) <= x} per task, weighed by size: the -inf task's is 0.49 at every
    # finite x (exactly 1/2: within the grid's 1/100), the finite one's 0 at 1.0 and 1 at 2.0
    shares = dict(zip(x.tolist(), cdf.tolist()))
    assert shares[-np.inf] == pytest.approx(0.49 / 2)
    assert shares[1.0] == pytest.approx(0.49 / 2)
    assert shares[1.5] == pytest.approx((0.49 + 0.5) / 2)
    assert shares[2.0] == pytest.approx((0.49 + 1.0) / 2)
    assert shares[np.inf] == 1.0


def test_a_samples_cdf_says_which_levels_have_no_values():
    """A level whose tasks all failed has no curve: its legend entry says so, and a panel
    with no values at all says so in its middle."""
    from campaign.results.names import sample_quantiles

    quantiles = np.stack(
        [
            [sample_quantiles(np.array([1.0, 2.0, 3.0]))] * 2,
            [np.full(QUANTILE_GRID.size, np.nan)] * 2,
        ]
    )
    samples = xr.Dataset(
        {
            "wait": (("kind", "replicate", "quantile"), quantiles),
            "status": (("kind", "replicate"), np.array([[1, 1], [2, 2]], dtype=np.int8)),
            "wait_count": (("kind", "replicate"), np.array([[3.0, 3.0], [np.nan, np.nan]])),
        },
        coords={"kind": ["a", "b"], "replicate": [0, 1], "quantile": QUANTILE_GRID},
    )
    figure = plot_ecdf(samples, "wait", by="kind")
    assert figure.axes[0].get_legend_handles_labels()[1] == ["a", "b (no values)"]
    assert [text.get_text() for text in figure.axes[0].texts] == []
    panels = plot_ecdf(samples, "wait", facet="kind")
    assert [[text.get_text() for text in panel.texts] for panel in panels.axes] == [
        [],
        ["no values: no finished task with a sample"],
    ]


def test_spec_percentiles_are_checked(write_spec):
    spec = write_spec("name: a\nmodel: mm1\nseed: 1\nreplicates: 2\npercentiles: [50, 99.5]\n")
    with pytest.raises(CampaignError, match="percentiles: 99.5 is not allowed"):
        load_spec(spec)
    spec = write_spec("name: a\nmodel: mm1\nseed: 1\nreplicates: 2\npercentiles: [90]\n")
    assert load_spec(spec).percentiles == (90,)


def test_a_samples_cdf_draws_the_paired_factor_as_series_as_the_replicates_ecdf_does(demo):
    """Without by or facet, the waits of FCFS, EASY and conservative were pooled into one
    CDF (and the three loads with them): a series per level of the paired factor and a panel
    per load, as `--kind ecdf` of a metric draws; facet=False pools the loads, saying so."""
    _, path = demo
    samples = campaign.open_samples(path)
    assert_a_panel_per_load_a_series_per_scheduler(campaign.plot(path, "wait"), samples)
    pooled = campaign.plot(path, "wait", facet=False)
    assert len(pooled.axes) == 1
    assert pooled.axes[0].get_title().splitlines()[0] == (
        "wait: CDF pooled over replicates and load"
    )
    assert sorted(line.get_label() for line in pooled.axes[0].lines) == [
        "conservative",
        "easy",
        "fcfs",
    ]
