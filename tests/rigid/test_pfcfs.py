"""Preemptive FCFS: the worked example of list-scheduling.md section 5.5 (every variant, whole
schedule and every metric), its equivalences with FCFS, and the feasibility of preempted
schedules on a real KTH-SP2 slice (no processor executes two jobs, every job gets exactly its
runtime)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from campaign.models.rigid.feasibility import InfeasibleSchedule, check_feasible
from campaign.models.rigid.metrics import list_metrics, schedule_metrics
from campaign.models.rigid.policies import PfcfsOptions
from campaign.models.rigid.policies.pfcfs import PRESETS, PfcfsParams
from campaign.models.rigid.simulate import run_schedule
from campaign.models.rigid.workload import from_arrays

JOBS = [(0, 2, 6, 6), (0, 3, 4, 4), (0, 2, 5, 5), (0, 1, 2, 3), (3, 1, 3, 5), (4, 3, 3, 4)]
KTH = "KTH-SP2-1996-2.1-cln.swf.gz"


def simulate(params: PfcfsParams, jobs=JOBS, processors: int = 4):
    r, size, p, est = zip(*jobs, strict=True)
    schedule = run_schedule(
        from_arrays(r, size, p, est), processors, "pfcfs", options=PfcfsOptions(params=params)
    )
    check_feasible(schedule)
    return schedule


# variant: start-end 1..6, mean_turnaround, awrt, total_wflow, swct_w, makespan,
# n_preemptions, jobs_preempted (section 5.5; x = 0.5, greedy, s = 0).
TABLE = {
    "n = 0 (= FCFS)": (
        PfcfsParams(max_preemptions=0, delay=1),
        [(0, 6), (6, 10), (10, 15), (10, 12), (10, 13), (15, 18)],
        (11.166667, 10.875, 522, 567, 18, 0, 0),
    ),
    "n = 1, D = 1": (
        PfcfsParams(max_preemptions=1, delay=1),
        [(0, 10), (1, 5), (5, 10), (10, 12), (10, 16), (11, 14)],
        (10, 9.020833, 433, 478, 16, 2, 2),
    ),
    "n = 1, D = 2": (
        PfcfsParams(max_preemptions=1, delay=2),
        [(0, 10), (2, 6), (6, 11), (10, 12), (10, 13), (12, 15)],
        (10, 9.479167, 455, 500, 15, 1, 1),
    ),
    "n = 2, D = 1, G = 1": (
        PfcfsParams(max_preemptions=2, delay=1, slice=1),
        [(0, 7), (1, 10), (10, 16), (10, 12), (10, 14), (11, 18)],
        (11.666667, 11.395833, 547, 592, 18, 5, 5),
    ),
    "n = 3, D = 1, G = 1": (
        PfcfsParams(max_preemptions=3, delay=1, slice=1),
        [(0, 10), (1, 6), (6, 11), (10, 12), (10, 16), (11, 15)],
        (10.5, 9.666667, 464, 509, 16, 6, 4),
    ),
    "n = inf, D = 1, G = 1": (
        PfcfsParams(max_preemptions=None, delay=1, slice=1),
        [(0, 10), (1, 8), (8, 15), (10, 12), (10, 15), (11, 16)],
        (11.5, 11.125, 534, 579, 16, 13, 5),
    ),
    "n = 1, D = 1, all": (
        PfcfsParams(max_preemptions=1, delay=1, preempt="all"),
        [(0, 10), (1, 5), (5, 10), (10, 15), (10, 16), (11, 14)],
        (10.5, 9.145833, 439, 484, 16, 3, 3),
    ),
    "theory, t = 1": (
        dataclasses.replace(PRESETS["theory"], delay=1),
        [(0, 10), (1, 8), (8, 13), (10, 12), (10, 13), (13, 16)],
        (10.833333, 10.583333, 508, 553, 16, 7, 2),
    ),
}


@pytest.mark.parametrize("variant", list(TABLE))
def test_worked_example(variant):
    params, times, row = TABLE[variant]
    turnaround, awrt, total_wflow, swct_w, makespan, preemptions, preempted = row
    schedule = simulate(params)
    assert list(zip(schedule.start.tolist(), schedule.end.tolist(), strict=True)) == times
    values = schedule_metrics(schedule)
    extra = list_metrics(schedule)
    assert values["mean_turnaround"] == pytest.approx(turnaround, abs=1e-6)
    assert values["awrt"] == pytest.approx(awrt, abs=1e-6)
    assert extra["total_wflow"] == total_wflow
    assert values["swct_w"] == swct_w
    assert values["makespan"] == makespan
    assert extra["n_preemptions"] == preemptions
    assert extra["jobs_preempted"] == preempted
    assert values["jobs_backfilled"] == 0


def test_processors_of_the_worked_example():
    """n = 1, D = 1: 2 runs on {0, 2, 3} (processor 1 idles), 6 on {1, 2, 3}; 1 resumes on
    its own {0, 1}; 5 (on {1}) is 6's victim and resumes on it."""
    segments = simulate(TABLE["n = 1, D = 1"][0]).segments
    assert segments[0] == ((0.0, 1.0, (0, 1)), (5.0, 10.0, (0, 1)))
    assert segments[1] == ((1.0, 5.0, (0, 2, 3)),)
    assert segments[4] == ((10.0, 11.0, (1,)), (14.0, 16.0, (1,)))
    assert segments[5] == ((11.0, 14.0, (1, 2, 3)),)


