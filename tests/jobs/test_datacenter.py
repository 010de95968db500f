"""The heterogeneous datacenter configuration of the jobs model (datacenter.md)."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from campaign.models.jobs import MODEL, run, schedule
from campaign.models.jobs.datacenter import reference_workload
from campaign.models.rigid.feasibility import check_feasible
from campaign.models.rigid.platform import (
    REFERENCE,
    Platform,
    ProcessorType,
    mixed_processors,
)
from campaign.models.rigid.simulate import run_schedule
from campaign.models.rigid.workload import from_arrays

FAST = ProcessorType(cores=2, clock_rate=0.002, static_power=40, dynamic_power=200)
SLOW = ProcessorType(cores=2, clock_rate=0.001, static_power=20, dynamic_power=100)
EXPERIMENTS = ["datacenter_exp1", "datacenter_exp2", "datacenter_exp3"]
SCHEDULERS = ["fcfs", "easy", "conservative", "sjf", "random"]


def on_platform(jobs, platform, scheduler="fcfs"):
    """jobs: rows (r, size, ops); runtime p and estimate on a 10^6 ops/s core."""
    submit, size, ops = (list(column) for column in zip(*jobs, strict=True))
    nominal = [o / 1e6 for o in ops]
    workload = from_arrays(submit, size, nominal, nominal, ops=ops)
    s = run_schedule(workload, platform.cores, scheduler, kill_at_estimate=False, platform=platform)
    check_feasible(s)
    return s


# 2 fast cores (2*10^6 ops/s, processor 0) and 2 slow ones (10^6 ops/s, processor 1).
HETERO_JOBS = [(0, 1, 4e6), (0, 2, 4e6), (1, 1, 2e6), (2.5, 2, 6e6), (3, 1, 3e6)]


def test_runtime_is_ops_over_the_slowest_allocated_core():
    s = on_platform(HETERO_JOBS, Platform([FAST, SLOW]))
    # Fastest idle cores first, ties lowest index:
    # 1 gets core 0 (fast): 4e6/2e6 = 2 s, ends 2.
    # 2 gets cores 1 (fast) and 2 (slow): the slow one needs 4 s, ends 4.
    # 3 (at 1) gets core 3 (slow): 2 s, ends 3.
    # 4 (at 2.5) needs 2 cores, only core 0 is idle; at 3 it gets 0 and 3: 6 s, ends 9.
    # 5 (at 3) waits behind 4 (FCFS); at 4 it gets core 1 (fast): 1.5 s, ends 5.5.
    assert s.cores == ((0,), (1, 2), (3,), (0, 3), (1,))
    assert s.start.tolist() == [0, 0, 1, 3, 4]
    assert s.end.tolist() == [2, 4, 3, 9, 5.5]
    assert s.runtime.tolist() == [2, 4, 2, 6, 1.5]
    # Planning used the estimates (runtime on a 10^6 ops/s core), never the runtime.
    assert s.estimate.tolist() == [4, 4, 2, 6, 3]


def test_low_power_takes_the_lowest_dynamic_power_first():
    s = on_platform(HETERO_JOBS, Platform([FAST, SLOW], order="low_power"))
    # Preference 2, 3 (slow, 100 W), then 0, 1 (fast, 200 W).
    # 1 gets core 2: 4 s. 2 gets 3 and 0: the slow one decides, 4 s. 3 (at 1) gets core 1:
    # 1 s. 4 waits until 4 (one core idle before), then gets 2 and 3: 6 s. 5 gets core 0.
    assert s.cores == ((2,), (3, 0), (1,), (2, 3), (0,))
    assert s.start.tolist() == [0, 0, 1, 4, 4]
    assert s.end.tolist() == [4, 4, 2, 10, 5.5]


def test_backfilling_plans_with_estimates_on_fast_cores():
    # 2 cores of 2*10^6 ops/s. Job 1 (1 core) ends at 1 though its estimate says 2; job 2
    # (2 cores) is blocked until then; job 3 (1 core, estimate 1) backfills at 0 since it is
    # planned to end at 1 <= the shadow time 2.
    platform = Platform([ProcessorType(cores=2, clock_rate=0.002)])
    s = on_platform([(0, 1, 2e6), (0, 2, 2e6), (0, 1, 1e6)], platform, "easy")
    assert s.start.tolist() == [0, 1, 0]
    assert s.end.tolist() == [1, 2, 0.5]


def test_homogeneous_platform_equals_the_plain_simulator():
    for name in EXPERIMENTS:
        workload = reference_workload(name)
        for scheduler in SCHEDULERS:
            plain = run_schedule(
                workload, 200, scheduler, kill_at_estimate=False, rng=np.random.default_rng(1)
            )
            cores = run_schedule(
                workload,
                200,
                scheduler,
                kill_at_estimate=False,
                rng=np.random.default_rng(1),
                platform=Platform([REFERENCE] * 25),
            )
            assert cores.start.tolist() == plain.start.tolist()
            assert cores.end.tolist() == plain.end.tolist()


def test_platform_refuses_a_workload_without_operation_counts():
    workload = from_arrays([0], [1], [1], [1])
    with pytest.raises(ValueError, match="operation counts"):
        run_schedule(workload, 8, "fcfs", platform=Platform([REFERENCE]))
    with pytest.raises(ValueError, match="the platform has 8 cores, the site 16"):
        run_schedule(workload, 16, "fcfs", platform=Platform([REFERENCE]))


def test_mixed_processors_keep_the_core_count():
    kinds = mixed_processors(20, REFERENCE, 0.5, 2.0, 3.0)
    assert len(kinds) == 20 and sum(k.cores for k in kinds) == 160
    fast = ProcessorType(8, 0.002, 1.0, 50.0, 300.0)
    assert kinds[:10] == [fast] * 10 and kinds[10:] == [REFERENCE] * 10
    assert fast.speed == 2e6
    # 25 processors: floor(12.5 + 0.5) = 13 are changed.
    assert mixed_processors(25, REFERENCE, 0.5, 2.0, 2.0).count(REFERENCE) == 12
    assert mixed_processors(4, REFERENCE, 0.0, 2.0, 2.0) == [REFERENCE] * 4


# ---------------------------------------------------------------- reference workloads
def test_experiment_1():
    w = reference_workload("datacenter_exp1")
    assert len(w) == 40 and w.processors == 160
    assert w.size.tolist() == [4, 8, 16, 32, 64, 128] * 6 + [4, 8, 16, 32]
    assert (w.submit == 0).all()
    heavy = w.size >= 64
    assert (w.ops == np.where(heavy, 1e7, 5e6)).all()
    assert (w.runtime == np.where(heavy, 10, 5)).all()
    assert (w.estimate == np.where(heavy, 14, 7)).all()


@pytest.mark.parametrize(
    ("name", "types"),
    [
        ("datacenter_exp2", [4, 8, 16, 20, 32, 64, 128]),
        ("datacenter_exp3", [4, 8, 16, 32, 64, 96, 128]),
    ],
)
def test_experiments_2_and_3_restart_the_cycle_with_the_second_wave(name, types):
    w = reference_workload(name)
    assert len(w) == 80 and w.processors == 200
    wave = (types * 6)[:40]  # 40 jobs: five full cycles of 7 and the first 5 types
    assert w.size.tolist() == wave + wave
    assert w.size[40] == 4 and w.size[39] == types[4]
    assert w.submit.tolist() == [0.0] * 40 + [30.0] * 40
    heavy = w.size >= 64
    assert (w.runtime == np.where(heavy, 10, 5)).all()
    assert (w.estimate == np.where(heavy, 14, 7)).all()


def test_experiment_platform_is_the_default_site():
    assert schedule({"workload": "datacenter_exp1"}, 1).processors == (160,)
    assert schedule({"workload": "datacenter_exp3"}, 1).processors == (200,)
    m = run({"workload": "datacenter_exp3", "processors": 88}, 1)
    # Per wave, types 96 and 128 are jobs 5, 12, 19, 26, 33 and 6, 13, 20, 27, 34.
    assert m["processors"] == 88 and m["n_dropped_too_wide"] == 20
    assert m["jobs"] == 60


# ---------------------------------------------------------------- estimate accuracy
def test_estimate_accuracy_gives_a_times_p():
    s = schedule({"workload": "datacenter_exp1", "estimate_accuracy": 2.5}, 1)
    assert s.estimate.tolist() == (2.5 * s.workload.runtime).tolist()
    assert set(s.estimate.tolist()) == {12.5, 25.0}
    # Without it, the table's EET (7 and 14 s, a = 1.4).
    assert set(schedule({"workload": "datacenter_exp1"}, 1).estimate.tolist()) == {7.0, 14.0}


def test_noisy_estimates_come_from_the_estimates_stream():
    s = schedule({"workload": "datacenter_exp2", "estimate_noise": 3.0}, 5)
    stream = np.random.default_rng(np.random.SeedSequence(5).spawn(5)[2])
    factor = stream.uniform(1.0, 3.0, 80)
    assert s.estimate.tolist() == (s.workload.runtime * factor).tolist()
    assert ((s.estimate >= s.workload.runtime) & (s.estimate <= 3 * s.workload.runtime)).all()


def test_accuracy_below_one_with_kills_is_refused_and_never_kills_by_default():
    with pytest.raises(ValueError, match="'estimate_accuracy' 0.5 < 1 would kill every job"):
        MODEL.check(
            {"workload": "datacenter_exp1", "estimate_accuracy": 0.5, "kill_at_estimate": True}
        )
    m = run({"workload": "datacenter_exp1", "estimate_accuracy": 0.5, "scheduler": "easy"}, 1)
    assert m["jobs_killed"] == 0
    # On a trace-like synthetic workload the kill default stays true.
    with pytest.raises(ValueError, match="'estimate_accuracy' 0.5 < 1"):
        MODEL.check({"workload": "synthetic", "estimate_accuracy": 0.5})


def test_kill_at_estimate_on_slow_cores():
    # Half the processors at half the clock: a class-1 job on slow cores needs 10 s > EET 7.
    params = {"workload": "datacenter_exp1", "hetero_fraction": 0.5, "hetero_clock": 0.5}
    s = schedule({**params, "kill_at_estimate": True}, 1)
    check_feasible(s)
    slow = s.workload.runtime > s.limit
    assert slow.any() and (s.killed == slow).all()
    assert (s.runtime[slow] == s.limit[slow]).all()
    assert run({**params, "kill_at_estimate": True}, 1)["jobs_killed"] == slow.sum()
    assert run(params, 1)["jobs_killed"] == 0


# ---------------------------------------------------------------- the model
@pytest.mark.parametrize("name", EXPERIMENTS)
@pytest.mark.parametrize("scheduler", SCHEDULERS)
@pytest.mark.parametrize("fraction", [0.0, 0.5])
def test_every_datacenter_schedule_is_feasible(name, scheduler, fraction):
    params = {"workload": name, "scheduler": scheduler, "hetero_fraction": fraction}
    s = schedule(params, 3)
    check_feasible(s)
    platform = s.platform
    # Every job ran ops / (its slowest core's speed) on as many distinct cores as its size.
    for j, cores in enumerate(s.cores):
        assert len(set(cores)) == s.workload.size[j]
        assert s.end[j] - s.start[j] == pytest.approx(
            s.workload.ops[j] / min(platform.speed[c] for c in cores)
        )
    m = run(params, 3)
    assert np.isfinite([m["energy"], m["edp"], m["edp_stepwise"]]).all()
    assert m["edp"] == pytest.approx(m["energy"] * m["makespan"])


def test_experiment_1_fcfs_by_hand():
    s = schedule({"workload": "datacenter_exp1", "scheduler": "fcfs"}, 1)
    check_feasible(s)
    # At 0 jobs 0-4 (4+8+16+32+64 = 124 cores) start; 5 (128) waits for 64's end at 10, then
    # 6, 7, 8 join it (124 + 4 = 128 + 28 used) and 9 (32) starts at 15 when they end. From 20
    # each 20 s runs one cycle: the 64-core job alone for 10 s (128 does not fit beside it),
    # then 128 + 4 + 8 + 16, then 32 five seconds later: jobs 10-15 in [20, 40), ...
    expected = [0] * 5 + [10] * 4 + [15]
    for base in (20, 40, 60, 80, 100):
        expected += [base] + [base + 10] * 4 + [base + 15]
    assert s.start.tolist() == expected
    assert s.end.max() == 120


@pytest.mark.parametrize(
    ("backfill_after_start", "at_zero"),
    [(True, [0, 1, 2, 3, 4, 6, 7, 8, 12, 18]), (False, [0, 1, 2, 3, 4])],
)
def test_experiment_1_easy_first_pass(backfill_after_start, at_zero):
    """At 0 the heads 0-4 (4 + 8 + 16 + 32 + 64 = 124 cores) start and job 5 (128) waits
    for job 4's planned end, S = 14. By default the 4, 8 and 16-core jobs 6, 7, 8, 12 and 18
    (EET 7, ending by S) backfill into the 36 free cores; under the reference simulator's
    rule that pass started heads, so it backfills nothing."""
    params = {
        "workload": "datacenter_exp1",
        "scheduler": "easy",
        "backfill_after_start": backfill_after_start,
    }
    s = schedule(params, 1)
    check_feasible(s)
    assert np.flatnonzero(s.start == 0).tolist() == at_zero


def test_backfill_after_start_must_be_a_flag():
    with pytest.raises(ValueError, match="'backfill_after_start' must be true or false"):
        MODEL.check({"workload": "datacenter_exp1", "backfill_after_start": "no"})


def test_heterogeneity_speeds_jobs_up_at_an_equal_core_count():
    base = run({"workload": "datacenter_exp1", "scheduler": "fcfs"}, 1)
    mixed = run({"workload": "datacenter_exp1", "scheduler": "fcfs", "hetero_fraction": 0.5}, 1)
    assert mixed["processors"] == base["processors"] == 160
    assert base["makespan"] == 120
    assert mixed["makespan"] < base["makespan"]


def test_random_policy_uses_the_policy_stream():
    params = {"workload": "datacenter_exp2", "scheduler": "random"}
    s = schedule(params, 9)
    again = run_schedule(
        s.workload,
        200,
        "random",
        kill_at_estimate=False,
        rng=np.random.default_rng(np.random.SeedSequence(9).spawn(5)[3]),
        platform=Platform([REFERENCE] * 25),
    )
    assert s.start.tolist() == again.start.tolist()
    assert schedule(params, 9).start.tolist() == s.start.tolist()
    assert schedule(params, 10).start.tolist() != s.start.tolist()


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"workload": "datacenter_exp4"}, "'workload' must be one of synthetic, datacenter_exp1"),
        ({"workload": "datacenter_exp1", "jobs": 10}, "'jobs' does not apply"),
        ({"workload": "datacenter_exp1", "overestimate": 2}, "'overestimate' does not apply"),
        ({"workload": "synthetic", "estimate_noise": 2}, "use 'overestimate'"),
        ({"workload": "synthetic", "estimate_accuracy": 2, "overestimate": 2}, "exclude"),
        (
            {"workload": "datacenter_exp1", "estimate_accuracy": 2, "estimate_noise": 2},
            "'estimate_accuracy' and 'estimate_noise' exclude each other",
        ),
        (
            {"workload": "datacenter_exp1", "estimate_noise": 0.5},
            "'estimate_noise' must be a number >= 1",
        ),
        (
            {"workload": "datacenter_exp1", "hetero_fraction": 1.5},
            r"'hetero_fraction' must be a number in \[0, 1\]",
        ),
        ({"workload": "datacenter_exp1", "hetero_clock": 0}, "'hetero_clock' must be a number > 0"),
        ({"workload": "datacenter_exp1", "core_order": "slowest"}, "'core_order' must be one of"),
        ({"workload": "datacenter_exp1", "scheduler": "lifo"}, "fcfs, easy, conservative"),
    ],
)
def test_check_names_the_bad_datacenter_parameter(params, message):
    with pytest.raises(ValueError, match=message):
        MODEL.check(params)


def test_cores_per_processor_must_divide_a_core_level_site():
    with pytest.raises(ValueError, match="'cores_per_processor' \\(7\\) must divide"):
        run({"workload": "datacenter_exp1", "cores_per_processor": 7}, 1)


def test_every_setting_the_definition_gives_a_default_is_a_param():
    """A setting datacenter.md names with its default is one a spec can give: it named
    `enforce_memory`, which the model refused as an unknown parameter."""
    text = (Path(__file__).parents[2] / "campaign/models/jobs/datacenter.md").read_text()
    named = re.findall(r"`([a-z][a-z0-9_]*)`,? \(?default", text)
    named += re.findall(r"[Oo]ption `([a-z][a-z0-9_]*)` \(default", text)
    assert "backfill_after_start" in named
    assert [name for name in named if name not in MODEL.params] == []
