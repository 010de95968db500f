"""Simulate a grid: estimates and predictions, broker or sharing mode, one event loop.

``simulate_grid`` returns a :class:`GridSchedule`: per job its start, end, executed time
(with the multi-site stretch), the machine(s) it ran on, and what the schedulers planned with.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from campaign.models.grid.broker import Broker
from campaign.models.grid.economic import EconomicGrid, EconomicOptions, simulate
from campaign.models.grid.pool import Pool
from campaign.models.grid.predict import (
    history_predictor,
    ratio_constants,
    scaled_estimates,
)
from campaign.models.rigid.loop import replay
from campaign.models.rigid.simulate import Schedule, job_times
from campaign.models.rigid.site import Site
from campaign.models.rigid.workload import Workload

SHARING = ("broker", "local", "job_sharing", "multisite", "economic")
ESTIMATES = ("user", "exact", "predicted")


@dataclass(frozen=True)
class GridOptions:
    """Everything but the workload and the machines (defaults as in parallel-jobs.md 10)."""

    sharing: str = "broker"
    strategy: str = "mlp"
    local_scheduler: str = "easy"
    overhead: float = 0.0
    max_parts: int | None = None
    place_on_arrival: bool = False
    local_estimate: str = "user"
    broker_estimate: str = "user"
    kill_at_estimate: bool = True
    predictor: str = "hk"
    history: int = 2
    search: int = 0
    match: str = "none"
    match_lo: float = 0.0
    match_hi: float = 0.0
    c2: float = 1.0
    admissibility: float | None = None
    include_new_job: bool = True
    tentative_scope: str = "active"
    economic: EconomicOptions = EconomicOptions()
    """The economic scenario's settings (sharing: economic)."""
    home: Sequence[int] | None = field(default=None, repr=False)
    reference: bool = False
    """Broker scores by the plain computation (slow; the fast one is checked against it)."""


@dataclass(frozen=True)
class GridSchedule:
    """Per-job outcome of a grid run (arrays indexed like the workload)."""

    workload: Workload
    machines: tuple[int, ...]
    start: np.ndarray
    end: np.ndarray
    runtime: np.ndarray
    """p after the kill limit, before the multi-site stretch."""
    executed: np.ndarray
    """Time the job really held its processors (p times the stretch)."""
    estimate: np.ndarray
    """What the local scheduler planned with."""
    broker_estimate: np.ndarray
    limit: np.ndarray
    killed: np.ndarray
    parts: tuple[tuple[tuple[int, int], ...], ...]
    """(machine, processors) per job; more than one pair for a co-allocated job."""
    jobs_backfilled: int
    home: np.ndarray | None = None
    """Home machine of every job (0-based)."""
    nodes: tuple[tuple[tuple[int, ...], ...], ...] | None = None
    """Processor numbers of every part, when the scheduler names them (economic)."""
    offers_made: int = 0
    """Offers generated (economic), summed over requests."""

    @property
    def multisite(self) -> np.ndarray:
        return np.array([len(p) > 1 for p in self.parts], dtype=bool)

    @property
    def site(self) -> np.ndarray:
        """Machine of every job (-1 for a co-allocated one)."""
        return np.array([p[0][0] if len(p) == 1 else -1 for p in self.parts], dtype=np.int64)

    def as_schedule(self) -> Schedule:
        """The single-site view used by the ``jobs`` metrics (runtime before stretch)."""
        return Schedule(
            workload=self.workload,
            start=self.start,
            end=self.end,
            runtime=self.runtime,
            estimate=self.estimate,
            limit=self.limit,
            killed=self.killed,
            site=self.site,
            processors=self.machines,
            jobs_backfilled=self.jobs_backfilled,
        )


def _estimates(kind: str, user: np.ndarray, runtime: np.ndarray) -> list[float]:
    if kind == "user":
        return user.tolist()
    return runtime.tolist()  # exact; predicted entries are overwritten


