"""List orders x backfilling modes on the worked example of list-scheduling.md section 4: the
whole schedule job by job and every metric of the table, for both weights."""

from __future__ import annotations

import pytest

from campaign.models.rigid.metrics import list_metrics, schedule_metrics
from campaign.models.rigid.policies import LIST_MODES, ListOptions
from campaign.models.rigid.simulate import run_schedule
from campaign.models.rigid.workload import from_arrays

# Section 4: m = 4, jobs (r, size, p, est).
JOBS = [(0, 2, 6, 6), (0, 3, 4, 4), (0, 2, 5, 5), (0, 1, 2, 3), (3, 1, 3, 5), (4, 3, 3, 4)]


def simulate(order: str, mode: str, weight: str = "unit", jobs=JOBS, processors: int = 4):
    r, size, p, est = zip(*jobs, strict=True)
    workload = from_arrays(r, size, p, est)
    return run_schedule(
        workload,
        processors,
        LIST_MODES[mode],
        options=ListOptions(order=order, weight=weight),
    )


# order, mode: starts 1..6, mean_turnaround, mean_work_response, awrt, swct_w, makespan,
# jobs_backfilled, orders_computed (section 4, weight unit).
UNIT = {
    ("fcfs", "none"): ((0, 6, 10, 10, 10, 15), 11.166667, 87, 10.875, 567, 18, 0, 0),
    ("fcfs", "easy"): ((0, 6, 0, 5, 7, 10), 7.333333, 59.666667, 7.458333, 403, 13, 2, 0),
    ("fcfs", "conservative"): ((0, 6, 0, 5, 7, 10), 7.333333, 59.666667, 7.458333, 403, 13, 2, 0),
    ("psrs", "none"): ((2, 8, 0, 0, 8, 12), 7.666667, 69.5, 8.6875, 462, 15, 0, 2),
    ("psrs", "easy"): ((2, 8, 0, 0, 5, 12), 7.166667, 68, 8.5, 453, 15, 1, 2),
    ("psrs", "conservative"): ((2, 8, 0, 0, 5, 12), 7.166667, 68, 8.5, 453, 15, 1, 2),
    ("smart_ffia", "none"): ((4, 0, 4, 0, 9, 10), 7.166667, 61.666667, 7.708333, 415, 13, 0, 1),
    ("smart_ffia", "easy"): ((6, 0, 4, 0, 3, 12), 6.833333, 65.666667, 8.208333, 439, 15, 1, 1),
    ("smart_ffia", "conservative"): (
        (4, 0, 4, 0, 9, 10),
        7.166667,
        61.666667,
        7.708333,
        415,
        13,
        0,
        1,
    ),
    ("smart_nfiw", "none"): ((4, 0, 4, 0, 9, 10), 7.166667, 61.666667, 7.708333, 415, 13, 0, 1),
    ("smart_nfiw", "easy"): ((4, 0, 6, 0, 3, 11), 6.666667, 63.5, 7.9375, 426, 14, 1, 1),
    ("smart_nfiw", "conservative"): (
        (4, 0, 4, 0, 9, 10),
        7.166667,
        61.666667,
        7.708333,
        415,
        13,
        0,
        1,
    ),
    ("fcfs", "greedy"): ((0, 7, 0, 5, 5, 11), 7.333333, 62.166667, 7.770833, 418, 14, 3, 0),
}

# weight work: every row as unit except PSRS.
WORK = {
    **UNIT,
    ("psrs", "none"): ((4, 0, 4, 9, 9, 11), 8.833333, 66.166667, 8.270833, 442, 14, 0, 1),
    ("psrs", "easy"): ((4, 0, 6, 0, 3, 11), 6.666667, 63.5, 7.9375, 426, 14, 2, 1),
    ("psrs", "conservative"): ((4, 0, 4, 0, 9, 10), 7.166667, 61.666667, 7.708333, 415, 13, 1, 1),
}


