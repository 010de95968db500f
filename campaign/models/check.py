"""Check models with known answers, used to test the engine and to benchmark dispatch.

``mm1`` simulates the waiting times of an M/M/1 queue with Lindley's recursion. The queue
starts in its stationary state (the first customer's wait is drawn from the stationary
distribution), so the sample mean is an unbiased estimate of the closed-form mean wait
``rho / (mu - lambda)`` and confidence intervals over replicates can be checked for coverage.

``busy`` burns a fixed amount of CPU time: a task of known duration for dispatch benchmarks.
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
            f"unknown parameter {unknown[0]!r} for model mm1; allowed: {', '.join(sorted(MM1_PARAMS))}"
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
        raise RuntimeError(f"first interarrival {interarrivals[0]:.6f} exceeds fail_above={fail_above}")
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


def busy(params: Mapping[str, object], seed: int) -> dict[str, float]:
    """Spin the CPU for ``duration_ms`` milliseconds and return a seeded random draw."""
    duration = _number(params, "duration_ms", 1.0) / 1000.0
    deadline = time.perf_counter() + duration
    spins = 0
    while time.perf_counter() < deadline:
        spins += 1
    return {"value": float(np.random.default_rng(seed).random()), "spins": float(spins)}


def busy_check(params: Mapping[str, object]) -> None:
    unknown = sorted(set(params) - {"duration_ms"})
    if unknown:
        raise ValueError(f"unknown parameter {unknown[0]!r} for model busy; allowed: duration_ms")
    if _number(params, "duration_ms", 1.0) < 0:
        raise ValueError("parameter 'duration_ms' must be >= 0")


busy.check = busy_check
busy.metrics = {
    "value": {"units": "1", "long_name": "uniform random draw from the task seed"},
    "spins": {"units": "1", "long_name": "busy-loop iterations (machine dependent)"},
}
