"""Check that a simulated schedule could really have happened.

Used by every test on every simulated schedule: a bug in a scheduler shows up as an
impossible schedule long before it shows up as a wrong mean.
"""

from __future__ import annotations

import numpy as np

from campaign.models.rigid.simulate import Schedule


class InfeasibleSchedule(AssertionError):
    """A schedule breaks a physical rule (the message says which job and why)."""


def check_job_times(
    w, start: np.ndarray, end: np.ndarray, executed: np.ndarray, atol: float
) -> None:
    """The per-job rules: finite times, no start before submission, exactly the executed
    time between start and end, never past the kill limit nor the actual runtime."""
    bad = ~(np.isfinite(start) & np.isfinite(end))
    if bad.any():
        raise InfeasibleSchedule(f"job {w.job_id[bad.argmax()]} never started or never ended")
    early = start < w.submit - atol
    if early.any():
        k = int(early.argmax())
        raise InfeasibleSchedule(
            f"job {w.job_id[k]} starts at {start[k]} before its submission {w.submit[k]}"
        )
    length = end - start
    wrong = np.abs(length - executed) > atol * np.maximum(1.0, executed)
    if wrong.any():
        k = int(wrong.argmax())
        raise InfeasibleSchedule(
            f"job {w.job_id[k]} runs {length[k]} s, its executed time is {executed[k]} s"
        )


def check_runtime_limits(w, runtime: np.ndarray, limit: np.ndarray, atol: float) -> None:
    """No job's (unstretched) runtime exceeds its kill limit or its actual runtime."""
    over = (runtime > limit + atol) | (runtime > w.runtime + atol)
    if over.any():
        k = int(over.argmax())
        raise InfeasibleSchedule(
            f"job {w.job_id[k]} runs {runtime[k]} s past its kill limit {limit[k]} s "
            f"or its actual runtime {w.runtime[k]} s"
        )


def check_feasible(schedule: Schedule, atol: float = 1e-9) -> None:
    """Raise :class:`InfeasibleSchedule` unless every rule holds.

    Rules: every job starts and ends exactly once with finite times; no job starts before its
    submission; every job runs exactly its executed time, which never exceeds its kill limit
    nor its actual runtime; at no instant does a site use more processors than it has (jobs
    occupy [start, end); a job never runs on a site narrower than itself). A schedule of a
    preemptive policy is checked by :func:`check_segments`.
    """
    if schedule.segments is not None:
        check_segments(schedule, atol)
        return
    w = schedule.workload
    n = len(w)
    for name in ("start", "end", "runtime", "site"):
        if len(getattr(schedule, name)) != n:
            raise InfeasibleSchedule(f"{name} has {len(getattr(schedule, name))} entries, {n} jobs")
    if n == 0:
        return
    check_job_times(w, schedule.start, schedule.end, schedule.runtime, atol)
    check_runtime_limits(w, schedule.runtime, schedule.limit, atol)
    for index, processors in enumerate(schedule.processors):
        on_site = schedule.site == index
        if not on_site.any():
            continue
        size = w.size[on_site]
        if (size > processors).any():
            k = int(np.flatnonzero(on_site)[(size > processors).argmax()])
            raise InfeasibleSchedule(f"job {w.job_id[k]} is wider than site {index}")
        begin = schedule.start[on_site]
        finish = schedule.end[on_site]
        busy = finish > begin
        times = np.concatenate([begin[busy], finish[busy]])
        delta = np.concatenate([size[busy], -size[busy]])
        # At equal times, ends (negative deltas) come first: [start, end) intervals.
        order = np.lexsort((delta, times))
        usage = np.cumsum(delta[order])
        if len(usage) and usage.max() > processors:
            at = times[order][usage.argmax()]
            raise InfeasibleSchedule(
                f"site {index} uses {usage.max()} processors at t = {at}, it has {processors}"
            )


def check_segments(schedule: Schedule, atol: float = 1e-9) -> None:
    """The rules of a schedule whose jobs may be suspended (one site, numbered processors):
    every job executes in time-ordered, disjoint segments within [start, end] that add up to
    exactly its executed time, each on ``size`` distinct processors of the site, the last
    ending at its end; no processor ever executes two jobs at once."""
    w = schedule.workload
    n = len(w)
    segments = schedule.segments
    if len(segments) != n:
        raise InfeasibleSchedule(f"segments has {len(segments)} entries, {n} jobs")
    if n == 0:
        return
    (processors,) = schedule.processors
    length = np.array([sum(b - a for a, b, _ in parts) for parts in segments])
    check_job_times(w, schedule.start, schedule.start + length, schedule.runtime, atol)
    check_runtime_limits(w, schedule.runtime, schedule.limit, atol)
    busy: dict[int, list[tuple[float, float, int]]] = {}
    for job, parts in enumerate(segments):
        name = w.job_id[job]
        if not parts:
            raise InfeasibleSchedule(f"job {name} never executes")
        if parts[0][0] < schedule.start[job] - atol or abs(parts[-1][1] - schedule.end[job]) > atol:
            raise InfeasibleSchedule(f"job {name} executes outside [start, end]")
        before = -np.inf
        for a, b, procs in parts:
            if a < before - atol or b < a - atol:
                raise InfeasibleSchedule(f"job {name} has overlapping or reversed segments")
            before = b
            if len(set(procs)) != w.size[job] or not all(0 <= p < processors for p in procs):
                raise InfeasibleSchedule(
                    f"job {name} executes on {len(set(procs))} processors of the site, "
                    f"its size is {w.size[job]}"
                )
            if b > a:
                for p in procs:
                    busy.setdefault(p, []).append((a, b, job))
    _check_one_job_at_a_time(busy, w.job_id, atol)


def _check_one_job_at_a_time(
    busy: dict[int, list[tuple[float, float, int]]], job_id: np.ndarray, atol: float
) -> None:
    """No processor executes two jobs at once (``busy``: processor -> its segments)."""
    for p, spans in busy.items():
        spans.sort()
        for (_, b0, j0), (a1, _, j1) in zip(spans, spans[1:], strict=False):
            if a1 < b0 - atol:
                raise InfeasibleSchedule(
                    f"processor {p} executes jobs {job_id[j0]} and {job_id[j1]} at t = {a1}"
                )
