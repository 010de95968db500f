"""Sizing a campaign from what its finished tasks cost: core-hours and the batch jobs
(count x walltime x memory) that finish it in a target time (in words: `campaign.render.costs`).
The estimate scales each cell's mean task time by the tasks the cell will run; a cell with no
finished task yet is taken at the mean of the others."""

from __future__ import annotations

import math
from dataclasses import dataclass

from campaign.results.resources import Costs

MEMORY_HEADROOM = 1.5  # a worker's memory: its largest peak times this
WALLTIME_MARGIN = 1.25  # a job's walltime: the target times this (workers retire before it)


@dataclass(frozen=True)
class Estimate:
    """What the whole campaign will cost, and the jobs that run it in ``target_hours``."""

    tasks: int
    core_hours: float
    workers: int
    jobs: int
    job_cores: int
    walltime_seconds: float
    job_memory: float
    at_most: str = ""  # with a precision target or a selection: the replicates the count allows


def estimate(
    found: Costs, cell_tasks: dict[str, int], target_hours: float, job_cores: int
) -> Estimate:
    """From ``found`` (the costs measured so far) and the tasks each cell runs in the whole
    campaign (``cell_tasks``, by cell label), its core-hours and the jobs that run it in
    ``target_hours`` with ``job_cores`` one-thread workers per job."""
    if not found.tasks:
        raise ValueError("no finished task to estimate from: run a pilot first")
    if not target_hours > 0 or job_cores < 1:
        raise ValueError("target_hours must be > 0 and job_cores >= 1")
    means = {cell.cell: cell.mean_seconds for cell in found.cells}
    total = sum(count * means.get(cell, found.mean_seconds) for cell, count in cell_tasks.items())
    core_hours = total / 3600
    workers = max(1, math.ceil(core_hours / target_hours))
    jobs = math.ceil(workers / job_cores)
    peak = found.peak_memory if math.isfinite(found.peak_memory) else 0.0
    memory = min(workers, job_cores) * peak * MEMORY_HEADROOM
    return Estimate(
        tasks=sum(cell_tasks.values()),
        core_hours=core_hours,
        workers=workers,
        jobs=jobs,
        job_cores=min(workers, job_cores),
        walltime_seconds=target_hours * 3600 * WALLTIME_MARGIN,
        job_memory=memory,
    )
