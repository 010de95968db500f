"""Greedy list scheduling visits only the jobs of L that fit, found through L's widths as
bytes (255 for 255 or more); the literal rule (``ListOptions(reference=True)``) looks at
every job of L at every pass. Both must give every job the same start, on machines narrower
and wider than 255 processors, with L reordered at every arrival or by the trigger."""

from __future__ import annotations

import numpy as np
import pytest

from campaign.models.rigid.feasibility import check_feasible
from tests.rigid.lists import ORDERS, assert_same_schedule, bursty_workload, fast_and_literal


@pytest.mark.parametrize("order", ORDERS)
@pytest.mark.parametrize("wide", [False, True])
def test_fast_greedy_equals_literal_on_random_instances(order, wide):
    rng = np.random.default_rng([ORDERS.index(order), wide, 11])
    waited = 0
    for trial in range(40):
        m = int(rng.integers(250, 520)) if wide else int(rng.choice([4, 8, 16, 64]))
        n = int(rng.integers(20, 120))
        workload = bursty_workload(rng, m, n)
        ratio = None if trial % 3 == 0 else 2 / 3
        fast, literal = fast_and_literal(
            "list_greedy", workload, m, trial % 2 == 0, order=order, reorder_ratio=ratio
        )
        check_feasible(fast)
        assert_same_schedule(fast, literal, m, trial)
        waited += int((fast.start > workload.submit).sum())
    assert waited > 1000
