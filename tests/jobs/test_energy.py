"""Example F of datacenter.md (Example A on one processor of 2 cores) and energy on a
core-level platform of two processor types."""

from __future__ import annotations

import pytest

from campaign.models.jobs import run
from campaign.models.jobs.energy import energy_metrics, platform_energy_metrics
from campaign.models.rigid.feasibility import check_feasible
from campaign.models.rigid.platform import Platform, ProcessorType
from campaign.models.rigid.simulate import run_schedule
from campaign.models.rigid.workload import from_arrays

GOOD = [10, 12, 8, 5]
BAD = [10, 12, 8, 8]


def energy(scheduler, estimates):
    workload = from_arrays([2, 2.5, 2.7, 2.8], [1, 2, 1, 1], [1, 1, 1, 1], estimates)
    schedule = run_schedule(workload, 2, scheduler, kill_at_estimate=False)
    return energy_metrics(schedule, cores=2, static_power=50, dynamic_power=100)


def test_fcfs():
    # 0-2 idle processor 2.5 W, 2-3 one core 150 W, 3-5 both cores 250 W.
    m = energy("fcfs", GOOD)
    assert m["energy"] == pytest.approx(5 + 150 + 2 * 250)
    assert m["edp"] == pytest.approx(655 * 5)


def test_easy_good_estimates():
    m = energy("easy", GOOD)
    assert m["energy"] == pytest.approx(5 + 0.7 * 150 + 0.3 * 250 + 0.7 * 250 + 0.3 * 150 + 250)
    assert m["energy"] == pytest.approx(655)
    assert m["edp"] == pytest.approx(3275)


def test_easy_bad_estimates():
    m = energy("easy", BAD)
    assert m["energy"] == pytest.approx(5 + 105 + 75 + 0.7 * 150 + 250 + 150)
    assert m["energy"] == pytest.approx(690)
    assert m["edp"] == pytest.approx(690 * 5.7)


def test_cores_must_split_into_processors():
    workload = from_arrays([0], [1], [1], [1])
    with pytest.raises(ValueError, match="do not split"):
        energy_metrics(run_schedule(workload, 3, "fcfs"), cores=2)


def test_stepwise_edp_sums_power_times_step_squared():
    # FCFS steps end at every arrival, start and end: 0, 2, 2.5, 2.7, 2.8, 3, 4, 5.
    m = energy("fcfs", GOOD)
    assert m["edp_stepwise"] == pytest.approx(
        2.5 * 2**2 + 150 * (0.25 + 0.04 + 0.01 + 0.04) + 250 * 2
    )
    # EASY: 2.5 W to 2, 150 W to 2.7, 250 W to 3.7, 150 W to 4, 250 W to 5.
    m = energy("easy", GOOD)
    assert m["edp_stepwise"] == pytest.approx(
        2.5 * 4 + 150 * (0.25 + 0.04) + 250 * (0.01 + 0.04 + 0.49) + 150 * 0.09 + 250
    )


def platform_schedule(jobs, processors, scheduler="fcfs", order="fastest"):
    """jobs: rows (r, size, ops) planned with their time on a 10^6 ops/s core."""
    submit, size, ops = (list(column) for column in zip(*jobs, strict=True))
    nominal = [o / 1e6 for o in ops]
    workload = from_arrays(submit, size, nominal, nominal, ops=ops)
    platform = Platform(processors, order)
    s = run_schedule(workload, platform.cores, scheduler, kill_at_estimate=False, platform=platform)
    check_feasible(s)
    return s


@pytest.mark.parametrize("scheduler", ["fcfs", "easy"])
def test_example_f_on_a_core_level_platform(scheduler):
    # One processor of 2 cores of 10^6 ops/s; 10^6 operations = 1 s, as in Example A.
    processor = ProcessorType(cores=2, clock_rate=0.001, static_power=50, dynamic_power=100)
    submit, size = [2, 2.5, 2.7, 2.8], [1, 2, 1, 1]
    workload = from_arrays(submit, size, [1] * 4, GOOD, ops=[1e6] * 4)
    s = run_schedule(workload, 2, scheduler, kill_at_estimate=False, platform=Platform([processor]))
    m = platform_energy_metrics(s)
    assert m["energy"] == pytest.approx(655)
    assert m["edp"] == pytest.approx(3275)
    assert m["edp_stepwise"] == pytest.approx(energy(scheduler, GOOD)["edp_stepwise"])


