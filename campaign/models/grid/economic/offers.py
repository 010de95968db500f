"""Offers of one machine (economic.md section 3) and the order that picks the winner (5).

A machine offers the first K candidate start times at which the job fits; each offer keeps
its best-fit processors and takes the shift of its start with the largest user value.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from campaign.models.grid.economic.criteria import OwnerFunction, UserFunction
from campaign.models.grid.economic.machine import MachineSchedule
from campaign.models.grid.economic.terms import best_fit, placement_terms


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


def shifts(low: float, high: float, count: int) -> np.ndarray:
    """The Z start times s_z = lo + z (hi - lo) / (Z - 1) (only lo if Z = 1 or hi = lo)."""
    if count == 1 or high == low:
        return np.array([low])
    return np.array([low + z * (high - low) / (count - 1) for z in range(count)])


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
    horizon = schedule.horizon(now)
    offers = []
    for tau, free in schedule.feasible(schedule.starts(now), length, size, wanted):
        chosen, last, following = best_fit(schedule, free, size, tau, length, now)
        high = min(float(following.min()) - length, max(tau, horizon - length))
        starts = shifts(tau, high, shift_count)
        terms = placement_terms(schedule, chosen, last, following, starts, length, now)
        cost = owner.value(terms)
        value = user.value(starts, cost)
        best = int(np.lexsort((starts, cost, -value))[0])
        offers.append(
            Offer(
                ((machine, chosen),),
                float(starts[best]),
                float(cost[best]),
                float(value[best]),
                hops,
                tau,
            )
        )
    return offers
