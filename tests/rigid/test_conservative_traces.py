"""Conservative backfilling's fast compression against the literal one on real trace slices.

The literal compression (``PolicyOptions(reference=True)``) re-inserts every queued job at every
pass; the fast one skips the jobs that provably cannot move. Both must start every job of a
production log at the same time, with the queues the logs give (load 1) and with jobs packed
twice as close (long queues, many reservations moving up), killed at their estimate or not.
"""

from __future__ import annotations

import pytest
from numpy.random import SeedSequence

from campaign.models.jobs import build_workload, parse
from campaign.models.rigid.feasibility import check_feasible
from campaign.models.rigid.policies import PolicyOptions
from campaign.models.rigid.simulate import run_schedule
from campaign.models.rigid.swf import read_swf
from campaign.models.rigid.workload import from_trace, scale_load
from tests.conftest import DATA


@pytest.mark.parametrize("trace", ["HPC2N-2002-2.1-cln.swf.gz", "KTH-SP2-1996-2.1-cln.swf.gz"])
@pytest.mark.parametrize("load", [1.0, 2.0])
@pytest.mark.parametrize("kill", [True, False])
def test_fast_compression_starts_every_job_as_the_literal_one(trace, load, kill):
    workload, _ = from_trace(read_swf(DATA / trace))
    workload = scale_load(workload, load)
    fast = run_schedule(workload, workload.processors, "conservative", "user", kill)
    literal = run_schedule(
        workload,
        workload.processors,
        "conservative",
        "user",
        kill,
        options=PolicyOptions(reference=True),
    )
    check_feasible(fast)
    check_feasible(literal)
    assert len(fast.start) == 3000
    assert fast.start.tolist() == literal.start.tolist()
    # The slices exercise the compression: many jobs wait, many start ahead of earlier ones.
    assert (fast.start > workload.submit).sum() > 1000
    assert fast.jobs_backfilled > 400


@pytest.mark.parametrize("seed", [3797387585127606614, 4129793963100404342])
def test_fast_compression_on_the_demos_synthetic_workload_at_load_1_5(seed):
    # the demo's Lublin-Feitelson jobs at load 1.5, where the fast compression before
    # Profile.move started jobs elsewhere than the literal one (mean wait 23410 s against 22944 s)
    params = {"workload": "synthetic", "jobs": 3000, "processors": 128, "load": 1.5}
    workload, processors, _ = build_workload(parse(params), SeedSequence(seed).spawn(5))
    fast = run_schedule(workload, processors, "conservative", "user", True)
    literal = run_schedule(
        workload, processors, "conservative", "user", True, options=PolicyOptions(reference=True)
    )
    check_feasible(fast)
    assert fast.start.tolist() == literal.start.tolist()
