"""Breakdowns by job class: per-class metrics of the rigid-job models stored on a
``job_class`` dimension, recomputed from the schedule, and queried and plotted like a factor."""

from __future__ import annotations

import numpy as np
import pytest
import xarray as xr

from campaign.analysis.breakdown import as_factor, breakdown_dimensions
from campaign.analysis.query import summary_table
from campaign.cli.main import main
from campaign.errors import CampaignError
from campaign.models.jobs import schedule as jobs_schedule
from campaign.models.rigid.classes import CLASSES, job_classes
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
    results = xr.load_dataset(classes / "results.nc")
    assert breakdown_dimensions(results) == {
        "job_class": ["mean_wait", "mean_turnaround", "mean_bsld", "jobs"]
    }
    assert list(results["job_class"].values) == list(CLASSES)
    assert results["mean_wait_by_job_class"].dims == ("scheduler", "load", "replicate", "job_class")
    assert results["mean_wait_by_job_class"].attrs["units"] == "s"
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


def test_job_class_is_a_factor_in_queries(classes):
    results = xr.load_dataset(classes / "results.nc")
    view = as_factor(results, "job_class")
    table = summary_table(view, ["mean_wait"], by=["scheduler", "job_class"])
    assert len(table) == 8
    row = table[(table.scheduler == "easy") & (table.job_class == "wide_long")].iloc[0]
    values = results["mean_wait_by_job_class"].sel(scheduler="easy", job_class="wide_long")
    assert row["mean_wait_mean"] == pytest.approx(float(values.mean()), rel=1e-12)
    assert row["mean_wait_n"] == 2
    with pytest.raises(CampaignError, match="'size_class' is not a breakdown of the results"):
        as_factor(results, "size_class")


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
