"""The ``grid`` model: rigid parallel jobs on several sites (parallel-jobs.md sections 4-7).

``run(params, seed)`` builds a grid workload (a mix of logs, or one trace on a machine
configuration), simulates it under a broker strategy or a sharing mode, checks the schedule is
feasible and returns the metrics of `METRICS_TABLE`. ``schedule(params, seed)`` returns the
whole :class:`GridSchedule`.

Random streams: ``numpy.random.SeedSequence(seed).spawn(5)`` gives, in order, the workload
(random window start or week offset), platform (unused), estimates (U1/U2 draws), policy (``random``
strategy) and availability (unused) streams.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from campaign.models.contract import Model
from campaign.models.grid.build import GridInput, build
from campaign.models.grid.configs import MIXES, resolve_logs
from campaign.models.grid.measure import GRID_METRICS, check_grid_feasible, grid_metrics
from campaign.models.grid.params import PARAMS, GridParams, parse
from campaign.models.grid.schedule import GridSchedule, simulate_grid
from campaign.models.rigid.classes import BREAKDOWN, class_metrics
from campaign.models.rigid.metrics import SAMPLES, job_samples
from campaign.models.rigid.swf import CLEANING_REASONS
from campaign.models.rigid.workloads import locate, workloads_folder

__all__ = ["MODEL", "run", "schedule", "check", "parse", "PARAMS", "GridParams", "GridSchedule"]


def check(params: Mapping[str, object]) -> None:
    """Refuse unknown, missing or bad parameters (one ValueError naming the parameter)."""
    parse(params)


def _simulate(p: GridParams, seed: int) -> tuple[GridInput, GridSchedule]:
    streams = np.random.SeedSequence(seed).spawn(5)
    grid = build(p, np.random.default_rng(streams[0]))
    result = simulate_grid(
        grid.workload,
        grid.machines,
        p.options(grid.home.tolist()),
        np.random.default_rng(streams[2]),
        np.random.default_rng(streams[3]),
    )
    check_grid_feasible(result)
    return grid, result


def schedule(params: Mapping[str, object], seed: int) -> GridSchedule:
    """The simulated (and checked) schedule of one run."""
    return _simulate(parse(params), seed)[1]


def run(params: Mapping[str, object], seed: int) -> dict[str, float]:
    """Simulate one grid run and return its metrics (see `METRICS_TABLE`)."""
    p = parse(params)
    grid, result = _simulate(p, seed)
    values = grid_metrics(result, p.bsld_floor_one)
    for reason in (*CLEANING_REASONS, "too_wide"):
        values[f"n_dropped_{reason}"] = float(grid.dropped.get(reason, 0))
    values["n_unknown_run_time"] = float(grid.workload.unknown_runtimes)
    for k, digest in enumerate(grid.digests, start=1):
        values[f"digest_log{k}"] = float(int(digest[:13], 16))
    flat = result.as_schedule()
    values.update(job_samples(flat, p.bsld_floor_one))
    values.update(class_metrics(flat, p.class_width, p.class_runtime_s, p.bsld_floor_one))
    return values


def inputs(params: Mapping[str, object]) -> tuple[str, ...]:
    """The files a run reads (its traces): runs sharing them share a worker, and a trace
    rewritten in place is never hidden behind results stored before."""
    files = []
    if params.get("trace") is not None:
        files.append(locate(str(params["trace"])))
    config = params.get("config")
    if isinstance(config, str) and config in MIXES:
        files += resolve_logs(MIXES[config], workloads_folder())
    for site in params.get("sites") or ():
        if isinstance(site, Mapping) and site.get("trace") is not None:
            files.append(locate(str(site["trace"])))
    return tuple(str(file) for file in files)


METRICS_TABLE = {
    **GRID_METRICS,
    **SAMPLES,
    **BREAKDOWN,
    **{
        f"n_dropped_{reason}": {"units": "1", "long_name": f"jobs dropped by the {reason} filter"}
        for reason in (*CLEANING_REASONS, "too_wide")
    },
    "n_unknown_run_time": {
        "units": "1",
        "long_name": "simulated jobs whose trace run time is unknown (negative), replayed as 0 s",
    },
    "digest_log{k}": {
        "units": "1",
        "long_name": "first 13 hex digits of the SHA-256 of trace file {k}, as an integer",
    },
}


MODEL = Model(
    name="grid",
    run=run,
    summary="two-level grid: allocation strategies, runtime prediction from users' history, "
    "local, job-sharing and multi-site co-allocation",
    params=PARAMS,
    parse=parse,
    metrics=METRICS_TABLE,
    headline=("mean_wait", "mean_bsld", "swct_w"),
    inputs=inputs,
    example={"trace": "KTH-SP2-1996-2.1-cln.swf.gz", "machines": [64, 36], "jobs": 300},
)
