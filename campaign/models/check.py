"""Check models with known answers, used to test the engine and to benchmark dispatch.

``mm1`` simulates the waiting times of an M/M/1 queue with Lindley's recursion. The queue
starts in its stationary state (the first customer's wait is drawn from the stationary
distribution), so the sample mean is an unbiased estimate of the closed-form mean wait
``rho / (mu - lambda)`` and confidence intervals over replicates can be checked for coverage.

``busy`` burns a fixed amount of CPU time: a task of known duration for dispatch benchmarks.
With ``stall_above`` it also stalls (sleeps) on the tasks whose seeded draw exceeds it: a
deterministic stuck task for testing timeouts.
"""

from __future__ import annotations

import time
from collections.abc import Mapping

import numpy as np


def _number(params: Mapping[str, object], name: str, default: float | None = None) -> float:
    value = params.get(name, default)
    if value is None:
        raise ValueError(f"parameter {name!r} is required")
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"parameter {name!r} must be a number, got {value!r}")
    return float(value)


MM1_PARAMS = {"arrival_rate", "service_rate", "customers", "fail_above"}


def mm1_check(params: Mapping[str, object]) -> None:
    """Refuse unknown parameters and an unstable queue before anything runs."""
    unknown = sorted(set(params) - MM1_PARAMS)
    if unknown:
        raise ValueError(
            f"unknown parameter {unknown[0]!r} for model mm1; "
            f"allowed: {', '.join(sorted(MM1_PARAMS))}"
        )
    arrival = _number(params, "arrival_rate")
    service = _number(params, "service_rate", 1.0)
    customers = _number(params, "customers", 10_000)
    if not 0 < arrival < service:
        raise ValueError(
            f"parameter 'arrival_rate' must satisfy 0 < arrival_rate < service_rate "
            f"({service}) for a stable queue, got {arrival}"
        )
    if customers < 1 or customers != int(customers):
        raise ValueError(f"parameter 'customers' must be a positive integer, got {customers}")


def mm1_mean_wait(arrival_rate: float, service_rate: float) -> float:
    """Closed-form mean waiting time in queue of a stationary M/M/1 queue."""
    rho = arrival_rate / service_rate
    return rho / (service_rate - arrival_rate)


def mm1(params: Mapping[str, object], seed: int) -> dict[str, float]:
    """Mean and maximum queueing delay of ``customers`` customers of a stationary M/M/1 queue.

    ``fail_above`` (optional) raises an error when the first interarrival time exceeds it:
    a deterministic, seed-dependent failure for testing how failures are recorded.
    """
    mm1_check(params)
    arrival = _number(params, "arrival_rate")
    service = _number(params, "service_rate", 1.0)
    customers = int(_number(params, "customers", 10_000))
    rng = np.random.default_rng(seed)
    rho = arrival / service
    first_wait = rng.exponential(1.0 / (service - arrival)) if rng.random() < rho else 0.0
    interarrivals = rng.exponential(1.0 / arrival, customers)
    services = rng.exponential(1.0 / service, customers)
    fail_above = params.get("fail_above")
    if fail_above is not None and interarrivals[0] > float(fail_above):
        raise RuntimeError(
            f"first interarrival {interarrivals[0]:.6f} exceeds fail_above={fail_above}"
        )
    # Lindley: W[n+1] = max(0, W[n] + S[n] - A[n+1]), computed as a running maximum of a walk.
    steps = services[:-1] - interarrivals[1:]
    walk = np.concatenate(([0.0], np.cumsum(steps)))
    waits = walk + np.maximum(first_wait, -np.minimum.accumulate(walk))
    return {
        "mean_wait": float(waits.mean()),
        "max_wait": float(waits.max()),
        "utilization": float(services.sum() / (interarrivals.sum() + 1e-300)),
    }


mm1.check = mm1_check
mm1.metrics = {
    "mean_wait": {"units": "s", "long_name": "mean waiting time in queue"},
    "max_wait": {"units": "s", "long_name": "maximum waiting time in queue"},
    "utilization": {"units": "1", "long_name": "total service time / total interarrival time"},
}


BUSY_PARAMS = {"duration_ms", "stall_above", "stall_seconds", "tag"}
NUMERIC_BUSY_PARAMS = BUSY_PARAMS - {"tag"}


def busy(params: Mapping[str, object], seed: int) -> dict[str, float]:
    """Spin the CPU for ``duration_ms`` milliseconds and return a seeded random draw.

    The whole call lasts ``duration_ms`` (its own checks and draw included), so a task's
    duration is what the benchmark says it is. ``tag`` (optional, any value) is ignored: it
    labels otherwise identical runs.
    When ``stall_above`` is given and the draw exceeds it, first sleep ``stall_seconds``
    (default one hour): a task that hangs, deterministically, for the same seeds every time.
    """
    started = time.perf_counter()
    busy_check(params)
    value = float(np.random.default_rng(seed).random())
    stall_above = params.get("stall_above")
    if stall_above is not None and value > float(stall_above):
        time.sleep(_number(params, "stall_seconds", 3600.0))
        started = time.perf_counter()
    deadline = started + _number(params, "duration_ms", 1.0) / 1000.0
    while time.perf_counter() < deadline:
        pass
    return {"value": value}


def busy_check(params: Mapping[str, object]) -> None:
    unknown = sorted(set(params) - BUSY_PARAMS)
    if unknown:
        raise ValueError(
            f"unknown parameter {unknown[0]!r} for model busy; "
            f"allowed: {', '.join(sorted(BUSY_PARAMS))}"
        )
    for name in sorted(NUMERIC_BUSY_PARAMS & set(params)):
        if _number(params, name) < 0:
            raise ValueError(f"parameter {name!r} must be >= 0")


busy.check = busy_check
busy.metrics = {"value": {"units": "1", "long_name": "uniform random draw from the task seed"}}
