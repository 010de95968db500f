"""Workload shaping (warm-up, windows, load) and the synthetic generator."""

from __future__ import annotations

import numpy as np
import pytest

from campaign.models.rigid.synthetic import lublin_feitelson
from campaign.models.rigid.workload import DAY, drop_warmup, from_arrays, scale_load, window


def jobs(submit):
    return from_arrays(submit, [1] * len(submit), [10] * len(submit), [20] * len(submit))


def test_warmup_drops_the_first_days():
    w = jobs([0, 0.5 * DAY, 1.0 * DAY, 2.5 * DAY])
    assert drop_warmup(w, 1).submit.tolist() == [1.0 * DAY, 2.5 * DAY]
    assert len(drop_warmup(w, 0)) == 4


def test_window_by_jobs_from_the_start():
    w = jobs([0, 1, 2, 3, 4])
    assert window(w, jobs=3).submit.tolist() == [0, 1, 2]


def test_a_window_of_more_jobs_than_are_left_is_refused():
    """5 jobs left and 6 asked: 5 would run under the name of 6, and a random window would
    replay the same 5 in every replicate; a cap beside ``days`` stays a cap."""
    w = jobs([0, 1, 2, 3, 4])
    message = (
        "parameter 'jobs' 6: only 5 jobs are left to simulate (after cleaning and the "
        "warm-up, offsets or skips); ask for at most that, or leave 'jobs' out to simulate "
        "them all"
    )
    for start in ("start", "random"):
        with pytest.raises(ValueError) as refused:
            window(w, jobs=6, start=start, rng=np.random.default_rng(1))
        assert str(refused.value) == message
    assert len(window(w, jobs=5)) == 5
    assert len(window(w, jobs=6, days=1)) == 5  # at most 6 in a day


def test_window_by_days():
    w = jobs([0, 0.4 * DAY, 0.9 * DAY, 1.2 * DAY, 3 * DAY])
    assert window(w, days=1).submit.tolist() == [0, 0.4 * DAY, 0.9 * DAY]


def test_random_window_comes_from_the_stream_and_stays_whole():
    w = jobs(list(range(100)))
    starts = set()
    for seed in range(20):
        part = window(w, jobs=10, start="random", rng=np.random.default_rng(seed))
        assert len(part) == 10
        assert np.all(np.diff(part.submit) == 1)
        starts.add(part.submit[0])
    assert len(starts) > 5
    again = window(w, jobs=10, start="random", rng=np.random.default_rng(3))
    assert again.submit[0] == window(w, 10, None, "random", np.random.default_rng(3)).submit[0]


def test_load_divides_inter_arrival_times():
    w = jobs([100, 110, 130])
    assert scale_load(w, 2).submit.tolist() == [100, 105, 115]
    assert scale_load(w, 0.5).submit.tolist() == [100, 120, 160]
    with pytest.raises(ValueError, match="'load' must be > 0"):
        scale_load(w, 0)


def test_rebased_starts_at_zero():
    assert jobs([5, 7]).rebased().submit.tolist() == [0, 2]


def test_synthetic_workload_is_deterministic_and_plausible():
    a = lublin_feitelson(2000, 128, np.random.default_rng(1), np.random.default_rng(2))
    b = lublin_feitelson(2000, 128, np.random.default_rng(1), np.random.default_rng(2))
    c = lublin_feitelson(2000, 128, np.random.default_rng(9), np.random.default_rng(2))
    np.testing.assert_array_equal(a.submit, b.submit)
    np.testing.assert_array_equal(a.estimate, b.estimate)
    assert not np.array_equal(a.submit, c.submit)
    assert np.all(np.diff(a.submit) >= 0)
    assert a.size.min() >= 1 and a.size.max() <= 128
    assert np.all(a.runtime >= 1) and np.all(a.runtime <= np.exp(12))
    assert np.all(a.estimate >= a.runtime)
    # About a quarter serial jobs and mostly powers of two, as in the model.
    assert 0.15 < np.mean(a.size == 1) < 0.35
    powers = (a.size & (a.size - 1)) == 0
    assert np.mean(powers) > 0.7
    # Interactive and batch jobs arrive minutes apart on average.
    assert 60 < np.mean(np.diff(a.submit)) < 3600


def test_synthetic_sizes_follow_the_machine():
    w = lublin_feitelson(1000, 16, np.random.default_rng(1))
    assert w.size.max() <= 16 and w.processors == 16
