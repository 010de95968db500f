"""Offers of one machine (economic.md section 3) and the order that picks the winner (5).

A machine offers the first K candidate start times at which the job fits; each offer keeps
its best-fit processors and takes the shift of its start with the largest user value.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from campaign.models.grid.economic.criteria import OwnerFunction, UserFunction
from campaign.models.grid.economic.machine import MachineSchedule
from campaign.models.grid.economic.terms import best_fit, placement_terms, shifted_bounds


@dataclass(frozen=True)
class Offer:
    """A placement with its price: one part per machine (machine, processor numbers)."""

    parts: tuple[tuple[int, np.ndarray], ...]
    start: float
    cost: float
    """JobCost: the owner value MV (summed over the parts of a multi-site offer)."""
    value: float
    """UV: the user value; the largest wins."""
    hops: int
    """Distance of the offering domain from home (multi-site: its farthest part)."""
    candidate: float
    """The candidate start time tau the offer came from."""

    @property
    def rank(self) -> tuple[float, float, float, int, int, float]:
        """Smaller is better: largest UV, then lower JobCost, earlier start, fewer hops, lower
        machine number (multi-site: its lowest), earlier tau."""
        machine = min(k for k, _ in self.parts)
        return (-self.value, self.cost, self.start, self.hops, machine, self.candidate)


def shifts(low: np.ndarray, high: np.ndarray, count: int) -> np.ndarray:
    """Per candidate (rows) the Z start times s_z = lo + z (hi - lo) / (Z - 1) (only lo if
    Z = 1; if hi = lo all Z are lo, which changes no winner)."""
    if count == 1:
        return low[:, None].copy()
    z = np.arange(count, dtype=np.float64)
    return low[:, None] + z[None, :] * (high - low)[:, None] / (count - 1)


def latest_start(taus: np.ndarray, bound: np.ndarray, length: float, horizon: float):
    """hi = min(b - est, max(tau, H - est)) per candidate tau, b (``bound``) the earliest next
    begin on its processors. Its window [hi, hi + est) must end by b, which (b - est) + est
    may pass by a rounding step (and b - est fall below tau): such an hi steps back to the
    float before it, never below tau (whose window was found free)."""
    high = np.minimum(bound - length, np.maximum(taus, horizon - length))
    past = high + length > bound
    while past.any():
        high[past] = np.nextafter(high[past], -np.inf)
        past = high + length > bound
    return np.maximum(high, taus)


def machine_offers(
    schedule: MachineSchedule,
    machine: int,
    hops: int,
    size: int,
    length: float,
    now: float,
    wanted: int,
    shift_count: int,
    owner: OwnerFunction,
    user: UserFunction,
) -> list[Offer]:
    """Up to ``wanted`` offers of one machine for ``size`` processors over ``length``."""
    if size > schedule.processors:
        return []
    found = schedule.feasible(schedule.starts(now), length, size, wanted)
    if not found:
        return []
    horizon = schedule.horizon(now)
    taus = np.array([tau for tau, _ in found])
    free = np.array([mask for _, mask in found])
    chosen, last, following = best_fit(schedule, free, size, taus, length, now)
    high = latest_start(taus, following.min(axis=1), length, horizon)
    starts = np.minimum(shifts(taus, high, shift_count), high[:, None])
    if length <= 0 and shift_count > 1:
        last, following = shifted_bounds(schedule, chosen, starts, now)
    terms = placement_terms(schedule, last, following, starts, length, now)
    cost = owner.value(terms)
    value = user.value(starts, cost)
    rows = np.repeat(np.arange(len(taus)), starts.shape[1])
    order = np.lexsort((starts.ravel(), cost.ravel(), -value.ravel(), rows))
    best = order[:: starts.shape[1]]
    offers = []
    for i, flat in enumerate(best.tolist()):
        z = flat - i * starts.shape[1]
        offers.append(
            Offer(
                ((machine, chosen[i]),),
                float(starts[i, z]),
                float(cost[i, z]),
                float(value[i, z]),
                hops,
                float(taus[i]),
            )
        )
    return offers
