"""Share arithmetic: the water-filling feasible share and the Fair-Share priorities.

Pure functions on plain numbers, so the worked examples of the model document can be checked
without running a simulation. Exact rational arithmetic is used where a floor or a division
decides how many machines a user gets, so a boundary case (6 * 1/1.5 = 4) never flips by one
through rounding.
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction

PRIORITY_FLOOR = 0.5


def feasible_share(shares: Sequence[int], demand: Sequence[int], machines: int) -> list[float]:
    """Water-filling feasible share fes_i = min(p_i + p̂_i, d_i), with Σ fes_i = min(n, Σ d_i).

    Start from min(p_i, d_i); hand what is left to the users whose demand exceeds their
    allocation in proportion to p_i (equally if all of them have p_i = 0), capped at d_i,
    repeating until nothing is left. The result is fractional (an instantaneous ideal, not a
    schedule): p = (3, 1), d = (10, 10), n = 6 gives (4.5, 1.5).
    """
    alloc = [Fraction(min(p, d)) for p, d in zip(shares, demand)]
    left = Fraction(min(machines, sum(demand))) - sum(alloc)
    while left > 0:
        open_users = [i for i, d in enumerate(demand) if d > alloc[i]]
        weights = {i: Fraction(shares[i]) for i in open_users}
        if sum(weights.values()) == 0:
            weights = {i: Fraction(1) for i in open_users}
        total = sum(weights.values())
        room = {i: demand[i] - alloc[i] for i in open_users}
        capped = [i for i in open_users if weights[i] and left * weights[i] / total >= room[i]]
        if not capped:
            for i in open_users:
                alloc[i] += left * weights[i] / total
            left = Fraction(0)
            break
        for i in capped:
            left -= room[i]
            alloc[i] = Fraction(demand[i])
    return [float(a) for a in alloc]


def update_priorities(
    priorities: Sequence[float], running: Sequence[int], elapsed: float, half_life: float
) -> list[float]:
    """Real priorities `elapsed` seconds on: π_u ← max(0.5, β·π_u + (1 − β)·ρ_u), β = 0.5^(δt/h),
    where ρ_u is the number of machines running u's tasks."""
    beta = 0.5 ** (elapsed / half_life)
    rest = 1.0 - beta
    return [max(PRIORITY_FLOOR, beta * p + rest * r) for p, r in zip(priorities, running)]


def fair_share_order(idle: int, ready: Sequence[int], effective: Sequence[float]) -> list[int]:
    """Users served by one Fair-Share negotiation, one entry per machine, in start order.

    Rounds of give_u = min(r_u, ⌊I·(1/e_u) / Σ_S 1/e_v⌋) over the users S with ready tasks;
    a round that gives nothing gives one machine to the lowest e_u (ties lowest index). Within
    a round users are served in index order. An infinite e_u (weight 0) is allowed.
    """
    ready = list(ready)
    weights = [Fraction(0) if e == float("inf") else 1 / Fraction(e) for e in effective]
    order: list[int] = []
    while idle > 0:
        users = [u for u, r in enumerate(ready) if r > 0]
        if not users:
            break
        total = sum(weights[u] for u in users)
        gives = {u: 0 for u in users}
        if total > 0:
            for u in users:
                gives[u] = min(ready[u], int(idle * weights[u] / total))
        if sum(gives.values()) == 0:
            best = min(users, key=lambda u: (effective[u], u))
            gives[best] = 1
        for u in users:
            order.extend([u] * gives[u])
            ready[u] -= gives[u]
            idle -= gives[u]
    return order
