"""The hand-checked worked examples of the model document (section 7), run exactly.

Site 0 = {p0: speed 1}, site 1 = {p1: speed 2, p2: speed 4}; link 125,000 bytes/s;
t0 (300,000 bytes, cost 300), t1 (200,000 bytes, cost 200); warm start: site 0 holds f0,
site 1 holds f1; one job released at 0.
"""

from __future__ import annotations

import math

import pytest

from campaign.models.bot import (
    Platform,
    SimResult,
    Simulator,
    StorageAffinity,
    Workload,
    Workqueue,
    XSufferage,
)
from campaign.models.bot.metrics import summarize
from tests.bot.conftest import worked_example as simulate

approx = pytest.approx


def copies(result: SimResult) -> list[tuple]:
    """(task, proc, assigned, compute start, end, state, work, bytes moved) in start order."""
    return [
        (c.task, c.proc, c.assigned, c.compute_start, c.ended, c.state, c.work, c.moved)
        for c in result.copies
    ]


def same(actual: list[tuple], expected: list[tuple]) -> bool:
    """Rows equal field by field, floats to 1e-12 relative (event times are sums of rates)."""
    assert len(actual) == len(expected), actual
    for got, want in zip(actual, expected, strict=True):
        for a, b in zip(got, want, strict=True):
            ok = math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-9) if isinstance(b, float) else a == b
            assert ok, f"{got} != {want}"
    return True


def check_metrics(result: SimResult, makespan: float, cpu: float, bandwidth: float) -> None:
    metrics = summarize(result)
    assert metrics["makespan"] == approx(makespan, rel=1e-12)
    assert metrics["makespan_job1"] == approx(makespan, rel=1e-12)
    assert metrics["wasted_cpu_pct"] == approx(cpu, rel=1e-12, abs=1e-12)
    assert metrics["wasted_bandwidth_pct"] == approx(bandwidth, rel=1e-12, abs=1e-12)
    assert metrics["wasted_cpu_job1_pct"] == metrics["wasted_cpu_pct"]
    assert metrics["wasted_bandwidth_job1_pct"] == metrics["wasted_bandwidth_pct"]


def test_storage_affinity_replica_wins_and_original_is_cancelled():
    result = simulate(StorageAffinity())
    assert same(
        copies(result),
        [
            (0, 0, 0.0, 0.0, 300.0, "won", 300.0, 0.0),
            (1, 1, 0.0, 0.0, 50.0, "killed", 100.0, 0.0),  # 100 ref-s done when killed
            (1, 2, 0.0, 0.0, 50.0, "won", 200.0, 0.0),  # replica on p2, no transfer
        ],
    )
    assert result.jobs[0].completions == approx([300.0, 50.0])
    check_metrics(result, makespan=300.0, cpu=20.0, bandwidth=0.0)
    assert summarize(result)["replicas_started"] == 1.0


def test_storage_affinity_cold_start_ties_and_a_losing_replica():
    """All affinities 0: the last task goes to the last site with an idle processor (t1 -> p1,
    then t0 -> p2); the replica of t1 on p2 at 79 loses to the original at 103.2."""
    result = simulate(StorageAffinity(), placement=None)
    assert same(
        copies(result),
        [
            (1, 1, 0.0, 3.2, 103.2, "won", 200.0, 200_000.0),  # link shared until 3.2
            (0, 2, 0.0, 4.0, 79.0, "won", 300.0, 300_000.0),
            (1, 2, 79.0, 79.0, 103.2, "killed", 96.8, 0.0),
        ],
    )
    check_metrics(result, makespan=103.2, cpu=19.36, bandwidth=0.0)


def test_xsufferage_maps_largest_sufferage_first():
    result = simulate(XSufferage())
    assert same(
        copies(result),
        [
            (1, 1, 0.0, 0.0, 100.0, "won", 200.0, 0.0),
            (0, 2, 0.0, 2.4, 77.4, "won", 300.0, 300_000.0),
        ],
    )
    assert result.jobs[0].completions == approx([77.4, 100.0])
    check_metrics(result, makespan=100.0, cpu=0.0, bandwidth=0.0)
    assert summarize(result)["transferred_bytes"] == 300_000.0


def test_xsufferage_equal_sufferage_takes_the_later_task_and_lowest_site():
    platform = Platform.from_sites([[1.0], [1.0]])
    workload = Workload((100.0, 100.0), ((10.0, 10.0),))
    result = Simulator(platform, workload, XSufferage(), link_capacity=100.0).run()
    assert [(c.task, c.proc) for c in result.copies] == [(1, 0), (0, 1)]
    assert [c.ended for c in result.copies] == approx([12.0, 12.0])  # shared link: 2 s


def test_wqr_unlimited_replication_shares_the_link_and_kills_two_replicas():
    result = simulate(Workqueue(math.inf, orders=[[0, 1]]))
    assert same(
        copies(result),
        [
            (0, 0, 0.0, 6.4, 81.4, "killed", 75.0, 300_000.0),
            (1, 1, 0.0, 4.8, 104.8, "won", 200.0, 200_000.0),  # three transfers share
            (0, 2, 0.0, 6.4, 81.4, "won", 300.0, 300_000.0),
            (1, 0, 81.4, 84.6, 104.8, "killed", 20.2, 200_000.0),
            (1, 2, 81.4, 84.6, 104.8, "killed", 80.8, 200_000.0),
        ],
    )
    assert result.jobs[0].completions == approx([81.4, 104.8])
    check_metrics(result, makespan=104.8, cpu=35.2, bandwidth=140.0)
    metrics = summarize(result)
    assert metrics["replicas_started"] == 3.0
    assert metrics["transferred_bytes"] == approx(1_200_000.0)


def test_wqr_cap_two():
    result = simulate(Workqueue(2, orders=[[0, 1]]))
    assert same(
        copies(result),
        [
            (0, 0, 0.0, 6.4, 81.4, "killed", 75.0, 300_000.0),
            (1, 1, 0.0, 4.8, 104.8, "won", 200.0, 200_000.0),
            (0, 2, 0.0, 6.4, 81.4, "won", 300.0, 300_000.0),
            (1, 0, 81.4, 83.0, 104.8, "killed", 21.8, 200_000.0),
        ],
    )
    check_metrics(result, makespan=104.8, cpu=19.36, bandwidth=100.0)


def test_wqr_cap_one_is_the_plain_workqueue():
    result = simulate(Workqueue(1, orders=[[0, 1]]))
    assert same(
        copies(result),
        [
            (0, 0, 0.0, 4.0, 304.0, "won", 300.0, 300_000.0),
            (1, 1, 0.0, 3.2, 103.2, "won", 200.0, 200_000.0),
        ],
    )
    assert result.jobs[0].completions == approx([304.0, 103.2])
    check_metrics(result, makespan=304.0, cpu=0.0, bandwidth=0.0)
