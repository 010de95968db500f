"""Energy of a schedule on a core-level platform (datacenter.md section 3).

Processors of ``cores`` cores each; a job takes the lowest-index idle cores when it starts
(homogeneous cores: datacenter.md's "fastest idle cores first, ties lowest index"). Per core,
with S = static_power / cores and D = dynamic_power: running D + S; idle with a busy
neighbour on its processor S; idle on a wholly idle processor 0.05 S. Energy integrates the
power of all cores from 0 to the makespan; EDP = energy * makespan. ``edp_stepwise`` is what
the reference simulator's code computes instead: the sum of P * dt^2 over its simulation
steps, which end at every arrival, start, job end and core finish.

On a core-level platform (``rigid/platform.py``) the schedule records which cores each job ran on
and every processor type has its own S and D: :func:`platform_energy_metrics`. A preemptive
schedule (``schedule.segments``) names the processors of every execution: a core is busy only
while it executes.
"""

from __future__ import annotations

import heapq

import numpy as np

from campaign.models.rigid.simulate import Schedule

IDLE_FACTOR = 0.05

METRICS = {
    "energy": {"units": "J", "long_name": "energy of all cores from 0 to the makespan"},
    "edp": {"units": "J*s", "long_name": "energy-delay product: energy * makespan"},
    "edp_stepwise": {
        "units": "J*s",
        "long_name": "sum over simulation steps of power * step length^2 (reference code)",
    },
}
NAN_METRICS = dict.fromkeys(METRICS, float("nan"))


def busy_cores(schedule: Schedule, cores: int) -> tuple[np.ndarray, np.ndarray]:
    """Change times and, after each, the busy-core count of every processor (rows)."""
    processors = schedule.processors[0]
    if processors % cores:
        raise ValueError(f"{processors} cores do not split into processors of {cores} cores")
    if schedule.segments is not None:
        return _executing_cores(schedule, cores)
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
        _step(times, counts, when, busy)
    return np.asarray(times), np.asarray(counts)


def _executing_cores(schedule: Schedule, cores: int) -> tuple[np.ndarray, np.ndarray]:
    """`busy_cores` of a preemptive schedule, from its executions: a core is busy while it
    executes; the cores a suspended job holds, and those of a job paying a switch penalty
    (its execution begins after it), draw idle power."""
    events = sorted(
        (time, delta, processor // cores)
        for executions in schedule.segments
        for begin, end, processors in executions
        if end > begin
        for time, delta in ((float(begin), 1), (float(end), -1))
        for processor in processors
    )
    busy = np.zeros(schedule.processors[0] // cores, dtype=np.int64)
    times = [0.0]
    counts = [busy.copy()]
    for when, delta, processor in events:
        busy[processor] += delta
        _step(times, counts, when, busy)
    return np.asarray(times), np.asarray(counts)


def _step(times: list[float], counts: list[np.ndarray], when: float, busy: np.ndarray) -> None:
    """The busy cores per processor from ``when`` on: a new step, or the last one's counts
    replaced when it began at the same instant."""
    if when == times[-1]:
        counts[-1] = busy.copy()
    else:
        times.append(when)
        counts.append(busy.copy())


def energy_metrics(
    schedule: Schedule, cores: int = 8, static_power: float = 50.0, dynamic_power: float = 100.0
) -> dict[str, float]:
    """``energy`` (J) and ``edp`` (J*s) of a one-site schedule."""
    if len(schedule.workload) == 0:
        return dict(NAN_METRICS)
    times, counts = busy_cores(schedule, cores)
    static = static_power / cores
    power = counts * (dynamic_power + static) + np.where(
        counts > 0, (cores - counts) * static, cores * IDLE_FACTOR * static
    )
    steps = schedule.end
    if schedule.segments is not None:  # a preemptive schedule steps at every execution
        steps = [time for runs in schedule.segments for run in runs for time in run[:2]]
    return _integrate(schedule, times, power.sum(axis=1), steps)


def platform_energy_metrics(schedule: Schedule) -> dict[str, float]:
    """``energy``, ``edp`` and ``edp_stepwise`` of a schedule on a core-level platform, from
    the cores each job actually ran on and each processor type's S and D."""
    platform = schedule.platform
    if platform is None or schedule.cores is None:
        raise ValueError("this schedule ran without a core-level platform")
    w = schedule.workload
    if len(w) == 0:
        return dict(NAN_METRICS)
    owner = platform.owner
    static = np.zeros(len(platform.processors))
    np.add.at(static, owner, platform.static)
    busy = np.zeros(len(static), dtype=np.int64)
    dynamic = np.zeros(len(static))
    ran = [j for j in range(len(w)) if schedule.end[j] > schedule.start[j]]
    events = sorted(
        [(float(schedule.end[j]), 0, j) for j in ran]
        + [(float(schedule.start[j]), 1, j) for j in ran]
    )
    times = [0.0]
    power = [float((IDLE_FACTOR * static).sum())]
    for when, kind, job in events:
        sign = 1 if kind else -1
        for core in schedule.cores[job]:
            busy[owner[core]] += sign
            dynamic[owner[core]] += sign * platform.dynamic[core]
        total = float(np.where(busy > 0, dynamic + static, IDLE_FACTOR * static).sum())
        if when == times[-1]:
            power[-1] = total
        else:
            times.append(when)
            power.append(total)
    # A core's own work ends at start + ops / speed (a step of the reference simulator).
    finishes = [
        min(float(schedule.start[j]) + float(w.ops[j]) / platform.speed[core], schedule.end[j])
        for j in ran
        for core in schedule.cores[j]
    ]
    return _integrate(schedule, np.asarray(times), np.asarray(power), finishes)


def _integrate(
    schedule: Schedule, times: np.ndarray, power: np.ndarray, finishes
) -> dict[str, float]:
    """Energy, EDP and stepwise EDP of a total power that is ``power[k]`` from ``times[k]``
    to the next change (the last one until the makespan)."""
    makespan = float(schedule.end.max())
    spans = np.diff(np.append(times, makespan))
    energy = float((power * np.clip(spans, 0, None)).sum())
    steps = np.unique(
        np.concatenate(
            [[0.0, makespan], schedule.workload.submit, schedule.start, schedule.end, finishes]
        )
    )
    steps = steps[steps <= makespan]
    at = power[np.searchsorted(times, steps[:-1], side="right") - 1]
    stepwise = float((at * np.diff(steps) ** 2).sum())
    return {"energy": energy, "edp": energy * makespan, "edp_stepwise": stepwise}
