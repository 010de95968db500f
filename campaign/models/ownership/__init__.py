"""Owner-share enforcement (OSEP) versus Fair-Share on a shared pool of identical machines.

Specification: shared/models/ownership.md. n identical machines are contributed by m users
(owner shares p_u, Σ p_u = n); each user has a FIFO queue of independent tasks. OSEP
preempts (kills, or checkpoints) the most over-share user's youngest task to give a machine
to the most under-share user with ready tasks; Fair-Share matches idle machines by decayed
usage priority and never preempts. The simulation is exact and event-driven
(`simulator.py`); the metrics are those of section 6 (`metrics.py`).

Parameters (default in brackets; times in seconds):
- ``policy`` [osep]: ``osep`` (kill), ``osep_checkpoint`` or ``fair_share``.
- ``machines`` [10]: n.
- ``shares``: machine counts per user summing to n; or ``shares_pct`` [[50, 50]]:
  percentages of n that must give whole machines. Their length is the number of users m.
- Workload, either ``tasks``: an explicit list of [user (1-based), submit_s, duration_s];
  or parametric:
  - ``tasks_per_user`` [10]: a count, or one entry per user; a count may also be
    ``machines`` (n) or ``share`` (the user's p_u): case 1 of the document is
    ``[machines, share]``;
  - ``task_duration_s`` [300]: a duration, or one entry per user, each a duration or a list
    of durations taken in turn (``[600, 1800, 3600]`` is the "mixed" granularity);
  - ``submit_s`` [0]: when each user submits (a number, or one per user: arrival stagger);
  - ``duration_jitter`` [0]: c in [0, 1); durations times 1 + c·U(-1, 1);
  - ``interarrival_s`` [0]: > 0 makes each user's tasks a Poisson stream from ``submit_s``.
- ``update_interval_s`` [20]: T, decision epochs at k·T;
  ``negotiation_offset_s`` [T/2]: negotiation epochs at k·T + offset, 0 <= offset < T;
  ``dispatch_delay_s`` [0]: from a match to the task's start.
- ``claim_reuse`` [true]: a machine whose task completes starts the same user's next ready
  task at once (after the dispatch delay), as the batch system of the source keeps a user's
  claim while that user has work; false leaves it idle until the next negotiation epoch.
- ``maxt`` [all]: OSEP preemption budget per decision epoch, an integer >= 0 or ``all``.
- ``checkpoint_cost_s`` [0], ``restart_cost_s`` [0]: checkpoint write (machine busy) and
  extra run time on resume; used by ``osep_checkpoint`` only.
- ``priority_half_life_s`` [86400]: Fair-Share usage half-life h;
  ``fair_share_weights`` [equal]: ``equal`` (g_u = 1) or ``share`` (g_u = 1/p_u; a user
  with p_u = 0 then has e_u = ∞ and gets machines only when no owner has ready tasks).
- ``owner_load`` [0 = off]: while a machine's owner uses it, tasks progress at rate
  1 - owner_load; owner-free and owner-busy periods are exponential with means
  ``owner_off_s`` [3600] and ``owner_on_s`` [600] (availability stream).

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

from campaign.models.ownership.availability import machine_periods
from campaign.models.ownership.metrics import METRICS, compute_metrics
from campaign.models.ownership.params import Scenario, parse
from campaign.models.ownership.simulator import Outcome, Simulation, Tasks
from campaign.models.ownership.workload import build_tasks

__all__ = ["run", "simulate"]


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


def check(params: Mapping[str, object]) -> None:
    """Refuse bad, missing or unknown parameters before anything runs."""
    parse(params)


run.metrics = METRICS
run.check = check
