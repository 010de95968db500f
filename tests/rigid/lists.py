"""What the tests of the fast list schedulers share: the list orders, one schedule by the fast
rule and one by the literal rule (``ListOptions(reference=True)``), random workloads."""

from __future__ import annotations

import numpy as np

from campaign.models.rigid.policies import ListOptions
from campaign.models.rigid.simulate import run_schedule
from campaign.models.rigid.workload import Workload, from_arrays

ORDERS = ("fcfs", "psrs", "smart_ffia", "smart_nfiw")


def fast_and_literal(scheduler: str, workload: Workload, processors: int, kill: bool, **options):
    """The schedules of ``workload`` by the fast and by the literal rule of ``scheduler``."""
    return [
        run_schedule(
            workload,
            processors,
            scheduler,
            "user",
            kill,
            options=ListOptions(reference=reference, **options),
        )
        for reference in (False, True)
    ]


def bursty_workload(rng: np.random.Generator, processors: int, jobs: int) -> Workload:
    """``jobs`` jobs arriving in bursts (often several at one time), of any width up to
    ``processors``, running from a fifth to one and a half times their estimate."""
    submit = np.cumsum(rng.choice([0, 0, 1, 2, 5], size=jobs))
    size = rng.integers(1, processors + 1, size=jobs)
    estimate = rng.integers(1, 30, size=jobs)
    runtime = np.floor(estimate * rng.uniform(0.2, 1.5, size=jobs))
    return from_arrays(submit, size, runtime, estimate)


def assert_same_schedule(fast, literal, *context) -> None:
    """The fast rule started every job when the literal one did, backfilled as many and
    computed the order as often."""
    assert fast.start.tolist() == literal.start.tolist(), context
    assert fast.jobs_backfilled == literal.jobs_backfilled, context
    assert fast.orders_computed == literal.orders_computed, context
