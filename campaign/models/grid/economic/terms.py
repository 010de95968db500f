"""Owner terms of a placement (economic.md section 4) and the best-fit choice of processors
(section 3).

The processors N of a placement are free over the whole window, and stay so over every shift
of its candidate: a_q and b_q of a chosen processor are the same for every shift, so they are
read once, at the candidate time, and the terms of all shifts come out of a few array
operations.
"""

from __future__ import annotations

import numpy as np

from campaign.models.grid.economic.criteria import Terms
from campaign.models.grid.economic.machine import MachineSchedule


def best_fit(
    schedule: MachineSchedule, free: np.ndarray, size: int, start: float, length: float, now: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """N: the ``size`` free processors with the smallest fit_q at ``start`` (ties: lower
    number), with their a_q(start) and b_q(start + length)."""
    horizon = schedule.horizon(now)
    last = schedule.last_end(start, now)
    following = schedule.next_begin(start + length)
    candidates = np.flatnonzero(free)
    fit = (start - last[candidates]) + np.maximum(
        0.0, np.minimum(following[candidates], horizon) - (start + length)
    )
    chosen = candidates[np.argsort(fit, kind="stable")[:size]]
    return chosen, last[chosen], following[chosen]


def placement_terms(
    schedule: MachineSchedule,
    chosen: np.ndarray,
    last: np.ndarray,
    following: np.ndarray,
    starts: np.ndarray,
    length: float,
    now: float,
) -> Terms:
    """The terms of N = ``chosen`` (with its a_q and b_q) at each of ``starts``."""
    horizon = schedule.horizon(now)
    size = len(chosen)
    area = size * length
    under = (starts[:, None] - last[None, :]).sum(axis=1)
    over = np.maximum(
        0.0, np.minimum(following, horizon)[None, :] - (starts + length)[:, None]
    ).sum(axis=1)
    left_right = (schedule.processors - size) * length - schedule.busy_area(starts, length)
    lrr = left_right / area if area > 0 else np.zeros(len(starts))
    until = np.maximum(horizon, starts + length)
    booked = schedule.booked_area(now, np.inf)
    with np.errstate(divide="ignore", invalid="ignore"):
        utilization = np.where(
            until > now, (booked + area) / (schedule.processors * (until - now)), 0.0
        )
    return Terms(area, under, over, left_right, lrr, utilization)
