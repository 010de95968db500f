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
  scaled and shared equally.

Streams (SeedSequence(seed).spawn(5)): workload, platform, estimates, policy, availability.
The platform and workload use only their own streams, so every heuristic sees the same grid
and tasks for one seed; the policy stream orders WQR's tasks; the estimates stream is unused.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from .availability import Availability, Dedicated, Synthetic
from .heuristics import StorageAffinity, Workqueue, XSufferage
from .metrics import METRICS, summarize
from .params import BotParams, parse
from .platform import Platform, build_platform
from .simulator import Heuristic, SimResult, Simulator
from .workload import Workload, build_workload


def make_heuristic(params: BotParams, rng: np.random.Generator) -> Heuristic:
    """``workqueue`` is WQR with at most one copy per task; the cap does not apply to it or
    to XSufferage."""
    if params.heuristic == "wqr":
        return Workqueue(params.replication_cap, rng=rng)
    if params.heuristic == "workqueue":
        return Workqueue(1, rng=rng)
    if params.heuristic == "storage_affinity":
        return StorageAffinity(params.replication_cap)
    return XSufferage()


def build(
    params: Mapping[str, object], seed: int
) -> tuple[BotParams, Platform, Workload, Heuristic, Availability]:
    """Everything one run needs, drawn from the run's seed."""
    p = parse(params)
    workload_ss, platform_ss, _estimates, policy_ss, availability_ss = np.random.SeedSequence(
        seed
    ).spawn(5)
    platform = build_platform(
        np.random.default_rng(platform_ss), p.grid_heterogeneity, p.speed_table
    )
    workload = build_workload(
        np.random.default_rng(workload_ss),
        p.granularity_mb,
        p.app_heterogeneity,
        p.app_type,
        p.jobs,
    )
    heuristic = make_heuristic(p, np.random.default_rng(policy_ss))
    availability: Availability = Dedicated()
    if p.availability == "synthetic":
        availability = Synthetic(
            np.random.default_rng(availability_ss),
            platform.n_processors,
            p.availability_min,
            p.availability_period_s,
        )
    return p, platform, workload, heuristic, availability


def simulate(params: Mapping[str, object], seed: int) -> SimResult:
    """The full simulation record of one run (copies, jobs, event count)."""
    _, platform, workload, heuristic, availability = build(params, seed)
    return Simulator(platform, workload, heuristic, availability=availability).run()


def run(params: Mapping[str, object], seed: int) -> dict[str, float]:
    """Metrics of one run: see ``run.metrics`` for names, units and meanings."""
    return summarize(simulate(params, seed))


def check(params: Mapping[str, object]) -> None:
    """Raise ValueError naming a bad, missing or unknown parameter."""
    parse(params)


run.metrics = METRICS
run.check = check
