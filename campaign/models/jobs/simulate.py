"""The discrete-event loop that replays a workload on one or more sites.

At one time t: (1) all completions (ordered by job index), (2) all arrivals in input order,
each placed on a site at once, (3) one scheduling pass per site in site index order
(parallel-jobs.md section 3). The loop knows nothing about policies: it only calls
``Site.submit``, ``Site.complete`` and ``Site.schedule``, so a grid broker plugs in as the
``place`` function. On a core-level platform whose cores differ, a job's runtime depends on
the cores it gets: an ``execution`` (see ``platform.py``) then gives the runtime when the job
starts and frees its cores when it ends; without one the loop reads a runtime array.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import numpy as np

from campaign.models.jobs.platform import Execution, Platform
from campaign.models.jobs.site import Site
from campaign.models.jobs.workload import Workload

Predictor = Callable[[int, Sequence[int]], float]
"""Runtime predictor: ``predictor(job, history) -> estimate`` where ``history`` lists the same
user's jobs completed before the job's arrival, newest completion first (ties: job index
descending). Jobs are indices into the simulated workload."""

Placement = Callable[[int, float, Sequence[Site]], int]
"""Broker: ``place(job, t, sites) -> site index`` called once per arrival."""


@dataclass(frozen=True)
class Schedule:
    """What happened to every job (arrays indexed like the workload)."""

    workload: Workload
    start: np.ndarray
    end: np.ndarray
    runtime: np.ndarray
    """Executed time p (after the kill limit)."""
    estimate: np.ndarray
    """What the scheduler planned with."""
    limit: np.ndarray
    """Kill limit (inf when jobs are never killed)."""
    killed: np.ndarray
    site: np.ndarray
    processors: tuple[int, ...]
    jobs_backfilled: int
    platform: Platform | None = None
    """The core-level platform the jobs ran on (None: identical processors, no allocation).
    With one, ``workload.runtime`` is each job's runtime on the cores it got (before the kill
    limit) and ``workload.ops`` its operation count per core."""
    cores: tuple[tuple[int, ...], ...] | None = None
    """The cores each job ran on (with a platform)."""

    @property
    def wait(self) -> np.ndarray:
        return self.start - self.workload.submit


def job_times(
    workload: Workload, estimate: str = "user", kill_at_estimate: bool = True
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Executed runtime, scheduling estimate, kill limit and killed flag of every job.

    The kill limit is the user's estimate p' (p <- min(p, p')); a job whose p' is unknown is
    never killed and its user estimate is taken as p.
    """
    user = workload.estimate
    known = np.isfinite(user)
    limit = np.where(known, user, np.inf) if kill_at_estimate else np.full(len(workload), np.inf)
    killed = workload.runtime > limit
    runtime = np.minimum(workload.runtime, limit)
    if estimate == "user":
        est = np.where(known, user, runtime)
    elif estimate in ("exact", "predicted"):
        est = runtime.copy()
    else:
        raise ValueError(f"unknown estimate {estimate!r}; allowed: user, exact, predicted")
    return runtime, est, limit, killed


