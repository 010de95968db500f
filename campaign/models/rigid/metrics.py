"""Metrics of a schedule (parallel-jobs.md section 7), with units and long names.

All are computed from whole arrays of one :class:`Schedule`; an undefined value (no job)
is NaN, never an exception.
"""

from __future__ import annotations

import numpy as np

from campaign.models.rigid.simulate import Schedule

TAU = 10.0
"""Runtime floor of the bounded slowdown (s)."""

METRICS: dict[str, dict[str, str]] = {
    "mean_wait": {"units": "s", "long_name": "mean waiting time (start - submit)"},
    "max_wait": {"units": "s", "long_name": "maximum waiting time"},
    "mean_turnaround": {"units": "s", "long_name": "mean response time (end - submit)"},
    "mean_slowdown": {
        "units": "1",
        "long_name": "mean slowdown (end - submit) / runtime over the jobs of runtime > 0 s",
    },
    "n_zero_run_time": {
        "units": "1",
        "long_name": "simulated jobs of runtime 0 s (unknown ones replayed as 0 s among them), "
        "left out of mean_slowdown",
    },
    "mean_bsld": {
        "units": "1",
        "long_name": "mean bounded slowdown max(1, (end - submit) / max(runtime, 10 s))",
    },
    "awrt": {"units": "s", "long_name": "average response time weighted by work size*runtime"},
    "awwt": {"units": "s", "long_name": "average waiting time weighted by work size*runtime"},
    "swct_w": {"units": "proc*s^2", "long_name": "sum of completion times weighted by work"},
    "sct": {"units": "s", "long_name": "sum of completion times"},
    "wait_weighted_size_mean_proc_s": {
        "units": "proc*s",
        "long_name": "mean of waiting time times job size",
    },
    "wait_weighted_time_mean_s2": {
        "units": "s^2",
        "long_name": "mean of waiting time times runtime",
    },
    "wait_weighted_work_mean_proc_s2": {
        "units": "proc*s^2",
        "long_name": "mean of waiting time times work",
    },
    "makespan": {"units": "s", "long_name": "last completion time, from time 0"},
    "utilization": {
        "units": "1",
        "long_name": "executed work / (processors * makespan)",
    },
    "throughput": {"units": "1/s", "long_name": "completed jobs per second of makespan"},
    "competitive_factor_lb": {
        "units": "1",
        "long_name": "makespan / max(latest submit + runtime, work / processors)",
    },
    "jobs": {"units": "1", "long_name": "number of simulated jobs"},
    "jobs_killed": {"units": "1", "long_name": "jobs killed at their estimate"},
    "jobs_backfilled": {
        "units": "1",
        "long_name": "jobs started while an earlier-arrived job was still waiting",
    },
}


def schedule_metrics(schedule: Schedule, bsld_floor_one: bool = True) -> dict[str, float]:
    """Every metric of :data:`METRICS` for one schedule."""
    w = schedule.workload
    n = len(w)
    nan = float("nan")
    if n == 0:
        values = {name: nan for name in METRICS}
        values.update(jobs=0.0, jobs_killed=0.0, jobs_backfilled=0.0, n_zero_run_time=0.0)
        return values
    submit = w.submit
    size = w.size.astype(np.float64)
    p = schedule.runtime
    wait = schedule.start - submit
    response = schedule.end - submit
    work = size * p
    total_work = work.sum()
    cmax = float(schedule.end.max())
    processors = float(sum(schedule.processors))
    timed = p > 0  # a slowdown is undefined at 0 s (inf or 0/0); the bounded one is not
    slowdown = response[timed] / p[timed]
    with np.errstate(divide="ignore", invalid="ignore"):
        bsld = response / np.maximum(p, TAU)
    if bsld_floor_one:
        bsld = np.maximum(bsld, 1.0)
    lower = max(float((submit + p).max()), total_work / processors)
    return {
        "mean_wait": float(wait.mean()),
        "max_wait": float(wait.max()),
        "mean_turnaround": float(response.mean()),
        "mean_slowdown": float(slowdown.mean()) if slowdown.size else nan,
        "n_zero_run_time": float(n - slowdown.size),
        "mean_bsld": float(bsld.mean()),
        "awrt": float((work * response).sum() / total_work) if total_work > 0 else nan,
        "awwt": float((work * wait).sum() / total_work) if total_work > 0 else nan,
        "swct_w": float((schedule.end * work).sum()),
        "sct": float(schedule.end.sum()),
        "wait_weighted_size_mean_proc_s": float((wait * size).mean()),
        "wait_weighted_time_mean_s2": float((wait * p).mean()),
        "wait_weighted_work_mean_proc_s2": float((wait * work).mean()),
        "makespan": cmax,
        "utilization": float(total_work / (processors * cmax)) if cmax > 0 else nan,
        "throughput": float(n / cmax) if cmax > 0 else nan,
        "competitive_factor_lb": float(cmax / lower) if lower > 0 else nan,
        "jobs": float(n),
        "jobs_killed": float(schedule.killed.sum()),
        "jobs_backfilled": float(schedule.jobs_backfilled),
    }


