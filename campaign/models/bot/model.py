"""The ``bot`` model: build the grid, the workload and the heuristic from the seed, simulate.

Parameters: the table in `params.py` (``campaign models show bot``); the source's grid was
non-dedicated (its availability traces are not published): the ready specs that reproduce it
use ``availability: synthetic``.

Streams (SeedSequence(seed).spawn(5)): workload, platform, estimates, policy, availability.
The platform and workload use only their own streams, so every heuristic sees the same grid
and tasks for one seed; the policy stream orders WQR's tasks; the estimates stream draws
XSufferage's cost errors.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from campaign.models.contract import Model

from .availability import Availability, Dedicated, Synthetic
from .heuristics import StorageAffinity, Workqueue, XSufferage
from .metrics import METRICS, summarize
from .params import PARAMS, BotParams, parse
from .platform import Platform, build_platform
from .simulator import Heuristic, SimResult, Simulator
from .workload import Workload, build_workload


def make_heuristic(
    params: BotParams, policy: np.random.Generator, estimates: np.random.Generator, n_tasks: int
) -> Heuristic:
    """``workqueue`` is WQR with at most one copy per task; the cap does not apply to it or
    to XSufferage. XSufferage's cost errors come from the estimates stream."""
    if params.heuristic == "wqr":
        return Workqueue(params.replication_cap, rng=policy)
    if params.heuristic == "workqueue":
        return Workqueue(1, rng=policy)
    if params.heuristic == "storage_affinity":
        return StorageAffinity(params.replication_cap)
    error = params.information_error
    if error == 0:
        return XSufferage()
    return XSufferage(estimates.uniform(1 - error, 1 + error, size=(params.jobs, n_tasks)))


@dataclass(frozen=True)
class Setup:
    """Everything one run needs, drawn from the run's seed."""

    params: BotParams
    platform: Platform
    workload: Workload
    heuristic: Heuristic
    availability: Availability

    def simulator(self) -> Simulator:
        return Simulator(
            self.platform,
            self.workload,
            self.heuristic,
            availability=self.availability,
            latency=self.params.scheduler_latency_s,
        )


def build(params: Mapping[str, object], seed: int) -> Setup:
    """Check the parameters and draw the grid, the tasks and the heuristic's randomness."""
    p = parse(params)
    streams = np.random.SeedSequence(seed).spawn(5)
    workload_rng, platform_rng, estimates_rng, policy_rng, availability_rng = (
        np.random.default_rng(s) for s in streams
    )
    platform = build_platform(platform_rng, p.grid_heterogeneity, p.speed_table)
    workload = build_workload(
        workload_rng, p.granularity_mb, p.app_heterogeneity, p.app_type, p.jobs
    )
    heuristic = make_heuristic(p, policy_rng, estimates_rng, workload.n_tasks)
    availability: Availability = Dedicated()
    if p.availability == "synthetic":
        availability = Synthetic(
            availability_rng, platform.n_processors, p.availability_min, p.availability_period_s
        )
    return Setup(p, platform, workload, heuristic, availability)


def simulate(params: Mapping[str, object], seed: int) -> SimResult:
    """The full simulation record of one run (copies, jobs, event count)."""
    return build(params, seed).simulator().run()


def run(params: Mapping[str, object], seed: int) -> dict[str, float]:
    """Metrics of one run: see `METRICS` for names, units and meanings."""
    return summarize(simulate(params, seed))


def check(params: Mapping[str, object]) -> None:
    """Raise ValueError naming a bad, missing or unknown parameter."""
    parse(params)


MODEL = Model(
    name="bot",
    run=run,
    summary="data-intensive bags of tasks on a heterogeneous grid: WQR, XSufferage, "
    "Storage Affinity",
    params=PARAMS,
    parse=parse,
    metrics=METRICS,
    headline=("makespan",),
    example={"heuristic": "wqr", "granularity_mb": 75, "jobs": 2},
)
