"""EASY over a list order keeps the blocked head's shadow time between passes in which no job
ended and L was not reordered, and then scans only the newcomers; the literal rule
(``ListOptions(reference=True)``) scans all of L at every pass. Both must give every job the same
start, on random instances and on real trace slices with long queues."""

from __future__ import annotations

import numpy as np
import pytest

from campaign.models.rigid.feasibility import check_feasible
from campaign.models.rigid.simulate import run_schedule
from campaign.models.rigid.swf import read_swf
from campaign.models.rigid.workload import from_trace, scale_load
from tests.conftest import DATA
from tests.rigid.lists import ORDERS, assert_same_schedule, bursty_workload, fast_and_literal


def both(workload, processors, kill, **options):
    """The schedule with the memo and the literal one."""
    return fast_and_literal("list_easy", workload, processors, kill, **options)


@pytest.mark.parametrize("order", ORDERS)
@pytest.mark.parametrize("weight", ["unit", "work"])
def test_memo_equals_literal_on_random_instances(order, weight):
    """Arrivals in bursts between completions: many passes where only newcomers can start;
    jobs may overrun their estimate (not killed)."""
    rng = np.random.default_rng([ORDERS.index(order), weight == "work", 7])
    for trial in range(60):
        m = int(rng.choice([4, 6, 8, 16]))
        n = int(rng.integers(10, 60))
        workload = bursty_workload(rng, m, n)
        ratio = None if trial % 3 == 0 else 2 / 3
        memo, literal = both(workload, m, False, order=order, weight=weight, reorder_ratio=ratio)
        check_feasible(memo)
        assert_same_schedule(memo, literal, m, trial)


@pytest.mark.parametrize("order", ORDERS)
@pytest.mark.parametrize("kill", [True, False])
@pytest.mark.parametrize("trace", ["HPC2N-2002-2.1-cln.swf.gz", "KTH-SP2-1996-2.1-cln.swf.gz"])
def test_memo_equals_literal_on_trace_slices_at_load_2(order, kill, trace):
    workload, _ = from_trace(read_swf(DATA / trace))
    workload = scale_load(workload, 2.0)
    memo, literal = both(workload, workload.processors, kill, order=order)
    check_feasible(memo)
    assert len(memo.start) == 3000
    assert memo.jobs_backfilled > 100
    assert_same_schedule(memo, literal)


@pytest.mark.parametrize("order", ORDERS)
def test_fast_equals_literal_on_a_saturated_randomized_queue(order):
    """Hundreds of waiting jobs (the candidates then picked by numpy), 256 processors (widths
    of 255 and more stand for 255): the same starts as the literal rule, and plain EASY
    the same as the FCFS order's."""
    from numpy.random import SeedSequence

    from campaign.models.jobs import build_workload, parse

    params = parse({"workload": "randomized", "jobs": 1500})
    workload, processors, _ = build_workload(params, SeedSequence(5).spawn(5))
    fast, literal = both(workload, processors, True, order=order)
    assert (fast.start - workload.submit).max() > 0
    assert fast.start.tolist() == literal.start.tolist()
    assert fast.jobs_backfilled == literal.jobs_backfilled > 200
    if order == "fcfs":
        easy = run_schedule(workload, processors, "easy", "user", True)
        assert easy.start.tolist() == literal.start.tolist()
