"""Multi-site offers combined from partial offers of the reached domains (economic.md 6).

At each candidate start every reached machine offers what it has free over the window
(at most MaxMS, at least MinMS processors); the parts are taken greedily from the machines
with most to offer, never leaving a remainder below MinMS; a job co-allocated over two or
more parts is feasible.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from campaign.models.grid.economic.criteria import OwnerFunction, UserFunction
from campaign.models.grid.economic.machine import CHUNK, MachineSchedule
from campaign.models.grid.economic.offers import Offer
from campaign.models.grid.economic.terms import best_fit, placement_terms


def split(
    free: Sequence[tuple[int, int]],
    size: int,
    min_part: int,
    max_part: int | None,
    max_parts: int | None,
) -> list[tuple[int, int]] | None:
    """Parts (machine, processors) for ``size`` from (machine, free processors) pairs, or
    None when the part rules leave a remainder or only one part."""
    offered = [(k, count if max_part is None else min(count, max_part)) for k, count in free]
    offered = sorted(((k, c) for k, c in offered if c >= min_part), key=lambda kc: (-kc[1], kc[0]))
    if max_parts is not None:
        offered = offered[:max_parts]
    parts = []
    remaining = size
    for k, count in offered:
        if remaining == 0:
            break
        take = min(count, remaining)
        if 0 < remaining - take < min_part:
            take -= min_part - (remaining - take)
            if take < min_part:
                continue
        parts.append((k, take))
        remaining -= take
    return parts if remaining == 0 and len(parts) >= 2 else None


def multisite_offers(
    schedules: Sequence[MachineSchedule],
    reach: Sequence[tuple[int, int]],
    size: int,
    length: float,
    now: float,
    wanted: int,
    min_part: int,
    max_part: int | None,
    max_parts: int | None,
    owner: OwnerFunction,
    user: UserFunction,
) -> list[Offer]:
    """Up to ``wanted`` multi-site offers over the reached machines ``reach`` (machine, hops)."""
    distance = dict(reach)
    machines = [k for k, _ in reach]
    times = np.unique(np.concatenate([schedules[k].starts(now) for k in machines]))
    offers: list[Offer] = []
    for first in range(0, len(times), CHUNK):
        chunk = times[first : first + CHUNK]
        masks = {k: schedules[k].free(chunk, length) for k in machines}
        counts = {k: masks[k].sum(axis=1) for k in machines}
        for i, start in enumerate(chunk.tolist()):
            free = sorted((k, int(counts[k][i])) for k in machines)
            parts = split(free, size, min_part, max_part, max_parts)
            if parts is None:
                continue
            chosen_parts = []
            cost = 0.0
            for k, take in parts:
                schedule = schedules[k]
                at = np.array([start])
                chosen, last, following = best_fit(
                    schedule, masks[k][i : i + 1], take, at, length, now
                )
                terms = placement_terms(schedule, last, following, at[:, None], length, now)
                cost += float(owner.value(terms)[0, 0])
                chosen_parts.append((k, chosen[0]))
            offers.append(
                Offer(
                    tuple(chosen_parts),
                    start,
                    cost,
                    float(user.value(start, cost)),
                    max(distance[k] for k, _ in parts),
                    start,
                )
            )
            if len(offers) == wanted:
                return offers
    return offers
