"""The ``bot`` model: build the grid, the workload and the heuristic from the seed, simulate.

Parameters (defaults in brackets):

- ``heuristic``: ``wqr``, ``xsufferage``, ``storage_affinity`` or ``workqueue`` (WQR without
  replication, a baseline); required.
- ``grid_heterogeneity`` [1]: 1, 2, 4 or 8; speeds from ``speed_table`` [``paper``] or
  ``dissertation``.
- ``app_heterogeneity`` [0.0]: Ha as a fraction, 0..1; ``granularity_mb`` [15]: mean input
  per task in MiB; ``app_type`` [``visualization``] or ``pattern_search``.
- ``jobs`` [6]: length of the sequence of jobs reusing the same files.
- ``replication_cap`` [null = unlimited]: most simultaneous copies of a task under WQR and
  Storage Affinity (ignored by ``workqueue``, which is always 1, and by XSufferage).
- ``availability`` [``dedicated``] or ``synthetic``: every ``availability_period_s`` [600]
  seconds each processor's and the link's availability is redrawn from
  U(``availability_min`` [0.5], 1); progress is speed x availability, the link's capacity is
  scaled and shared equally. The source's grid was non-dedicated (its availability traces
  are not published): the ready specs that reproduce it use ``synthetic``.
- ``scheduler_latency_s`` [0]: every copy holds its processor this long before its transfer
  begins (an overhead; XSufferage's estimates include it).
- ``information_error`` [0]: XSufferage estimates each task's cost as C x U(1 - e, 1 + e),
  drawn per job and task; the other heuristics use no estimates.

Streams (SeedSequence(seed).spawn(5)): workload, platform, estimates, policy, availability.
The platform and workload use only their own streams, so every heuristic sees the same grid
and tasks for one seed; the policy stream orders WQR's tasks; the estimates stream draws
XSufferage's cost errors.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from .availability import Availability, Dedicated, Synthetic
from .heuristics import StorageAffinity, Workqueue, XSufferage
from .metrics import METRICS, summarize
from .params import BotParams, parse
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
    """Metrics of one run: see ``run.metrics`` for names, units and meanings."""
    return summarize(simulate(params, seed))


def check(params: Mapping[str, object]) -> None:
    """Raise ValueError naming a bad, missing or unknown parameter."""
    parse(params)


run.metrics = METRICS
run.check = check