def test_energy_of_two_processor_types_uses_the_actual_cores():
    # Processor 0: 2 cores of 2*10^6 ops/s, static 40 W (S = 20 per core), dynamic 200 W.
    # Processor 1: 2 cores of 10^6 ops/s, static 20 W (S = 10), dynamic 100 W.
    fast = ProcessorType(cores=2, clock_rate=0.002, static_power=40, dynamic_power=200)
    slow = ProcessorType(cores=2, clock_rate=0.001, static_power=20, dynamic_power=100)
    # Job 1 (3 cores, 4*10^6 ops) gets cores 0, 1 (fast) and 2 (slow): 4 s, 0-4; its fast
    # cores are done at 2 but held (and running) until 4. Job 2 (1 core, 5*10^5 ops, at 1)
    # gets core 3: 0.5 s. Job 3 (1 core, 2*10^6 ops, at 5) gets core 0: 1 s, 5-6.
    s = platform_schedule([(0, 3, 4e6), (1, 1, 5e5), (5, 1, 2e6)], [fast, slow])
    assert s.cores == ((0, 1, 2), (3,), (0,))
    assert s.start.tolist() == [0, 1, 5] and s.end.tolist() == [4, 1.5, 6]
    # 0-1: fast 2*200 + 40 = 440, slow 100 + 20 = 120 -> 560 W; 1-1.5: slow 2*100 + 20 ->
    # 660 W; 1.5-4: 560 W; 4-5: both idle, 0.05*40 + 0.05*20 = 3 W; 5-6: 200 + 40 + 1 = 241 W.
    m = platform_energy_metrics(s)
    assert m["energy"] == pytest.approx(560 + 0.5 * 660 + 2.5 * 560 + 3 + 241)
    assert m["energy"] == pytest.approx(2534)
    assert m["edp"] == pytest.approx(2534 * 6)
    # Steps end at 0, 1, 1.5, 2 (job 1's fast cores finish), 4, 5, 6.
    assert m["edp_stepwise"] == pytest.approx(560 + 660 * 0.25 + 560 * 0.25 + 560 * 4 + 3 + 241)
    # Taking the slow cores first moves the power: job 1 gets 2, 3 and 0 (4 s, fast core 0
    # busy 0-4), job 2 gets core 1 at 1: 0.25 s on a fast core.
    low = platform_schedule(
        [(0, 3, 4e6), (1, 1, 5e5), (5, 1, 2e6)], [fast, slow], order="low_power"
    )
    assert low.cores == ((2, 3, 0), (1,), (2,))
    assert low.end.tolist() == [4, 1.25, 7]
    # 0-1: fast 200 + 40, slow 2*100 + 20 -> 460; 1-1.25: 660; 1.25-4: 460; 4-5: 3;
    # 5-7: slow 100 + 20 + fast idle 2 -> 122.
    assert platform_energy_metrics(low)["energy"] == pytest.approx(
        460 + 0.25 * 660 + 2.75 * 460 + 3 + 2 * 122
    )


def test_platform_energy_needs_a_platform_schedule():
    workload = from_arrays([0], [1], [1], [1])
    with pytest.raises(ValueError, match="without a core-level platform"):
        platform_energy_metrics(run_schedule(workload, 2, "fcfs"))


PFCFS_JOBS = [(0, 2, 6, 6), (0, 3, 4, 4), (0, 2, 5, 5), (0, 1, 2, 3), (3, 1, 3, 5), (4, 3, 3, 4)]
"""The jobs of list-scheduling.md section 4 (r, size, p, p')."""


def test_energy_of_a_preemptive_schedule_counts_only_executing_cores(tmp_path):
    """PFCFS n = 1, D = 1 of list-scheduling.md 5.5 on 2 processors of 2 cores (125 W
    running, 25 W idle neighbour, 2.5 W idle processor). Executions: 1 on {0, 1} over [0, 1)
    and [5, 10) (suspended between, its processor 1 idle), 2 on {0, 2, 3} [1, 5), 3 on {2, 3}
    [5, 10), 4 on {0} [10, 12), 5 on {1} [10, 11) and [14, 16), 6 on {1, 2, 3} [11, 14)."""
    lines = ["; MaxProcs: 4"] + [
        f"{j} {r} -1 {p} {size} -1 -1 {size} {est} -1 1 1 1 -1 -1 -1 -1 -1"
        for j, (r, size, p, est) in enumerate(PFCFS_JOBS, start=1)
    ]
    trace = tmp_path / "pfcfs.swf"
    trace.write_text("\n".join(lines) + "\n")
    params = {
        "trace": str(trace),
        "scheduler": "pfcfs",
        "pfcfs_preset": "pfcfs3",
        "pfcfs_delay_s": 1,
        "energy": True,
        "cores_per_processor": 2,
    }
    m = run(params, 1)
    assert (m["makespan"], m["n_preemptions"]) == (16, 2)
    # [0,1) 252.5 W, [1,5) 150 + 250, [5,10) 500, [10,11) 252.5, [11,12) 500, [12,14) 400,
    # [14,16) 152.5.
    assert m["energy"] == pytest.approx(252.5 + 4 * 400 + 5 * 500 + 252.5 + 500 + 2 * 400 + 305)
    assert m["energy"] == pytest.approx(6210)
    assert m["edp"] == pytest.approx(6210 * 16)
    # Steps at 0, 1, 3, 4 (arrivals), 5, 10, 11, 12, 14, 16.
    assert m["edp_stepwise"] == pytest.approx(
        252.5 + 400 * (4 + 1 + 1) + 500 * 25 + 252.5 + 500 + 400 * 4 + 152.5 * 4
    )
