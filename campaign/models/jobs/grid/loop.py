"""One event loop driving every site of a grid (parallel-jobs.md sections 3 and 4).

At one time t: (1) all completions (ties: job index), (2) all arrivals in input order, each
predicted (if asked) and placed by the broker at once, (3) one scheduling pass per unit in index
order. A unit is a :class:`~campaign.models.jobs.site.Site` or a
:class:`~campaign.models.jobs.grid.pool.Pool`; the loop only calls submit, complete, schedule.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Sequence

import numpy as np


def run_loop(
    submit: Sequence[float],
    duration: Callable[[int, int], float],
    units: Sequence,
    place: Callable[[int, float], int],
    user: Sequence[int] | None = None,
    predict: Callable[[int, list[int]], None] | None = None,
    started: Callable[[int, float], None] | None = None,
    completed: Callable[[int, int, float], None] | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Simulate; returns start, end and unit index per job.

    ``duration(job, unit)`` is the executed time of a job when it starts; ``predict(job,
    history)`` is called at arrival with the user's completed jobs (completion order, oldest
    first; same-time completions by job index) before ``place(job, t)``.
    """
    n = len(submit)
    start = [0.0] * n
    end = [0.0] * n
    where = [0] * n
    history: dict[int, list[int]] = {}
    heap: list[tuple[float, int]] = []
    i = 0
    t = 0.0
    while True:
        if heap and (i >= n or heap[0][0] <= submit[i]):
            t = heap[0][0]
        elif i < n:
            t = submit[i]
        else:
            # Nothing left to happen; a site may still ask for a pass (accasim_easy).
            wakeups = [w for w in (unit.wakeup(t) for unit in units) if w is not None]
            if not wakeups:
                break
            t = min(wakeups)
        while heap and heap[0][0] == t:
            _, job = heapq.heappop(heap)
            end[job] = t
            units[where[job]].complete(job, t)
            if completed is not None:
                completed(job, where[job], t)
            if user is not None:
                history.setdefault(user[job], []).append(job)
        while i < n and submit[i] == t:
            if predict is not None:
                predict(i, history.get(user[i], []))
            k = place(i, t)
            where[i] = k
            units[k].submit(i, t)
            i += 1
        for k, unit in enumerate(units):
            if unit.queue:
                for job in unit.schedule(t):
                    start[job] = t
                    if started is not None:
                        started(job, t)
                    heapq.heappush(heap, (t + duration(job, k), job))
    return np.array(start), np.array(end), np.array(where, dtype=np.int64)
