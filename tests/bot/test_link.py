"""The shared link: equal sharing, recomputed at each start, end, cancel and capacity change."""

from __future__ import annotations

import math

import pytest

from campaign.models.bot.link import SharedLink


def drain(link: SharedLink) -> list[tuple[float, str]]:
    ends = []
    while (t := link.next_time()) < math.inf:
        ends += [(t, token) for token in link.pop_finished(t)]
    return ends


def test_alone_a_transfer_gets_the_whole_link():
    link = SharedLink(100.0)
    link.start(0.0, 250.0, "a")
    assert drain(link) == [(2.5, "a")]


def test_rates_are_recomputed_at_starts_and_ends():
    link = SharedLink(100.0)
    link.start(0.0, 100.0, "a")  # alone until 0.5 (50 bytes), then 50 B/s
    assert link.next_time() == pytest.approx(1.0)
    link.start(0.5, 100.0, "b")
    # a: 50 left at 50 B/s -> 1.5; b then has 50 left alone at 100 B/s -> 2.0
    assert drain(link) == [(pytest.approx(1.5), "a"), (pytest.approx(2.0), "b")]


def test_equal_transfers_end_together():
    link = SharedLink(125_000.0)
    for token in "abc":
        link.start(0.0, 300_000.0 if token != "b" else 200_000.0, token)
    ends = drain(link)
    assert [token for _, token in ends] == ["b", "a", "c"]
    assert [t for t, _ in ends] == pytest.approx([4.8, 6.4, 6.4])
    assert ends[1][0] == ends[2][0]


def test_cancel_returns_bytes_moved_and_speeds_up_the_rest():
    link = SharedLink(100.0)
    link.start(0.0, 100.0, "a")
    b = link.start(0.0, 100.0, "b")
    assert link.cancel(0.4, b) == pytest.approx(20.0)
    assert drain(link) == [(pytest.approx(1.2), "a")]  # 80 left at 100 B/s


def test_availability_scales_the_capacity():
    link = SharedLink(100.0)
    link.set_availability(0.0, 0.5)
    link.start(0.0, 100.0, "a")
    link.set_availability(1.0, 1.0)  # 50 bytes moved, 50 left at full speed
    assert drain(link) == [(pytest.approx(1.5), "a")]
