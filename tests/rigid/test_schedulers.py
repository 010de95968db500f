"""Whole hand-computed schedules (start of every job) for every local scheduler."""

from __future__ import annotations

import numpy as np
import pytest

from campaign.models.rigid.feasibility import check_feasible
from campaign.models.rigid.metrics import schedule_metrics
from campaign.models.rigid.policies import EasyOptions
from campaign.models.rigid.simulate import run_schedule
from campaign.models.rigid.workload import from_arrays


def simulate(jobs, processors, scheduler, **options):
    """jobs: rows (r, size, p, estimate); returns the schedule after checking feasibility."""
    submit, size, runtime, estimate = (list(column) for column in zip(*jobs, strict=True))
    workload = from_arrays(submit, size, runtime, estimate)
    schedule = run_schedule(workload, processors, scheduler, **options)
    check_feasible(schedule)
    return schedule


# Example A of parallel-jobs.md: 2 processors, p = 1 s for all jobs.
EXAMPLE_A_GOOD = [(2, 1, 1, 10), (2.5, 2, 1, 12), (2.7, 1, 1, 8), (2.8, 1, 1, 5)]
EXAMPLE_A_BAD = [(2, 1, 1, 10), (2.5, 2, 1, 12), (2.7, 1, 1, 8), (2.8, 1, 1, 8)]


@pytest.mark.parametrize("jobs", [EXAMPLE_A_GOOD, EXAMPLE_A_BAD], ids=["good", "bad"])
def test_example_a_fcfs(jobs):
    s = simulate(jobs, 2, "fcfs")
    assert s.start.tolist() == [2, 3, 4, 4]
    assert s.end.tolist() == [3, 4, 5, 5]
    m = schedule_metrics(s)
    assert m["makespan"] == 5
    assert m["mean_wait"] == pytest.approx(0.75)


@pytest.mark.parametrize("scheduler", ["easy", "conservative"])
def test_example_a_backfilling_good_estimates(scheduler):
    s = simulate(EXAMPLE_A_GOOD, 2, scheduler)
    # 3 backfills at 2.7 (S = 12); at 3, S = 10.7 and 4 backfills.
    assert s.start.tolist() == [2, 4, 2.7, 3]
    assert s.end.tolist() == [3, 5, 3.7, 4]
    m = schedule_metrics(s)
    assert m["makespan"] == 5
    assert m["mean_wait"] == pytest.approx(0.425)


@pytest.mark.parametrize("scheduler", ["easy", "conservative"])
def test_example_a_backfilling_bad_estimates(scheduler):
    s = simulate(EXAMPLE_A_BAD, 2, scheduler)
    # At 3, job 4 would end at 11 > 10.7 with no processor left over at S.
    assert s.start.tolist() == pytest.approx([2, 3.7, 2.7, 4.7])
    m = schedule_metrics(s)
    assert m["makespan"] == pytest.approx(5.7)
    assert m["mean_wait"] == pytest.approx(0.775)


# Example B: 4 processors, estimate = runtime.
EXAMPLE_B = [(0, 3, 10, 10), (1, 2, 10, 10), (2, 2, 10, 10), (3, 1, 15, 15)]


@pytest.mark.parametrize("scheduler", ["fcfs", "conservative"])
def test_example_b_without_backfilling_gain(scheduler):
    s = simulate(EXAMPLE_B, 4, scheduler)
    assert s.start.tolist() == [0, 10, 10, 20]
    assert s.end.tolist() == [10, 20, 20, 35]
    m = schedule_metrics(s)
    assert m["makespan"] == 35
    assert m["mean_wait"] == pytest.approx(8.5)
    assert m["mean_bsld"] == pytest.approx(1.708333, abs=1e-6)
    assert m["awrt"] == pytest.approx(17.882353, abs=1e-6)
    assert m["swct_w"] == pytest.approx(1625)
    assert m["jobs_backfilled"] == 0


def test_example_b_easy():
    s = simulate(EXAMPLE_B, 4, "easy")
    # At 3, S = 10 with 2 processors left over, so 4 starts although it ends at 18.
    assert s.start.tolist() == [0, 10, 18, 3]
    assert s.end.tolist() == [10, 20, 28, 18]
    m = schedule_metrics(s)
    assert m["makespan"] == 28
    assert m["mean_wait"] == pytest.approx(6.25)
    assert m["mean_bsld"] == pytest.approx(1.625)
    assert m["awrt"] == pytest.approx(16.764706, abs=1e-6)
    assert m["swct_w"] == pytest.approx(1530)
    assert m["jobs_backfilled"] == 1


