"""Metrics of one simulated job sequence: makespans, waste, traffic and diagnostics."""

from __future__ import annotations

import math

import numpy as np

from .simulator import SimResult

METRICS: dict[str, dict[str, str]] = {
    "makespan": {"units": "s", "long_name": "mean makespan over the jobs of the sequence"},
    "makespan_job{k}": {"units": "s", "long_name": "last completion of job k minus its release"},
    "wasted_cpu_pct": {
        "units": "%",
        "long_name": "work of killed copies / cost of the tasks, pooled over the jobs",
    },
    "wasted_cpu_job{k}_pct": {
        "units": "%",
        "long_name": "work of killed copies of job k / cost of its tasks",
    },
    "wasted_bandwidth_pct": {
        "units": "%",
        "long_name": "bytes moved for copies that did not win / input bytes, pooled over the jobs",
    },
    "wasted_bandwidth_job{k}_pct": {
        "units": "%",
        "long_name": "bytes moved for losing copies of job k / its input bytes",
    },
    "transferred_bytes": {
        "units": "bytes",
        "long_name": "bytes moved over the home link, cut transfers included, all jobs",
    },
    "replicas_started": {
        "units": "1",
        "long_name": "copies started beyond the first of each task, all jobs",
    },
    "n_tasks": {"units": "1", "long_name": "tasks per job"},
    "n_processors": {"units": "1", "long_name": "processors in the grid"},
    "n_sites": {"units": "1", "long_name": "sites (each with one data server)"},
    "task_completion": {
        "units": "s",
        "long_name": "completion of each task minus its job's release, all jobs",
        "kind": "sample",
    },
}


def summarize(result: SimResult) -> dict[str, float | np.ndarray]:
    """Per-job and pooled metrics; waste is relative to the job's own demand and pooled as
    sum over jobs / sum over jobs. Sums use math.fsum so they do not depend on order."""
    jobs = result.jobs
    out: dict[str, float] = {}
    out["makespan"] = math.fsum(j.makespan for j in jobs) / len(jobs)
    for k, job in enumerate(jobs, start=1):
        out[f"makespan_job{k}"] = job.makespan
    out["wasted_cpu_pct"] = 100.0 * _ratio(
        math.fsum(j.wasted_work for j in jobs), math.fsum(j.cost for j in jobs)
    )
    out["wasted_bandwidth_pct"] = 100.0 * _ratio(
        math.fsum(j.wasted_bytes for j in jobs), math.fsum(j.size for j in jobs)
    )
    for k, job in enumerate(jobs, start=1):
        out[f"wasted_cpu_job{k}_pct"] = 100.0 * _ratio(job.wasted_work, job.cost)
        out[f"wasted_bandwidth_job{k}_pct"] = 100.0 * _ratio(job.wasted_bytes, job.size)
    out["transferred_bytes"] = math.fsum(j.transferred_bytes for j in jobs)
    out["replicas_started"] = float(sum(j.replicas for j in jobs))
    out["n_tasks"] = float(result.n_tasks)
    out["n_processors"] = float(result.n_processors)
    out["n_sites"] = float(result.n_sites)
    out["task_completion"] = np.array(
        [c - job.release for job in jobs for c in job.completions], dtype=np.float64
    )
    return out


def _ratio(part: float, whole: float) -> float:
    return part / whole if whole > 0 else math.nan
