"""The application: one input file per task, sizes around the granularity, costs per job.

A job is the same set of tasks and files every time (the reuse sequence); only
pattern-search costs change from job to job.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

MIB = 2**20
JOB_BYTES = 2**31  # 2 GiB of input per job
COST_PER_BYTE = 0.001602171  # reference seconds per byte of input
APP_TYPES = ("visualization", "pattern_search")


@dataclass(frozen=True)
class Workload:
    """``sizes[t]``: bytes of task t's input file; ``costs[k][t]``: cost of task t in job k
    (reference seconds). Tasks are numbered in generation order."""

    sizes: tuple[float, ...]
    costs: tuple[tuple[float, ...], ...]

    def __post_init__(self) -> None:
        if not self.sizes or not self.costs:
            raise ValueError("a workload needs at least one task and one job")
        if any(len(job) != len(self.sizes) for job in self.costs):
            raise ValueError("every job needs one cost per task")

    @property
    def n_tasks(self) -> int:
        return len(self.sizes)

    @property
    def n_jobs(self) -> int:
        return len(self.costs)


def build_workload(
    rng: np.random.Generator,
    granularity_mb: float,
    app_heterogeneity: float,
    app_type: str,
    jobs: int,
    job_bytes: float = JOB_BYTES,
    cost_per_byte: float = COST_PER_BYTE,
) -> Workload:
    """Draw sizes s ~ U(A(1 - Ha/2), A(1 + Ha/2)) until their sum reaches ``job_bytes``
    (the last one is kept), then the costs: visualisation C = kappa*s for every job;
    pattern search C ~ U(1, kappa*s) drawn for all jobs up front, job by job.

    Sizes are drawn as one block of the largest count that could be needed and cut after the
    first prefix reaching ``job_bytes`` (same values as one-at-a-time draws).
    """
    if app_type not in APP_TYPES:
        raise ValueError(f"app_type must be one of {', '.join(APP_TYPES)}, got {app_type!r}")
    mean = granularity_mb * MIB
    low, high = mean * (1 - app_heterogeneity / 2), mean * (1 + app_heterogeneity / 2)
    block = math.ceil(job_bytes / low) + 1
    draws = rng.uniform(low, high, size=block)
    count = int(np.searchsorted(np.cumsum(draws), job_bytes, side="left")) + 1
    sizes = draws[:count]
    full = cost_per_byte * sizes
    if app_type == "visualization":
        costs = [full] * jobs
    else:
        costs = [rng.uniform(1.0, full) for _ in range(jobs)]
    return Workload(
        tuple(float(s) for s in sizes),
        tuple(tuple(float(c) for c in job) for job in costs),
    )
