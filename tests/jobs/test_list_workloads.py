"""The workloads of list-scheduling.md section 7 in the ``jobs`` model: the randomized
workload's worked example, the probabilistic workload fitted to a real trace, calendar months
of a trace on its own clock, the site cut to at most M processors, and the list-orders specs."""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pytest
import yaml

from campaign.models.jobs import MODEL, run, schedule
from campaign.models.rigid.feasibility import check_feasible
from campaign.models.rigid.generated import Fit, fit_workload, probabilistic, time_bin
from campaign.models.rigid.workload import from_arrays

KTH = "KTH-SP2-1996-2.1-cln.swf.gz"
BLUE = "SDSC-BLUE-2000-4.2-cln.swf.gz"
SPECS = Path(__file__).resolve().parents[2] / "specs"


def test_randomized_example_of_section_7_1():
    w = schedule({"workload": "randomized", "jobs": 3, "scheduler": "fcfs"}, 0).workload
    assert w.size.tolist() == [206, 242, 2]
    assert w.estimate == pytest.approx([62493.696883, 11114.425656, 36718.264813], abs=1e-6)
    assert w.runtime == pytest.approx([40498.648401, 630.878316, 30069.393685], abs=1e-6)
    assert w.submit == pytest.approx([0, 967.308194, 3412.598679], abs=1e-6)
    values = run({"workload": "randomized", "jobs": 3, "scheduler": "fcfs"}, 0)
    assert values["processors"] == 256 and values["jobs_killed"] == 0


def test_randomized_workload_ranges():
    params = {"workload": "randomized", "jobs": 400, "processors": 64, "max_gap_s": 600}
    result = schedule({**params, "order": "psrs", "backfill": "conservative"}, 4)
    check_feasible(result)
    w = result.workload
    assert w.size.min() >= 1 and w.size.max() <= 64
    assert (w.estimate >= 300).all() and (w.estimate < 86400).all()
    assert (w.runtime >= 1).all() and (w.runtime <= w.estimate).all()
    gaps = np.diff(w.submit)
    assert (gaps >= 0).all() and (gaps < 600).all()


def test_time_bins():
    assert time_bin(np.array([0.5, 1.0, 1.99, 2.0, 3.9, 4.0, 1023.0, 1024.0])).tolist() == [
        0,
        0,
        0,
        1,
        1,
        2,
        9,
        10,
    ]


def test_fit_cells_and_draws_by_hand():
    """Jobs (r, size, p, p'): the fit set drops size 0 > M, p = 0 and p' unknown; cells by
    (size, b(p'), b(p)); draws stay in their cells' bins with p <= p'."""
    workload = from_arrays(
        [0, 10, 30, 60, 100, 150, 200],
        [1, 2, 1, 9, 1, 2, 1],
        [3.0, 100.0, 0.0, 5.0, 3.5, 120.0, 1.5],
        [5.0, 200.0, 10.0, 5.0, 7.0, 250.0, float("nan")],
    )
    fit = fit_workload(workload, 8)
    assert fit.cells.tolist() == [[1, 2, 1], [2, 7, 6]]
    assert fit.probability.tolist() == [0.5, 0.5]
    assert fit.shape > 0 and fit.scale > 0
    drawn = probabilistic(fit, 500, 8, np.random.default_rng(1))
    small = drawn.size == 1
    assert set(drawn.size.tolist()) == {1, 2}
    assert ((drawn.estimate[small] >= 4) & (drawn.estimate[small] < 8)).all()
    assert ((drawn.estimate[~small] >= 128) & (drawn.estimate[~small] < 256)).all()
    assert (drawn.runtime <= drawn.estimate).all()
    assert ((drawn.runtime[~small] >= 64) & (drawn.runtime[~small] < 128)).all()
    assert drawn.submit[0] == 0


def test_weibull_fit_recovers_its_parameters():
    rng = np.random.default_rng(7)
    gaps = 300.0 * rng.weibull(0.7, size=20000)
    submit = np.concatenate([[0.0], np.cumsum(gaps)])
    n = len(submit)
    fit = fit_workload(from_arrays(submit, np.ones(n), np.ones(n), np.ones(n)), 4)
    assert fit.shape == pytest.approx(0.7, rel=0.03)
    assert fit.scale == pytest.approx(300.0, rel=0.05)
    assert isinstance(fit, Fit)


