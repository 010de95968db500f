"""Sizing a campaign from what its finished tasks cost: core-hours, the slowest cells, the
largest peak memory, and the batch jobs (count x walltime x memory) that finish it in a
target time. The estimate scales each cell's mean task time by the tasks the cell will
run; a cell with no finished task yet is taken at the mean of the others."""

from __future__ import annotations

import math
from dataclasses import dataclass

from campaign.results.resources import Costs, seconds, size

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


def describe_estimate(found: Costs, planned: Estimate, target_hours: float) -> list[str]:
    """The lines `campaign plan --estimate` prints."""
    lines = [
        f"estimate from {found.tasks} finished tasks of {len(found.cells)} cells "
        f"(mean {seconds(found.mean_seconds)} a task):",
        f"  the campaign: {planned.tasks} tasks, about {planned.core_hours:.3g} core-hours",
    ]
    for cell in found.cells[:3]:
        lines.append(
            f"  slow cell: {cell.cell}: {seconds(cell.mean_seconds)} a task "
            f"(longest {seconds(cell.max_seconds)})"
        )
    biggest = max(found.cells, key=lambda cell: (cell.peak_memory, cell.cell))
    lines.append(f"  largest peak memory: {size(found.peak_memory)} ({biggest.cell})")
    hours, rest = divmod(int(round(planned.walltime_seconds)), 3600)
    walltime = f"{hours:02d}:{rest // 60:02d}:{rest % 60:02d}"
    workers = f"{planned.workers} worker{'s' if planned.workers != 1 else ''}"
    jobs = f"{planned.jobs} job{'s' if planned.jobs != 1 else ''}"
    lines.append(
        f"  to finish in {target_hours:g} h: {workers}, as {jobs} x walltime {walltime} x "
        f"memory {gigabytes(planned.job_memory)} ({planned.job_cores} workers a job)"
    )
    lines.append(
        f"  in a cluster file: cores: {planned.job_cores}, processes: {planned.job_cores}, "
        f'memory: {gigabytes(planned.job_memory)}, walltime: "{walltime}"; '
        f"scale: {{jobs: {planned.jobs}}}"
    )
    return lines


def gigabytes(value: float) -> str:
    """Memory as a batch system takes it: whole gigabytes, at least 1GB."""
    return f"{max(1, math.ceil(value / 1e9))}GB"
