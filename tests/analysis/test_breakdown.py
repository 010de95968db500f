"""Breakdowns by job class: per-class metrics of the rigid-job models stored on a
``job_class`` dimension, recomputed from the schedule, and queried and plotted like a factor."""

from __future__ import annotations

import numpy as np
import pytest
import xarray as xr

import campaign
from campaign.analysis.breakdown import as_factor
from campaign.analysis.query import summary_table
from campaign.cli.main import main
from campaign.errors import CampaignError
from campaign.models.jobs import schedule as jobs_schedule
from campaign.models.rigid.classes import CLASSES, job_classes
from campaign.results.netcdf import open_breakdown, stored_breakdowns
from tests.conftest import finished_campaign

SPEC = """
name: classes
model: jobs
params: {workload: synthetic, jobs: 400, processors: 64, class_width: 4, class_runtime_s: 600}
factors:
  scheduler: [fcfs, easy]
  load: [1.2]
paired: [scheduler]
replicates: 2
seed: 5
output: out
"""


classes = finished_campaign("classes", SPEC)


def test_per_class_metrics_match_the_schedule_job_by_job(classes):
    path = classes / "results.nc"
    assert stored_breakdowns(path) == {
        "job_class": ["mean_wait", "mean_turnaround", "mean_bsld", "jobs"]
    }
    group = xr.load_dataset(path, group="breakdowns/job_class")
    assert list(group["job_class"].values) == list(CLASSES)
    assert group["mean_wait_by_job_class"].dims == ("scheduler", "load", "replicate", "job_class")
    assert group["mean_wait_by_job_class"].attrs["units"] == "s"
    results = xr.load_dataset(path).merge(group)
    params = {"workload": "synthetic", "jobs": 400, "processors": 64, "load": 1.2}
    for scheduler in ("fcfs", "easy"):
        for replicate in (0, 1):
            cell = results.sel(scheduler=scheduler, load=1.2, replicate=replicate)
            schedule = jobs_schedule({**params, "scheduler": scheduler}, int(cell["seed"]))
            wait = schedule.start - schedule.workload.submit
            kind = job_classes(schedule.workload.size, schedule.runtime, 4, 600.0)
            for index, label in enumerate(CLASSES):
                member = kind == index
                stored = cell.sel(job_class=label)
                assert float(stored["jobs_by_job_class"]) == member.sum()
                assert member.sum() > 0  # every class has jobs at these thresholds
                assert float(stored["mean_wait_by_job_class"]) == pytest.approx(
                    wait[member].mean(), rel=1e-12
                )
            # the classes partition the jobs: their weighted means give the overall mean
            counts = cell["jobs_by_job_class"].values
            overall = (cell["mean_wait_by_job_class"].values * counts).sum() / counts.sum()
            assert overall == pytest.approx(float(cell["mean_wait"]), rel=1e-12)


def test_the_root_group_is_one_row_per_task_and_each_breakdown_a_group(classes):
    # every file closed before the next opens: netCDF-C may crash when a handle left to the
    # garbage collector is closed while it opens another
    path = classes / "results.nc"
    with xr.open_dataset(path) as root:
        assert "job_class" not in root.dims
        assert len(root.to_dataframe()) == 2 * 1 * 2  # schedulers x loads x replicates
    with xr.open_dataset(path, group="breakdowns/job_class") as group:
        assert len(group.to_dataframe()) == 2 * 1 * 2 * len(CLASSES)
    with xr.open_datatree(path) as tree:
        assert sorted(tree.children) == ["breakdowns", "failures", "resources", "samples"]
        assert list(tree["breakdowns"].children) == ["job_class"]