def test_example_b_other_metrics_by_hand():
    s = simulate(EXAMPLE_B, 4, "easy")
    m = schedule_metrics(s)
    # waits 0, 9, 16, 0; responses 10, 19, 26, 15; p 10, 10, 10, 15; work 30, 20, 20, 15.
    assert m["max_wait"] == 16
    assert m["mean_turnaround"] == pytest.approx((10 + 19 + 26 + 15) / 4)
    assert m["mean_slowdown"] == pytest.approx((1 + 1.9 + 2.6 + 1) / 4)
    assert m["awwt"] == pytest.approx((20 * 9 + 20 * 16) / 85)
    assert m["sct"] == 10 + 20 + 28 + 18
    assert m["utilization"] == pytest.approx(85 / (4 * 28))
    assert m["throughput"] == pytest.approx(4 / 28)
    assert m["wait_weighted_size_mean_proc_s"] == pytest.approx((2 * 9 + 2 * 16) / 4)
    assert m["competitive_factor_lb"] == pytest.approx(28 / max(18, 85 / 4))


def test_kill_at_estimate():
    # Job 1 asks for 50 s but would run 100 s: killed at 50, job 2 starts then.
    jobs = [(0, 2, 100, 50), (10, 1, 10, 20)]
    s = simulate(jobs, 2, "fcfs")
    assert s.start.tolist() == [0, 50]
    assert s.end.tolist() == [50, 60]
    assert schedule_metrics(s)["jobs_killed"] == 1
    s = simulate(jobs, 2, "fcfs", kill_at_estimate=False)
    assert s.start.tolist() == [0, 100]
    assert schedule_metrics(s)["jobs_killed"] == 0


def test_exact_estimates_plan_with_the_runtime():
    # With user estimates job 3 (est 100) cannot backfill before job 2's shadow time 10;
    # with exact estimates it ends at 6 and does.
    jobs = [(0, 1, 10, 10), (1, 2, 5, 5), (2, 1, 4, 100)]
    assert simulate(jobs, 2, "easy").start.tolist() == [0, 10, 15]
    assert simulate(jobs, 2, "easy", estimate="exact").start.tolist() == [0, 10, 2]


def test_conservative_compresses_after_an_early_completion():
    # Job 1 (est 100) ends at 10; reservations were 2 @100, 4 @100, 3 @110.
    jobs = [(0, 4, 10, 100), (1, 2, 10, 10), (2, 4, 10, 10), (3, 1, 5, 5)]
    s = simulate(jobs, 4, "conservative")
    assert s.start.tolist() == [0, 10, 20, 10]
    assert simulate(jobs, 4, "easy").start.tolist() == [0, 10, 20, 10]
    assert simulate(jobs, 4, "fcfs").start.tolist() == [0, 10, 20, 30]


def test_conservative_reservations_at_arrival():
    # 3 processors, all jobs arrive at 0. Reservations in arrival order: 1 at 0-10 (2 wide),
    # 2 at 10-20 (3 wide), 3 at 0-5 (1 wide, in the hole), 4 (1 wide, 30 s) finds no hole
    # before 20. EASY gets the same: at 5 the left-over at S = 10 is 0, so 4 waits. FCFS
    # keeps 3 behind 2.
    jobs = [(0, 2, 10, 10), (0, 3, 10, 10), (0, 1, 5, 5), (0, 1, 30, 30)]
    assert simulate(jobs, 3, "conservative").start.tolist() == [0, 10, 0, 20]
    assert simulate(jobs, 3, "easy").start.tolist() == [0, 10, 0, 20]
    assert simulate(jobs, 3, "fcfs").start.tolist() == [0, 10, 20, 20]


def test_same_time_completions_before_arrivals():
    jobs = [(0, 2, 10, 10), (10, 2, 5, 5)]
    for scheduler in ("fcfs", "easy", "conservative", "accasim_easy"):
        assert simulate(jobs, 2, scheduler).start.tolist() == [0, 10]


