"""Owner terms of placements (economic.md section 4) and the best-fit choice of processors
(section 3), for several candidates at once.

The processors N of a placement are free over the whole window, and stay so over every shift
of its candidate: a_q and b_q of a chosen processor are the same for every shift, so they are
read once, at the candidate time (except for a job of no duration: ``shifted_bounds``), and the
terms of all candidates and shifts come out of a few array operations (rows: candidates;
columns: shifts).
"""

from __future__ import annotations

import numpy as np

from campaign.models.grid.economic.criteria import Terms
from campaign.models.grid.economic.machine import MachineSchedule


def best_fit(
    schedule: MachineSchedule,
    free: np.ndarray,
    size: int,
    starts: np.ndarray,
    length: float,
    now: float,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per candidate start (rows of ``free``, the free processors over its window): N, the
    ``size`` free processors with the smallest fit_q (ties: lower number), and their a_q(start)
    and b_q(start + length)."""
    horizon = schedule.horizon(now)
    last = schedule.last_ends(starts, now)
    if length > 0:
        following = schedule.pending_begins(starts)  # b_q(start + length) of free q
    else:
        following = schedule.next_begins(starts)
    fit = (starts[:, None] - last) + np.maximum(
        0.0, np.minimum(following, horizon) - (starts + length)[:, None]
    )
    fit[~free] = np.inf
    chosen = np.argsort(fit, axis=1, kind="stable")[:, :size]
    rows = np.arange(len(starts))[:, None]
    return chosen, last[rows, chosen], following[rows, chosen]


def shifted_bounds(
    schedule: MachineSchedule, chosen: np.ndarray, starts: np.ndarray, now: float
) -> tuple[np.ndarray, np.ndarray]:
    """a_q(s) and b_q(s) of each candidate's N (rows of ``chosen``) at each of its shifts
    (``starts``; axes: candidate, shift, processor), for a job of no duration. Its window is
    empty, so N may hold a processor a reservation holds at the candidate time, and a shift
    may reach that reservation's end (hi is the next begin): a_q differs from shift to shift."""
    flat = starts.ravel()
    picked = chosen[np.repeat(np.arange(len(starts)), starts.shape[1])]
    last = np.take_along_axis(schedule.last_ends(flat, now), picked, axis=1)
    following = np.take_along_axis(schedule.next_begins(flat), picked, axis=1)
    shape = (*starts.shape, chosen.shape[1])
    return last.reshape(shape), following.reshape(shape)


def placement_terms(
    schedule: MachineSchedule,
    last: np.ndarray,
    following: np.ndarray,
    starts: np.ndarray,
    length: float,
    now: float,
) -> Terms:
    """The terms of each candidate's N (rows of ``last`` and ``following``, its a_q and b_q,
    the same at every shift; or per shift too, ``shifted_bounds``) at each of its ``starts``
    (a row of shifts per candidate)."""
    horizon = schedule.horizon(now)
    if last.ndim == 2:
        last = last[:, None, :]
        following = following[:, None, :]
    size = last.shape[2]
    area = size * length
    under = (starts[:, :, None] - last).sum(axis=2)
    over = np.maximum(0.0, np.minimum(following, horizon) - (starts + length)[:, :, None]).sum(
        axis=2
    )
    busy = schedule.busy_area(starts.ravel(), length).reshape(starts.shape)
    left_right = (schedule.processors - size) * length - busy
    lrr = left_right / area if area > 0 else np.zeros(starts.shape)
    until = np.maximum(horizon, starts + length)
    booked = schedule.booked_area(now, np.inf)
    with np.errstate(divide="ignore", invalid="ignore"):
        utilization = np.where(
            until > now, (booked + area) / (schedule.processors * (until - now)), 0.0
        )
    return Terms(area, under, over, left_right, lrr, utilization)
