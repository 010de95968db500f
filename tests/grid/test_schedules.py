"""Whole grid schedules, job by job, on hand-checked grids (broker and the sharing modes)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from campaign.models.grid.measure import GRID_METRICS, check_grid_feasible, grid_metrics
from campaign.models.grid.schedule import GridOptions, GridSchedule, simulate_grid
from campaign.models.rigid.feasibility import InfeasibleSchedule
from campaign.models.rigid.workload import from_arrays


def run(jobs, machines, **options) -> GridSchedule:
    submit, size, runtime = zip(*jobs, strict=True)
    workload = from_arrays(submit, size, runtime, estimate=runtime)
    result = simulate_grid(workload, machines, GridOptions(**options))
    check_grid_feasible(result)
    return result


def table(result: GridSchedule) -> list[tuple]:
    """(parts, start, end) per job; parts as (machine, nodes) pairs, 0-based machines."""
    return [
        (result.parts[j], float(result.start[j]), float(result.end[j]))
        for j in range(len(result.workload))
    ]


# (r, size, p = est) on sites of 2 and 4 processors, EASY at each site.
BROKER_JOBS = [(0, 2, 10), (0, 2, 10), (1, 4, 5), (2, 1, 3), (2, 2, 4)]


def test_broker_mlp_schedule():
    # t=0: job 1 -> site 2 (1/4 < 1/2), job 2 ties at 1/2 -> site 1. t=1: job 3 fits only
    # site 2. t=2: job 4 -> site 2 (3/4 < 2/2), job 5 ties at 1 -> site 1; job 4 backfills
    # on site 2 (ends 5 <= shadow 10).
    result = run(BROKER_JOBS, (2, 4), strategy="mlp")
    assert table(result) == [
        (((1, 2),), 0.0, 10.0),
        (((0, 2),), 0.0, 10.0),
        (((1, 4),), 10.0, 15.0),
        (((1, 1),), 2.0, 5.0),
        (((0, 2),), 10.0, 14.0),
    ]
    assert result.jobs_backfilled == 1


def test_broker_mst_schedule():
    # MST ties at 0 for job 1 -> site 1; job 2 would start at 10 there -> site 2; job 4
    # starts at 10 on site 1 vs 15 on site 2 (strict FCFS behind job 3); job 5 at 13 vs 15.
    result = run(BROKER_JOBS, (2, 4), strategy="mst")
    assert table(result) == [
        (((0, 2),), 0.0, 10.0),
        (((1, 2),), 0.0, 10.0),
        (((1, 4),), 10.0, 15.0),
        (((0, 1),), 10.0, 13.0),
        (((0, 2),), 13.0, 17.0),
    ]


def test_cumulative_scope_counts_finished_jobs():
    # MWT on two 2-processor sites: job 2 goes to site 2 (wait 0 vs 10), job 3 ties at 4.5
    # -> site 1 and waits 9. Job 4 arrives at 20 on an idle grid: the active scope sees two
    # empty sites (tie -> site 1); the cumulative one sees site 1's finished waits (0, 9).
    jobs = [(0, 2, 10), (0, 2, 10), (1, 2, 1), (20, 2, 1)]
    active = run(jobs, (2, 2), strategy="mwt")
    cumulative = run(jobs, (2, 2), strategy="mwt", tentative_scope="cumulative")
    assert [p[0][0] for p in active.parts] == [0, 1, 0, 0]
    assert [p[0][0] for p in cumulative.parts] == [0, 1, 0, 1]
    assert float(cumulative.start[2]) == 10.0


def test_local_sharing_keeps_jobs_home():
    # home = index mod 2: jobs 1, 3 -> machine 1; jobs 2, 4 -> machine 2.
    jobs = [(0, 2, 10), (0, 2, 10), (1, 2, 5), (1, 1, 5)]
    result = run(jobs, (2, 4), sharing="local")
    assert table(result) == [
        (((0, 2),), 0.0, 10.0),
        (((1, 2),), 0.0, 10.0),
        (((0, 2),), 10.0, 15.0),
        (((1, 1),), 1.0, 6.0),
    ]


def test_job_sharing_bestfit_and_easy():
    # A -> machine 1 (BestFit leaves 0), B (3) -> machine 2, C -> machine 2's last node;
    # D (2) blocks with shadow 10 (A ends); F backfills at 3 (ends 8 <= 10); G backfills at
    # 8 although it ends at 28: D still fits machine 1 at 10. D then takes machine 1
    # (BestFit: 2 free there, 3 on machine 2).
    jobs = [(0, 2, 10), (0, 3, 10), (1, 1, 2), (2, 2, 4), (3, 1, 5), (3, 1, 20)]
    result = run(jobs, (2, 4), sharing="job_sharing")
    assert table(result) == [
        (((0, 2),), 0.0, 10.0),
        (((1, 3),), 0.0, 10.0),
        (((1, 1),), 1.0, 3.0),
        (((0, 2),), 10.0, 14.0),
        (((1, 1),), 3.0, 8.0),
        (((1, 1),), 8.0, 28.0),
    ]
    assert result.jobs_backfilled == 2


def test_job_sharing_refuses_a_backfill_that_delays_the_head():
    # A and B fill machine 2; head C (4) fits machine 2 only, at 10. At 5, D (20 s) would
    # go BestFit to machine 2's freed node and push C to 25: refused (BestFit only, even
    # though machine 1 is idle). E (3 s) ends at 8 <= 10 and starts there. D starts at 10
    # on machine 1, the only one with a free node once C has started.
    jobs = [(0, 3, 10), (0, 1, 5), (1, 4, 5), (5, 1, 20), (5, 1, 3)]
    result = run(jobs, (2, 4), sharing="job_sharing")
    assert table(result) == [
        (((1, 3),), 0.0, 10.0),
        (((1, 1),), 0.0, 5.0),
        (((1, 4),), 10.0, 15.0),
        (((0, 1),), 10.0, 30.0),
        (((1, 1),), 5.0, 8.0),
    ]


def test_job_sharing_place_on_arrival_starts_arrivals_ahead_of_the_head():
    # The previous test's jobs placed on arrival: at 5 (after B's completion) D starts at once
    # on machine 2's free node (BestFit: 1 free there, 2 on machine 1), delaying head C to
    # D's end at 25; E starts on machine 1 (the only free nodes left).
    jobs = [(0, 3, 10), (0, 1, 5), (1, 4, 5), (5, 1, 20), (5, 1, 3)]
    result = run(jobs, (2, 4), sharing="job_sharing", place_on_arrival=True)
    assert table(result) == [
        (((1, 3),), 0.0, 10.0),
        (((1, 1),), 0.0, 5.0),
        (((1, 4),), 25.0, 30.0),
        (((1, 1),), 5.0, 25.0),
        (((0, 1),), 5.0, 8.0),
    ]
    assert result.jobs_backfilled == 2


# Two machines of 4 nodes, overhead 0.5: A (6 nodes) is co-allocated, head B needs all 8.
ON_ARRIVAL = [(0, 6, 10), (1, 8, 10), (2, 2, 20), (3, 4, 5)]


@pytest.mark.parametrize(
    ("place_on_arrival", "expected", "backfilled"),
    [
        # EASY only: C (2 nodes, 20 s) would push B's shadow time from 15 to 22, so it
        # waits; B runs co-allocated 15-30; then C and D start BestFit (C takes machine 1,
        # D machine 2).
        (
            False,
            [
                (((0, 4), (1, 2)), 0.0, 15.0),
                (((0, 4), (1, 4)), 15.0, 30.0),
                (((0, 2),), 30.0, 50.0),
                (((1, 4),), 30.0, 35.0),
            ],
            0,
        ),
        # On arrival C fits machine 2's two free nodes and starts at 2, ahead of B. D (3)
        # cannot start and queues behind B. At 15 A ends: B (8) still waits for C, shadow
        # 22, and D (4 nodes, 5 s) backfills on machine 1, ending 20 <= 22. B runs 22-37.
        (
            True,
            [
                (((0, 4), (1, 2)), 0.0, 15.0),
                (((0, 4), (1, 4)), 22.0, 37.0),
                (((1, 2),), 2.0, 22.0),
                (((0, 4),), 15.0, 20.0),
            ],
            2,
        ),
    ],
)
def test_multisite_place_on_arrival(place_on_arrival, expected, backfilled):
    result = run(
        ON_ARRIVAL, (4, 4), sharing="multisite", overhead=0.5, place_on_arrival=place_on_arrival
    )
    assert table(result) == expected
    assert result.jobs_backfilled == backfilled
    values = grid_metrics(result)
    waits = [start - r for (_, start, _), (r, _, _) in zip(expected, ON_ARRIVAL, strict=True)]
    assert values["mean_wait"] == pytest.approx(sum(waits) / 4, rel=1e-12)
    assert values["makespan"] == max(end for _, _, end in expected)
    assert values["jobs_multisite"] == 2


def test_multisite_co_allocation_and_overhead():
    # A (5) fits no machine: co-allocated on machine 2 (4 free, most) then 1 node of
    # machine 1, runtime 10 * 1.5. B takes machine 1's last node. C (2) waits for A.
    jobs = [(0, 5, 10), (0, 1, 10), (1, 2, 4)]
    result = run(jobs, (2, 4), sharing="multisite", overhead=0.5)
    assert table(result) == [
        (((1, 4), (0, 1)), 0.0, 15.0),
        (((0, 1),), 0.0, 10.0),
        (((0, 2),), 15.0, 19.0),
    ]
    values = grid_metrics(result)
    assert values["jobs_multisite"] == 1.0
    assert values["multisite_work_frac"] == pytest.approx(50 / 68)
    # utilization counts the stretched time: (5*15 + 10 + 8) / (6 * 19)
    assert values["utilization"] == pytest.approx(93 / 114)
    # the waiting metrics use p before the stretch: A's bounded slowdown is 15 / 10
    assert values["mean_bsld"] == pytest.approx((1.5 + 1.0 + 18 / 10) / 3)


def test_multisite_shadow_time_uses_the_stretched_estimate():
    # A co-allocated (planned end 0 + 10 * 2 = 20); head B (6) needs everything: shadow 20.
    # C (1, 15 s) on the free node of machine 1 ends at 16 <= 20 and starts.
    jobs = [(0, 5, 10), (1, 6, 1), (2, 1, 15)]
    result = run(jobs, (2, 4), sharing="multisite", overhead=1.0)
    assert table(result)[2] == (((0, 1),), 2.0, 17.0)
    assert table(result)[1][1] == 20.0


def test_lbal_metrics_per_site():
    result = run(BROKER_JOBS, (2, 4), strategy="mlp")
    values = grid_metrics(result)
    size = np.array([2 + 2, 2 + 4 + 1]) / np.array([2, 4])
    assert values["lbal_size"] == pytest.approx(float(size.std()))
    time = np.array([10 + 4, 10 + 5 + 3]) / np.array([2, 4])
    assert values["lbal_time"] == pytest.approx(float(time.std()))


def test_lbal_units_are_those_of_their_ratios():
    """Sums of sizes (proc), runtimes (s) and work (proc*s), each over a site size (proc)."""
    units = {name: GRID_METRICS[name]["units"] for name in ("lbal_size", "lbal_time", "lbal_work")}
    assert units == {"lbal_size": "1", "lbal_time": "s/proc", "lbal_work": "s"}


def test_feasibility_check_catches_over_allocation():
    result = run(BROKER_JOBS, (2, 4), strategy="mlp")
    # Move job 1 onto machine 1, where job 2 already holds both processors.
    bad = replace(result, parts=(((0, 2),), *result.parts[1:]))
    with pytest.raises(InfeasibleSchedule, match="uses"):
        check_grid_feasible(bad)


def test_multisite_max_parts_limits_co_allocation():
    # Three machines of 2: a job of 5 needs three parts; with max_parts 2 it cannot run, so
    # the model drops it (too wide); a job of 4 takes two machines.
    jobs = [(0, 4, 10), (1, 2, 5)]
    result = run(jobs, (2, 2, 2), sharing="multisite", max_parts=2)
    assert table(result) == [
        (((0, 2), (1, 2)), 0.0, 10.0),
        (((2, 2),), 1.0, 6.0),
    ]
    jobs = [(0, 2, 10), (1, 4, 5)]
    # At 1 only machines 2 and 3 are free (2 + 2): two parts are enough.
    assert table(run(jobs, (2, 2, 2), sharing="multisite", max_parts=2))[1] == (
        ((1, 2), (2, 2)),
        1.0,
        6.0,
    )
    jobs = [(0, 2, 10), (0, 2, 10), (0, 2, 10), (1, 3, 5)]
    # Machines of 3 with one node free each at 1: the job of 3 needs three parts, so with
    # two it waits until 10 and then fits machine 1 alone.
    result = run(jobs, (3, 3, 3), sharing="multisite", max_parts=2)
    assert table(result)[3] == (((0, 3),), 10.0, 15.0)
    assert table(run(jobs, (3, 3, 3), sharing="multisite"))[3] == (
        ((0, 1), (1, 1), (2, 1)),
        1.0,
        6.0,
    )


@pytest.mark.parametrize("scheduler", ["fcfs", "conservative", "accasim_easy"])
def test_every_local_scheduler_runs_under_the_broker(scheduler):
    # Example B of section 3 (4 processors) sent to the only site of a one-site grid: FCFS
    # and conservative give 1 (0,10), 2 (10,20), 3 (10,20), 4 (20,35).
    jobs = [(0, 3, 10), (1, 2, 10), (2, 2, 10), (3, 1, 15)]
    result = run(jobs, (4,), strategy="mst", local_scheduler=scheduler)
    starts = result.start.tolist()
    if scheduler == "accasim_easy":
        assert starts == [0.0, 10.0, 18.0, 3.0]  # the backfilling schedule of EASY
    else:
        assert starts == [0.0, 10.0, 10.0, 20.0]
