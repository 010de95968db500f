"""Build the workload and the machines of one grid run from its params.

Three sources: a mix of logs (``sites`` or a log-mix ``config``: section 1.3), or one trace on
a machine configuration (``trace`` with a machine ``config`` or ``machines``: section 1.4).
Then the wide-job cap splits jobs wider than ``max_width`` into independent parts, and jobs
that still fit nowhere are dropped and counted.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace

import numpy as np

from campaign.models.grid.configs import MACHINES, MIXES, LogMix, resolve_logs
from campaign.models.grid.mix import WEEK, mix
from campaign.models.rigid.workload import Workload, drop_warmup, from_trace, scale_load, window
from campaign.models.rigid.workloads import file_digest, load_trace, locate, workloads_folder

DEFAULT_MIX_DAYS = 180.0


@dataclass(frozen=True)
class GridInput:
    """What a grid run simulates: jobs, machine sizes, home machine per job, provenance."""

    workload: Workload
    machines: tuple[int, ...]
    home: np.ndarray
    dropped: dict[str, int]
    digests: tuple[str, ...]
    """SHA-256 of every trace file read, in log order."""
    origin: np.ndarray
    """1-based log each job comes from (all 1 for one trace)."""


def split_wide(workload: Workload, cap: np.ndarray) -> tuple[Workload, np.ndarray]:
    """Section 1.4 rule: a job wider than its cap c becomes floor(size/c) parts of c plus a
    remainder part, each with the job's submit, runtime and estimate. Returns the new
    workload and, per new job, the index of the job it came from."""
    size = workload.size
    cap = np.where(cap > 0, cap, np.iinfo(np.int64).max)
    parts = np.where(size > cap, -(-size // cap), 1)
    source = np.repeat(np.arange(len(size)), parts)
    first = np.repeat(np.cumsum(parts) - parts, parts)
    rank = np.arange(len(source)) - first
    width = np.where(
        parts[source] == 1,
        size[source],
        np.minimum(cap[source], size[source] - rank * cap[source]),
    )
    split = workload.take(source)
    return replace(split, size=width.astype(np.int64)), source


def _mix_spec(params: Mapping[str, object]) -> tuple[tuple[int, ...], list[tuple[str, float]]]:
    """Sites and (file, warm-up days) of the logs for a log-mix run."""
    if params.get("sites") is not None:
        sites = params["sites"]
        entries = []
        for entry in sites:
            trace = load_trace(str(entry["trace"]))
            processors = entry.get("processors") or trace.max_procs
            if processors is None:
                raise ValueError(
                    f"site trace {entry['trace']!r} has no MaxProcs: give 'processors'"
                )
            entries.append(
                (int(processors), str(entry["trace"]), float(entry.get("warmup_days", 0)))
            )
        machines = tuple(sorted(e[0] for e in entries))
        return machines, [(e[1], e[2]) for e in entries]
    mixdef: LogMix = MIXES[str(params["config"])]
    files = resolve_logs(mixdef, workloads_folder())
    return mixdef.sites, [(str(f), w) for f, (_, w) in zip(files, mixdef.logs, strict=True)]


def build(params: Mapping[str, object], workload_rng: np.random.Generator) -> GridInput:
    """The jobs and machines of one run (params already checked)."""
    sharing = str(params.get("sharing", "broker"))
    dropped: dict[str, int] = {}
    config = params.get("config")
    if params.get("sites") is not None or config in MIXES:
        machines, logs = _mix_spec(params)
        traces = [load_trace(name) for name, _ in logs]
        digests = tuple(file_digest(locate(name)) for name, _ in logs)
        widest = sum(machines) if sharing == "multisite" else max(machines)
        if params.get("max_width") is not None or params.get("max_parts") is not None:
            widest = sum(machines) * 1000  # split or capped below
        jobs = params.get("jobs")
        days = params.get("days")
        if jobs is None and days is None:
            days = DEFAULT_MIX_DAYS
        workload, origin, dropped = mix(
            traces,
            [w for _, w in logs],
            widest,
            days=days,
            jobs=jobs,
            offset_weeks=params.get("window_offset", 0),
            rng=workload_rng,
        )
    else:
        machines = MACHINES[str(config)] if config is not None else tuple(params["machines"])
        machines = tuple(sorted(int(m) for m in machines))
        name = str(params["trace"])
        trace = load_trace(name)
        digests = (file_digest(locate(name)),)
        workload, dropped = from_trace(trace, bool(params.get("clean", False)), 1 << 40)
        dropped.pop("too_wide", None)
        workload = drop_warmup(workload, float(params.get("warmup_days", 0)))
        weeks = int(params.get("window_offset", 0))
        if weeks and len(workload):
            workload = workload.take(workload.submit >= workload.submit[0] + weeks * WEEK)
        skip = int(params.get("skip_jobs", 0))
        workload = workload.take(slice(skip, None))
        workload = window(
            workload,
            params.get("jobs"),
            params.get("days"),
            str(params.get("window", "start")),
            workload_rng,
        )
        origin = np.ones(len(workload), dtype=np.int64)
    workload = scale_load(workload.rebased(), float(params.get("load", 1.0)))
    workload = replace(workload, processors=sum(machines))
    machines_arr = np.array(machines)
    home = np.arange(len(workload)) % len(machines)
    cap_param = params.get("max_width")
    if cap_param is not None:
        if cap_param == "largest":
            cap = np.full(len(workload), max(machines))
        elif cap_param == "local":
            cap = machines_arr[home]
        else:
            cap = np.full(len(workload), int(cap_param))
        workload, source = split_wide(workload, cap)
        home = home[source]
        origin = origin[source]
    if sharing == "multisite":
        parts = params.get("max_parts") or len(machines)
        limit = np.full(len(workload), sum(sorted(machines, reverse=True)[:parts]))
    elif sharing == "local":
        limit = machines_arr[home]
    else:
        limit = np.full(len(workload), max(machines))
    wide = workload.size > limit
    dropped["too_wide"] = dropped.get("too_wide", 0) + int(wide.sum())
    if wide.any():
        workload = workload.take(~wide)
        home = home[~wide]
        origin = origin[~wide]
    workload = replace(workload, job_id=np.arange(1, len(workload) + 1, dtype=np.int64))
    return GridInput(workload, machines, home, dropped, digests, origin)
