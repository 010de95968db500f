"""Conservative backfilling's fast compression against the literal one on random workloads.

The literal compression (``PolicyOptions(reference=True)``) re-inserts every queued job at every
pass. The fast one skips the jobs that provably cannot move and reuses failed searches; every
such rule must give the same start to every job. The workloads here are small but hard: bursts
that build long queues, a few widths shared by many jobs, estimates far above the runtimes
(early completions free processors and reservations move up in cascades), jobs of length 0,
reservations of length 0 (which hold no processors, so a job booked later may push them back),
integer times full of ties, and jobs that overrun their estimates when they are not killed.
"""

from __future__ import annotations

import numpy as np
import pytest

from campaign.models.rigid.feasibility import check_feasible
from campaign.models.rigid.policies import PolicyOptions
from campaign.models.rigid.simulate import run_schedule
from campaign.models.rigid.workload import from_arrays


def random_workload(rng: np.random.Generator, processors: int):
    """Up to 120 jobs; the shape (bursts, widths, estimates) is drawn per workload."""
    n = int(rng.integers(10, 121))
    if rng.random() < 0.5:  # bursts: many jobs at a few instants, long queues
        submit = rng.choice(rng.integers(0, 200, int(rng.integers(1, 6))), n)
    else:
        submit = rng.integers(0, int(rng.integers(n, 6 * n)), n)
    if rng.random() < 0.5:  # a few widths shared by many jobs
        widths = rng.integers(1, processors + 1, int(rng.integers(1, 4)))
        size = rng.choice(widths, n)
    else:
        size = rng.integers(1, processors + 1, n)
    runtime = rng.integers(0, int(rng.integers(2, 60)), n)
    if rng.random() < 0.3:  # estimates from a few round values, as users give them
        estimate = rng.choice(np.array([10, 30, 60, 120]), n)
    else:
        estimate = runtime * rng.integers(1, 5, n) + rng.integers(-3, 40, n)
    estimate = np.maximum(estimate, 1)
    if rng.random() < 0.3:  # estimates of 0 (a runtime of 0 as the estimate)
        estimate[rng.random(n) < 0.1] = 0
    return from_arrays(
        np.sort(submit).astype(float), size, runtime.astype(float), estimate.astype(float)
    )


def same_as_literal(workload, processors: int, kill: bool):
    """The fast conservative schedule of ``workload``, checked feasible and starting every
    job when the literal one does."""
    fast = run_schedule(workload, processors, "conservative", "user", kill)
    literal = run_schedule(
        workload, processors, "conservative", "user", kill, options=PolicyOptions(reference=True)
    )
    check_feasible(fast)
    assert fast.start.tolist() == literal.start.tolist()
    return fast


@pytest.mark.parametrize("kill", [True, False])
def test_fast_compression_starts_every_job_as_the_literal_one(kill):
    rng = np.random.default_rng(20261126 + kill)
    waited = backfilled = 0
    for _ in range(150):
        processors = int(rng.integers(2, 33))
        workload = random_workload(rng, processors)
        fast = same_as_literal(workload, processors, kill)
        waited += int((fast.start > workload.submit).sum())
        backfilled += fast.jobs_backfilled
    # The workloads exercise the compression: most jobs wait, thousands start ahead of
    # earlier arrivals.
    assert waited > 6000
    assert backfilled > 2000


def test_fast_compression_on_machines_of_more_than_255_processors():
    # The search skips steps through the free counts as bytes, 255 standing for 255 or
    # more: wide jobs (256 processors and more) and wide machines take the plain scan.
    rng = np.random.default_rng(20261127)
    wide = 0
    for _ in range(40):
        processors = int(rng.integers(250, 601))
        workload = random_workload(rng, processors)
        same_as_literal(workload, processors, True)
        wide += int((workload.size >= 256).sum())
    assert wide > 800
