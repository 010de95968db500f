"""The discrete-event loop that replays a workload on one site or a grid of sites.

At one time t: (1) all completions (ties: job index), (2) all arrivals in input order, each
predicted (if asked) and placed on a unit at once, (3) one scheduling pass per unit in index
order (parallel-jobs.md section 3). A unit is anything driven like a
:class:`~campaign.models.rigid.site.Site` (``queue``, ``submit``, ``complete``, ``schedule``,
``wakeup``), such as a grid's pool of machines behind one queue. The loop knows nothing about
policies or brokers: a broker plugs in as ``place``, a runtime predictor as ``predict``.

A unit whose ``preemptive`` is true may suspend and resume running jobs: it gets a pass at
every event time (even with an empty queue), lists in ``moves`` the jobs its passes suspended
(job, None) and resumed (job, time their execution goes on), which the loop takes with
``take_moves()``, and asks for a pass of its own at ``alarm`` (None: none). A suspended job's
end is postponed by the time it waits.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Sequence
from typing import Protocol

import numpy as np


class Unit(Protocol):
    queue: list[int]

    def submit(self, job: int, t: float) -> None: ...

    def complete(self, job: int, t: float) -> None: ...

    def schedule(self, t: float) -> list[int]: ...

    def wakeup(self, t: float) -> float | None: ...


def replay(
    submit: Sequence[float],
    units: Sequence[Unit],
    runtime: Sequence[float] | None = None,
    duration: Callable[[int, int, float], float] | None = None,
    place: Callable[[int, float], int] | None = None,
    user: Sequence[int] | None = None,
    predict: Callable[[int, list[int]], None] | None = None,
    started: Callable[[int, float], None] | None = None,
    completed: Callable[[int, int, float], None] | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Simulate; returns start, end and unit index per job.

    A job runs ``runtime[job]`` seconds, or, with ``duration``, ``duration(job, unit, t)``
    seconds asked when it starts at t on that unit. ``place(job, t) -> unit index`` is called
    once per arrival (default: every job on unit 0). ``predict(job, history)`` is called at
    arrival, before ``place``, with the same user's (``user[job]``) completed jobs in
    completion order, oldest first (same-time completions by job index). ``started(job, t)``
    and ``completed(job, unit, t)`` are told of every start and end.
    """
    if (runtime is None) == (duration is None):
        raise ValueError("give exactly one of runtime and duration")
    n = len(submit)
    start = [0.0] * n
    end = [0.0] * n
    where = [0] * n
    history: dict[int, list[int]] = {}
    heap: list[tuple[float, int]] = []
    pop = heapq.heappop
    push = heapq.heappush
    single = units[0] if len(units) == 1 and place is None else None
    movers = [unit for unit in units if getattr(unit, "preemptive", False)]
    numbered = [(k, unit, unit in movers) for k, unit in enumerate(units)]
    mover = movers[0] if len(movers) == 1 else None
    void: dict[tuple[float, int], int] = {}
    """End events of suspended jobs, no longer due (count per event)."""
    due: dict[int, float] = {}
    """End of every job resumed at least once (others end at start + runtime)."""
    left: dict[int, float] = {}
    """Remaining time of every suspended job."""
    if movers and runtime is None:
        raise ValueError("a preemptive unit needs runtimes, not durations asked at start")
    i = 0
    t = 0.0
    while True:
        alarm = None  # the soonest pass a preemptive unit asks for
        if movers:
            while void and heap and heap[0] in void:
                event = pop(heap)
                count = void[event]
                if count == 1:
                    del void[event]
                else:
                    void[event] = count - 1
            if mover is not None:
                alarm = mover.alarm
            else:
                for unit in movers:
                    moment = unit.alarm
                    if moment is not None and (alarm is None or moment < alarm):
                        alarm = moment
        if heap and (i >= n or heap[0][0] <= submit[i]):
            t = heap[0][0]
        elif i < n:
            t = submit[i]
        else:
            # Nothing left to happen; a unit may still ask for a pass (accasim_easy).
            wakeups = [w for w in (unit.wakeup(t) for unit in units) if w is not None]
            if alarm is not None:
                wakeups.append(alarm)
            if not wakeups:
                break
            t = min(wakeups)
        if alarm is not None and alarm < t:
            t = alarm
        while heap and heap[0][0] == t:
            event = pop(heap)
            job = event[1]
            if void and event in void:
                count = void[event]
                if count == 1:
                    del void[event]
                else:
                    void[event] = count - 1
                continue
            end[job] = t
            units[where[job]].complete(job, t)
            if completed is not None:
                completed(job, where[job], t)
            if user is not None:
                history.setdefault(user[job], []).append(job)
        while i < n and submit[i] == t:
            if predict is not None:
                predict(i, history.get(user[i], []))
            if single is not None:
                single.submit(i, t)
            else:
                k = place(i, t) if place is not None else 0
                where[i] = k
                units[k].submit(i, t)
            i += 1
        for k, unit, moving in numbered:
            if unit.queue or moving:
                if duration is None:
                    for job in unit.schedule(t):
                        start[job] = t
                        if started is not None:
                            started(job, t)
                        push(heap, (t + runtime[job], job))
                else:
                    for job in unit.schedule(t):
                        start[job] = t
                        if started is not None:
                            started(job, t)
                        push(heap, (t + duration(job, k, t), job))
                if moving and unit.moves:
                    for job, at in unit.take_moves():
                        if at is None:
                            end_at = due.pop(job, None)
                            if end_at is None:
                                end_at = start[job] + runtime[job]
                            key = (end_at, job)
                            void[key] = void.get(key, 0) + 1
                            left[job] = end_at - t
                        else:
                            end_at = at + left.pop(job)
                            due[job] = end_at
                            push(heap, (end_at, job))
    return np.array(start), np.array(end), np.array(where, dtype=np.int64)
