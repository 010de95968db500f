"""What tasks cost, in words: `campaign status`'s lines and `campaign plan --estimate`'s
(the numbers come from `campaign.results.resources` and `campaign.analysis.sizing`)."""

from __future__ import annotations

import math

import numpy as np

from campaign.analysis.sizing import Estimate
from campaign.results.resources import Costs


def describe_costs(found: Costs, slowest: int = 3) -> list[str]:
    """`status`'s lines on what the finished tasks cost."""
    if not found.tasks:
        return []
    lines = [
        f"  cost: {found.tasks} finished tasks took {found.seconds / 3600:.3g} core-hours "
        f"(mean {seconds(found.mean_seconds)} a task); peak memory {size(found.peak_memory)}"
    ]
    for cell in found.cells[:slowest]:
        lines.append(
            f"    {cell.cell}: mean {seconds(cell.mean_seconds)}, longest "
            f"{seconds(cell.max_seconds)}, peak {size(cell.peak_memory)} ({cell.tasks} tasks)"
        )
    return lines


def seconds(value: float) -> str:
    if not np.isfinite(value):
        return "?"
    if value < 1:
        return f"{value * 1000:.3g} ms"
    if value < 120:
        return f"{value:.3g} s"
    if value < 7200:
        return f"{value / 60:.3g} min"
    return f"{value / 3600:.3g} h"


def size(value: float) -> str:
    if not np.isfinite(value):
        return "unknown"
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if value >= scale:
            return f"{value / scale:.3g} {unit}"
    return f"{value:.0f} B"


def describe_estimate(found: Costs, planned: Estimate, target_hours: float) -> list[str]:
    """The lines `campaign plan --estimate` prints."""
    lines = [
        f"estimate from {found.tasks} finished tasks of {len(found.cells)} cells "
        f"(mean {seconds(found.mean_seconds)} a task):",
        f"  the campaign: {planned.tasks} tasks, about {planned.core_hours:.3g} core-hours",
    ]
    if planned.at_most:  # the jobs below are sized for the most it may run
        lines[-1] = (
            f"  the campaign: at most {planned.tasks} tasks ({planned.at_most}), about "
            f"{planned.core_hours:.3g} core-hours at most"
        )
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
        f"memory {gigabytes(planned.job_memory)} ({planned.job_cores} "
        f"worker{'s' if planned.job_cores != 1 else ''} a job)"
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
