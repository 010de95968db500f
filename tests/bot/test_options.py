"""The overhead options: scheduler latency (every heuristic) and XSufferage's information
error. Examples on the worked-example grid of the model document, latency 1 s."""

from __future__ import annotations

import math

import numpy as np
import pytest

from campaign.models.bot import (
    Platform,
    Simulator,
    StorageAffinity,
    Workload,
    Workqueue,
    XSufferage,
    build,
    run,
)
from campaign.models.bot.simulator import KILLED
from campaign.results.names import metric_values
from tests.bot.conftest import worked_example


def simulate(heuristic, latency=1.0):
    return worked_example(heuristic, latency=latency)


def test_latency_delays_the_transfers_of_the_plain_workqueue():
    result = simulate(Workqueue(1, orders=[[0, 1]]))
    t0, t1 = result.copies
    assert (t1.compute_start, t1.ended) == pytest.approx((4.2, 104.2))  # link shared from 1
    assert (t0.compute_start, t0.ended) == pytest.approx((5.0, 305.0))
    assert result.jobs[0].makespan == pytest.approx(305.0)


def test_xsufferage_estimates_include_the_latency():
    result = simulate(XSufferage())
    assert [(c.task, c.proc) for c in result.copies] == [(1, 1), (0, 2)]
    assert [c.ended for c in result.copies] == pytest.approx([101.0, 78.4])


def test_storage_affinity_with_latency():
    result = simulate(StorageAffinity())
    assert [(c.task, c.proc, c.state) for c in result.copies] == [
        (0, 0, "won"),
        (1, 1, KILLED),
        (1, 2, "won"),
    ]
    assert [c.ended for c in result.copies] == pytest.approx([301.0, 51.0, 51.0])
    assert result.jobs[0].wasted_work == pytest.approx(100.0)


def test_a_copy_killed_during_its_latency_wasted_nothing():
    # one site, p0 speed 100, p1 speed 1; t0 (cost 100), t1 (cost 10), no input data.
    # t0 ends at 21 on p0, which replicates t1 at 21; the original t1 wins at 30 while the
    # replica still waits for its latency (until 41).
    platform = Platform.from_sites([[100.0, 1.0]])
    workload = Workload((0.0, 0.0), ((100.0, 10.0),))
    heuristic = Workqueue(math.inf, orders=[[0, 1]])
    result = Simulator(platform, workload, heuristic, latency=20.0).run()
    replica = result.copies[-1]
    assert (replica.task, replica.proc, replica.assigned) == (1, 0, 21.0)
    assert (replica.state, replica.ended, replica.work, replica.moved) == (KILLED, 30.0, 0.0, 0.0)
    assert math.isnan(replica.compute_start)
    assert result.jobs[0].makespan == 30.0 and result.jobs[0].wasted_work == 0.0


def test_information_error_factors_come_from_the_estimates_stream():
    params = {"heuristic": "xsufferage", "granularity_mb": 75, "jobs": 3}
    assert build(params, 5).heuristic.cost_errors is None  # perfect information
    errors = np.array(build(params | {"information_error": 0.3}, 5).heuristic.cost_errors)
    assert errors.shape == (3, 28)
    assert errors.min() >= 0.7 and errors.max() <= 1.3 and errors.std() > 0
    # the grid and tasks do not move with the error
    assert build(params | {"information_error": 0.3}, 5).platform == build(params, 5).platform


def test_information_error_changes_xsufferage_only():
    params = {"granularity_mb": 75, "jobs": 2, "grid_heterogeneity": 8, "app_heterogeneity": 0.5}
    exact = run(params | {"heuristic": "xsufferage"}, 5)
    noisy = run(params | {"heuristic": "xsufferage", "information_error": 0.5}, 5)
    assert noisy["makespan"] != exact["makespan"]
    assert noisy["wasted_cpu_pct"] == 0.0
    sa = {"heuristic": "storage_affinity", **params}
    assert metric_values(run(sa | {"information_error": 0.5}, 5)) == metric_values(run(sa, 5))
