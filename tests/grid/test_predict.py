"""Runtime prediction: Example D of parallel-jobs.md section 5, and the C1/C2/U1/U2 constants."""

from __future__ import annotations

import numpy as np
import pytest

from campaign.models.grid.predict import (
    history_predictor,
    ratio_constants,
    scaled_estimates,
)
from campaign.models.grid.schedule import GridOptions, simulate_grid
from campaign.models.rigid.workload import from_arrays

# h1..h4 (newest first) are jobs 0..3; the new job is 4.
RUNTIME = [100.0, 50.0, 300.0, 80.0, 999.0]
ESTIMATE = [200.0, 100.0, 200.0, 300.0, 200.0]
SIZE = [4, 2, 8, 4, 4]
HISTORY = [3, 2, 1, 0]  # oldest first, as the loop keeps it


def predict(kind: str, match: str, search: int = 0) -> float:
    function = history_predictor(kind, 2, RUNTIME, ESTIMATE, SIZE, match, search)
    return function(4, HISTORY)


@pytest.mark.parametrize(
    ("kind", "search", "match", "expected"),
    [
        ("hrecent", 0, "none", 75.0),
        ("hrecent", 0, "estimate", 200.0),
        ("hrecent", 0, "size", 200.0),
        ("hrecent", 0, "both", 200.0),
        ("hk", 0, "none", 75.0),
        ("hk", 0, "estimate", 100.0),
        ("hk", 0, "size", 100.0),
        ("hk", 0, "both", 100.0),
        ("hk", -1, "estimate", 200.0),
        ("hk", -1, "size", 90.0),
        ("hk", -1, "both", 100.0),
        ("hk", -1, "none", 75.0),
        ("hk", 1, "size", 100.0),  # h1..h3 scanned: only h1 matches on size
        ("hk", 2, "size", 90.0),  # h4 within reach
    ],
)
def test_example_d(kind, search, match, expected):
    assert predict(kind, match, search) == pytest.approx(expected)


def test_too_short_history_falls_back_to_the_estimate():
    assert history_predictor("hrecent", 2, RUNTIME, ESTIMATE, SIZE)(4, [0]) == 200.0
    assert history_predictor("hk", 2, RUNTIME, ESTIMATE, SIZE)(4, [0]) == 100.0
    assert history_predictor("hk", 2, RUNTIME, ESTIMATE, SIZE)(4, []) == 200.0


def test_match_tolerances():
    # h2 (p' 100) matches p' 200 only with lo >= 50 %; h4 (300) only with hi >= 50 %.
    loose = history_predictor("hrecent", 2, RUNTIME, ESTIMATE, SIZE, "estimate", 0, 50, 0)
    assert loose(4, HISTORY) == 75.0
    strict = history_predictor("hrecent", 2, RUNTIME, ESTIMATE, SIZE, "estimate", 0, 49, 0)
    assert strict(4, HISTORY) == 200.0
    wide = history_predictor("hk", 4, RUNTIME, ESTIMATE, SIZE, "estimate", 0, 0, 50)
    assert wide(4, HISTORY) == pytest.approx((100 + 300 + 80) / 3)


def test_scaling_constants():
    # p/p' = 0.1, 0.3, 0.5, 0.8, 1.0 (and one job without p', ignored).
    runtime = np.array([10.0, 30.0, 20.0, 40.0, 50.0, 7.0])
    estimate = np.array([100.0, 100.0, 40.0, 50.0, 50.0, np.nan])
    constants = ratio_constants(runtime, estimate)
    assert constants["c1"] == pytest.approx(0.54)
    assert (constants["l1"], constants["r1"]) == pytest.approx((0.1, 1.0))
    # odd n: the median 0.5 belongs to the lower half
    assert (constants["l2"], constants["r2"]) == pytest.approx((0.3, 0.9))
    p = np.array([100.0, 200.0, 400.0])
    rng = np.random.default_rng(3)
    assert scaled_estimates("c1", p, constants, rng) == pytest.approx(0.54 * p)
    assert scaled_estimates("c2", p, constants, rng, c2=0.25) == pytest.approx(0.25 * p)
    u1 = scaled_estimates("u1", np.full(1000, 100.0), constants, rng)
    assert 10.0 <= u1.min() and u1.max() <= 100.0 and u1.max() - u1.min() > 80
    u2 = scaled_estimates("u2", np.full(1000, 100.0), constants, rng)
    assert 30.0 <= u2.min() and u2.max() <= 90.0 and u2.max() - u2.min() > 50


def test_predicted_estimates_inside_a_simulation():
    # One user, jobs one after another: no history, then the mean of the last completions.
    workload = from_arrays([0, 20, 60], [1, 1, 1], [10, 30, 5], estimate=[100, 100, 100])
    options = GridOptions(local_estimate="predicted", broker_estimate="user", predictor="hk")
    result = simulate_grid(workload, (2,), options)
    assert result.estimate.tolist() == [100.0, 10.0, 20.0]
    assert result.broker_estimate.tolist() == [100.0, 100.0, 100.0]
    options = GridOptions(
        local_estimate="user", broker_estimate="predicted", predictor="c2", c2=0.5
    )
    result = simulate_grid(workload, (2,), options, np.random.default_rng(0))
    assert result.broker_estimate.tolist() == [50.0, 50.0, 50.0]


def test_hrecent_with_a_match_takes_the_last_k_jobs_job_by_job():
    """Hrecent_k as parallel-jobs.md section 5 defines it: the user's last k completed jobs,
    all of which must match, else p'. One user, jobs one after another, k = 2, match size.
    Reading it as "the last k matching jobs" instead would give 20 for job 3 (jobs 2 and 0)
    and 45 for job 6 (jobs 4 and 3): Example D's size case (200, the fallback, not 90) rules
    that reading out."""
    size = [4, 2, 4, 4, 4, 2, 4]
    runtime = [10, 20, 30, 40, 50, 60, 70]
    workload = from_arrays([100 * j for j in range(7)], size, runtime, estimate=[100] * 7)
    options = GridOptions(
        local_estimate="predicted", broker_estimate="predicted", predictor="hrecent",
        history=2, match="size",
    )  # fmt: skip
    result = simulate_grid(workload, (8,), options)
    # job 0: no history; 1: one job; 2: jobs 1 (size 2), 0; 3: jobs 2, 1 (size 2);
    # 4: jobs 3 and 2, both size 4: (40 + 30) / 2; 5: jobs 4, 3 (size 4, not 2);
    # 6: jobs 5 (size 2), 4
    assert result.estimate.tolist() == [100.0, 100.0, 100.0, 100.0, 35.0, 100.0, 100.0]
    assert result.broker_estimate.tolist() == result.estimate.tolist()
    assert result.start.tolist() == [100.0 * j for j in range(7)]  # each alone on the site
