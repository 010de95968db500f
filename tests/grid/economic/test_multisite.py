"""Multi-site offers (economic.md section 6): the two examples of section 9 and the part rules."""

from __future__ import annotations

import pytest

from campaign.models.grid.economic.multisite import split


def parts_of(offer):
    return [(k + 1, processors.tolist()) for k, processors in offer.parts]


def test_six_processors_over_two_machines_of_four(example_grid):
    grid = example_grid(6, 4.0, mf=1, uf=1)
    offers = grid.offers(0, 0.0)
    assert len(offers) == 1  # only s = 12 frees 6 processors (K = 3)
    (offer,) = offers
    assert parts_of(offer) == [(1, [0, 1, 2, 3]), (2, [2, 3])]
    assert (offer.start, offer.cost, offer.value) == (12.0, 28.0, -12.0)
    assert grid.request(0, 0.0).start == 12.0


def test_three_processors_with_a_part_cap_of_two(example_grid):
    grid = example_grid(3, 4.0, mf=1, uf=1, max_multisite=2)
    offers = grid.offers(0, 0.0)
    assert [(o.start, o.cost) for o in offers] == [(3.0, 2.5), (6.0, 3.0), (9.0, 4.0)]
    assert [parts_of(o) for o in offers] == [
        [(1, [2, 3]), (2, [0])],
        [(2, [0, 1]), (1, [3])],
        [(2, [2, 3]), (1, [3])],
    ]
    assert grid.request(0, 0.0).start == 3.0


@pytest.mark.parametrize("uf", [1, 2])
def test_three_processors_uf1_and_uf2_take_the_first(example_grid, uf):
    grid = example_grid(3, 4.0, mf=1, uf=uf, max_multisite=2)
    assert grid.request(0, 0.0).start == 3.0


def test_multisite_off_leaves_a_too_wide_job_without_offers(example_grid):
    grid = example_grid(6, 4.0, multisite="off")
    assert grid.offers(0, 0.0) == []
    assert not grid.placeable(6, 0)
    assert example_grid(6, 4.0).placeable(6, 0)


def test_always_adds_multisite_offers_only_where_two_parts_are_needed(example_grid):
    required = example_grid(2, 4.0).offers(0, 0.0)
    always = example_grid(2, 4.0, multisite="always").offers(0, 0.0)
    assert len(required) == 4 and all(len(o.parts) == 1 for o in required)
    # At every candidate one machine's free processors hold both: one part, not an offer.
    assert [(o.start, o.cost) for o in always] == [(o.start, o.cost) for o in required]


def test_a_part_cap_of_one_splits_every_job_of_two(example_grid):
    grid = example_grid(2, 4.0, max_multisite=1)
    offers = grid.offers(0, 0.0)
    # s = 0: only machine 1 has a free processor. Ties on free processors: lower machine first.
    assert [(o.start, parts_of(o)) for o in offers] == [
        (3.0, [(1, [2]), (2, [0])]),
        (6.0, [(1, [3]), (2, [0])]),
        (9.0, [(1, [3]), (2, [2])]),
    ]


def test_split_takes_machines_with_most_free_first_and_respects_min_part():
    assert split([(0, 4), (1, 4)], 6, 1, None, None) == [(0, 4), (1, 2)]
    assert split([(0, 2), (1, 3)], 5, 1, None, None) == [(1, 3), (0, 2)]
    # A remainder below MinMS shrinks the part: 5 from (4, 4) with MinMS 2 -> 3 + 2.
    assert split([(0, 4), (1, 4)], 5, 2, None, None) == [(0, 3), (1, 2)]
    # Shrinking below MinMS skips the machine: 4 from (3, 3, 3) with MinMS 3 -> none.
    assert split([(0, 3), (1, 3), (2, 3)], 4, 3, None, None) is None
    # One part is not a multi-site placement; a cap of parts; MaxMS caps each part.
    assert split([(0, 8), (1, 4)], 6, 1, None, None) is None
    assert split([(0, 2), (1, 2), (2, 2)], 6, 1, None, 2) is None
    assert split([(0, 8), (1, 4)], 6, 1, 3, None) == [(0, 3), (1, 3)]
    assert split([(0, 0), (1, 4), (2, 4)], 8, 1, None, None) == [(1, 4), (2, 4)]
