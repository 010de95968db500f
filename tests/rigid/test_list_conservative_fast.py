"""Conservative backfilling over a list order: the incremental policy (reservations keyed by
rank in L, conservative backfilling's profile and compression) against the literal one
(``ListOptions(reference=True)``: every reservation re-derived from the running jobs at every
pass that compresses), job by job, on random small instances with overrunning jobs and on real
trace slices with long queues."""

from __future__ import annotations

import numpy as np
import pytest

from campaign.models.rigid.feasibility import check_feasible
from campaign.models.rigid.policies import ListOptions
from campaign.models.rigid.policies.list_conservative import ListConservative
from campaign.models.rigid.policies.list_conservative_literal import LiteralListConservative
from campaign.models.rigid.simulate import run_schedule
from campaign.models.rigid.site import Site
from campaign.models.rigid.swf import read_swf
from campaign.models.rigid.workload import from_arrays, from_trace, scale_load
from tests.conftest import DATA
from tests.rigid.lists import ORDERS, assert_same_schedule, fast_and_literal


def both(workload, processors, kill, **options):
    """The fast and the literal schedule of ``workload``."""
    return fast_and_literal("list_conservative", workload, processors, kill, **options)


def test_the_reference_option_selects_the_literal_policy():
    size, estimate = [1], [1.0]
    fast = Site(2, "list_conservative", size, estimate, options=ListOptions(order="psrs"))
    literal = Site(
        2, "list_conservative", size, estimate, options=ListOptions(order="psrs", reference=True)
    )
    assert type(fast.policy) is ListConservative
    assert type(literal.policy) is LiteralListConservative


class Checked(ListConservative):
    """Checks after every pass that the ranks of the reservations, ascending, name the
    waiting jobs in L order (the tie rule the compression relies on)."""

    def select(self, t: float) -> list[int]:
        started = super().select(t)
        ranked = sorted(self.book.reservation)
        waiting = ranked if self.jobs is None else [self.jobs[rank] for rank in ranked]
        listing = self.site.queue if self.jobs is None else self._list
        left = [job for job in listing if job not in started]
        assert waiting == left, t
        Checked.passes += 1
        return started

    passes = 0


@pytest.mark.parametrize("order", ORDERS)
def test_ranks_sort_as_positions_in_the_list(order, monkeypatch):
    from campaign.models.rigid.policies import POLICIES

    monkeypatch.setitem(POLICIES, "list_conservative", Checked)
    workload, _ = from_trace(read_swf(DATA / "KTH-SP2-1996-2.1-cln.swf.gz"))
    workload = scale_load(workload, 2.0)
    Checked.passes = 0
    for ratio in (2 / 3, None):
        schedule = run_schedule(
            workload,
            workload.processors,
            "list_conservative",
            options=ListOptions(order=order, reorder_ratio=ratio),
        )
        assert len(schedule.start) == 3000
    assert Checked.passes > 3000


@pytest.mark.parametrize("order", ORDERS)
@pytest.mark.parametrize("weight", ["unit", "work"])
@pytest.mark.parametrize("kill", [True, False])
def test_fast_equals_literal_on_random_instances(order, weight, kill):
    """Not killed, jobs may run up to twice their estimate: reservations fall behind running
    jobs, due jobs do not fit, and the fast policy must rebuild as the literal one does.
    A quarter of the jobs have no estimate: their reservations hold no processors, so a job
    booked later may push them back."""
    rng = np.random.default_rng([ORDERS.index(order), weight == "work", kill])
    for trial in range(80):
        m = int(rng.choice([3, 4, 6, 8]))
        n = int(rng.integers(5, 40))
        submit = np.cumsum(rng.integers(0, 4, size=n))
        size = rng.integers(1, m + 1, size=n)
        estimate = rng.integers(1, 12, size=n) * (rng.uniform(size=n) > 0.25)
        runtime = np.floor(estimate * rng.uniform(0.0, 2.0, size=n))
        workload = from_arrays(submit, size, runtime, estimate)
        ratio = None if trial % 3 == 0 else 2 / 3
        fast, literal = both(workload, m, kill, order=order, weight=weight, reorder_ratio=ratio)
        check_feasible(fast)
        assert_same_schedule(fast, literal, m, trial)


@pytest.mark.parametrize("order", ORDERS[1:])
@pytest.mark.parametrize("kill", [True, False])
@pytest.mark.parametrize("trace", ["HPC2N-2002-2.1-cln.swf.gz", "KTH-SP2-1996-2.1-cln.swf.gz"])
def test_fast_equals_literal_on_trace_slices_at_load_2(order, kill, trace):
    """3,000 jobs of each log packed twice as close: long queues, many reservations moving
    up at early completions, recomputed orders rebuilding them."""
    workload, _ = from_trace(read_swf(DATA / trace))
    workload = scale_load(workload, 2.0)
    fast, literal = both(workload, workload.processors, kill, order=order)
    check_feasible(fast)
    assert len(fast.start) == 3000
    assert fast.orders_computed > 10
    assert_same_schedule(fast, literal)


@pytest.mark.parametrize("reference", [False, True])
def test_fcfs_order_is_conservative_with_jobs_of_no_estimate(reference):
    """A reservation of no duration holds no processors, so a job booked after it may take
    its instant and a compression push it back: while such a job waits every pass
    compresses, and the FCFS order starts every job as conservative backfilling does."""
    rng = np.random.default_rng(11)
    for trial in range(300):
        m = int(rng.choice([3, 4, 6, 8]))
        n = int(rng.integers(5, 40))
        submit = np.cumsum(rng.integers(0, 4, size=n))
        size = rng.integers(1, m + 1, size=n)
        estimate = rng.integers(1, 12, size=n) * (rng.uniform(size=n) > 0.3)
        runtime = np.floor(estimate * rng.uniform(0.0, 1.0, size=n))
        workload = from_arrays(submit, size, runtime, estimate)
        listed = run_schedule(
            workload, m, "list_conservative", options=ListOptions(reference=reference)
        )
        conservative = run_schedule(workload, m, "conservative")
        assert listed.start.tolist() == conservative.start.tolist(), (m, trial)
