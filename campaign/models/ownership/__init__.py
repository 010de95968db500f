"""Owner-share enforcement (OSEP) versus Fair-Share on a shared pool of identical machines.

Definition: ownership.md (this folder). n identical machines are contributed by m users
(owner shares p_u, Σ p_u = n); each user has a FIFO queue of independent tasks. OSEP
preempts (kills, or checkpoints) the most over-share user's youngest task to give a machine
to the most under-share user with ready tasks; Fair-Share matches idle machines by decayed
usage priority and never preempts. The simulation is exact and event-driven
(`simulator.py`); the metrics are those of section 6 (`metrics.py`).

Parameters: the table in `params.py` (``campaign models show ownership``). The workload is
either ``tasks`` (an explicit list) or parametric (``tasks_per_user``, ``task_duration_s``,
``submit_s``, ``duration_jitter``, ``interarrival_s``); the number of users is the length of
``shares`` or ``shares_pct``.

Randomness: ``numpy.random.SeedSequence(seed).spawn(5)`` gives the workload, platform,
estimates, policy and availability streams; only workload (jitter, Poisson arrivals) and
availability (owner load) are used, and policies break every tie by a fixed rule. Without
jitter, Poisson arrivals and owner load a run does not depend on its seed: one replicate
(n = 1) is the answer, and more replicates only repeat it.

Decisions where the document reads two ways are listed in `simulator.py` and `shares.py`.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from campaign.models.contract import Model
from campaign.models.ownership.availability import machine_periods
from campaign.models.ownership.metrics import METRICS, compute_metrics
from campaign.models.ownership.params import PARAMS, Scenario, parse
from campaign.models.ownership.simulator import Outcome, Simulation, Tasks
from campaign.models.ownership.workload import build_tasks

__all__ = ["MODEL", "run", "simulate"]


def simulate(
    params: Mapping[str, object], seed: int, record: bool = False, observe: bool = False
) -> tuple[Tasks, Outcome]:
    """Run one simulation and return its tasks and raw outcome (schedule, integrals)."""
    return _simulate(parse(params), seed, record, observe)


def _simulate(
    scenario: Scenario, seed: int, record: bool = False, observe: bool = False
) -> tuple[Tasks, Outcome]:
    workload, _platform, _estimates, _policy, availability = np.random.SeedSequence(seed).spawn(5)
    tasks = build_tasks(scenario.recipe, workload)
    settings = scenario.settings
    periods = None
    if settings.owner_load > 0:
        periods = machine_periods(
            availability, settings.machines, scenario.owner_off, scenario.owner_on
        )
    outcome = Simulation(settings, tasks, periods, record=record, observe=observe).simulate()
    return tasks, outcome


def run(params: Mapping[str, object], seed: int) -> dict[str, float]:
    """The model contract: metrics of one run (see `METRICS` for units and meanings)."""
    scenario = parse(params)
    tasks, outcome = _simulate(scenario, seed)
    return compute_metrics(tasks, outcome, len(scenario.settings.shares))


MODEL = Model(
    name="ownership",
    run=run,
    summary="owner-share enforcement (OSEP, with or without checkpointing) versus "
    "Fair-Share on a shared pool",
    params=PARAMS,
    parse=parse,
    metrics=METRICS,
    headline=("policy_violation", "satisfaction_std"),
    example={"machines": 10, "shares": [5, 5], "submit_s": [0, 60], "duration_jitter": 0.1},
)
