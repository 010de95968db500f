"""Mix several SWF logs into one grid workload (parallel-jobs.md section 1.3).

Each log is cleaned, read on the clock of the westernmost time zone of the set, stripped of its
warm-up days, aligned so that t = 0 is its first Monday 00:00 after warm-up and cut after its
last complete Sunday; users are renumbered per log (ascending original id, offset by the users
of the logs before it); the logs are merged by re-based submit time (ties: log order, then
file order) up to the horizon, a log exhausted early being repeated shifted by its span.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from campaign.models.rigid.clock import utc_offset
from campaign.models.rigid.swf import SwfTrace, clean_mask, job_sizes
from campaign.models.rigid.workload import DAY, Workload

WEEK = 7 * DAY


def next_monday(moment: float) -> float:
    """The first Monday 00:00 at or after ``moment`` (seconds of a local clock since 1970)."""
    day = math.ceil(moment / DAY)
    weekday = (day + 3) % 7  # 1970-01-01 was a Thursday; Monday = 0
    return (day + (7 - weekday) % 7) * DAY


def last_monday(moment: float) -> float:
    """The last Monday 00:00 at or before ``moment``: the end of the last complete Sunday."""
    day = math.floor(moment / DAY)
    return (day - (day + 3) % 7) * DAY


@dataclass(frozen=True)
class AlignedLog:
    """One cleaned, aligned log: jobs re-based to its first Monday, users 1..users."""

    submit: np.ndarray
    size: np.ndarray
    runtime: np.ndarray
    estimate: np.ndarray
    user: np.ndarray
    span: float
    """Whole weeks from the first Monday to the end of the last complete Sunday (s)."""
    users: int
    dropped: dict[str, int]


def align(trace: SwfTrace, warmup_days: float, clock_offset: float, max_size: int) -> AlignedLog:
    """Steps 1-5 of the mixing procedure for one log (users still numbered from 1)."""
    start = trace.header_int("UnixStartTime")
    if start is None:
        raise ValueError(f"trace {trace.path} has no UnixStartTime header: cannot align it")
    keep, dropped = clean_mask(trace)
    size = job_sizes(trace)
    wide = keep & (size > max_size)
    dropped["too_wide"] = int(wide.sum())
    keep &= ~wide
    local = start + trace["submit_time"] + clock_offset
    if not keep.any():
        raise ValueError(f"trace {trace.path} has no job left after cleaning")
    first = next_monday(float(local[keep].min()) + warmup_days * DAY)
    last = last_monday(float(local[keep].max()))
    if last - first < WEEK:
        raise ValueError(
            f"trace {trace.path} has no complete week after {warmup_days} warm-up days"
        )
    keep &= (local >= first) & (local < last)
    order = np.flatnonzero(keep)
    order = order[np.argsort(local[order], kind="stable")]
    users, user = np.unique(trace["user_id"][order], return_inverse=True)
    return AlignedLog(
        submit=local[order] - first,
        size=size[order].astype(np.int64),
        runtime=trace["run_time"][order].astype(np.float64),
        estimate=trace["requested_time"][order].astype(np.float64),
        user=user.astype(np.int64) + 1,
        span=last - first,
        users=len(users),
        dropped=dropped,
    )


def rotate(log: AlignedLog, weeks: int) -> AlignedLog:
    """The log started ``weeks`` weeks later: the weeks skipped come after its end, as the
    start of its repetition (so every offset replays whole weeks of the real log)."""
    shift = (weeks * WEEK) % log.span
    if shift == 0:
        return log
    moved = np.where(log.submit >= shift, log.submit - shift, log.submit - shift + log.span)
    order = np.argsort(moved, kind="stable")
    return AlignedLog(
        submit=moved[order],
        size=log.size[order],
        runtime=log.runtime[order],
        estimate=log.estimate[order],
        user=log.user[order],
        span=log.span,
        users=log.users,
        dropped=log.dropped,
    )


def merge(
    logs: list[AlignedLog], days: float | None = None, jobs: int | None = None
) -> tuple[Workload, np.ndarray]:
    """Steps 5-7: the merged workload (jobs 1..n) and the 1-based origin log of every job."""
    if days is None and jobs is None:
        raise ValueError("mixing logs needs a horizon: 'days' or 'jobs'")
    offsets = np.cumsum([0] + [log.users for log in logs[:-1]])
    horizon = days * DAY if days is not None else max(log.span for log in logs)
    while True:
        pieces = []
        for index, log in enumerate(logs):
            copies = max(1, math.ceil(horizon / log.span))
            for copy in range(copies):
                submit = log.submit + copy * log.span
                take = submit < horizon
                pieces.append((submit[take], index, copy, log, take))
        total = sum(int(piece[4].sum()) for piece in pieces)
        if jobs is None or total >= jobs:
            break
        horizon *= 2
    submit = np.concatenate([p[0] for p in pieces])
    log_index = np.concatenate([np.full(len(p[0]), p[1]) for p in pieces])
    copy = np.concatenate([np.full(len(p[0]), p[2]) for p in pieces])
    position = np.concatenate([np.flatnonzero(p[4]) for p in pieces])
    order = np.lexsort((position, copy, log_index, submit))
    if jobs is not None:
        order = order[:jobs]

    def column(name: str) -> np.ndarray:
        values = np.concatenate([getattr(p[3], name)[p[4]] for p in pieces])
        return values[order]

    user = column("user") + offsets[log_index[order]]
    estimate = column("estimate")
    workload = Workload(
        submit=submit[order],
        size=column("size"),
        runtime=column("runtime"),
        estimate=np.where(estimate > 0, estimate, np.nan),
        user=user.astype(np.int64),
        job_id=np.arange(1, len(order) + 1, dtype=np.int64),
        processors=None,
    )
    return workload, log_index[order] + 1


def mix(
    traces: list[SwfTrace],
    warmup_days: list[float],
    max_size: int,
    days: float | None = None,
    jobs: int | None = None,
    offset_weeks: int | str = 0,
    rng: np.random.Generator | None = None,
) -> tuple[Workload, np.ndarray, dict[str, int]]:
    """The whole procedure over several logs: workload, origin log, jobs dropped per reason.

    ``offset_weeks`` starts every log that many weeks after its first Monday (``"random"``:
    drawn uniformly below the shortest log's length in weeks, from ``rng``), so replicates
    can replay different real periods.
    """
    west = min(utc_offset(trace) for trace in traces)
    logs = [align(t, w, west, max_size) for t, w in zip(traces, warmup_days, strict=True)]
    if offset_weeks == "random":
        if rng is None:
            raise ValueError("a random window offset needs the workload random stream")
        offset_weeks = int(rng.integers(int(min(log.span for log in logs) // WEEK)))
    logs = [rotate(log, int(offset_weeks)) for log in logs]
    dropped: dict[str, int] = {}
    for log in logs:
        for reason, count in log.dropped.items():
            dropped[reason] = dropped.get(reason, 0) + count
    workload, origin = merge(logs, days, jobs)
    return workload, origin, dropped
