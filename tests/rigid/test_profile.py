"""The availability profile conservative backfilling books reservations into, by hand."""

from __future__ import annotations

import numpy as np

from campaign.models.rigid import book_kernel
from campaign.models.rigid.profile import Profile


def test_bookings_and_earliest_starts():
    profile = Profile(0.0, 4)
    profile.add(0.0, 10.0, -3)  # 3 processors busy over [0, 10)
    assert (profile.times, profile.free) == ([0.0, 10.0], [1, 4])
    assert profile.earliest(2, 5.0) == 10.0
    assert profile.earliest(1, 5.0) == 0.0
    profile.add(10.0, 5.0, -4)  # all busy over [10, 15)
    assert (profile.times, profile.free) == ([0.0, 10.0, 15.0], [1, 0, 4])
    assert profile.earliest(1, 20.0) == 15.0  # [0, 20) crosses the full step at 10
    assert profile.earliest(1, 10.0) == 0.0  # [0, 10) ends where that step begins
    assert profile.earliest(4, 0.0) == 15.0
    assert profile.most_free(0.0, 12.0) == 1
    assert profile.most_free(5.0, 20.0) == 4


def test_prune_clips_later_bookings_and_merges_equal_steps():
    profile = Profile(0.0, 4)
    profile.add(0.0, 10.0, -3)
    profile.add(10.0, 5.0, -4)
    profile.prune(12.0)
    assert (profile.times, profile.free) == ([12.0, 15.0], [0, 4])
    profile.add(5.0, 10.0, 2)  # [5, 15) clipped to [12, 15)
    assert (profile.times, profile.free) == ([12.0, 15.0], [2, 4])
    profile.add(12.0, 3.0, 2)  # now equal to the last step: merged
    assert (profile.times, profile.free) == ([12.0], [4])


def test_reset_from_running_jobs():
    profile = Profile(0.0, 8)
    # free 2 now (t = 5); jobs 0, 1, 2 of sizes 3, 1, 2 planned to end at 4 (overran), 9, 9.
    profile.reset(5.0, 2, [(4.0, 0), (9.0, 1), (9.0, 2)], [3, 1, 2])
    assert (profile.times, profile.free) == ([5.0, 9.0], [5, 8])


def test_book_is_the_earliest_start_then_its_booking():
    profile = Profile(0.0, 4)
    profile.add(0.0, 10.0, -3)  # 1 free over [0, 10)
    profile.add(10.0, 5.0, -4)  # none over [10, 15)
    assert profile.book(1, 20.0) == 15.0  # [0, 20) crosses the full step at 10
    assert (profile.times, profile.free) == ([0.0, 10.0, 15.0, 35.0], [1, 0, 3, 4])
    assert profile.book(1, 10.0) == 0.0  # fits the free processor before 10 exactly
    assert (profile.times, profile.free) == ([0.0, 15.0, 35.0], [0, 3, 4])
    assert profile.book(2, 0.0) == 15.0  # no duration: the first instant with 2 free
    assert (profile.times, profile.free) == ([0.0, 15.0, 35.0], [0, 3, 4])


def test_book_equals_earliest_then_add_on_random_profiles():
    rng = np.random.default_rng(5)
    for _ in range(300):
        profile = Profile(0.0, 16)
        for _ in range(int(rng.integers(1, 12))):
            begin, duration = int(rng.integers(0, 40)), int(rng.integers(1, 20))
            profile.add(float(begin), float(duration), -int(rng.integers(1, 6)))
        width, duration = int(rng.integers(1, 17)), float(rng.integers(0, 20))
        other = Profile(0.0, 16)
        other.times, other.free = list(profile.times), list(profile.free)
        begin = other.earliest(width, duration)
        other.add(begin, duration, -width)
        assert profile.book(width, duration) == begin
        assert (profile.times, profile.free) == (other.times, other.free)


def test_processors_given_back_by_an_early_end_stop_at_the_planned_end():
    """A job of 34 started at 876.488... with estimate 44,581.15... ends early, at t after
    9,175.48... s; its processors come back over [t, planned) and the profile is whole again.
    t + (planned - t) lands one rounding step short of planned here: a span made from that
    duration left 34 processors busy over an instant no job held."""
    begin, estimate, runtime = 876.4881836245542, 44581.15082452865, 9175.48107702439
    planned, t = begin + estimate, begin + runtime
    assert t + (planned - t) != planned  # why the span takes its end, not a duration
    profile = Profile(0.0, 256)
    profile.add(begin, estimate, -34)
    profile.prune(t)
    profile.add_span(t, planned, 34)
    assert (profile.times, profile.free) == ([t], [256])
    times, free = np.zeros(8), np.zeros(8, np.int64)
    times[0], free[0] = 0.0, 256
    n = book_kernel.add(times, free, 1, begin, estimate, -34)
    n = book_kernel.prune(times, free, n, t)
    n = book_kernel.add_span(times, free, n, t, planned, 34)
    assert (times[:n].tolist(), free[:n].tolist()) == ([t], [256])
