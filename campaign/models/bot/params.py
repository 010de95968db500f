"""Parameters of the ``bot`` model: the table they are checked, defaulted and documented from."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

from campaign.models.contract import Choice, Either, Integer, Null, Number, Param, Params

from .platform import SPEED_TABLES
from .workload import APP_TYPES

HEURISTICS = ("wqr", "xsufferage", "storage_affinity", "workqueue")
GRID_LEVELS = (1, 2, 4, 8)
AVAILABILITY = ("dedicated", "synthetic")

PARAMS = Params(
    "bot",
    Param(
        "heuristic",
        Choice(*HEURISTICS),
        doc="the scheduling heuristic; workqueue is WQR without replication (a baseline)",
    ),
    Param(
        "grid_heterogeneity",
        Choice(*GRID_LEVELS),
        1,
        "ratio of the fastest to the slowest processor speed range (speeds from speed_table)",
    ),
    Param("app_heterogeneity", Number(0, 1), 0.0, "Ha: spread of task costs, a fraction"),
    Param("granularity_mb", Number(0.5, 2048), 15, "mean input per task", unit="MiB"),
    Param("app_type", Choice(*APP_TYPES), "visualization", "how task costs vary from job to job"),
    Param("jobs", Integer(1), 6, "length of the sequence of jobs reusing the same input files"),
    Param(
        "replication_cap",
        Either(Integer(1, infinite=True), Null("unlimited")),
        None,
        "most simultaneous copies of a task under wqr and storage_affinity (workqueue is "
        "always 1; xsufferage does not replicate)",
        default_text="null (unlimited)",
    ),
    Param(
        "availability",
        Choice(*AVAILABILITY),
        "dedicated",
        "synthetic: every availability_period_s each processor's and the link's availability "
        "is redrawn from U(availability_min, 1); progress is speed x availability",
    ),
    Param("availability_min", Number(0, 1, low_open=True), 0.5, "lowest synthetic availability"),
    Param("availability_period_s", Number(1), 600.0, "synthetic availability period", unit="s"),
    Param("speed_table", Choice(*SPEED_TABLES), "paper", "processor speed ranges per level"),
    Param(
        "scheduler_latency_s",
        Number(0),
        0.0,
        "every copy holds its processor this long before its transfer begins (xsufferage's "
        "estimates include it)",
        unit="s",
    ),
    Param(
        "information_error",
        Number(0, 1, high_open=True),
        0.0,
        "e: xsufferage estimates a task's cost as C x U(1 - e, 1 + e), per job and task",
    ),
)


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


def parse(params: Mapping[str, object]) -> BotParams:
    """Check ``params`` and fill in defaults; raise ValueError naming the bad parameter."""
    values = PARAMS.values(params)
    if values["replication_cap"] is None:
        values["replication_cap"] = math.inf
    return BotParams(**values)