def test_penalty_delays_the_jobs_a_switch_makes_run():
    """n = 1, D = 1, s = 0.5: 2 executes [1.5, 5.5); 1 resumes at 6 (5 s left), ends 11."""
    schedule = simulate(PfcfsParams(max_preemptions=1, delay=1, penalty=0.5))
    assert schedule.segments[1] == ((1.5, 5.5, (0, 2, 3)),)
    assert schedule.segments[0] == ((0.0, 1.0, (0, 1)), (6.0, 11.0, (0, 1)))
    assert schedule.start[1] == 1 and schedule.end[1] == 5.5


@pytest.fixture
def kth(workloads, monkeypatch):
    from campaign.models.jobs import build_workload, parse

    monkeypatch.setenv("CAMPAIGN_WORKLOADS", str(workloads))
    workload, processors, _ = build_workload(
        parse({"trace": KTH, "jobs": 1500}), np.random.SeedSequence(1).spawn(5)
    )
    return workload, processors


def test_no_preemption_and_nothing_wide_are_fcfs(kth):
    workload, processors = kth
    fcfs = run_schedule(workload, processors, "fcfs")
    for params in (PfcfsParams(max_preemptions=0), PfcfsParams(wide=1.0, delay=1)):
        schedule = run_schedule(workload, processors, "pfcfs", options=PfcfsOptions(params=params))
        check_feasible(schedule)
        assert schedule.start.tolist() == fcfs.start.tolist()
        assert schedule.end.tolist() == fcfs.end.tolist()
        assert schedule.n_preemptions == 0


@pytest.mark.parametrize(
    "params",
    [
        *PRESETS.values(),
        PfcfsParams(delay=60, slice=60),
        PfcfsParams(delay=60, slice=1, max_preemptions=11, wide=0.4),
        PfcfsParams(delay=120, slice=120, max_preemptions=3, penalty=5, preempt="all"),
    ],
)
def test_preempted_kth_schedules_are_feasible(kth, params):
    workload, processors = kth
    schedule = run_schedule(workload, processors, "pfcfs", options=PfcfsOptions(params=params))
    check_feasible(schedule)
    assert schedule.n_preemptions > 0 and schedule.jobs_preempted > 0
    runs = [len(parts) for parts in schedule.segments]
    assert max(runs) > 1
    assert sum(runs) == len(workload) + schedule.n_preemptions


def test_the_check_catches_a_processor_running_two_jobs_or_a_short_job():
    schedule = simulate(TABLE["n = 1, D = 1"][0])
    segments = list(schedule.segments)
    # Job 6 moved onto processor 0 while job 1 executes there.
    segments[5] = ((11.0, 14.0, (0, 2, 3)),)
    segments[0] = ((0.0, 1.0, (0, 1)), (5.0, 14.0, (0, 1)))
    broken = dataclasses.replace(schedule, segments=tuple(segments))
    with pytest.raises(InfeasibleSchedule, match="job 1 runs 10.0 s"):
        check_feasible(broken)
    segments[0] = schedule.segments[0]
    broken = dataclasses.replace(schedule, segments=tuple(segments))
    with pytest.raises(InfeasibleSchedule, match="processor 0 executes jobs 4 and 6 at t = 11.0"):
        check_feasible(broken)
