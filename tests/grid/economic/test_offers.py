"""Offers of one machine and the owner terms of their shifts: the worked example of
economic.md section 9, row by row, and its winner for every (MF, UF)."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from campaign.models.grid.economic import EconomicGrid, EconomicOptions
from campaign.models.grid.economic.criteria import OWNER_FUNCTIONS
from campaign.models.grid.economic.offers import machine_offers, shifts
from campaign.models.grid.economic.terms import best_fit, placement_terms

# machine, tau, N, s, under, over, left_right, lrr, utilization, MF1 ... MF6
TABLE = [
    (1, 0, (2, 3), 0, 0, 12, 0, 0, Fraction(2, 3), 20, 20, 20, 8, 20, 8),
    (1, 0, (2, 3), 2, 4, 8, 0, 0, Fraction(2, 3), 20, 20, 20, 8, 16, 12),
    (1, 0, (2, 3), 4, 8, 4, 4, 0.5, Fraction(2, 3), 12, 24, 10, 6, 8, 10),
    (1, 12, (0, 1), 12, 0, 0, 8, 1, Fraction(1, 2), 0, 16, 0, 0, 0, 0),
    (2, 3, (0, 1), 3, 0, 4, 4, 0.5, Fraction(7, 9), 8, 16, 6, 6, 8, 6),
    (2, 3, (0, 1), 4, 2, 2, 2, 0.25, Fraction(7, 9), 10.5, 14, 9, 7.5, 9, 9),
    (2, 3, (0, 1), 5, 4, 0, 0, 0, Fraction(7, 9), 12, 12, 12, 8, 8, 12),
    (2, 9, (2, 3), 9, 0, 0, 8, 1, Fraction(7, 13), 0, 16, 0, 0, 0, 0),
]


def candidate_rows(grid, size=2, estimate=4.0, now=0.0):
    """Every (machine, tau, N, s) the example's machines consider, with the terms and MFs."""
    rows = []
    for k, schedule in enumerate(grid.schedules, start=1):
        horizon = schedule.horizon(now)
        found = schedule.feasible(schedule.starts(now), estimate, size, 3)
        taus = np.array([tau for tau, _ in found])
        free = np.array([mask for _, mask in found])
        chosen, last, following = best_fit(schedule, free, size, taus, estimate, now)
        high = np.minimum(following.min(axis=1) - estimate, np.maximum(taus, horizon - estimate))
        starts = shifts(taus, high, 3)
        t = placement_terms(schedule, last, following, starts, estimate, now)
        mfs = [OWNER_FUNCTIONS[i].value(t) for i in range(1, 7)]
        for i, tau in enumerate(taus.tolist()):
            for z in range(3):
                if z and starts[i, z] == starts[i, z - 1]:
                    continue  # hi = lo: one start
                rows.append(
                    (k, tau, tuple(chosen[i].tolist()), float(starts[i, z]))
                    + (float(t.under[i, z]), float(t.over[i, z]), float(t.left_right[i, z]))
                    + (float(t.lrr[i, z]), float(t.utilization[i, z]))
                    + tuple(float(mf[i, z]) for mf in mfs)
                )
    return rows


def test_every_row_of_the_example_table(example_grid):
    rows = candidate_rows(example_grid(2, 4.0))
    assert len(rows) == len(TABLE)
    for row, expected in zip(rows, TABLE, strict=True):
        assert row[:8] == expected[:8]
        assert row[8] == pytest.approx(float(expected[8]), rel=1e-15)
        assert row[9:] == expected[9:]


def test_candidate_times_and_infeasible_ones(example_grid):
    first, second = example_grid(2, 4.0).schedules
    assert first.starts(0.0).tolist() == [0.0, 6.0, 12.0]
    assert second.starts(0.0).tolist() == [0.0, 3.0, 9.0]
    # tau = 6 on machine 1 frees only processor 3; tau = 0 on machine 2 frees none.
    assert first.free(np.array([6.0]), 4.0)[0].tolist() == [False, False, False, True]
    assert not second.free(np.array([0.0]), 4.0)[0].any()
    assert [t for t, _ in first.feasible(first.starts(0.0), 4.0, 2, 3)] == [0.0, 12.0]
    assert [t for t, _ in second.feasible(second.starts(0.0), 4.0, 2, 3)] == [3.0, 9.0]


