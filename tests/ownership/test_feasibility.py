"""Every simulated schedule is feasible, and the metrics agree with the schedule.

The checks rebuild everything from the recorded runs (segments) and owner-load changes: no
machine runs two things at once, never more running tasks than machines, no start before
submission, each task completes exactly once after a full duration of progress; violation,
capacity loss, policy cost and preemptions are recomputed from the schedule alone.
"""

from __future__ import annotations

from collections import defaultdict

import numpy as np
import pytest

from campaign.models.ownership import run, simulate
from campaign.models.ownership.availability import machine_periods
from campaign.models.ownership.params import parse
from campaign.models.ownership.scenarios import REFERENCE_SCENARIOS
from campaign.models.ownership.simulator import Simulation
from campaign.models.ownership.workload import build_tasks


def rate_integral(changes: list[tuple[float, bool]], load: float, start: float, end: float):
    """Work a machine does over [start, end] given its owner-load changes (time, busy)."""
    if not changes:
        return end - start
    total = 0.0
    for i, (time, busy) in enumerate(changes):
        until = changes[i + 1][0] if i + 1 < len(changes) else np.inf
        low, high = max(start, time), min(end, until)
        if high > low:
            total += (high - low) * ((1.0 - load) if busy else 1.0)
    return total


def check_schedule(params: dict, seed: int) -> None:
    tasks, outcome = simulate(params, seed, record=True)
    metrics = run(params, seed)
    n = parse(params).settings.machines
    load = params.get("owner_load", 0.0)
    checkpoint = (
        params.get("checkpoint_cost_s", 0.0) if params["policy"] == "osep_checkpoint" else 0
    )
    restart = params.get("restart_cost_s", 0.0) if params["policy"] == "osep_checkpoint" else 0
    delay = params.get("dispatch_delay_s", 0.0)
    segments = outcome.segments
    changes = defaultdict(list)
    for machine, time, busy in outcome.owner_changes:
        changes[machine].append((time, busy))

    # machines: one thing at a time, including checkpoint writes and dispatch delays
    by_machine = defaultdict(list)
    for s in segments:
        assert 0 <= s.machine < n and s.start <= s.end
        by_machine[s.machine].append(s)
    for runs in by_machine.values():
        runs.sort(key=lambda s: s.start)
        for before, after in zip(runs, runs[1:]):
            write = checkpoint if before.outcome == "checkpointed" else 0.0
            assert after.start >= before.end + write + delay - 1e-9
    # never more running tasks than machines (sweep over starts and ends)
    points = sorted([(s.start, 1) for s in segments] + [(s.end, -1) for s in segments])
    running = 0
    for _, step in sorted(points, key=lambda p: (p[0], p[1])):
        running += step
        assert running <= n

    # each task: runs after submission, ends with exactly one completion, full progress
    by_task = defaultdict(list)
    for s in segments:
        by_task[s.task].append(s)
    assert sorted(by_task) == list(range(len(tasks.user)))
    for task, runs in by_task.items():
        runs.sort(key=lambda s: s.start)
        assert [s.outcome == "done" for s in runs] == [False] * (len(runs) - 1) + [True]
        assert runs[0].start >= tasks.submit[task]
        progress, has_checkpoint = 0.0, False
        for s in runs:
            work = rate_integral(changes[s.machine], load, s.start, s.end)
            assert s.work == pytest.approx(work, rel=1e-9, abs=1e-7)
            assert s.overhead == (restart if has_checkpoint else 0.0)
            if s.outcome == "killed":
                progress = 0.0
            elif s.outcome == "checkpointed":
                progress += max(0.0, s.work - s.overhead)
                has_checkpoint = True
            else:
                assert progress + s.work - s.overhead == pytest.approx(
                    tasks.duration[task], rel=1e-9, abs=1e-7
                )
        assert outcome.completion[task] == runs[-1].end

    # metrics recomputed from the schedule
    makespan = max(s.end for s in segments)
    assert metrics["makespan"] == makespan
    preempted = [s for s in segments if s.outcome != "done"]
    assert metrics["n_preemptions"] == len(preempted)
    busy = sum(s.end - s.start for s in segments) + checkpoint * len(preempted)
    assert metrics["policy_cost"] == pytest.approx(busy - sum(tasks.duration), abs=1e-6)
    loss = 0.0
    for s in preempted:
        release = s.end + (checkpoint if s.outcome == "checkpointed" else 0.0)
        later = [r.start for r in by_machine[s.machine] if r.start >= release and r is not s]
        loss += (min(later) if later else makespan) - release
    assert metrics["capacity_loss"] == pytest.approx(loss, abs=1e-6)
    shares = parse(params).settings.shares
    times = sorted({0.0, *tasks.submit, *(s.start for s in segments), *(s.end for s in segments)})
    violation = 0.0
    for low, high in zip(times, times[1:]):
        mid = (low + high) / 2
        for u, p in enumerate(shares):
            active = sum(1 for s in segments if tasks.user[s.task] == u and s.start <= mid < s.end)
            demand = sum(
                1
                for j, user in enumerate(tasks.user)
                if user == u and tasks.submit[j] <= mid < outcome.completion[j]
            )
            violation += max(0, min(p, demand) - active) * (high - low)
    assert metrics["policy_violation"] == pytest.approx(violation, rel=1e-9, abs=1e-6)