def check_row(schedule, row):
    starts, turnaround, work_response, awrt, swct_w, makespan, backfilled, computed = row
    assert schedule.start.tolist() == list(starts)
    ends = [s + p for s, (_, _, p, _) in zip(starts, JOBS, strict=True)]
    assert schedule.end.tolist() == ends
    values = schedule_metrics(schedule)
    extra = list_metrics(schedule)
    assert values["mean_turnaround"] == pytest.approx(turnaround, abs=1e-6)
    assert extra["mean_work_response"] == pytest.approx(work_response, abs=1e-6)
    assert extra["total_flow"] == pytest.approx(6 * turnaround, abs=1e-5)
    assert extra["total_wflow"] == pytest.approx(6 * work_response, abs=1e-5)
    assert values["awrt"] == pytest.approx(awrt, abs=1e-6)
    assert values["swct_w"] == swct_w
    assert values["makespan"] == makespan
    assert values["jobs_backfilled"] == backfilled
    assert extra["orders_computed"] == computed


@pytest.mark.parametrize(("order", "mode"), list(UNIT))
def test_worked_example_unit(order, mode):
    check_row(simulate(order, mode), UNIT[(order, mode)])


@pytest.mark.parametrize(("order", "mode"), list(WORK))
def test_worked_example_work(order, mode):
    check_row(simulate(order, mode, "work"), WORK[(order, mode)])


@pytest.mark.parametrize(("mode", "scheduler"), [("none", "fcfs"), ("easy", "easy")])
def test_fcfs_list_modes_are_the_arrival_order_schedulers(mode, scheduler):
    """fcfs x none / easy / conservative reproduce FCFS, EASY and conservative on the
    worked example and on parallel-jobs.md's Example B."""
    example_b = [(0, 3, 10, 10), (1, 2, 10, 10), (2, 2, 10, 10), (3, 1, 15, 15)]
    for jobs in (JOBS, example_b):
        r, size, p, est = zip(*jobs, strict=True)
        reference = run_schedule(from_arrays(r, size, p, est), 4, scheduler)
        listed = simulate("fcfs", mode, jobs=jobs)
        assert listed.start.tolist() == reference.start.tolist()
        assert listed.jobs_backfilled == reference.jobs_backfilled


def test_fcfs_list_conservative_is_conservative():
    example_b = [(0, 3, 10, 10), (1, 2, 10, 10), (2, 2, 10, 10), (3, 1, 15, 15)]
    for jobs in (JOBS, example_b):
        r, size, p, est = zip(*jobs, strict=True)
        reference = run_schedule(from_arrays(r, size, p, est), 4, "conservative")
        listed = simulate("fcfs", "conservative", jobs=jobs)
        assert listed.start.tolist() == reference.start.tolist()
    # Example B: 1 (0,10), 2 (10,20), 3 (10,20), 4 (20,35).
    assert simulate("fcfs", "conservative", jobs=example_b).start.tolist() == [0, 10, 10, 20]


def test_reorder_ratio_null_recomputes_at_every_arrival():
    """PSRS unit recomputes at 0 and 3 with the 2/3 trigger; with none it also recomputes
    at 4 (job 6's arrival)."""
    r, size, p, est = zip(*JOBS, strict=True)
    schedule = run_schedule(
        from_arrays(r, size, p, est),
        4,
        "list_none",
        options=ListOptions(order="psrs", reorder_ratio=None),
    )
    assert schedule.orders_computed == 3


@pytest.mark.parametrize(
    ("mode", "scheduler"), [("none", "fcfs"), ("easy", "easy"), ("conservative", "conservative")]
)
def test_fcfs_list_policies_replay_the_kth_slice_as_the_arrival_order_ones(
    workloads, monkeypatch, mode, scheduler
):
    """The list policies with the FCFS order give the schedules of FCFS, EASY and
    conservative job by job on 1,500 real jobs (early completions, overrunning none)."""
    import numpy as np

    from campaign.models.jobs import build_workload, parse

    monkeypatch.setenv("CAMPAIGN_WORKLOADS", str(workloads))
    workload, processors, _ = build_workload(
        parse({"trace": "KTH-SP2-1996-2.1-cln.swf.gz", "jobs": 1500, "window": "random"}),
        np.random.SeedSequence(5).spawn(5),
    )
    reference = run_schedule(workload, processors, scheduler)
    listed = run_schedule(workload, processors, LIST_MODES[mode], options=ListOptions())
    assert listed.start.tolist() == reference.start.tolist()
    assert listed.jobs_backfilled == reference.jobs_backfilled
