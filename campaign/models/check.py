"""Check models with known answers, used to test the engine and to benchmark dispatch.

``mm1`` simulates the waiting times of an M/M/1 queue with Lindley's recursion. The queue
starts in its stationary state (the first customer's wait is drawn from the stationary
distribution), so the sample mean is an unbiased estimate of the closed-form mean wait
``rho / (mu - lambda)`` and confidence intervals over replicates can be checked for coverage.

``normal`` returns one normal draw of a chosen system: system ``i`` has mean ``means[i]`` and
standard deviation ``sds[i]``, so a selection's right answer and its probability of correct
selection are known. With ``correlation`` rho, a share rho of each draw's variance comes from
a normal shared by every system run with the same seed: paired seeds (common random numbers)
then correlate the systems by rho, unpaired ones leave them independent.

``busy`` burns a fixed amount of CPU time: a task of known duration for dispatch benchmarks.
With ``stall_above`` it also stalls (sleeps) on the tasks whose seeded draw exceeds it: a
deterministic stuck task for testing timeouts.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from campaign.models.contract import Flag, Integer, Kind, ListOf, Model, Number, Param, Params

MM1_PARAMS = Params(
    "mm1",
    Param(
        "arrival_rate",
        Number(0, low_open=True),
        doc="arrival rate lambda, < service_rate",
        unit="1/s",
    ),
    Param("service_rate", Number(0, low_open=True), 1.0, "service rate mu", unit="1/s"),
    Param("customers", Integer(1), 10_000, "customers simulated per run"),
    Param(
        "fail_above",
        Number(),
        None,
        "fail a run whose first interarrival time exceeds this (tests failure records)",
        unit="s",
        default_text="never fail",
    ),
)


@dataclass(frozen=True)
class MM1Params:
    arrival_rate: float
    service_rate: float
    customers: int
    fail_above: float | None


def mm1_parse(params: Mapping[str, object]) -> MM1Params:
    """The params of a stable queue: 0 < arrival_rate < service_rate."""
    p = MM1Params(**MM1_PARAMS.values(params))
    if not p.arrival_rate < p.service_rate:
        raise ValueError(
            f"parameter 'arrival_rate' must satisfy 0 < arrival_rate < service_rate "
            f"({p.service_rate}) for a stable queue, got {p.arrival_rate}"
        )
    return p


def mm1_mean_wait(arrival_rate: float, service_rate: float) -> float:
    """Closed-form mean waiting time in queue of a stationary M/M/1 queue."""
    rho = arrival_rate / service_rate
    return rho / (service_rate - arrival_rate)


def mm1(params: Mapping[str, object], seed: int) -> dict[str, float]:
    """Mean and maximum queueing delay of ``customers`` customers of a stationary M/M/1 queue.

    ``fail_above`` (optional) raises an error when the first interarrival time exceeds it:
    a deterministic, seed-dependent failure for testing how failures are recorded.
    """
    p = mm1_parse(params)
    arrival, service, customers = p.arrival_rate, p.service_rate, p.customers
    rng = np.random.default_rng(seed)
    rho = arrival / service
    first_wait = rng.exponential(1.0 / (service - arrival)) if rng.random() < rho else 0.0
    interarrivals = rng.exponential(1.0 / arrival, customers)
    services = rng.exponential(1.0 / service, customers)
    if p.fail_above is not None and interarrivals[0] > p.fail_above:
        raise RuntimeError(
            f"first interarrival {interarrivals[0]:.6f} exceeds fail_above={p.fail_above}"
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


MM1 = Model(
    name="mm1",
    run=mm1,
    summary="check model: waiting times of a stationary M/M/1 queue, with a closed-form mean",
    params=MM1_PARAMS,
    parse=mm1_parse,
    metrics={
        "mean_wait": {"units": "s", "long_name": "mean waiting time in queue"},
        "max_wait": {"units": "s", "long_name": "maximum waiting time in queue"},
        "utilization": {
            "units": "1",
            "long_name": "total service time / total interarrival time",
        },
    },
    headline=("mean_wait",),
    example={"arrival_rate": 0.5, "customers": 1000},
)


BUSY_PARAMS = Params(
    "busy",
    Param("duration_ms", Number(0), 1.0, "CPU time the whole call lasts", unit="ms"),
    Param(
        "stall_above",
        Number(0),
        None,
        "sleep first when the seeded draw exceeds this: a task that hangs",
        default_text="never stall",
    ),
    Param("stall_seconds", Number(0), 3600.0, "how long a stalled task sleeps", unit="s"),
    Param(
        "sleep",
        Flag(),
        False,
        "sleep through the duration instead of spinning: a task that needs no core of its own",
    ),
    Param("tag", Kind(), None, "ignored: labels otherwise identical runs", default_text="none"),
)


def busy(params: Mapping[str, object], seed: int) -> dict[str, float]:
    """Spin the CPU for ``duration_ms`` milliseconds (or, with ``sleep``, sleep through them:
    many such tasks run side by side on a few cores) and return a seeded random draw.

    The whole call lasts ``duration_ms`` (its own checks and draw included), so a task's
    duration is what the benchmark says it is. ``tag`` (optional, any value) is ignored: it
    labels otherwise identical runs.
    When ``stall_above`` is given and the draw exceeds it, first sleep ``stall_seconds``
    (default one hour): a task that hangs, deterministically, for the same seeds every time.
    """
    started = time.perf_counter()
    p = BUSY_PARAMS.values(params)
    value = float(np.random.default_rng(seed).random())
    if p["stall_above"] is not None and value > p["stall_above"]:
        time.sleep(p["stall_seconds"])
        started = time.perf_counter()
    deadline = started + p["duration_ms"] / 1000.0
    if p["sleep"]:
        time.sleep(max(0.0, deadline - time.perf_counter()))
    while time.perf_counter() < deadline:
        pass
    return {"value": value}


BUSY = Model(
    name="busy",
    run=busy,
    summary="check model: burns a given CPU time (dispatch benchmarks, timeouts)",
    params=BUSY_PARAMS,
    metrics={"value": {"units": "1", "long_name": "uniform random draw from the task seed"}},
    example={"duration_ms": 1},
)


NORMAL_PARAMS = Params(
    "normal",
    Param("system", Integer(0), doc="which system: an index into means and sds"),
    Param("means", ListOf(Number(), what="numbers"), doc="each system's mean"),
    Param("sds", ListOf(Number(0), what="numbers >= 0"), doc="each system's standard deviation"),
    Param(
        "correlation",
        Number(0, 1),
        0.0,
        "share of the variance common to the systems under one seed (paired seeds: CRN)",
    ),
    Param(
        "tag",
        Kind(),
        None,
        "ignored: labels otherwise identical runs (independent selections as a factor)",
        default_text="none",
    ),
)


@dataclass(frozen=True)
class NormalParams:
    system: int
    means: tuple[float, ...]
    sds: tuple[float, ...]
    correlation: float
    tag: object


def normal_parse(params: Mapping[str, object]) -> NormalParams:
    """The params of one system: ``system`` indexes both lists, which have one entry each."""
    p = NormalParams(**NORMAL_PARAMS.values(params))
    if len(p.means) != len(p.sds):
        raise ValueError(
            f"parameters 'means' and 'sds' must list one value per system, got {len(p.means)} "
            f"means and {len(p.sds)} sds"
        )
    if p.system >= len(p.means):
        raise ValueError(
            f"parameter 'system' must be from 0 to {len(p.means) - 1} (one per entry of means), "
            f"got {p.system}"
        )
    return p


def normal(params: Mapping[str, object], seed: int) -> dict[str, float]:
    """mean + sd (sqrt(rho) Z_common + sqrt(1 - rho) Z_own): Z_common the first normal of the
    seed's generator (shared by every system with that seed), Z_own the first of the
    generator spawned from the seed for this system (its own)."""
    p = normal_parse(params)
    common = np.random.default_rng(seed).standard_normal()
    spawned = np.random.SeedSequence(seed, spawn_key=(p.system,))
    own = np.random.default_rng(spawned).standard_normal()
    rho = p.correlation
    noise = np.sqrt(rho) * common + np.sqrt(1 - rho) * own
    return {"value": float(p.means[p.system] + p.sds[p.system] * noise)}


NORMAL = Model(
    name="normal",
    run=normal,
    summary="check model: a normal draw per system with known means and deviations (selection)",
    params=NORMAL_PARAMS,
    parse=normal_parse,
    metrics={"value": {"units": "1", "long_name": "the system's normal draw"}},
    headline=("value",),
    example={"system": 1, "means": [0.0, 1.0], "sds": [1.0, 2.0], "correlation": 0.5},
)