def test_probabilistic_workload_from_the_kth_slice(workloads, monkeypatch):
    monkeypatch.setenv("CAMPAIGN_WORKLOADS", str(workloads))
    params = {"workload": "probabilistic", "fit_trace": KTH, "jobs": 1500, "processors": 100}
    result = schedule(params, 3)
    check_feasible(result)
    w = result.workload
    assert len(w) == 1500 and w.size.max() <= 100 and (w.runtime <= w.estimate).all()
    assert (schedule(params, 3).workload.submit == w.submit).all()
    values = run(params, 3)
    assert 0 < values["utilization"] <= 1


def test_a_month_of_kth_on_its_clock(workloads, monkeypatch):
    """KTH-SP2: UnixStartTime 843480031, TimeZone 3600. Job 108 (submit 641386) is at
    1996-09-30 23:10:17 local, job 109 (659739) at 10-01 04:16:10; job 2513 (3309816) at
    10-31 20:24:07, job 2514 (3346999) at 11-01 06:43:50."""
    monkeypatch.setenv("CAMPAIGN_WORKLOADS", str(workloads))
    result = schedule({"trace": KTH, "month": "1996-10", "scheduler": "fcfs"}, 0)
    w = result.workload
    assert w.job_id[0] == 109 and w.job_id[-1] == 2513
    assert w.submit[0] == 0
    assert len(w) == 2379
    check_feasible(result)


def test_max_processors_cuts_the_site(workloads, monkeypatch):
    monkeypatch.setenv("CAMPAIGN_WORKLOADS", str(workloads))
    blue = run({"trace": BLUE, "max_processors": 256, "scheduler": "easy"}, 0)
    kth = run({"trace": KTH, "max_processors": 256, "jobs": 500, "scheduler": "easy"}, 0)
    assert blue["processors"] == 256 and blue["n_dropped_too_wide"] > 0
    assert blue["jobs"] + blue["n_dropped_too_wide"] + blue["n_dropped_size"] == 1000
    assert kth["processors"] == 100 and kth["n_dropped_too_wide"] == 0


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"workload": "randomized", "overestimate": 2}, "'overestimate' does not apply"),
        ({"workload": "synthetic", "max_gap_s": 60}, "'max_gap_s' applies to 'workload: rand"),
        ({"workload": "probabilistic"}, "needs 'fit_trace'"),
        ({"workload": "synthetic", "fit_trace": KTH}, "'fit_trace' applies to 'workload: prob"),
        ({"workload": "synthetic", "month": "1996-10"}, "'month' applies to traces"),
        ({"trace": KTH, "month": "1996-13"}, "'month' must be YYYY-MM"),
        ({"trace": KTH, "month": "1996-10", "jobs": 5}, "'jobs' does not apply with 'month'"),
        ({"trace": KTH, "max_processors": 8, "processors": 8}, "'max_processors' cuts a trace"),
    ],
)
def test_workload_params_fail_on_one_line(params, message, workloads, monkeypatch):
    monkeypatch.setenv("CAMPAIGN_WORKLOADS", str(workloads))
    with pytest.raises(ValueError, match=message):
        MODEL.check(params)


@pytest.mark.parametrize("name", ["list-orders.yaml", "list-orders-quick.yaml"])
def test_list_orders_specs_pass_the_model_check(name, workloads, monkeypatch):
    monkeypatch.setenv("CAMPAIGN_WORKLOADS", str(workloads))
    spec = yaml.safe_load((SPECS / name).read_text())
    assert spec["model"] == "jobs" and "seed 002" in spec["description"]
    assert set(spec["metrics"]) <= set(MODEL.metrics)
    assert spec["factors"]["order"] == ["fcfs", "psrs", "smart_ffia", "smart_nfiw"]
    assert spec["factors"]["backfill"] == ["none", "conservative", "easy", "greedy"]
    for levels in itertools.product(*spec["factors"].values()):
        MODEL.check({**spec["params"], **dict(zip(spec["factors"], levels, strict=True))})
