"""Build the workload and the machines of one grid run from its parsed params.

Three sources: a mix of logs (``sites`` or a log-mix ``config``: section 1.3), or one trace on
a machine configuration (``trace`` with a machine ``config`` or ``machines``: section 1.4).
Then the wide-job cap splits jobs wider than ``max_width`` into independent parts, and jobs
that still fit nowhere are dropped and counted.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from campaign.models.grid.configs import MACHINES, MIXES, LogMix, resolve_logs
from campaign.models.grid.economic import EconomicGrid
from campaign.models.grid.mix import WEEK, mix
from campaign.models.grid.params import GridParams
from campaign.models.rigid.workload import Workload, drop_warmup, from_trace, scale_load, window
from campaign.models.rigid.workloads import file_digest, load_trace, locate, workloads_folder


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


def _mix_spec(p: GridParams) -> tuple[tuple[int, ...], list[tuple[str, float]]]:
    """Sites and (file, warm-up days) of the logs for a log-mix run."""
    if p.sites is not None:
        entries = []
        for site in p.sites:
            processors = site.processors or load_trace(site.trace).max_procs
            if processors is None:
                raise ValueError(f"site trace {site.trace!r} has no MaxProcs: give 'processors'")
            entries.append((int(processors), site.trace, site.warmup_days))
        machines = tuple(sorted(e[0] for e in entries))
        return machines, [(e[1], e[2]) for e in entries]
    mixdef: LogMix = MIXES[str(p.config)]
    files = resolve_logs(mixdef, workloads_folder())
    return mixdef.sites, [(str(f), w) for f, (_, w) in zip(files, mixdef.logs, strict=True)]


def _too_wide(
    p: GridParams, size: np.ndarray, home: np.ndarray, machines: tuple[int, ...]
) -> np.ndarray:
    """The jobs no placement of the sharing mode could ever hold, even on idle machines."""
    if p.sharing == "economic":
        grid = EconomicGrid(machines, [], [], [], [], p.options().economic, 0.0, p.max_parts)
        fits = {}
        for key in zip(size.tolist(), home.tolist(), strict=True):
            if key not in fits:
                fits[key] = grid.placeable(*key)
        keys = zip(size.tolist(), home.tolist(), strict=True)
        return np.array([not fits[key] for key in keys], dtype=bool)
    if p.sharing == "multisite":
        parts = p.max_parts or len(machines)
        limit = sum(sorted(machines, reverse=True)[:parts])
    elif p.sharing == "local":
        return size > np.array(machines)[home]
    else:
        limit = max(machines)
    return size > limit


def build(p: GridParams, workload_rng: np.random.Generator) -> GridInput:
    """The jobs and machines of one run."""
    dropped: dict[str, int] = {}
    if p.is_mix:
        machines, logs = _mix_spec(p)
        traces = [load_trace(name) for name, _ in logs]
        digests = tuple(file_digest(locate(name)) for name, _ in logs)
        widest = sum(machines) if p.sharing in ("multisite", "economic") else max(machines)
        if p.max_width is not None or p.max_parts is not None:
            widest = sum(machines) * 1000  # split or capped below
        workload, origin, dropped = mix(
            traces,
            [w for _, w in logs],
            widest,
            days=p.days,
            jobs=p.jobs,
            offset_weeks=p.window_offset,
            rng=workload_rng,
        )
    else:
        machines = MACHINES[str(p.config)] if p.config is not None else p.machines
        machines = tuple(sorted(int(m) for m in machines))
        trace = load_trace(p.trace)
        digests = (file_digest(locate(p.trace)),)
        workload, dropped = from_trace(trace, p.clean, 1 << 40)
        dropped.pop("too_wide", None)
        workload = drop_warmup(workload, p.warmup_days)
        weeks = int(p.window_offset)
        if weeks and len(workload):
            workload = workload.take(workload.submit >= workload.submit[0] + weeks * WEEK)
        workload = workload.take(slice(p.skip_jobs, None))
        workload = window(workload, p.jobs, p.days, p.window, workload_rng)
        origin = np.ones(len(workload), dtype=np.int64)
    workload = scale_load(workload.rebased(), p.load)
    workload = replace(workload, processors=sum(machines))
    machines_arr = np.array(machines)
    home = np.arange(len(workload)) % len(machines)
    if p.max_width is not None:
        if p.max_width == "largest":
            cap = np.full(len(workload), max(machines))
        elif p.max_width == "local":
            cap = machines_arr[home]
        else:
            cap = np.full(len(workload), int(p.max_width))
        workload, source = split_wide(workload, cap)
        home = home[source]
        origin = origin[source]
    wide = _too_wide(p, workload.size, home, machines)
    dropped["too_wide"] = dropped.get("too_wide", 0) + int(wide.sum())
    if wide.any():
        workload = workload.take(~wide)
        home = home[~wide]
        origin = origin[~wide]
    if len(workload) == 0:
        gone = ", ".join(f"{n} {reason}" for reason, n in dropped.items() if n) or "none"
        raise ValueError(
            f"no job is left to simulate (jobs dropped: {gone}; then warmup_days, "
            "window_offset, skip_jobs, days and jobs shape the rest): every metric would be "
            "undefined"
        )
    workload = replace(workload, job_id=np.arange(1, len(workload) + 1, dtype=np.int64))
    return GridInput(workload, machines, home, dropped, digests, origin)
