"""Runtime prediction p'' (parallel-jobs.md section 5).

History predictors look at the same user's jobs completed before the new job arrives, newest
completion first; constant and uniform predictors scale the user estimate p' by a factor taken
from the workload. All return plain floats so schedulers can plan with them directly.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

PREDICTORS = ("hrecent", "hk", "c1", "c2", "u1", "u2")
MATCHES = ("none", "estimate", "size", "both")

Predictor = Callable[[int, Sequence[int]], float]
"""``predict(job, history) -> p''``; ``history`` lists the user's completed jobs, oldest first
(the predictor reads it from the end, so the loop can append without copying)."""


def _matcher(match: str, lo: float, hi: float, size, estimate) -> Callable[[int, int], bool]:
    """Whether past job i matches new job j: x_j(1 - lo/100) <= x_i <= x_j(1 + hi/100)."""
    low, high = 1.0 - lo / 100.0, 1.0 + hi / 100.0

    def close(values, i: int, j: int) -> bool:
        return values[j] * low <= values[i] <= values[j] * high

    if match == "none":
        return lambda i, j: True
    if match == "estimate":
        return lambda i, j: close(estimate, i, j)
    if match == "size":
        return lambda i, j: close(size, i, j)
    if match == "both":
        return lambda i, j: close(size, i, j) and close(estimate, i, j)
    raise ValueError(f"unknown match {match!r}; allowed: {', '.join(MATCHES)}")


def history_predictor(
    kind: str,
    k: int,
    runtime: Sequence[float],
    estimate: Sequence[float],
    size: Sequence[int],
    match: str = "none",
    search: int = 0,
    lo: float = 0.0,
    hi: float = 0.0,
) -> Predictor:
    """Hrecent_k (exact k, all matching) or Hk (up to k matches among the last k + w jobs).

    ``runtime`` is the executed time p of past jobs, ``estimate`` the user estimate p' (the
    fallback and the value matched on), ``size`` the processors.
    """
    if k < 1:
        raise ValueError(f"history window must be >= 1, got {k}")
    matches = _matcher(match, lo, hi, size, estimate)

    def hrecent(job: int, history: Sequence[int]) -> float:
        if len(history) < k:
            return float(estimate[job])
        last = history[-k:]
        if all(matches(i, job) for i in last):
            return float(sum(runtime[i] for i in last) / k)
        return float(estimate[job])

    def hk(job: int, history: Sequence[int]) -> float:
        scan = len(history) if search < 0 else min(len(history), k + search)
        total = 0.0
        found = 0
        for position in range(len(history) - 1, len(history) - 1 - scan, -1):
            i = history[position]
            if matches(i, job):
                total += runtime[i]
                found += 1
                if found == k:
                    break
        return total / found if found else float(estimate[job])

    if kind == "hrecent":
        return hrecent
    if kind == "hk":
        return hk
    raise ValueError(f"unknown history predictor {kind!r}; allowed: hrecent, hk")


def ratio_constants(runtime: np.ndarray, estimate: np.ndarray) -> dict[str, float]:
    """c1 and the U1/U2 bounds from p/p' over jobs with a known, positive p' (before kill)."""
    known = np.isfinite(estimate) & (estimate > 0)
    ratio = np.sort(runtime[known] / estimate[known])
    if len(ratio) == 0:
        return {"c1": 1.0, "l1": 1.0, "r1": 1.0, "l2": 1.0, "r2": 1.0}
    lower = ratio[: (len(ratio) + 1) // 2]  # odd n: the median goes to the lower half
    upper = ratio[(len(ratio) + 1) // 2 :]
    return {
        "c1": float(ratio.mean()),
        "l1": float(ratio[0]),
        "r1": float(ratio[-1]),
        "l2": float(lower.mean()),
        "r2": float(upper.mean()) if len(upper) else float(lower.mean()),
    }


def scaled_estimates(
    kind: str,
    estimate: np.ndarray,
    constants: dict[str, float],
    rng: np.random.Generator,
    c2: float = 1.0,
) -> np.ndarray:
    """C1, C2, U1, U2 predictions for every job: a factor times p' (one draw per job)."""
    n = len(estimate)
    if kind == "c1":
        factor = np.full(n, constants["c1"])
    elif kind == "c2":
        factor = np.full(n, float(c2))
    elif kind == "u1":
        factor = rng.uniform(constants["l1"], constants["r1"], n)
    elif kind == "u2":
        factor = rng.uniform(constants["l2"], constants["r2"], n)
    else:
        raise ValueError(f"unknown scaling predictor {kind!r}; allowed: c1, c2, u1, u2")
    return factor * estimate
