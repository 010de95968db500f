"""The one event loop, driving two sites with a placement, a predictor and the hooks."""

from __future__ import annotations

import pytest

from campaign.models.rigid.loop import replay
from campaign.models.rigid.site import Site

SUBMIT = [0.0, 0.0, 1.0, 2.0]
SIZE = [1, 1, 1, 1]
RUNTIME = [4.0, 2.0, 1.0, 1.0]


def two_sites() -> list[Site]:
    estimate = [5.0, 5.0, 5.0, 5.0]
    return [Site(1, "fcfs", SIZE, estimate, index=k) for k in range(2)]


def test_two_sites_whole_schedule_and_hooks():
    # Even jobs on site 0, odd on site 1. Site 0: job 0 over [0, 4), job 2 waits until 4.
    # Site 1: job 1 over [0, 2), job 3 arrives at 2, after job 1's completion, and starts.
    events = []
    histories = {}

    def predict(job, history):
        histories[job] = list(history)

    start, end, where = replay(
        SUBMIT,
        two_sites(),
        runtime=RUNTIME,
        place=lambda job, t: job % 2,
        user=[7, 7, 7, 7],
        predict=predict,
        started=lambda job, t: events.append(("start", job, t)),
        completed=lambda job, unit, t: events.append(("end", job, unit, t)),
    )
    assert start.tolist() == [0.0, 0.0, 4.0, 2.0]
    assert end.tolist() == [4.0, 2.0, 5.0, 3.0]
    assert where.tolist() == [0, 1, 0, 1]
    assert histories == {0: [], 1: [], 2: [], 3: [1]}  # completions come before arrivals
    assert events == [
        ("start", 0, 0.0),
        ("start", 1, 0.0),
        ("end", 1, 1, 2.0),
        ("start", 3, 2.0),
        ("end", 3, 1, 3.0),
        ("end", 0, 0, 4.0),
        ("start", 2, 4.0),
        ("end", 2, 0, 5.0),
    ]


def test_duration_asked_at_start_on_its_unit():
    asked = []

    def duration(job, unit, t):
        asked.append((job, unit, t))
        return 10.0 * (unit + 1)

    start, end, _ = replay(SUBMIT, two_sites(), duration=duration, place=lambda job, t: job % 2)
    assert asked == [(0, 0, 0.0), (1, 1, 0.0), (2, 0, 10.0), (3, 1, 20.0)]
    assert start.tolist() == [0.0, 0.0, 10.0, 20.0]
    assert end.tolist() == [10.0, 20.0, 20.0, 40.0]


def test_runtime_or_duration_exactly_one():
    with pytest.raises(ValueError, match="exactly one of runtime and duration"):
        replay(SUBMIT, two_sites())
    with pytest.raises(ValueError, match="exactly one of runtime and duration"):
        replay(SUBMIT, two_sites(), runtime=RUNTIME, duration=lambda job, unit, t: 1.0)