def simulate(
    workload: Workload,
    sites: Sequence[Site],
    runtime: np.ndarray,
    estimate: list[float],
    place: Placement | None = None,
    predictor: Predictor | None = None,
    execution: Execution | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Run the event loop; returns start, end and site index per job.

    ``estimate`` is the list the sites read (shared with them); with a ``predictor`` the
    entry of each job is overwritten at its arrival. With an ``execution`` (one site only),
    ``execution.begin(job, t)`` gives each job's runtime as it starts (``runtime`` is then
    ignored) and ``execution.end(job)`` is called as it ends.
    """
    if execution is not None and len(sites) != 1:
        raise ValueError("an execution on a core-level platform drives one site only")
    n = len(workload)
    submit = workload.submit.tolist()
    run = runtime.tolist()
    start = [0.0] * n
    end = [0.0] * n
    where = [0] * n
    begin = execution.begin if execution is not None else None
    finish = execution.end if execution is not None else None
    user = workload.user.tolist() if predictor is not None else None
    history: dict[int, list[int]] = {}
    single = sites[0] if len(sites) == 1 and place is None else None
    heap: list[tuple[float, int]] = []
    pop = heapq.heappop
    push = heapq.heappush
    i = 0
    t = 0.0
    while True:
        if heap and (i >= n or heap[0][0] <= submit[i]):
            t = heap[0][0]
        elif i < n:
            t = submit[i]
        else:
            wakeups = [w for w in (site.wakeup(t) for site in sites) if w is not None]
            if not wakeups:
                break
            t = min(wakeups)
        while heap and heap[0][0] == t:
            _, job = pop(heap)
            end[job] = t
            sites[where[job]].complete(job, t)
            if finish is not None:
                finish(job)
            if user is not None:
                history.setdefault(user[job], []).append(job)
        while i < n and submit[i] == t:
            if predictor is not None:
                done = history.get(user[i], [])
                estimate[i] = float(predictor(i, done[::-1]))
            if single is not None:
                single.submit(i, t)
            else:
                k = place(i, t, sites) if place is not None else 0
                where[i] = k
                sites[k].submit(i, t)
            i += 1
        for site in sites:
            if site.queue:
                if begin is None:
                    for job in site.schedule(t):
                        start[job] = t
                        push(heap, (t + run[job], job))
                else:
                    for job in site.schedule(t):
                        start[job] = t
                        push(heap, (t + begin(job, t), job))
    return np.array(start), np.array(end), np.array(where, dtype=np.int64)


def run_schedule(
    workload: Workload,
    processors: int,
    scheduler: str = "easy",
    estimate: str = "user",
    kill_at_estimate: bool = True,
    predictor: Predictor | None = None,
    rng: np.random.Generator | None = None,
    platform: Platform | None = None,
    backfill_after_start: bool = True,
) -> Schedule:
    """Simulate one site and return the whole schedule (for metrics, checks and plots).

    ``rng``: the policy stream, for scheduler ``random``. ``platform``: run the jobs on the
    cores of a core-level platform (``processors`` of them); the workload then needs its
    operation counts (``workload.ops``), from which each job's runtime follows at its start.
    Schedulers still plan with the estimates (``workload.runtime`` for ``exact``).
    ``backfill_after_start``: see :class:`Site` (false: an EASY pass that started the head
    backfills nothing).
    """
    runtime, est, limit, killed = job_times(workload, estimate, kill_at_estimate)
    if estimate == "predicted" and predictor is None:
        raise ValueError("estimate 'predicted' needs a predictor")
    sizes = workload.size.tolist()
    estimates = est.tolist()
    site = Site(
        processors, scheduler, sizes, estimates, rng=rng, backfill_after_start=backfill_after_start
    )
    execution = None
    if platform is not None:
        if platform.cores != processors:
            raise ValueError(f"the platform has {platform.cores} cores, the site {processors}")
        if workload.ops is None:
            raise ValueError("a core-level platform needs the jobs' operation counts (ops)")
        if platform.idle != platform.cores:
            raise ValueError("the platform has busy cores left from another simulation")
        execution = Execution(platform, sizes, workload.ops.tolist(), limit.tolist())
    start, end, where = simulate(
        workload,
        [site],
        runtime,
        estimates,
        predictor=predictor if estimate == "predicted" else None,
        execution=execution,
    )
    cores = None
    if execution is not None:
        actual = np.array(execution.actual)
        workload = replace(workload, runtime=actual)
        runtime = np.minimum(actual, limit)
        killed = actual > limit
        cores = tuple(execution.cores)
    return Schedule(
        workload=workload,
        start=start,
        end=end,
        runtime=runtime,
        estimate=np.array(estimates),
        limit=limit,
        killed=killed,
        site=where,
        processors=(int(processors),),
        jobs_backfilled=site.jobs_backfilled,
        platform=platform,
        cores=cores,
    )