LIST_METRICS: dict[str, dict[str, str]] = {
    "mean_work_response": {
        "units": "proc*s^2",
        "long_name": "mean response time weighted by work size*runtime (divided by jobs)",
    },
    "total_flow": {"units": "s", "long_name": "sum of response times (end - submit)"},
    "total_wflow": {
        "units": "proc*s^2",
        "long_name": "sum of response times weighted by work size*runtime",
    },
    "orders_computed": {
        "units": "1",
        "long_name": "computations of a PSRS or SMART order of the waiting jobs",
    },
    "n_preemptions": {"units": "1", "long_name": "suspensions of running jobs, per job and event"},
    "jobs_preempted": {"units": "1", "long_name": "jobs suspended at least once"},
}
"""Flow metrics of list-scheduling.md section 6 (the source's weighted and unweighted
response-time sums), the order count of the list policies and the preemptions of PFCFS."""


def list_metrics(schedule: Schedule) -> dict[str, float]:
    """Every metric of :data:`LIST_METRICS` for one schedule."""
    w = schedule.workload
    if len(w) == 0:
        values = dict.fromkeys(LIST_METRICS, float("nan"))
        values.update(
            total_flow=0.0,
            total_wflow=0.0,
            orders_computed=0.0,
            n_preemptions=0.0,
            jobs_preempted=0.0,
        )
        return values
    response = schedule.end - w.submit
    weighted = w.size.astype(np.float64) * schedule.runtime * response
    return {
        "mean_work_response": float(weighted.mean()),
        "total_flow": float(response.sum()),
        "total_wflow": float(weighted.sum()),
        "orders_computed": float(schedule.orders_computed),
        "n_preemptions": float(schedule.n_preemptions),
        "jobs_preempted": float(schedule.jobs_preempted),
    }


SAMPLES: dict[str, dict[str, str]] = {
    "wait": {"units": "s", "long_name": "waiting time of each job", "kind": "sample"},
    "response": {"units": "s", "long_name": "response time of each job", "kind": "sample"},
    "bsld": {"units": "1", "long_name": "bounded slowdown of each job", "kind": "sample"},
}
"""Per-job samples (results keep their quantiles and chosen percentiles: ``wait_p95``)."""


def job_samples(schedule: Schedule, bsld_floor_one: bool = True) -> dict[str, np.ndarray]:
    """Every job's wait, response time and bounded slowdown (as in `schedule_metrics`)."""
    submit = schedule.workload.submit
    wait = schedule.start - submit
    response = schedule.end - submit
    bsld = response / np.maximum(schedule.runtime, TAU)
    if bsld_floor_one:
        bsld = np.maximum(bsld, 1.0)
    return {
        "wait": np.asarray(wait, dtype=np.float64),
        "response": np.asarray(response, dtype=np.float64),
        "bsld": np.asarray(bsld, dtype=np.float64),
    }
