"""Owner-load periods: stationary, with the documented means, one stream per machine."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from campaign.models.ownership.availability import machine_periods, owner_periods


def busy_fraction(periods, horizon: float) -> float:
    changes = list(itertools.takewhile(lambda c: c[0] < horizon, periods))
    busy = 0.0
    for (time, state), (until, _) in zip(changes, changes[1:] + [(horizon, None)]):
        if state:
            busy += until - time
    return busy / horizon


def test_periods_alternate_with_the_documented_means():
    changes = list(itertools.islice(owner_periods(np.random.SeedSequence(1), 300.0, 100.0), 4001))
    assert changes[0][0] == 0.0
    states = [busy for _, busy in changes]
    assert all(a != b for a, b in zip(states, states[1:]))
    lengths = np.diff([time for time, _ in changes])
    busy_lengths = [length for length, (_, busy) in zip(lengths, changes) if busy]
    free_lengths = [length for length, (_, busy) in zip(lengths, changes) if not busy]
    assert np.mean(busy_lengths) == pytest.approx(100.0, rel=0.1)
    assert np.mean(free_lengths) == pytest.approx(300.0, rel=0.1)


def test_machines_start_in_the_stationary_state():
    starts = [next(p)[1] for p in machine_periods(np.random.SeedSequence(2), 4000, 300.0, 100.0)]
    assert np.mean(starts) == pytest.approx(0.25, abs=0.03)
    fractions = [
        busy_fraction(p, 1000.0) for p in machine_periods(np.random.SeedSequence(3), 500, 300, 100)
    ]
    assert np.mean(fractions) == pytest.approx(0.25, abs=0.03)


def test_one_machine_periods_do_not_depend_on_the_number_of_machines():
    few = machine_periods(np.random.SeedSequence(4), 2, 300.0, 100.0)
    many = machine_periods(np.random.SeedSequence(4), 50, 300.0, 100.0)
    for a, b in zip(few, many):
        assert list(itertools.islice(a, 20)) == list(itertools.islice(b, 20))
