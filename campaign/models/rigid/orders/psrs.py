"""PSRS used as an order: Smith ratios, a preemptive schedule on an empty machine, then the
non-preemptive conversion by bins of completion times (list-scheduling.md section 2.2)."""

from __future__ import annotations

import math
from bisect import insort
from collections.abc import Sequence

_SQRT2 = math.sqrt(2.0)


def ceil_log2(y: float) -> int:
    """The smallest integer k with y <= 2**k, exact from the float (y > 0); y <= 0 (a job
    of zero estimate completing at 0) sorts before every bin."""
    if y <= 0:
        return -(10**9)
    f, e = math.frexp(y)
    return e - 1 if f == 0.5 else e


def _ratio(weight: float, width: int, est: float) -> float:
    """Modified Smith ratio w / (size * est); a zero estimate ranks first (equal work
    weights, 0 / 0, rank as 1 like every other work-weighted job)."""
    area = width * est
    if area > 0:
        return weight / area
    return 1.0 if weight == 0 else math.inf


def preemptive_completions(
    jobs: Sequence[int], size: Sequence[int], estimate: Sequence[float], processors: int
) -> dict[int, float]:
    """Completion time of every job in the preemptive schedule P of ``jobs`` (in list order),
    all released at 0 on ``processors`` processors, running ``estimate`` seconds (section
    2.2 step 2)."""
    half = processors / 2
    done: dict[int, float] = {}
    ends: list[tuple[float, int]] = []
    """Jobs of P not ended by ``tau``, by completion time. Every job of P starts by tau, so
    the free processors at any time x >= tau are those not held by a job ending after x."""
    busy = 0
    """Processors held by the jobs of ``ends``."""
    tau = 0.0

    def earliest(at: float, need: float) -> float:
        """Earliest time >= at (at >= tau) with ``need`` processors free."""
        free = processors - busy
        k = 0
        n = len(ends)
        while k < n and ends[k][0] <= at:
            free += size[ends[k][1]]
            k += 1
        moment = at
        while free < need:
            moment = ends[k][0]
            while k < n and ends[k][0] == moment:
                free += size[ends[k][1]]
                k += 1
        return moment

    for job in jobs:
        width = size[job]
        est = estimate[job]
        k = 0
        while k < len(ends) and ends[k][0] <= tau:
            end, other = ends[k]
            done[other] = end
            busy -= size[other]
            k += 1
        del ends[:k]
        if width <= half:
            start = earliest(tau, width)
        else:
            start_c = earliest(tau, half)
            start = earliest(start_c, width)
            if start > start_c + est:
                cut = start_c + est
                # j runs alone over [cut, cut + est); every job running at the cut resumes
                # after it with its remaining time.
                ends = sorted((end + est if end > cut else end, other) for end, other in ends)
                done[job] = cut + est
                tau = cut + est
                continue
        tau = start
        insort(ends, (start + est, job))
        busy += width
    for end, other in ends:
        done[other] = end
    return done


def psrs_order(
    jobs: Sequence[int],
    size: Sequence[int],
    estimate: Sequence[float],
    weight: Sequence[float],
    processors: int,
    gamma: float = 2.0,
) -> list[int]:
    """``jobs`` in PSRS order: by bin of their completion in P (small jobs' bins end at
    2**k s, wide jobs' at 2**(k + 1/2) s, alternating small, wide, ...), Smith order inside a
    bin. ``gamma`` is not used (SMART's)."""
    smith = sorted(
        range(len(jobs)),
        key=lambda i: (-_ratio(weight[jobs[i]], size[jobs[i]], estimate[jobs[i]]), i),
    )
    listed = [jobs[i] for i in smith]
    done = preemptive_completions(listed, size, estimate, processors)
    half = processors / 2
    keys = []
    for position, job in enumerate(listed):
        if size[job] > half:
            keys.append((2 * ceil_log2(done[job] / _SQRT2) + 1, position, job))
        else:
            keys.append((2 * ceil_log2(done[job]), position, job))
    keys.sort()
    return [job for _, _, job in keys]
