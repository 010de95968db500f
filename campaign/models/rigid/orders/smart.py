"""SMART used as an order: jobs binned by estimate, each bin packed into shelves of the
machine's width (first fit by area or next fit by size per weight), shelves by Smith ratio
(list-scheduling.md section 2.3)."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence


def estimate_bin(est: float, gamma: float) -> int:
    """Bin 0: est <= 1 s; bin k >= 1: gamma**(k - 1) < est <= gamma**k (exact for powers
    of gamma: the float guess is corrected against the powers themselves)."""
    if est <= 1:
        return 0
    k = max(1, math.ceil(math.log(est) / math.log(gamma)))
    while k > 1 and gamma ** (k - 1) >= est:
        k -= 1
    while gamma**k < est:
        k += 1
    return k


def _shelves(
    jobs: Sequence[int],
    size: Sequence[int],
    estimate: Sequence[float],
    weight: Sequence[float],
    processors: int,
    gamma: float,
    key: Callable[[int], float],
    first_fit: bool,
) -> list[int]:
    bins: dict[int, list[int]] = {}
    for job in jobs:
        bins.setdefault(estimate_bin(estimate[job], gamma), []).append(job)
    shelves = []  # (−ratio, bin, creation, jobs)
    created = 0
    for number in sorted(bins):
        members = sorted(bins[number], key=lambda job: (key(job), job))
        packed: list[list[int]] = []
        used: list[int] = []
        for job in members:
            width = size[job]
            if first_fit:
                for k, taken in enumerate(used):
                    if taken + width <= processors:
                        packed[k].append(job)
                        used[k] += width
                        break
                else:
                    packed.append([job])
                    used.append(width)
            elif used and used[-1] + width <= processors:
                packed[-1].append(job)
                used[-1] += width
            else:
                packed.append([job])
                used.append(width)
        for shelf in packed:
            longest = max(estimate[job] for job in shelf)
            total = sum(weight[job] for job in shelf)
            ratio = total / longest if longest > 0 else math.inf
            shelves.append((-ratio, number, created, shelf))
            created += 1
    shelves.sort(key=lambda s: s[:3])
    return [job for *_, shelf in shelves for job in shelf]


def smart_ffia_order(
    jobs: Sequence[int],
    size: Sequence[int],
    estimate: Sequence[float],
    weight: Sequence[float],
    processors: int,
    gamma: float = 2.0,
) -> list[int]:
    """SMART-FFIA: each bin's jobs by area ascending, first fit into the bin's shelves."""
    return _shelves(
        jobs,
        size,
        estimate,
        weight,
        processors,
        gamma,
        lambda job: size[job] * estimate[job],
        True,
    )


def smart_nfiw_order(
    jobs: Sequence[int],
    size: Sequence[int],
    estimate: Sequence[float],
    weight: Sequence[float],
    processors: int,
    gamma: float = 2.0,
) -> list[int]:
    """SMART-NFIW: each bin's jobs by size / weight ascending, next fit into the bin's
    shelves."""

    def key(job: int) -> float:
        w = weight[job]
        return size[job] / w if w > 0 else math.inf

    return _shelves(jobs, size, estimate, weight, processors, gamma, key, False)
