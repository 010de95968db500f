"""Metrics of a grid schedule (parallel-jobs.md section 7) and its feasibility check.

The per-job metrics are those of the ``jobs`` model (runtime before the multi-site stretch);
utilization counts the executed (stretched) time; the grid adds the per-site load spread
(``lbal_*``) and the co-allocation counts.
"""

from __future__ import annotations

import numpy as np

from campaign.models.grid.schedule import GridSchedule
from campaign.models.rigid.feasibility import (
    InfeasibleSchedule,
    check_job_times,
    check_runtime_limits,
)
from campaign.models.rigid.metrics import METRICS, schedule_metrics

GRID_METRICS: dict[str, dict[str, str]] = {
    **METRICS,
    "utilization": {
        "units": "1",
        "long_name": "executed work (with multi-site stretch) / (total processors * makespan)",
    },
    "lbal_size": {
        "units": "1",
        "long_name": "std over sites of the summed sizes of the jobs run there / site size",
    },
    "lbal_time": {
        "units": "s/proc",
        "long_name": "std over sites of the summed runtimes of the jobs run there / site size",
    },
    "lbal_work": {
        "units": "s",
        "long_name": "std over sites of the work (size*runtime) run there / site size",
    },
    "jobs_multisite": {"units": "1", "long_name": "jobs co-allocated over several machines"},
    "multisite_work_frac": {
        "units": "1",
        "long_name": "work (size*runtime) of co-allocated jobs / total work",
    },
    "utilization_machine{k}": {
        "units": "1",
        "long_name": "executed work of the parts on machine k / (its processors * makespan)",
    },
    "work_share_machine{k}": {
        "units": "1",
        "long_name": "executed work of the parts on machine k / executed work of all parts",
    },
    "jobs_remote": {"units": "1", "long_name": "jobs with a part outside their home machine"},
    "offers_made": {
        "units": "1",
        "long_name": "offers generated, summed over requests (0 outside sharing economic)",
    },
    "sites": {"units": "1", "long_name": "number of sites (machines)"},
    "processors": {"units": "1", "long_name": "processors of all sites together"},
}


def grid_metrics(schedule: GridSchedule, bsld_floor_one: bool = True) -> dict[str, float]:
    """Every metric of :data:`GRID_METRICS` except the workload counts."""
    values = schedule_metrics(schedule.as_schedule(), bsld_floor_one)
    machines = np.array(schedule.machines, dtype=np.float64)
    m = len(machines)
    n = len(schedule.workload)
    size_load = np.zeros(m)
    time_load = np.zeros(m)
    work_load = np.zeros(m)
    p = schedule.runtime
    executed_load = np.zeros(m)
    remote = 0
    home = schedule.home
    for j, parts in enumerate(schedule.parts):
        for machine, nodes in parts:
            size_load[machine] += nodes
            time_load[machine] += p[j]
            work_load[machine] += nodes * p[j]
            executed_load[machine] += nodes * schedule.executed[j]
        if home is not None and any(machine != home[j] for machine, _ in parts):
            remote += 1
    multisite = schedule.multisite
    work = schedule.workload.size * p
    nan = float("nan")
    cmax = values["makespan"]
    values.update(
        {
            "utilization": (
                float((schedule.workload.size * schedule.executed).sum() / (machines.sum() * cmax))
                if n and cmax > 0
                else nan
            ),
            "lbal_size": float((size_load / machines).std()),
            "lbal_time": float((time_load / machines).std()),
            "lbal_work": float((work_load / machines).std()),
            "jobs_multisite": float(multisite.sum()),
            "multisite_work_frac": float(work[multisite].sum() / work.sum())
            if work.sum() > 0
            else nan,
            **{
                f"utilization_machine{k}": float(executed_load[k - 1] / (machines[k - 1] * cmax))
                if n and cmax > 0
                else nan
                for k in range(1, m + 1)
            },
            **{
                f"work_share_machine{k}": float(executed_load[k - 1] / executed_load.sum())
                if executed_load.sum() > 0
                else nan
                for k in range(1, m + 1)
            },
            "jobs_remote": float(remote) if home is not None else nan,
            "offers_made": float(schedule.offers_made),
            "sites": float(m),
            "processors": float(machines.sum()),
        }
    )
    return values


def check_grid_feasible(schedule: GridSchedule, atol: float = 1e-9) -> None:
    """Raise :class:`InfeasibleSchedule` unless the grid schedule could have happened.

    Every job starts once, not before its submission, holds its processors for exactly its
    executed time, uses exactly its size over its parts; at no instant does a machine hold
    more processors than it has (each part of a co-allocated job counted on its machine);
    when the schedule names the processors of every part, each part holds distinct processors
    of its machine and no processor runs two jobs at once.
    """
    w = schedule.workload
    n = len(w)
    if n == 0:
        return
    check_job_times(w, schedule.start, schedule.end, schedule.executed, atol)
    check_runtime_limits(w, schedule.runtime, schedule.limit, atol)
    events: list[list[tuple[float, int]]] = [[] for _ in schedule.machines]
    for j, parts in enumerate(schedule.parts):
        if sum(nodes for _, nodes in parts) != w.size[j] or not parts:
            raise InfeasibleSchedule(f"job {w.job_id[j]} holds {parts}, its size is {w.size[j]}")
        if schedule.end[j] > schedule.start[j]:
            for machine, nodes in parts:
                events[machine].append((schedule.start[j], nodes))
                events[machine].append((schedule.end[j], -nodes))
    for machine, (capacity, items) in enumerate(zip(schedule.machines, events, strict=True)):
        if not items:
            continue
        times = np.array([e[0] for e in items])
        delta = np.array([e[1] for e in items])
        order = np.lexsort((delta, times))  # ends first at equal times: [start, end)
        usage = np.cumsum(delta[order])
        if usage.max() > capacity:
            at = times[order][usage.argmax()]
            raise InfeasibleSchedule(
                f"machine {machine} uses {usage.max()} processors at t = {at}, it has {capacity}"
            )
    if schedule.nodes is not None:
        check_processors(schedule, atol)


def check_processors(schedule: GridSchedule, atol: float = 1e-9) -> None:
    """The processor-level rules of a schedule that names the processors of every part."""
    w = schedule.workload
    busy: dict[tuple[int, int], list[tuple[float, float, int]]] = {}
    for j, (parts, nodes) in enumerate(zip(schedule.parts, schedule.nodes, strict=True)):
        for (machine, count), processors in zip(parts, nodes, strict=True):
            if len(set(processors)) != count or not all(
                0 <= q < schedule.machines[machine] for q in processors
            ):
                raise InfeasibleSchedule(
                    f"job {w.job_id[j]} holds processors {processors} of machine {machine} "
                    f"for a part of {count}"
                )
            if schedule.end[j] > schedule.start[j]:
                for q in processors:
                    busy.setdefault((machine, q), []).append(
                        (schedule.start[j], schedule.end[j], j)
                    )
    for (machine, q), spans in busy.items():
        spans.sort()
        for (_, b0, j0), (a1, _, j1) in zip(spans, spans[1:], strict=False):
            if a1 < b0 - atol:
                raise InfeasibleSchedule(
                    f"processor {q} of machine {machine} runs jobs {w.job_id[j0]} and "
                    f"{w.job_id[j1]} at t = {a1}"
                )
