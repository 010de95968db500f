"""Water-filling feasible share and the Fair-Share arithmetic of sections 1 and 5."""

from __future__ import annotations

import math

import numpy as np
import pytest

from campaign.models.ownership.shares import (
    fair_share_order,
    feasible_share,
    update_priorities,
)


@pytest.mark.parametrize(
    ("demand", "expected"),
    [((10, 0), [10, 0]), ((10, 10), [5, 5])],
)
def test_water_filling_examples_of_the_document(demand, expected):
    assert feasible_share((5, 5), demand, 10) == expected


def test_water_filling_hands_leftovers_in_proportion_to_shares():
    assert feasible_share((3, 1, 0), (10, 10, 0), 4) == [3, 1, 0]
    assert feasible_share((3, 1, 2), (10, 10, 0), 6) == [4.5, 1.5, 0]


def test_water_filling_caps_at_demand_and_repeats():
    # leftover 4 in proportion 2:2 would give u1 2 more, but it wants only 1 more
    assert feasible_share((2, 2, 4), (3, 10, 0), 8) == [3, 5, 0]


def test_water_filling_equal_split_among_non_owners():
    assert feasible_share((4, 0, 0), (1, 5, 5), 4) == [1, 1.5, 1.5]


def test_water_filling_invariants_on_random_cases():
    rng = np.random.default_rng(1)
    for _ in range(300):
        m = int(rng.integers(1, 6))
        n = int(rng.integers(1, 20))
        shares = rng.multinomial(n, np.ones(m) / m).tolist()
        demand = rng.integers(0, 15, m).tolist()
        fes = feasible_share(shares, demand, n)
        assert sum(fes) == pytest.approx(min(n, sum(demand)))
        for p, d, x in zip(shares, demand, fes):
            assert min(p, d) - 1e-12 <= x <= d + 1e-12


def test_fair_share_negotiation_example():
    order = fair_share_order(6, (10, 10), (1.0, 2.0))
    assert (order.count(0), order.count(1)) == (4, 2)


def test_fair_share_gives_one_to_the_best_when_floors_give_nothing():
    # I = 1: floor(1 * 1/1.5) = 0 and floor(1 * 0.5/1.5) = 0, so the lower e gets it
    assert fair_share_order(1, (5, 5), (1.0, 2.0)) == [0]
    assert fair_share_order(1, (5, 5), (2.0, 2.0)) == [0]  # tie: lowest index


def test_fair_share_respects_ready_tasks_and_rounds():
    # u1 has one ready task: gets 1; the rest goes to u2 over further rounds
    order = fair_share_order(6, (1, 10), (1.0, 1.0))
    assert (order.count(0), order.count(1)) == (1, 5)
    assert fair_share_order(3, (0, 0), (1.0, 1.0)) == []
    assert len(fair_share_order(8, (2, 3), (0.5, 0.7))) == 5


def test_fair_share_infinite_effective_priority_gets_only_leftovers():
    assert fair_share_order(3, (5, 5), (math.inf, 1.0)) == [1, 1, 1]
    assert fair_share_order(2, (5, 0), (math.inf, 1.0)) == [0, 0]


def test_priority_update_example():
    assert update_priorities([0.5], [10], 600.0, 600.0) == [5.25]


def test_priority_never_drops_below_one_half_and_decays_by_half_lives():
    assert update_priorities([0.5, 4.5, 4.5], [0, 0, 2], 10.0, 10.0) == [0.5, 2.25, 3.25]
    assert update_priorities([4.5], [0], 20.0, 10.0) == [pytest.approx(1.125)]