def test_arrivals_at_one_time_keep_input_order():
    jobs = [(0, 2, 10, 10), (0, 1, 10, 10), (0, 1, 10, 10)]
    assert simulate(jobs, 2, "fcfs").start.tolist() == [0, 10, 10]


def test_zero_runtime_jobs_complete_at_their_start():
    jobs = [(0, 2, 0, 10), (0, 2, 5, 5), (1, 1, 0, 1)]
    for scheduler in ("fcfs", "easy", "conservative"):
        s = simulate(jobs, 2, scheduler)
        assert s.start.tolist() == [0, 0, 5]
        assert s.end.tolist() == [0, 5, 5]


def test_accasim_easy_does_not_protect_the_head():
    # Example A, good estimates. Job 2 is blocked at 2.5: its reservation time is job 1's
    # planned end 12. Job 3 and job 4 fit now and start (4 at 3 without any shadow check);
    # job 2 is only tried again from time 12 (the clock steps by 1 s once no event is left).
    s = simulate(EXAMPLE_A_GOOD, 2, "accasim_easy")
    assert s.start.tolist() == [2, 12, 2.7, 3]


def test_accasim_easy_starts_the_head_first_once_its_time_comes():
    # 2 processors. Job 1 (2 wide, est 10, runs 10) blocks job 2 (2 wide): reservation 10.
    # At 10, job 2 is started before job 3 (1 wide) although job 3 arrived at 10 too.
    jobs = [(0, 2, 10, 10), (1, 2, 5, 5), (10, 1, 5, 5)]
    assert simulate(jobs, 2, "accasim_easy").start.tolist() == [0, 10, 15]


# SJF example: 4 processors; job 1 fills the site until 10. Jobs 3 and 4 tie on their
# estimate (2 s), job 4 runs 4 s (never killed here).
EXAMPLE_SJF = [(0, 4, 10, 10), (1, 2, 5, 8), (2, 3, 2, 2), (3, 2, 4, 2), (4, 1, 1, 9)]


def test_sjf_shortest_estimate_first_and_a_blocked_head_blocks():
    s = simulate(EXAMPLE_SJF, 4, "sjf", kill_at_estimate=False)
    # At 10 the order is 3 (est 2), 4 (est 2, arrived after 3), 2 (8), 5 (9): 3 starts (1
    # left), 4 (2 wide) is blocked, so 5 (1 wide, fits) waits too. At 12: 4, then 2 start;
    # 5 is blocked. At 16 (4 ends) 5 starts.
    assert s.start.tolist() == [0, 12, 10, 12, 16]
    assert s.end.tolist() == [10, 17, 12, 16, 17]
    # Job 3 started while job 2 (arrived before it) waited.
    assert schedule_metrics(s)["jobs_backfilled"] == 1
    # FCFS starts 2 at 10 and keeps 3 behind it.
    assert simulate(EXAMPLE_SJF, 4, "fcfs", kill_at_estimate=False).start.tolist() == [
        0,
        10,
        15,
        17,
        17,
    ]


def test_sjf_orders_by_the_estimate_not_the_runtime():
    # 1 processor busy until 5; job 2 runs 1 s but says 9, job 3 runs 6 s and says 7.
    jobs = [(0, 1, 5, 5), (1, 1, 1, 9), (2, 1, 6, 7)]
    assert simulate(jobs, 1, "sjf").start.tolist() == [0, 11, 5]


# Random example: 2 processors; jobs 1-4 arrive at 0 (sizes 2, 1, 1, 1; runtimes 2, 3, 1, 2),
# job 5 at 1 (size 1, 1 s).
EXAMPLE_RANDOM = [(0, 2, 2, 2), (0, 1, 3, 3), (0, 1, 1, 1), (0, 1, 2, 2), (1, 1, 1, 1)]


