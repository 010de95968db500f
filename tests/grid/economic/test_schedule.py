"""A whole economic schedule job by job, with every metric, through the grid simulation."""

from __future__ import annotations

from dataclasses import replace

import pytest

from campaign.models.grid.economic import EconomicOptions
from campaign.models.grid.measure import check_grid_feasible, grid_metrics
from campaign.models.grid.schedule import GridOptions, simulate_grid
from campaign.models.rigid.feasibility import InfeasibleSchedule
from campaign.models.rigid.workload import from_arrays

# (r, size, p, est) on two machines of 4; homes alternate 1, 2, 1, 2, 1.
JOBS = [(0, 3, 10, 10), (0, 2, 5, 10), (1, 4, 4, 4), (6, 2, 3, 3), (6, 5, 2, 2)]


def simulate(jobs=JOBS, **settings):
    submit, size, runtime, estimate = zip(*jobs, strict=True)
    workload = from_arrays(submit, size, runtime, estimate=estimate)
    economic = {"mf": 2, "uf": 1, "offers_per_machine": 3, "shifts": 3, **settings}
    options = GridOptions(sharing="economic", economic=EconomicOptions(**economic))
    return simulate_grid(workload, (4, 4), options)


def test_schedule_job_by_job():
    # Job 1: both machines offer 0 at cost 40; fewer hops -> machine 1 {0, 1, 2}.
    # Job 2: machine 1 offers 10, machine 2 offers 0 -> machine 2 {0, 1}, planned to 10.
    # Job 3 (4 wide): both offer 10 (UV -10); cost 16 + 9 (under of processor 3) = 25 on
    #   machine 1 against 16 + 18 = 34 on machine 2 -> machine 1.
    # Job 4 at 6: job 2 ended at 5 (planned 10), so machine 2 is idle: 6 on {0, 1}.
    # Job 5 (5 wide): candidates 6, 9, 10, 14 over both machines; only 14 frees 5:
    #   machine 1 all 4 (first on ties) + machine 2 {0} (fit 5 against 8 of {2, 3}).
    result = simulate()
    check_grid_feasible(result)
    rows = [
        (result.parts[j], result.nodes[j], float(result.start[j]), float(result.end[j]))
        for j in range(5)
    ]
    assert rows == [
        (((0, 3),), ((0, 1, 2),), 0.0, 10.0),
        (((1, 2),), ((0, 1),), 0.0, 5.0),
        (((0, 4),), ((0, 1, 2, 3),), 10.0, 14.0),
        (((1, 2),), ((0, 1),), 6.0, 9.0),
        (((0, 4), (1, 1)), ((0, 1, 2, 3), (0,)), 14.0, 16.0),
    ]
    assert result.offers_made == 2 + 2 + 2 + 2 + 1
    assert result.home.tolist() == [0, 1, 0, 1, 0]


def test_every_metric_of_the_schedule():
    values = grid_metrics(simulate())
    expected = {
        "makespan": 16.0,
        "mean_wait": (0 + 0 + 9 + 0 + 8) / 5,
        "max_wait": 9.0,
        "utilization": 72 / (8 * 16),
        "utilization_machine1": (30 + 16 + 8) / (4 * 16),
        "utilization_machine2": (10 + 6 + 2) / (4 * 16),
        "work_share_machine1": 54 / 72,
        "work_share_machine2": 18 / 72,
        "jobs_remote": 1.0,
        "offers_made": 9.0,
        "jobs_multisite": 1.0,
        "multisite_work_frac": 10 / (30 + 10 + 16 + 6 + 10),
        "jobs_backfilled": 1.0,
        "jobs": 5.0,
        "jobs_killed": 0.0,
        "sites": 2.0,
        "processors": 8.0,
    }
    assert {name: values[name] for name in expected} == pytest.approx(expected, rel=1e-15)


def test_overhead_stretches_a_coallocated_job_and_its_reservation():
    submit, size, runtime, estimate = zip(*JOBS, strict=True)
    workload = from_arrays(submit, size, runtime, estimate=estimate)
    economic = EconomicOptions(mf=2, uf=1, offers_per_machine=3, shifts=3)
    options = GridOptions(sharing="economic", economic=economic, overhead=0.5)
    result = simulate_grid(workload, (4, 4), options)
    check_grid_feasible(result)
    assert (float(result.start[4]), float(result.end[4]), result.executed[4]) == (14.0, 17.0, 3.0)


def test_the_checker_finds_two_jobs_on_one_processor():
    jobs = [(0, 1, 5, 5), (0, 1, 5, 5), (0, 2, 1, 1)]
    submit, size, runtime, estimate = zip(*jobs, strict=True)
    workload = from_arrays(submit, size, runtime, estimate=estimate)
    result = simulate_grid(workload, (2,), GridOptions(sharing="economic"))
    check_grid_feasible(result)
    assert result.nodes == (((0,),), ((1,),), ((0, 1),))
    assert result.start.tolist() == [0.0, 0.0, 5.0]
    same = replace(result, nodes=(((0,),), ((0,),), ((0, 1),)))
    with pytest.raises(InfeasibleSchedule, match="processor 0 of machine 0 runs jobs 1 and 2"):
        check_grid_feasible(same)
    twice = replace(result, nodes=(((0,),), ((1,),), ((1, 1),)))
    with pytest.raises(InfeasibleSchedule, match="job 3 holds processors"):
        check_grid_feasible(twice)


def test_a_job_outliving_its_reservation_is_refused():
    jobs = [(0, 1, 5, 4)]
    submit, size, runtime, estimate = zip(*jobs, strict=True)
    workload = from_arrays(submit, size, runtime, estimate=estimate)
    options = GridOptions(sharing="economic", kill_at_estimate=False)
    with pytest.raises(ValueError, match="economic reservations need kill_at_estimate"):
        simulate_grid(workload, (4, 4), options)


@pytest.mark.parametrize("uf, start", [(1, 72.0), (2, 108.0), (4, 108.0)])
def test_a_job_of_no_duration_is_priced_at_each_shift(uf, start):
    """Job 2 lasts 0 s: its empty window leaves processor 0 free at 72 although job 0 holds it
    until 108, so its shifts run from 72 to 108 (job 1 begins there) and N = {0}. MF3 at 72:
    over 36; at 90: under 18 + over 18; at 108, where job 0 has ended and job 1 begins: 0
    (a_0(108) = 108). UF1 takes the earliest start, UF2 and UF4 (72 + 72, 90 + 72, 108 + 0)
    the last shift, which a_q read at the candidate time priced at 36 like the others."""
    jobs = [(36, 2, 72, 72), (60, 2, 60, 60), (72, 1, 0, 0)]
    submit, size, runtime, estimate = zip(*jobs, strict=True)
    workload = from_arrays(submit, size, runtime, estimate=estimate)
    economic = EconomicOptions(mf=3, uf=uf, offers_per_machine=1, shifts=3)
    result = simulate_grid(workload, (2,), GridOptions(sharing="economic", economic=economic))
    check_grid_feasible(result)
    assert result.start.tolist() == [36.0, 108.0, start]
    assert result.nodes[2] == ((0,),)