def simulate_grid(
    workload: Workload,
    machines: Sequence[int],
    options: GridOptions,
    rng_estimates: np.random.Generator | None = None,
    rng_policy: np.random.Generator | None = None,
) -> GridSchedule:
    """Run one grid simulation."""
    o = options
    if o.sharing not in SHARING:
        raise ValueError(f"unknown sharing {o.sharing!r}; allowed: {', '.join(SHARING)}")
    if o.place_on_arrival and o.sharing not in ("job_sharing", "multisite"):
        raise ValueError("place_on_arrival applies to sharing job_sharing and multisite only")
    machines = tuple(int(m) for m in machines)
    n = len(workload)
    runtime, user, limit, killed = job_times(workload, "user", o.kill_at_estimate)
    local = _estimates(o.local_estimate, user, runtime)
    broker = _estimates(o.broker_estimate, user, runtime)
    predicted = [
        lst
        for kind, lst in ((o.local_estimate, local), (o.broker_estimate, broker))
        if kind == "predicted"
    ]
    predict = None
    if predicted and o.predictor in ("hrecent", "hk"):
        size_list = workload.size.tolist()
        user_est = user.tolist()
        function = history_predictor(
            o.predictor,
            o.history,
            runtime.tolist(),
            user_est,
            size_list,
            o.match,
            o.search,
            o.match_lo,
            o.match_hi,
        )

        def predict(job: int, history: list[int]) -> None:
            value = function(job, history)
            for lst in predicted:
                lst[job] = value

    elif predicted:
        known = np.isfinite(workload.estimate)
        constants = ratio_constants(workload.runtime[known], workload.estimate[known])
        values = scaled_estimates(o.predictor, user, constants, rng_estimates, o.c2).tolist()
        for lst in predicted:
            lst[:] = values

    size = workload.size.tolist()
    submit = workload.submit.tolist()
    run = runtime.tolist()
    home = list(o.home) if o.home is not None else [k % len(machines) for k in range(n)]
    if o.sharing == "economic":
        return _economic(workload, machines, o, runtime, local, broker, limit, killed, home)
    hooks = {}
    duration = None
    if o.sharing in ("broker", "local"):
        units = [Site(m, o.local_scheduler, size, local, index=k) for k, m in enumerate(machines)]
        if o.sharing == "broker":
            chooser = Broker(
                o.strategy,
                units,
                size,
                submit,
                broker,
                rng_policy,
                o.include_new_job,
                o.tentative_scope,
                o.admissibility,
                o.reference,
            )

            def place(job: int, t: float) -> int:
                return chooser.place(job, t, units)

            if o.tentative_scope == "cumulative":
                hooks = {"started": chooser.started, "completed": chooser.completed}
        else:

            def place(job: int, t: float) -> int:
                return home[job]

    else:
        if o.local_scheduler != "easy":
            raise ValueError(
                "sharing modes job_sharing and multisite use EASY (local_scheduler: easy)"
            )
        pool = Pool(
            machines,
            size,
            local,
            o.sharing == "multisite",
            o.overhead,
            o.max_parts,
            o.place_on_arrival,
        )
        units = [pool]

        def place(job: int, t: float) -> int:
            return 0

        def duration(job: int, unit: int, t: float) -> float:
            return run[job] * pool.factor(job)

    start, end, where = replay(
        submit,
        units,
        runtime=run if duration is None else None,
        duration=duration,
        place=place,
        user=workload.user.tolist() if predict is not None else None,
        predict=predict,
        **hooks,
    )
    if o.sharing in ("broker", "local"):
        parts = tuple(((int(where[j]), size[j]),) for j in range(n))
        stretch = np.ones(n)
        backfilled = sum(unit.jobs_backfilled for unit in units)
    else:
        parts = tuple(pool.parts.get(j, ()) for j in range(n))
        stretch = np.array([pool.factor(j) if j in pool.parts else 1.0 for j in range(n)])
        backfilled = pool.jobs_backfilled
    return GridSchedule(
        workload=workload,
        machines=machines,
        start=start,
        end=end,
        runtime=runtime,
        executed=runtime * stretch,
        estimate=np.array(local),
        broker_estimate=np.array(broker),
        limit=limit,
        killed=killed,
        parts=parts,
        jobs_backfilled=int(backfilled),
        home=np.array(home, dtype=np.int64),
    )


def _economic(
    workload: Workload,
    machines: tuple[int, ...],
    o: GridOptions,
    runtime: np.ndarray,
    local: list[float],
    broker: list[float],
    limit: np.ndarray,
    killed: np.ndarray,
    home: list[int],
) -> GridSchedule:
    """The economic scenario: every request booked at its arrival (economic.md)."""
    if o.local_estimate == "predicted":
        raise ValueError("sharing economic plans with local_estimate user or exact")
    size = workload.size.tolist()
    grid = EconomicGrid(
        machines, size, local, runtime.tolist(), home, o.economic, o.overhead, o.max_parts
    )
    start, winners = simulate(grid, workload.submit.tolist())
    stretch = np.array([grid.stretch(w) for w in winners])
    executed = runtime * stretch
    prior = np.maximum.accumulate(np.concatenate(([-np.inf], start)))[:-1]
    return GridSchedule(
        workload=workload,
        machines=machines,
        start=start,
        end=start + executed,
        runtime=runtime,
        executed=executed,
        estimate=np.array(local),
        broker_estimate=np.array(broker),
        limit=limit,
        killed=killed,
        parts=tuple(tuple((k, len(p)) for k, p in w.parts) for w in winners),
        jobs_backfilled=int((start < prior).sum()),
        home=np.array(home, dtype=np.int64),
        nodes=tuple(tuple(tuple(p.tolist()) for _, p in w.parts) for w in winners),
        offers_made=grid.offers_made,
    )