def test_random_draws_a_waiting_job_and_stops_at_one_that_does_not_fit():
    # The draws of the policy stream (seed 3) for the numbers of waiting jobs met below.
    rng = np.random.default_rng(3)
    assert [int(rng.integers(n)) for n in (4, 3, 4, 4, 3, 2, 1)] == [3, 0, 0, 0, 0, 1, 0]
    s = simulate(EXAMPLE_RANDOM, 2, "random", rng=np.random.default_rng(3))
    # t=0: waiting [1,2,3,4], draw 3 -> job 4 starts (1 free); waiting [1,2,3], draw 0 ->
    #   job 1 (2 wide) does not fit: the pass ends.
    # t=1: job 5 arrives; waiting [1,2,3,5], draw 0 -> job 1 does not fit.
    # t=2: job 4 ends (2 free); waiting [1,2,3,5], draw 0 -> job 1 starts (0 free: no draw).
    # t=4: job 1 ends; waiting [2,3,5], draw 0 -> job 2 starts; waiting [3,5], draw 1 -> job 5.
    # t=5: job 5 ends; waiting [3], draw 0 -> job 3 starts.
    assert s.start.tolist() == [2, 4, 5, 0, 4]
    assert s.end.tolist() == [4, 7, 6, 2, 5]


def test_random_is_deterministic_given_its_stream():
    first = simulate(EXAMPLE_RANDOM, 2, "random", rng=np.random.default_rng(3))
    again = simulate(EXAMPLE_RANDOM, 2, "random", rng=np.random.default_rng(3))
    other = simulate(EXAMPLE_RANDOM, 2, "random", rng=np.random.default_rng(0))
    assert first.start.tolist() == again.start.tolist()
    # Seed 0 draws 3, 1 at t=0: jobs 4 and 2 start together.
    assert other.start.tolist() == [3, 0, 2, 0, 5]


def test_random_needs_its_stream():
    with pytest.raises(ValueError, match="'random' needs a random generator"):
        simulate(EXAMPLE_RANDOM, 2, "random")


def test_unknown_scheduler_is_refused():
    with pytest.raises(ValueError, match="unknown scheduler 'lifo'"):
        simulate([(0, 1, 1, 1)], 1, "lifo")


def test_bsld_floor_one_off_gives_the_literal_formula():
    s = simulate([(0, 1, 2, 2)], 1, "fcfs")
    assert schedule_metrics(s)["mean_bsld"] == 1.0
    assert schedule_metrics(s, bsld_floor_one=False)["mean_bsld"] == pytest.approx(0.2)


def test_empty_workload_gives_nan_not_an_error():
    schedule = run_schedule(from_arrays([], [], []), 4, "easy")
    m = schedule_metrics(schedule)
    assert np.isnan(m["mean_wait"]) and m["jobs"] == 0


# 4 processors, estimate = runtime: the pass at 10 starts the head (job 2) and finds job 3
# blocked (shadow time 20, nothing left over), while job 4 would fit until then.
HEAD_THEN_BACKFILL = [(0, 4, 10, 10), (1, 2, 10, 10), (1, 4, 10, 10), (1, 1, 5, 5), (12, 1, 3, 3)]


@pytest.mark.parametrize(
    ("backfill_after_start", "starts", "mean_wait"),
    [
        # Job 4 backfills in the pass at 10 that started job 2; job 5 beside it at 12.
        (True, [0, 10, 20, 10, 12], 37 / 5),
        # The pass at 10 started job 2, so it backfills nothing; the pass at 12 (job 5's
        # arrival) starts no head and backfills jobs 4 and 5 (12 + 5 <= 20).
        (False, [0, 10, 20, 12, 12], 39 / 5),
    ],
)
def test_easy_backfill_after_start(backfill_after_start, starts, mean_wait):
    rule = EasyOptions(backfill_after_start=backfill_after_start)
    s = simulate(HEAD_THEN_BACKFILL, 4, "easy", options=rule)
    assert s.start.tolist() == starts
    assert s.end.tolist() == [start + p for start, (_, _, p, _) in zip(starts, HEAD_THEN_BACKFILL)]
    m = schedule_metrics(s)
    assert m["makespan"] == 30
    assert m["mean_wait"] == pytest.approx(mean_wait, rel=1e-12)
    assert m["jobs_backfilled"] == 2


@pytest.mark.parametrize("jobs", [EXAMPLE_A_GOOD, EXAMPLE_A_BAD], ids=["good", "bad"])
def test_example_a_is_the_same_under_the_reference_rule(jobs):
    """datacenter.md section 2: Example A gives the same schedules either way."""
    rule = simulate(jobs, 2, "easy", options=EasyOptions(backfill_after_start=False))
    assert rule.start.tolist() == simulate(jobs, 2, "easy").start.tolist()
