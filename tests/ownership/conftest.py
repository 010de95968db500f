"""Fixtures of the ownership tests: the worked example's parameters and schedule extraction."""

from __future__ import annotations

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


def runs_of(params: dict, seed: int = 0) -> dict[int, list[tuple[float, float, str]]]:
    """Per task id, its runs as (start, end, outcome) in time order."""
    _, outcome = simulate(params, seed, record=True)
    runs: dict[int, list[tuple[float, float, str]]] = {}
    for segment in sorted(outcome.segments, key=lambda s: (s.start, s.task)):
        runs.setdefault(segment.task, []).append((segment.start, segment.end, segment.outcome))
    return runs


def satisfaction(duration: float, submit: float, completion: float) -> float:
    return 100.0 * duration / (completion - submit)


@pytest.fixture
def example() -> dict:
    return dict(EXAMPLE)


@pytest.fixture
def schedule():
    return runs_of


@pytest.fixture
def su():
    return satisfaction
