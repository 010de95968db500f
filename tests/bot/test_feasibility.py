"""Every simulated schedule is feasible: each task completes exactly once, a processor runs
one copy at a time, no copy starts before its job's release, caps and rules are respected."""

from __future__ import annotations

import math
from collections import defaultdict

import pytest

from campaign.models.bot import SimResult, Workload, build
from campaign.models.bot.simulator import KILLED, WON


def assert_feasible(
    result: SimResult, workload: Workload, params: dict, speeds: tuple[float, ...] | None = None
) -> None:
    """``speeds`` (dedicated grids only) also checks compute times: cost / speed."""
    jobs = result.jobs
    heuristic = params["heuristic"]
    cap = params.get("replication_cap") or math.inf
    cap = 1 if heuristic in ("workqueue", "xsufferage") else cap
    latency = params.get("scheduler_latency_s", 0.0)
    for previous, job in zip(jobs, jobs[1:], strict=False):
        assert job.release == previous.end  # next job released when the last one ends
    assert jobs[0].release == 0.0
    by_job = defaultdict(list)
    for copy in result.copies:
        assert copy.state in (WON, KILLED)  # nothing left running
        by_job[copy.job].append(copy)
    for k, job in enumerate(jobs):
        copies = by_job[k]
        winners = [c for c in copies if c.state == WON]
        assert sorted(c.task for c in winners) == list(range(result.n_tasks))
        for c in winners:
            assert c.ended == job.completions[c.task]
            assert c.work == workload.costs[k][c.task]
        assert job.end == max(job.completions)
        won_at = {c.task: c.ended for c in winners}
        for c in copies:
            assert job.release <= c.assigned <= c.ended <= job.end
            if math.isnan(c.began):  # killed during its latency
                assert c.state == KILLED and c.work == c.moved == c.bytes == 0.0
                continue
            assert c.began == c.assigned + latency
            if math.isnan(c.compute_start):  # killed during its transfer
                assert c.state == KILLED and c.work == 0.0 and c.moved < c.bytes
            else:
                assert c.began <= c.compute_start <= c.ended
                assert c.moved == c.bytes
                if speeds is not None:
                    busy = c.ended - c.compute_start
                    assert c.work == pytest.approx(speeds[c.proc] * busy, rel=1e-9, abs=1e-6)
            assert 0.0 <= c.work <= workload.costs[k][c.task] * (1 + 1e-12)
            if c.state == KILLED:
                assert c.ended == won_at[c.task]  # cancelled when the first copy finishes
        if heuristic in ("wqr", "workqueue"):
            # WQR always moves the whole file
            assert all(c.bytes == workload.sizes[c.task] for c in copies if c.began >= 0)
        if heuristic == "storage_affinity":
            assert all(c.bytes == 0 for c in copies if c.replica)  # replicas go to the data
        if heuristic in ("workqueue", "xsufferage"):
            assert len(copies) == result.n_tasks
        # simultaneous copies of one task never exceed the cap
        for c in copies:
            alive = [d for d in copies if d.task == c.task and d.assigned <= c.assigned < d.ended]
            assert len(alive) <= cap
    by_proc = defaultdict(list)
    for copy in result.copies:
        by_proc[copy.proc].append(copy)
    for copies in by_proc.values():
        copies.sort(key=lambda c: (c.assigned, c.ended))
        for a, b in zip(copies, copies[1:], strict=False):
            assert b.assigned >= a.ended, (a, b)  # one copy at a time


CASES = [
    {"heuristic": h, "grid_heterogeneity": g, "app_heterogeneity": ha, "granularity_mb": mb} | extra
    for h in ("wqr", "storage_affinity", "xsufferage", "workqueue")
    for g, ha, mb, extra in [
        (1, 0.0, 75, {"jobs": 3}),
        (8, 1.0, 75, {"jobs": 3, "app_type": "pattern_search"}),
        (4, 0.5, 15, {"jobs": 2, "replication_cap": 2}),
        (2, 0.25, 75, {"jobs": 2, "availability": "synthetic", "availability_period_s": 500}),
        (4, 0.5, 75, {"jobs": 2, "scheduler_latency_s": 30.0, "information_error": 0.2}),
    ]
]


@pytest.mark.parametrize("params", CASES, ids=lambda p: "-".join(map(str, p.values())))
def test_random_runs_are_feasible(params):
    for seed in (1, 2):
        setup = build(params, seed)
        dedicated = params.get("availability", "dedicated") == "dedicated"
        speeds = setup.platform.speeds if dedicated else None
        assert_feasible(setup.simulator().run(), setup.workload, params, speeds)


def test_the_check_catches_an_infeasible_schedule():
    params = {"heuristic": "workqueue", "granularity_mb": 75, "jobs": 2}
    setup = build(params, 1)
    result = setup.simulator().run()
    workload = setup.workload
    assert_feasible(result, workload, params)
    first, second = [c for c in result.copies if c.job == 1][:2]
    second.proc = first.proc  # two copies on one processor at once
    with pytest.raises(AssertionError):
        assert_feasible(result, workload, params)
