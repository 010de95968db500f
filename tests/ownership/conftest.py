"""Fixtures of the ownership tests: the worked example's parameters and schedule extraction."""

from __future__ import annotations

import numpy as np
import pytest

from campaign.models.ownership import simulate

# Section 7 of the model document: n = 10, p = (5, 5); u1 submits 10 tasks of 300 s at 0,
# u2 submits 10 tasks of 300 s at 60; T = 20, offset 10, dispatch 0, no owner load.
EXAMPLE = {
    "machines": 10,
    "shares": [5, 5],
    "tasks_per_user": 10,
    "task_duration_s": 300,
    "submit_s": [0, 60],
    "update_interval_s": 20,
    "negotiation_offset_s": 10,
    "dispatch_delay_s": 0,
}

# Cases 9-10 with unequal shares and mixed durations, every source of randomness switched on.
RANDOM_FOUR_USERS = {
    "machines": 20,
    "shares": [6, 8, 3, 3],
    "tasks_per_user": 15,
    "task_duration_s": [[600, 1800, 3600]] * 4,
    "submit_s": [0, 100, 200, 210],
    "duration_jitter": 0.2,
    "interarrival_s": 60,
    "owner_load": 0.5,
}


def runs_of(params: dict, seed: int = 0) -> dict[int, list[tuple[float, float, str]]]:
    """Per task id, its runs as (start, end, outcome) in time order."""
    _, outcome = simulate(params, seed, record=True)
    runs: dict[int, list[tuple[float, float, str]]] = {}
    for segment in sorted(outcome.segments, key=lambda s: (s.start, s.task)):
        runs.setdefault(segment.task, []).append((segment.start, segment.end, segment.outcome))
    return runs


def five_by_five(runs: dict[int, list[tuple[float, float, str]]]) -> list[list]:
    """The runs of the example's 20 tasks five by five (u1's first five and its last five,
    then u2's): each group's runs, its five tasks having run alike."""
    groups = []
    for first in range(0, 20, 5):
        group = [runs[j] for j in range(first, first + 5)]
        assert group == [group[0]] * 5, group
        groups.append(group[0])
    return groups


def satisfaction(duration: float, submit: float, completion: float) -> float:
    return 100.0 * duration / (completion - submit)


@pytest.fixture
def example() -> dict:
    return dict(EXAMPLE)


@pytest.fixture
def random_four_users() -> dict:
    return dict(RANDOM_FOUR_USERS)


@pytest.fixture
def schedule():
    return runs_of


@pytest.fixture
def fives():
    return five_by_five


@pytest.fixture
def su():
    return satisfaction


def make_random_scenario(rng: np.random.Generator, **overrides) -> dict:
    """A small random scenario with an explicit task list; `overrides` fix parameters."""
    machines = int(rng.integers(2, 13))
    users = int(rng.integers(2, 5))
    shares = rng.multinomial(machines, rng.dirichlet(np.ones(users))).tolist()
    count = int(rng.integers(1, 50))
    tasks = []
    for _ in range(count):
        user = int(rng.integers(1, users + 1))
        submit = float(rng.choice([rng.integers(0, 30) * 20.0, rng.uniform(0, 600)]))
        duration = float(rng.choice([rng.integers(1, 40) * 10.0, rng.uniform(1, 400)]))
        tasks.append([user, submit, duration])
    params = {
        "machines": machines,
        "shares": shares,
        "tasks": tasks,
        "policy": str(rng.choice(["osep", "osep_checkpoint"])),
        "update_interval_s": float(rng.choice([10, 20, 60])),
        "restart_cost_s": float(rng.choice([0, 3])),
        "claim_reuse": bool(rng.integers(2)),
    }
    params.update(overrides)
    return params


@pytest.fixture
def random_scenario():
    return make_random_scenario