@pytest.mark.parametrize("policy", ["osep", "osep_checkpoint", "fair_share"])
def test_random_schedules_are_feasible(random_scenario, policy):
    rng = np.random.default_rng(11)
    for seed in range(40):
        params = random_scenario(
            rng,
            policy=policy,
            maxt=str(rng.choice(["all", "1", "2"])),
            checkpoint_cost_s=float(rng.choice([0, 4, 25])),
            dispatch_delay_s=float(rng.choice([0, 3])),
            owner_load=float(rng.choice([0, 0, 0.5, 1.0])),
            owner_off_s=150.0,
            owner_on_s=50.0,
            priority_half_life_s=float(rng.choice([60, 3600])),
        )
        params["negotiation_offset_s"] = float(rng.choice([0, params["update_interval_s"] / 2]))
        if params["maxt"] != "all":
            params["maxt"] = int(params["maxt"])
        check_schedule(params, seed)


def test_parametric_scenario_with_everything_on_is_feasible(random_four_users):
    params = {
        **random_four_users,
        "policy": "osep_checkpoint",
        "checkpoint_cost_s": 10,
        "restart_cost_s": 5,
        "dispatch_delay_s": 2,
        "maxt": 2,
    }
    check_schedule(params, 5)


@pytest.mark.parametrize("name", sorted(REFERENCE_SCENARIOS))
def test_reference_scenarios_are_feasible(name):
    for policy in (
        {"policy": "osep", "maxt": 2},
        {"policy": "osep_checkpoint", "checkpoint_cost_s": 10, "restart_cost_s": 5},
        {"policy": "fair_share"},
    ):
        check_schedule({**REFERENCE_SCENARIOS[name], **policy}, 0)


@pytest.mark.parametrize("policy", ["osep", "osep_checkpoint", "fair_share"])
def test_skipping_quiet_epochs_changes_nothing(random_scenario, policy):
    """Epochs skipped because they cannot act: the same schedule as processing every epoch."""
    rng = np.random.default_rng(5)
    skipped = 0
    for seed in range(40):
        params = random_scenario(
            rng,
            policy=policy,
            maxt=int(rng.choice([1, 2, 100])),
            checkpoint_cost_s=float(rng.choice([0, 4, 25])),
            dispatch_delay_s=float(rng.choice([0, 3])),
            owner_load=float(rng.choice([0, 0.5])),
            priority_half_life_s=float(rng.choice([60, 3600])),
        )
        scenario = parse(params)
        tasks = build_tasks(scenario.recipe, np.random.SeedSequence(seed))
        outcomes = []
        for skip in (True, False):
            periods = machine_periods(
                np.random.SeedSequence(seed),
                scenario.settings.machines,
                scenario.owner_off,
                scenario.owner_on,
            )
            simulation = Simulation(
                scenario.settings, tasks, periods, record=True, skip_quiet_epochs=skip
            )
            outcomes.append(simulation.simulate())
        fast, slow = outcomes
        assert fast.completion == slow.completion
        assert fast.segments == slow.segments
        assert fast.busy_time == pytest.approx(slow.busy_time, rel=1e-12)
        assert fast.violation == pytest.approx(slow.violation, rel=1e-12)
        assert fast.capacity_loss == pytest.approx(slow.capacity_loss, rel=1e-12)
        skipped += slow.events - fast.events
    assert skipped > 1000
