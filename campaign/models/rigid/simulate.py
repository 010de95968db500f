"""One site replaying a workload: the jobs' times, the event loop, the whole schedule.

On a core-level platform whose cores differ, a job's runtime depends on the cores it gets: an
``execution`` (see ``platform.py``) then gives the runtime when the job starts and frees its
cores when it ends; without one the loop reads a runtime array.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import numpy as np

from campaign.models.rigid.loop import replay
from campaign.models.rigid.platform import Execution, Platform
from campaign.models.rigid.policies import PolicyOptions
from campaign.models.rigid.site import Site
from campaign.models.rigid.workload import Workload

Predictor = Callable[[int, Sequence[int]], float]
"""Runtime predictor: ``predictor(job, history) -> estimate`` where ``history`` lists the same
user's jobs completed before the job's arrival, newest completion first (ties: job index
descending). Jobs are indices into the simulated workload."""


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
    orders_computed: int = 0
    """Computations of a list order (list policies)."""
    n_preemptions: int = 0
    """Suspensions, per job and event (preemptive policies)."""
    jobs_preempted: int = 0
    """Jobs suspended at least once."""
    segments: Sequence[tuple[tuple[float, float, tuple[int, ...]], ...]] | None = None
    """Preemptive policies: per job its executions (begin, end, processors); a job's start
    and end then bound these, and ``end - start`` may exceed its runtime."""

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


def _execution(
    platform: Platform, processors: int, workload: Workload, sizes: list[int], limit: np.ndarray
) -> Execution:
    """The jobs' execution on the cores of ``platform``; one error if it does not fit."""
    if platform.cores != processors:
        raise ValueError(f"the platform has {platform.cores} cores, the site {processors}")
    if workload.ops is None:
        raise ValueError("a core-level platform needs the jobs' operation counts (ops)")
    if platform.idle != platform.cores:
        raise ValueError("the platform has busy cores left from another simulation")
    return Execution(platform, sizes, workload.ops.tolist(), limit.tolist())


def run_schedule(
    workload: Workload,
    processors: int,
    scheduler: str = "easy",
    estimate: str = "user",
    kill_at_estimate: bool = True,
    predictor: Predictor | None = None,
    rng: np.random.Generator | None = None,
    platform: Platform | None = None,
    options: PolicyOptions | None = None,
) -> Schedule:
    """Simulate one site and return the whole schedule (for metrics, checks and plots).

    ``rng``: the policy stream, for scheduler ``random``. ``platform``: run the jobs on the
    cores of a core-level platform (``processors`` of them); the workload then needs its
    operation counts (``workload.ops``), from which each job's runtime follows at its start.
    Schedulers still plan with the estimates (``workload.runtime`` for ``exact``).
    ``options``: the policy's own options (see :class:`Site`; e.g. ``EasyOptions`` with
    the datacenter simulator's rule, ``ListOptions`` with an order, weight and trigger).
    """
    runtime, est, limit, killed = job_times(workload, estimate, kill_at_estimate)
    if estimate == "predicted" and predictor is None:
        raise ValueError("estimate 'predicted' needs a predictor")
    sizes = workload.size.tolist()
    estimates = est.tolist()
    site = Site(processors, scheduler, sizes, estimates, rng=rng, options=options)
    execution = None
    if platform is not None:
        execution = _execution(platform, processors, workload, sizes, limit)
    duration = completed = None
    if execution is not None:
        begin = execution.begin
        finish = execution.end

        def duration(job: int, unit: int, t: float) -> float:
            return begin(job, t)

        def completed(job: int, unit: int, t: float) -> None:
            finish(job)

    predict = None
    if estimate == "predicted":

        def predict(job: int, history: list[int]) -> None:
            estimates[job] = float(predictor(job, history[::-1]))

    start, end, where = replay(
        workload.submit.tolist(),
        [site],
        runtime=runtime.tolist() if execution is None else None,
        duration=duration,
        user=workload.user.tolist() if predict is not None else None,
        predict=predict,
        completed=completed,
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
        orders_computed=site.policy.orders_computed,
        n_preemptions=site.policy.n_preemptions,
        jobs_preempted=len(site.policy.preempted),
        segments=site.policy.executions(start, end),
    )
