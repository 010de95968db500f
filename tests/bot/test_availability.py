"""Background load: progress is speed times the integral of availability; the link's
capacity is scaled the same way; the synthetic process is seeded and bounded."""

from __future__ import annotations

import numpy as np
import pytest

from campaign.models.bot import Platform, Simulator, Workload, Workqueue, run
from campaign.models.bot.availability import Synthetic


class Steps:
    """Availability given by hand: epoch k lasts [k*period, (k+1)*period)."""

    def __init__(self, period: float, procs: list[list[float]], link: list[float]) -> None:
        self.period = period
        self.procs, self.link = procs, link

    def values(self, epoch: int) -> tuple[list[float], float]:
        k = min(epoch, len(self.link) - 1)
        return self.procs[k], self.link[k]


def test_progress_integrates_processor_availability():
    # speed 2, cost 30: 10 s at 0.5 (10 ref-s), then full speed for the last 20 -> ends at 20
    platform = Platform.from_sites([[2.0]])
    workload = Workload((0.0,), ((30.0,),))
    steps = Steps(10.0, [[0.5], [1.0]], [1.0, 1.0])
    result = Simulator(platform, workload, Workqueue(1, orders=[[0]]), availability=steps).run()
    assert result.jobs[0].makespan == pytest.approx(20.0)


def test_link_capacity_follows_its_availability_and_killed_work_is_integrated():
    # link 100 B/s at availability 0.25 until 10, then 1. One site, speeds 1 and 4: the
    # original on p0 and a replica on p1 (cap 2); the replica wins; p0's work is integrated.
    platform = Platform.from_sites([[1.0, 4.0]])
    workload = Workload((500.0,), ((40.0,),))
    steps = Steps(10.0, [[1.0, 0.5], [0.5, 1.0]], [0.25, 1.0])
    heuristic = Workqueue(2, orders=[[0]])
    result = Simulator(platform, workload, heuristic, link_capacity=100.0, availability=steps).run()
    original, replica = result.copies
    # both copies move the file: 12.5 B/s each until 10 (125 bytes), then 50 B/s each for
    # the 375 left -> both files at 17.5; then p1 (speed 4, A = 1) needs 10 s.
    assert original.compute_start == pytest.approx(17.5)
    assert replica.compute_start == pytest.approx(17.5)
    assert replica.ended == pytest.approx(17.5 + 40.0 / 4.0)
    assert original.work == pytest.approx(0.5 * 10.0)
    assert result.jobs[0].wasted_work == pytest.approx(5.0)


def test_synthetic_availability_is_bounded_seeded_and_changes_results():
    a = Synthetic(np.random.default_rng(7), 5, 0.3, 100.0)
    b = Synthetic(np.random.default_rng(7), 5, 0.3, 100.0)
    later = a.values(4)
    assert [b.values(k) for k in range(5)][4] == later  # epoch k is the same however reached
    procs, link = later
    assert all(0.3 <= x <= 1.0 for x in [*procs, link])
    params = {"heuristic": "storage_affinity", "granularity_mb": 75, "jobs": 2}
    dedicated = run(params, 3)
    loaded = run(params | {"availability": "synthetic", "availability_min": 0.2}, 3)
    assert loaded["makespan"] > dedicated["makespan"]
    assert loaded["n_processors"] == dedicated["n_processors"]
