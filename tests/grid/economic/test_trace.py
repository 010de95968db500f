"""Economic schedules of real trace slices are feasible, processor by processor."""

from __future__ import annotations

import numpy as np
import pytest

from campaign.models.grid import run, schedule
from campaign.models.grid.measure import check_grid_feasible, check_processors, grid_metrics

CASES = [
    {"trace": "KTH-SP2-1996-2.1-cln.swf.gz", "config": "m128", "jobs": 400, "load": 3.0},
    {
        "trace": "HPC2N-2002-2.1-cln.swf.gz",
        "config": "m128",
        "jobs": 400,
        "load": 3.0,
        "mf": 2,
        "uf": 5,
        "topology": "ring",
        "hops": 1,
        "overhead": 0.2,
    },
    {
        "trace": "SDSC-BLUE-2000-4.2-cln.swf.gz",
        "config": "m64",
        "jobs": 300,
        "multisite": "always",
        "min_multisite": 4,
        "max_multisite": 48,
        "max_parts": 3,
        "mf": 6,
        "uf": 3,
    },
    {"trace": "LLNL-Thunder-2007-1.1-cln.swf.gz", "config": "m512", "jobs": 200, "uf": 2},
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c['trace'][:6]}-{c['config']}")
def test_economic_schedule_of_a_trace_slice_is_feasible(workloads, case):
    params = {**case, "sharing": "economic"}
    result = schedule(params, 3)
    check_grid_feasible(result)
    check_processors(result)
    n = len(result.workload)
    assert n > 0 and len(result.nodes) == n
    assert (result.start >= result.workload.submit).all()
    values = grid_metrics(result)
    machines = len(result.machines)
    shares = [values[f"work_share_machine{k}"] for k in range(1, machines + 1)]
    assert sum(shares) == pytest.approx(1.0)
    busy = sum(
        values[f"utilization_machine{k}"] * m for k, m in enumerate(result.machines, start=1)
    )
    assert busy / sum(result.machines) == pytest.approx(values["utilization"])
    assert values["offers_made"] >= n and values["jobs"] == n
    assert (values["jobs_remote"] > 0) == (machines > 1)


def test_wide_jobs_of_a_trace_are_coallocated_or_dropped(workloads):
    """SDSC-BLUE jobs wider than 128 processors run over several machines of m128, those
    wider than all 512 together are dropped; with multi-site off every job wider than 128 is."""
    params = {
        "trace": "SDSC-BLUE-2000-4.2-cln.swf.gz",
        "config": "m128",
        "jobs": 500,
        "load": 0.5,
        "sharing": "economic",
    }
    result = schedule(params, 1)
    check_grid_feasible(result)
    wide = result.workload.size > 128
    assert wide.sum() == 21
    assert all(len(result.parts[j]) > 1 for j in np.flatnonzero(wide))
    assert all(len(result.parts[j]) == 1 for j in np.flatnonzero(~wide))
    values = run(params, 1)
    assert values["n_dropped_too_wide"] == 12 and values["jobs_multisite"] == 21
    off = run({**params, "multisite": "off"}, 1)
    assert off["n_dropped_too_wide"] == 12 + 21 and off["jobs_multisite"] == 0