# (machine, start, JobCost, UV) per MF (rows) and UF (columns), as printed.
WINNERS = {
    1: [(1, 0, 20, 0), (2, 9, 0, 0), (2, 9, 0, -9), (2, 9, 0, -9), (2, 3, 8, -14)],
    2: [(1, 0, 20, 0), (2, 5, 12, -12), (2, 5, 12, -17), (2, 5, 12, -29), (1, 0, 20, -20)],
    3: [(1, 0, 20, 0), (2, 9, 0, 0), (2, 9, 0, -9), (2, 9, 0, -9), (2, 3, 6, -12)],
    4: [(1, 0, 8, 0), (2, 9, 0, 0), (1, 0, 8, -8), (2, 9, 0, -9), (1, 0, 8, -8)],
    5: [(1, 0, 20, 0), (2, 9, 0, 0), (2, 9, 0, -9), (2, 9, 0, -9), (2, 3, 8, -14)],
    6: [(1, 0, 8, 0), (2, 9, 0, 0), (1, 0, 8, -8), (2, 9, 0, -9), (1, 0, 8, -8)],
}


@pytest.mark.parametrize("mf", range(1, 7))
@pytest.mark.parametrize("uf", range(1, 6))
def test_winner_for_every_owner_and_user_function(example_grid, mf, uf):
    grid = example_grid(2, 4.0, mf=mf, uf=uf)
    winner = grid.request(0, 0.0)
    ((machine, _),) = winner.parts
    assert (machine + 1, winner.start, winner.cost, winner.value) == WINNERS[mf][uf - 1]
    assert grid.offers_made == 4  # machine 1: tau 0 and 12; machine 2: tau 3 and 9


def test_mf1_uf2_tie_goes_to_the_earlier_start(example_grid):
    grid = example_grid(2, 4.0, mf=1, uf=2)
    offers = grid.offers(0, 0.0)
    zero = sorted((o.parts[0][0] + 1, o.start) for o in offers if o.value == 0)
    assert zero == [(1, 12.0), (2, 9.0)]  # both UV 0 and JobCost 0
    assert min(offers, key=lambda o: o.rank).start == 9.0


def test_mf1_uf5_candidate_tie_goes_to_the_lower_cost_shift(example_grid):
    grid = example_grid(2, 4.0, mf=1, uf=5)
    offers = {(o.parts[0][0] + 1, o.candidate): o for o in grid.offers(0, 0.0)}
    # Machine 1, tau 0: s = 0 (UV -20, cost 20) and s = 4 (UV -20, cost 12): s = 4.
    assert (offers[1, 0.0].start, offers[1, 0.0].cost, offers[1, 0.0].value) == (4.0, 12.0, -20.0)
    assert (offers[2, 3.0].start, offers[2, 3.0].value) == (3.0, -14.0)


def test_the_winner_becomes_a_reservation(example_grid):
    grid = example_grid(2, 4.0, mf=1, uf=1)
    winner = grid.request(0, 0.0)
    ((machine, processors),) = winner.parts
    assert (machine, processors.tolist(), winner.start) == (0, [2, 3], 0.0)
    first = grid.schedules[0]
    assert first.count == 3
    assert first.begin[2] == 0.0 and first.end[2] == 4.0
    assert first.hold[2].tolist() == [False, False, True, True]
    # Another such request finds {2, 3} free again from the new end 4 (until b at 8).
    assert first.starts(0.0).tolist() == [0.0, 4.0, 6.0, 12.0]
    assert [t for t, _ in first.feasible(first.starts(0.0), 4.0, 2, 3)] == [4.0, 12.0]


def test_offers_per_machine_bounds_the_candidates(example_grid):
    grid = example_grid(2, 4.0, offers_per_machine=1)
    assert [o.candidate for o in grid.offers(0, 0.0)] == [0.0, 3.0]


def test_a_machine_narrower_than_the_job_makes_no_offer(example_grid):
    grid = example_grid(5, 4.0)
    owner, user = grid.owner, grid.user
    assert machine_offers(grid.schedules[0], 0, 0, 5, 4.0, 0.0, 3, 3, owner, user) == []


def test_the_last_shift_ends_by_the_next_reservation_in_floating_point():
    """The example's machine 1 at real-valued times: {0, 1} held over [0, 0.75 b), {0, 1, 2}
    from b; a job of 2 for est. N = {2, 3} and hi = b - est, where under MF1 the window is
    idle on {0, 1} (cost 0, the best for UF2). But (b - est) + est is one rounding step past
    b for these values: the job would hold processor 2 into the next reservation. hi is the
    float before it, whose window ends by b."""
    b, est = 353.384537524109, 65.05697010420644
    assert (b - est) + est > b
    options = EconomicOptions(hops=0, offers_per_machine=1, shifts=3, mf=1, uf=2)
    grid = EconomicGrid((4,), [2], [est], [est], [0], options)
    (machine,) = grid.schedules
    machine.book(np.array([0, 1]), 0.0, 0.75 * b, 0.75 * b)
    machine.book(np.array([0, 1, 2]), b, 1.5 * b, 1.5 * b)
    winner = grid.request(0, 0.0)
    assert (winner.start, winner.cost) == (np.nextafter(b - est, 0.0), 0.0)
    assert winner.parts[0][1].tolist() == [2, 3]
    assert machine.end[2] <= machine.begin[1] == b
