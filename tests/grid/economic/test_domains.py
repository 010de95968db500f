"""Request forwarding over the domain graph (economic.md section 2)."""

from __future__ import annotations

from campaign.models.grid.economic.domains import reached


def test_ring_of_six_two_hops_from_machine_one_leaves_out_machine_four():
    # 0-based: home 0 asks 1 and 5 at one hop, 2 and 4 at two; 3 is three hops away.
    assert reached(0, 6, "ring", 2) == [(0, 0), (1, 1), (5, 1), (2, 2), (4, 2)]


def test_full_graph_reaches_every_domain_in_one_hop():
    assert reached(2, 4, "full", 1) == [(2, 0), (0, 1), (1, 1), (3, 1)]
    assert reached(2, 4, "full", 5) == reached(2, 4, "full", 1)


def test_zero_hops_ask_the_home_domain_only():
    assert reached(3, 4, "full", 0) == [(3, 0)]
    assert reached(3, 4, "ring", 0) == [(3, 0)]


def test_a_domain_reached_twice_answers_once():
    # Ring of two: both neighbours of machine 0 are machine 1.
    assert reached(0, 2, "ring", 3) == [(0, 0), (1, 1)]
    assert reached(0, 1, "ring", 2) == [(0, 0)]