def test_a_file_of_the_earlier_layout_reads_the_same(classes, tmp_path):
    """A results.nc written when breakdowns lay in the root (``<metric>_by_<dimension>``)
    reads as one of today."""
    path = classes / "results.nc"
    group = xr.load_dataset(path, group="breakdowns/job_class")
    samples = xr.load_dataset(path, group="samples")
    old = tmp_path / "results.nc"
    legacy = xr.load_dataset(path).merge(samples)
    legacy.merge(group).to_netcdf(old)
    assert set(xr.load_dataset(old).dims) == {
        "scheduler",
        "load",
        "replicate",
        "quantile",
        "job_class",
    }
    assert campaign.open_results(old).identical(campaign.open_results(path))
    assert stored_breakdowns(old) == stored_breakdowns(path)
    assert open_breakdown(old, "job_class").equals(open_breakdown(path, "job_class"))
    view = campaign.open_breakdown(old, "job_class")
    assert view.identical(campaign.open_breakdown(path, "job_class"))


def test_job_class_is_a_factor_in_queries(classes):
    results = xr.load_dataset(classes / "results.nc")
    view = campaign.open_breakdown(classes, "job_class")
    table = summary_table(view, ["mean_wait"], by=["scheduler", "job_class"])
    assert len(table) == 8
    row = table[(table.scheduler == "easy") & (table.job_class == "wide_long")].iloc[0]
    group = xr.load_dataset(classes / "results.nc", group="breakdowns/job_class")
    values = group["mean_wait_by_job_class"].sel(scheduler="easy", job_class="wide_long")
    assert row["mean_wait_mean"] == pytest.approx(float(values.mean()), rel=1e-12)
    assert row["mean_wait_n"] == 2
    assert view.identical(as_factor(results, group))
    with pytest.raises(CampaignError, match="'size_class' is not a breakdown of the results"):
        campaign.open_breakdown(classes, "size_class")


def test_query_and_plot_by_job_class_on_the_command_line(classes, capfd):
    args = ["query", str(classes), "--metric", "mean_wait", "--by", "job_class"]
    assert main([*args, "--where", "scheduler=easy", "--format", "csv"]) == 0
    lines = capfd.readouterr().out.splitlines()
    assert lines[0].startswith("job_class,mean_wait_mean")
    assert [line.split(",")[0] for line in lines[1:]] == list(CLASSES)
    out = classes / "by_class.png"
    plot = ["plot", str(classes), "--metric", "mean_bsld", "--x", "job_class"]
    assert main([*plot, "--by", "scheduler", "--out", str(out)]) == 0
    assert out.stat().st_size > 10_000
    ecdf = classes / "wait_cdf.png"
    assert (
        main(["plot", str(classes), "--metric", "wait", "--by", "scheduler", "--out", str(ecdf)])
        == 0
    )
    assert ecdf.stat().st_size > 10_000
    np.testing.assert_equal(out.exists() and ecdf.exists(), True)


def test_a_breakdown_metric_named_like_a_factor(tmp_path, scheduler_address, capsys):
    """The jobs model's per-class ``jobs`` beside a factor ``jobs``: the group names it
    ``jobs_by_job_class``, so the file is written, and the view keeps that name beside the
    factor."""
    spec = tmp_path / "spec.yaml"
    text = SPEC.replace("jobs: 400, ", "").replace("load: [1.2]", "load: [1.2]\n  jobs: [200, 300]")
    text = text.replace("replicates: 2", "replicates: 1")
    spec.write_text(text + "metrics: [mean_wait, job_class]\n")  # not the model's own jobs
    campaign.run(spec, scheduler=scheduler_address, progress=False)
    path = tmp_path / "out" / "results.nc"
    group = xr.load_dataset(path, group="breakdowns/job_class")
    counts = group["jobs_by_job_class"].sum("job_class").transpose("scheduler", "load", "jobs", ...)
    assert counts.values.ravel().tolist() == [200.0, 300.0, 200.0, 300.0]
    view = campaign.open_breakdown(path, "job_class")
    assert "jobs" in view.coords and "jobs_by_job_class" in view and "mean_wait" in view
    args = ["query", str(path), "--metric", "jobs_by_job_class", "--by", "jobs,job_class"]
    assert main([*args, "--where", "scheduler=easy", "--format", "csv"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("jobs,job_class,jobs_by_job_class_mean") and len(lines) == 9
