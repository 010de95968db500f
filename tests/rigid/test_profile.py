"""The availability profile conservative backfilling books reservations into, by hand."""

from __future__ import annotations

import numpy as np

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


def test_first_fit_before_a_bound():
    profile = Profile(12.0, 2)
    profile.add(15.0, 100.0, 2)
    assert profile.first_fit_before(3, 5.0, 12.0, 20.0, 30.0) == 15.0
    assert profile.first_fit_before(3, 5.0, 12.0, 15.0, 30.0) is None
    assert profile.first_fit_before(2, 5.0, 13.0, 20.0, 30.0) == 12.0  # scan from 13's step


def test_reset_from_running_jobs():
    profile = Profile(0.0, 8)
    # free 2 now (t = 5); jobs 0, 1, 2 of sizes 3, 1, 2 planned to end at 4 (overran), 9, 9.
    profile.reset(5.0, 2, [(4.0, 0), (9.0, 1), (9.0, 2)], [3, 1, 2])
    assert (profile.times, profile.free) == ([5.0, 9.0], [5, 8])


def test_move_by_hand():
    profile = Profile(0.0, 6)
    profile.add(0.0, 10.0, -3)  # [0, 10): 3 free
    profile.add(20.0, 10.0, -2)  # a booking of 2 over [20, 30)
    # Up to 5: it now holds [5, 15), freeing [20, 30), where 6 are free up to the horizon.
    assert profile.move(5.0, 20.0, 10.0, 2, 100.0) == 6
    assert (profile.times, profile.free) == ([0.0, 5.0, 10.0, 15.0], [3, 1, 4, 6])
    # Overlapping: from 5 up to 0 it holds [0, 10), freeing [10, 15): 6 free there.
    assert profile.move(0.0, 5.0, 10.0, 2, 100.0) == 6
    assert (profile.times, profile.free) == ([0.0, 10.0], [1, 6])
    # A booking of 1 over [10, 40) moved up to 0 frees [30, 40); with a horizon before
    # it, only the count at its start (5) counts, not the 6 after 80.
    profile.add(10.0, 30.0, -1)
    profile.add(30.0, 50.0, -1)  # [0, 10) 1, [10, 30) 5, [30, 40) 4, [40, 80) 5, then 6
    assert profile.move(0.0, 10.0, 30.0, 1, 20.0) == 5
    assert (profile.times, profile.free) == ([0.0, 10.0, 80.0], [0, 5, 6])
    assert profile.move(0.0, 5.0, 0.0, 2, 100.0) is None  # no duration: nothing moves
    assert (profile.times, profile.free) == ([0.0, 10.0, 80.0], [0, 5, 6])


def test_move_equals_two_bookings_on_random_profiles():
    rng = np.random.default_rng(3)
    for _ in range(300):
        profile = Profile(0.0, 16)
        bookings = []
        for _ in range(int(rng.integers(1, 12))):
            begin, duration = int(rng.integers(0, 40)), int(rng.integers(1, 20))
            width = int(rng.integers(1, 6))
            profile.add(float(begin), float(duration), -width)
            bookings.append((begin, duration, width))
        old, duration, width = bookings[int(rng.integers(len(bookings)))]
        if old == 0:
            continue
        begin = float(rng.integers(0, old))
        horizon = float(rng.integers(0, 80))
        other = Profile(0.0, 16)
        other.times, other.free = list(profile.times), list(profile.free)
        most = profile.move(begin, float(old), float(duration), width, horizon)
        other.add(float(old), float(duration), width)
        other.add(begin, float(duration), -width)
        assert (profile.times, profile.free) == (other.times, other.free)
        freed = max(begin + duration, old)
        assert most == other.most_free(freed, min(old + duration, horizon))
        # The profile stays canonical: no two neighbouring steps hold the same count.
        assert all(x != y for x, y in zip(profile.free, profile.free[1:]))


def test_fit_move_equals_the_search_then_the_move_on_random_profiles():
    rng = np.random.default_rng(4)
    found = 0
    for _ in range(400):
        profile = Profile(0.0, 16)
        bookings = []
        for _ in range(int(rng.integers(1, 12))):
            begin, duration = int(rng.integers(0, 40)), int(rng.integers(0, 20))
            width = int(rng.integers(1, 6))
            profile.add(float(begin), float(duration), -width)
            bookings.append((begin, duration, width))
        old, duration, width = bookings[int(rng.integers(len(bookings)))]
        after = float(rng.integers(0, old + 1))
        before = float(rng.integers(0, old + 1))
        horizon = float(rng.integers(0, 80))
        other = Profile(0.0, 16)
        other.times, other.free = list(profile.times), list(profile.free)
        result = profile.fit_move(width, float(duration), after, before, float(old), horizon)
        begin = other.first_fit_before(width, float(duration), after, before, float(old))
        if begin is None:
            assert result is None
        else:
            found += 1
            most = other.move(begin, float(old), float(duration), width, horizon)
            assert result == (begin, most)
        assert (profile.times, profile.free) == (other.times, other.free)
    assert found > 100


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
