"""Parameters of the ``bot`` model: validation with one clear error per bad value."""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping
from dataclasses import dataclass

from .platform import SPEED_TABLES
from .workload import APP_TYPES

HEURISTICS = ("wqr", "xsufferage", "storage_affinity", "workqueue")
GRID_LEVELS = (1, 2, 4, 8)
AVAILABILITY = ("dedicated", "synthetic")

DEFAULTS: dict[str, object] = {
    "grid_heterogeneity": 1,
    "app_heterogeneity": 0.0,
    "granularity_mb": 15,
    "app_type": "visualization",
    "jobs": 6,
    "replication_cap": None,
    "availability": "dedicated",
    "availability_min": 0.5,
    "availability_period_s": 600.0,
    "speed_table": "paper",
    "scheduler_latency_s": 0.0,
    "information_error": 0.0,
}
ALLOWED = ("heuristic", *DEFAULTS)


@dataclass(frozen=True)
class BotParams:
    heuristic: str
    grid_heterogeneity: int
    app_heterogeneity: float
    granularity_mb: float
    app_type: str
    jobs: int
    replication_cap: float  # math.inf when unlimited
    availability: str
    availability_min: float
    availability_period_s: float
    speed_table: str
    scheduler_latency_s: float
    information_error: float


def _number(name: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or math.isnan(value):
        raise ValueError(f"parameter {name!r} must be a number, got {value!r}")
    return float(value)


def _choice(name: str, value: object, allowed: tuple) -> object:
    if value not in allowed or isinstance(value, bool):
        raise ValueError(
            f"parameter {name!r} must be one of {', '.join(map(str, allowed))}, got {value!r}"
        )
    return value


def _whole(name: str, value: object, low: int) -> int:
    number = _number(name, value)
    if not math.isfinite(number) or number != int(number) or number < low:
        raise ValueError(f"parameter {name!r} must be an integer >= {low}, got {value!r}")
    return int(number)


def parse(params: Mapping[str, object]) -> BotParams:
    """Check ``params`` and fill in defaults; raise ValueError naming the bad parameter."""
    unknown = sorted(set(params) - set(ALLOWED))
    if unknown:
        raise ValueError(
            f"unknown parameter {unknown[0]!r} for model bot; allowed: {', '.join(ALLOWED)}"
        )
    if "heuristic" not in params:
        raise ValueError(f"parameter 'heuristic' is required; one of {', '.join(HEURISTICS)}")
    p = {**DEFAULTS, **params}
    heterogeneity = _number("grid_heterogeneity", p["grid_heterogeneity"])
    _choice("grid_heterogeneity", heterogeneity, GRID_LEVELS)
    app_heterogeneity = _number("app_heterogeneity", p["app_heterogeneity"])
    if not 0 <= app_heterogeneity <= 1:
        raise ValueError(
            f"parameter 'app_heterogeneity' must lie in 0..1 (a fraction), got {app_heterogeneity}"
        )
    granularity = _number("granularity_mb", p["granularity_mb"])
    if not 0.5 <= granularity <= 2048:  # at most ~8200 tasks per job
        raise ValueError(
            f"parameter 'granularity_mb' must lie in [0.5, 2048] MiB, got {granularity}"
        )
    cap = p["replication_cap"]
    unlimited = cap is None or (isinstance(cap, numbers.Real) and cap == math.inf)
    cap = math.inf if unlimited else _whole("replication_cap", cap, 1)
    a_min = _number("availability_min", p["availability_min"])
    if not 0 < a_min <= 1:
        raise ValueError(f"parameter 'availability_min' must lie in (0, 1], got {a_min}")
    period = _number("availability_period_s", p["availability_period_s"])
    if not 1 <= period < math.inf:
        raise ValueError(f"parameter 'availability_period_s' must be >= 1 s, got {period}")
    latency = _number("scheduler_latency_s", p["scheduler_latency_s"])
    if not 0 <= latency < math.inf:
        raise ValueError(f"parameter 'scheduler_latency_s' must be >= 0, got {latency}")
    error = _number("information_error", p["information_error"])
    if not 0 <= error < 1:
        raise ValueError(f"parameter 'information_error' must lie in [0, 1), got {error}")
    return BotParams(
        heuristic=str(_choice("heuristic", p["heuristic"], HEURISTICS)),
        grid_heterogeneity=int(heterogeneity),
        app_heterogeneity=app_heterogeneity,
        granularity_mb=granularity,
        app_type=str(_choice("app_type", p["app_type"], APP_TYPES)),
        jobs=_whole("jobs", p["jobs"], 1),
        replication_cap=cap,
        availability=str(_choice("availability", p["availability"], AVAILABILITY)),
        availability_min=a_min,
        availability_period_s=period,
        speed_table=str(_choice("speed_table", p["speed_table"], tuple(SPEED_TABLES))),
        scheduler_latency_s=latency,
        information_error=error,
    )
