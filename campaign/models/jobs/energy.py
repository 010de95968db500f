"""Energy of a schedule on a core-level platform (datacenter.md section 3).

Processors of ``cores`` cores each; a job takes the lowest-index idle cores when it starts
(homogeneous cores: datacenter.md's "fastest idle cores first, ties lowest index"). Per core,
with S = static_power / cores and D = dynamic_power: running D + S; idle with a busy
neighbour on its processor S; idle on a wholly idle processor 0.05 S. Energy integrates the
power of all cores from 0 to the makespan; EDP = energy * makespan.
"""

from __future__ import annotations

import heapq

import numpy as np

from campaign.models.jobs.simulate import Schedule

IDLE_FACTOR = 0.05

METRICS = {
    "energy": {"units": "J", "long_name": "energy of all cores from 0 to the makespan"},
    "edp": {"units": "J*s", "long_name": "energy-delay product: energy * makespan"},
}


def busy_cores(schedule: Schedule, cores: int) -> tuple[np.ndarray, np.ndarray]:
    """Change times and, after each, the busy-core count of every processor (rows)."""
    processors = schedule.processors[0]
    if processors % cores:
        raise ValueError(f"{processors} cores do not split into processors of {cores} cores")
    w = schedule.workload
    events = sorted(
        [
            (float(schedule.end[j]), 0, j)
            for j in range(len(w))
            if schedule.end[j] > schedule.start[j]
        ]
        + [
            (float(schedule.start[j]), 1, j)
            for j in range(len(w))
            if schedule.end[j] > schedule.start[j]
        ]
    )
    idle = list(range(processors))
    heapq.heapify(idle)
    held: dict[int, list[int]] = {}
    busy = np.zeros(processors // cores, dtype=np.int64)
    times = [0.0]
    counts = [busy.copy()]
    for when, kind, job in events:
        if kind == 0:
            for core in held.pop(job):
                heapq.heappush(idle, core)
                busy[core // cores] -= 1
        else:
            taken = [heapq.heappop(idle) for _ in range(int(w.size[job]))]
            held[job] = taken
            for core in taken:
                busy[core // cores] += 1
        if when == times[-1]:
            counts[-1] = busy.copy()
        else:
            times.append(when)
            counts.append(busy.copy())
    return np.asarray(times), np.asarray(counts)


def energy_metrics(
    schedule: Schedule, cores: int = 8, static_power: float = 50.0, dynamic_power: float = 100.0
) -> dict[str, float]:
    """``energy`` (J) and ``edp`` (J*s) of a one-site schedule."""
    if len(schedule.workload) == 0:
        return {"energy": float("nan"), "edp": float("nan")}
    makespan = float(schedule.end.max())
    times, counts = busy_cores(schedule, cores)
    static = static_power / cores
    power = counts * (dynamic_power + static) + np.where(
        counts > 0, (cores - counts) * static, cores * IDLE_FACTOR * static
    )
    total = power.sum(axis=1)
    spans = np.diff(np.append(times, makespan))
    energy = float((total * np.clip(spans, 0, None)).sum())
    return {"energy": energy, "edp": energy * makespan}
