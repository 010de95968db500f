"""Greedy list scheduling visits only the jobs of L that fit, found through L's widths as
bytes (255 for 255 or more); the literal rule (``ListOptions(reference=True)``) looks at
every job of L at every pass. Both must give every job the same start, on machines narrower
and wider than 255 processors, with L reordered at every arrival or by the trigger."""

from __future__ import annotations

import numpy as np
import pytest

from campaign.models.rigid.feasibility import check_feasible
from campaign.models.rigid.policies import ListOptions
from campaign.models.rigid.simulate import run_schedule
from campaign.models.rigid.workload import from_arrays

ORDERS = ("fcfs", "psrs", "smart_ffia", "smart_nfiw")


@pytest.mark.parametrize("order", ORDERS)
@pytest.mark.parametrize("wide", [False, True])
def test_fast_greedy_equals_literal_on_random_instances(order, wide):
    rng = np.random.default_rng([ORDERS.index(order), wide, 11])
    waited = 0
    for trial in range(40):
        m = int(rng.integers(250, 520)) if wide else int(rng.choice([4, 8, 16, 64]))
        n = int(rng.integers(20, 120))
        submit = np.cumsum(rng.choice([0, 0, 1, 2, 5], size=n))
        size = rng.integers(1, m + 1, size=n)
        estimate = rng.integers(1, 30, size=n)
        runtime = np.floor(estimate * rng.uniform(0.2, 1.5, size=n))
        workload = from_arrays(submit, size, runtime, estimate)
        ratio = None if trial % 3 == 0 else 2 / 3
        fast, literal = (
            run_schedule(
                workload,
                m,
                "list_greedy",
                "user",
                trial % 2 == 0,
                options=ListOptions(reference=reference, order=order, reorder_ratio=ratio),
            )
            for reference in (False, True)
        )
        check_feasible(fast)
        assert fast.start.tolist() == literal.start.tolist(), (m, trial)
        assert fast.jobs_backfilled == literal.jobs_backfilled
        assert fast.orders_computed == literal.orders_computed
        waited += int((fast.start > workload.submit).sum())
    assert waited > 1000
