"""The ``grid`` model: rigid parallel jobs on several sites (parallel-jobs.md sections 4-7).

``run(params, seed)`` builds a grid workload (a mix of logs, or one trace on a machine
configuration), simulates it under a broker strategy or a sharing mode, checks the schedule is
feasible and returns the metrics of ``run.metrics``. ``schedule(params, seed)`` returns the
whole :class:`GridSchedule`.

Random streams: ``numpy.random.SeedSequence(seed).spawn(5)`` gives, in order, the workload
(random window start or week offset), platform (unused), estimates (U1/U2 draws), policy (``random``
strategy) and availability (unused) streams.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from campaign.models.contract import Model
from campaign.models.grid.broker import SCOPES, STRATEGIES
from campaign.models.grid.build import GridInput, build
from campaign.models.grid.configs import CONFIGS, MACHINES, MIXES, resolve_logs
from campaign.models.grid.measure import GRID_METRICS, check_grid_feasible, grid_metrics
from campaign.models.grid.predict import MATCHES, PREDICTORS
from campaign.models.grid.schedule import (
    ESTIMATES,
    SHARING,
    GridOptions,
    GridSchedule,
    simulate_grid,
)
from campaign.models.rigid.policies import POLICIES
from campaign.models.rigid.swf import CLEANING_REASONS
from campaign.models.rigid.workloads import locate, workloads_folder

__all__ = ["MODEL", "run", "schedule", "check", "PARAMS", "GridSchedule"]

LOCAL_POLICIES = tuple(policy for policy in POLICIES if policy != "random")
"""Site schedulers of a grid: ``random`` needs a policy stream the grid does not hand out."""

PARAMS: dict[str, str] = {
    "trace": "one SWF trace (file name in the workloads folder, or a path) for a machine config",
    "config": f"named configuration: {', '.join(CONFIGS)} (pwa4, pwa3: mixes of "
    "four traces of the Parallel Workloads Archive, see configs.py)",
    "machines": "machine sizes (list of ints) for a single-trace run instead of a config",
    "sites": "list of {trace, processors, warmup_days}: one log and one site each, mixed",
    "clean": "single trace: apply the cleaning filters of section 1.2 (default false)",
    "jobs": "number of jobs (horizon of a mix, or extract length of a trace)",
    "days": "horizon in days (a mix defaults to 180)",
    "skip_jobs": "single trace: start the extract at this job index (default 0)",
    "window": "single trace: 'start' (default) or 'random' extract start",
    "warmup_days": "single trace: drop the first days (default 0)",
    "window_offset": "start this many weeks later (a mix also takes 'random': drawn per seed)",
    "load": "divide inter-arrival times by this factor (default 1)",
    "max_width": "wide-job cap: an int, 'largest', 'local' (home machine) or null (none)",
    "sharing": f"{', '.join(SHARING)} (default broker; local: job at position i (from 0) "
    "runs on machine i mod M)",
    "strategy": f"broker allocation strategy: {', '.join(STRATEGIES)} (default mlp)",
    "local_scheduler": f"site scheduler: {', '.join(LOCAL_POLICIES)} (default easy)",
    "overhead": "multi-site runtime stretch o (default 0)",
    "max_parts": "multisite: most machines one job may span (default: all)",
    "place_on_arrival": "job_sharing, multisite: start a job when it arrives if it can start "
    "now (BestFit, else co-allocated), even ahead of queued jobs, as the source's grid "
    "scheduler did; only a job that cannot start waits in the EASY queue (default false)",
    "local_estimate": "what sites plan with: user (default), exact, predicted",
    "broker_estimate": "what the broker plans with: user (default), exact, predicted",
    "predictor": f"runtime predictor: {', '.join(PREDICTORS)} (default hk)",
    "history": "history window k >= 1 (default 2)",
    "search": "search extension w of Hk: -1 (all) or >= 0 (default 0)",
    "match": f"match condition: {', '.join(MATCHES)} (default none)",
    "match_lo": "lower match tolerance in percent (default 0)",
    "match_hi": "upper match tolerance in percent (default 0)",
    "c2": "constant factor of predictor c2, in (0, 1] (default 1)",
    "admissibility": "alpha in (0, 1] or null (default null: all feasible sites)",
    "include_new_job": "MLp, MPL, MLB count the new job (default true)",
    "tentative_scope": f"{', '.join(SCOPES)} (default active)",
    "kill_at_estimate": "kill a job at its user estimate (default true)",
    "bsld_floor_one": "floor the bounded slowdown at 1 (default true)",
}


def _choice(params: Mapping[str, object], name: str, allowed, default) -> object:
    value = params.get(name, default)
    if value not in allowed:
        raise ValueError(
            f"parameter {name!r} must be one of {', '.join(map(str, allowed))}, got {value!r}"
        )
    return value


def _number(params, name, default, test, kinds=(int, float), text="") -> object:
    value = params.get(name, default)
    if value is None and default is None:
        return None
    if isinstance(value, bool) or not isinstance(value, kinds) or not test(value):
        raise ValueError(f"parameter {name!r} must be {text}, got {value!r}")
    return value


def _flag(params, name, default) -> None:
    if not isinstance(params.get(name, default), bool):
        raise ValueError(f"parameter {name!r} must be true or false, got {params[name]!r}")


def check(params: Mapping[str, object]) -> None:
    """Refuse unknown, missing or bad parameters (one ValueError naming the parameter)."""
    unknown = sorted(set(params) - set(PARAMS))
    if unknown:
        raise ValueError(
            f"unknown parameter {unknown[0]!r} for model grid; allowed: {', '.join(PARAMS)}"
        )
    config = params.get("config")
    if config is not None:
        _choice(params, "config", CONFIGS, None)
    has_sites = params.get("sites") is not None
    is_mix = has_sites or config in MIXES
    if has_sites and config is not None:
        raise ValueError("give either 'sites' or 'config', not both")
    if is_mix:
        for name in ("trace", "machines", "clean", "skip_jobs", "window", "warmup_days"):
            if params.get(name) is not None:
                raise ValueError(
                    f"parameter {name!r} applies to single-trace runs, not to a mix of logs "
                    "('sites' or config grid1, grid2, pwa4, pwa3)"
                )
    if config in MIXES:
        resolve_logs(MIXES[str(config)], workloads_folder())  # one error naming missing logs
    if has_sites:
        sites = params["sites"]
        if not isinstance(sites, list) or not sites:
            raise ValueError(
                "parameter 'sites' must be a non-empty list of {trace, processors, warmup_days}"
            )
        for entry in sites:
            if not isinstance(entry, Mapping) or "trace" not in entry:
                raise ValueError(f"parameter 'sites': every entry needs a 'trace', got {entry!r}")
            extra = sorted(set(entry) - {"trace", "processors", "warmup_days"})
            if extra:
                raise ValueError(
                    f"parameter 'sites': unknown key {extra[0]!r}; "
                    "allowed: trace, processors, warmup_days"
                )
            locate(str(entry["trace"]))
    if not is_mix:
        if params.get("trace") is None:
            raise ValueError(
                "model grid needs 'trace' with a machine config (m64 ...) or 'machines', "
                "or a mix of logs: 'sites' or config grid1, grid2, pwa4, pwa3"
            )
        locate(str(params["trace"]))
        if (config is None) == (params.get("machines") is None):
            raise ValueError(
                "a single-trace run needs exactly one of 'machines' or 'config' "
                f"({', '.join(MACHINES)})"
            )
        machines = params.get("machines")
        if machines is not None and (
            not isinstance(machines, list)
            or not machines
            or not all(isinstance(m, int) and not isinstance(m, bool) and m > 0 for m in machines)
        ):
            raise ValueError(
                f"parameter 'machines' must be a list of positive ints, got {machines!r}"
            )
        _flag(params, "clean", False)
        _number(params, "skip_jobs", 0, lambda v: v >= 0, (int,), "an int >= 0")
        _choice(params, "window", ("start", "random"), "start")
        _number(params, "warmup_days", 0, lambda v: v >= 0, text="a number >= 0")
    _number(params, "jobs", None, lambda v: v >= 1, (int,), "an int >= 1")
    _number(params, "days", None, lambda v: v > 0, text="a number > 0")
    offset = params.get("window_offset", 0)
    if not (is_mix and offset == "random") and (
        isinstance(offset, bool) or not isinstance(offset, int) or offset < 0
    ):
        allowed = "an int >= 0 or 'random'" if is_mix else "an int >= 0"
        raise ValueError(f"parameter 'window_offset' must be {allowed}, got {offset!r}")
    _number(params, "load", 1.0, lambda v: v > 0, text="a number > 0")
    sharing = _choice(params, "sharing", SHARING, "broker")
    cap = params.get("max_width")
    if (
        cap is not None
        and cap not in ("largest", "local")
        and not (isinstance(cap, int) and not isinstance(cap, bool) and cap >= 1)
    ):
        raise ValueError(
            f"parameter 'max_width' must be an int >= 1, 'largest', 'local' or null, got {cap!r}"
        )
    if cap == "local" and sharing != "local":
        raise ValueError("parameter 'max_width': 'local' (home machine size) needs sharing: local")
    _choice(params, "strategy", STRATEGIES, "mlp")
    scheduler = _choice(params, "local_scheduler", LOCAL_POLICIES, "easy")
    if sharing in ("job_sharing", "multisite") and scheduler != "easy":
        raise ValueError(f"parameter 'local_scheduler' must be easy with sharing {sharing}")
    _number(params, "overhead", 0.0, lambda v: v >= 0, text="a number >= 0")
    _number(params, "max_parts", None, lambda v: v >= 1, (int,), "an int >= 1 or null")
    if params.get("max_parts") is not None and sharing != "multisite":
        raise ValueError("parameter 'max_parts' applies to sharing: multisite only")
    _flag(params, "place_on_arrival", False)
    if params.get("place_on_arrival") and sharing not in ("job_sharing", "multisite"):
        raise ValueError(
            "parameter 'place_on_arrival' applies to sharing: job_sharing or multisite only"
        )
    _choice(params, "local_estimate", ESTIMATES, "user")
    _choice(params, "broker_estimate", ESTIMATES, "user")
    _choice(params, "predictor", PREDICTORS, "hk")
    _number(params, "history", 2, lambda v: v >= 1, (int,), "an int >= 1")
    _number(params, "search", 0, lambda v: v >= -1, (int,), "-1 or an int >= 0")
    _choice(params, "match", MATCHES, "none")
    _number(params, "match_lo", 0.0, lambda v: 0 <= v <= 100, text="a percentage in [0, 100]")
    _number(params, "match_hi", 0.0, lambda v: v >= 0, text="a percentage >= 0")
    _number(params, "c2", 1.0, lambda v: 0 < v <= 1, text="a number in (0, 1]")
    _number(params, "admissibility", None, lambda v: 0 < v <= 1, text="a number in (0, 1] or null")
    _flag(params, "include_new_job", True)
    _choice(params, "tentative_scope", SCOPES, "active")
    _flag(params, "kill_at_estimate", True)
    _flag(params, "bsld_floor_one", True)


def options(params: Mapping[str, object], home=None) -> GridOptions:
    """The simulation options of checked params."""
    get = params.get
    return GridOptions(
        sharing=str(get("sharing", "broker")),
        strategy=str(get("strategy", "mlp")),
        local_scheduler=str(get("local_scheduler", "easy")),
        overhead=float(get("overhead", 0.0)),
        max_parts=get("max_parts"),
        place_on_arrival=bool(get("place_on_arrival", False)),
        local_estimate=str(get("local_estimate", "user")),
        broker_estimate=str(get("broker_estimate", "user")),
        kill_at_estimate=bool(get("kill_at_estimate", True)),
        predictor=str(get("predictor", "hk")),
        history=int(get("history", 2)),
        search=int(get("search", 0)),
        match=str(get("match", "none")),
        match_lo=float(get("match_lo", 0.0)),
        match_hi=float(get("match_hi", 0.0)),
        c2=float(get("c2", 1.0)),
        admissibility=None if get("admissibility") is None else float(get("admissibility")),
        include_new_job=bool(get("include_new_job", True)),
        tentative_scope=str(get("tentative_scope", "active")),
        home=home,
    )


def _simulate(params: Mapping[str, object], seed: int) -> tuple[GridInput, GridSchedule]:
    check(params)
    streams = np.random.SeedSequence(seed).spawn(5)
    grid = build(params, np.random.default_rng(streams[0]))
    result = simulate_grid(
        grid.workload,
        grid.machines,
        options(params, grid.home.tolist()),
        np.random.default_rng(streams[2]),
        np.random.default_rng(streams[3]),
    )
    check_grid_feasible(result)
    return grid, result


def schedule(params: Mapping[str, object], seed: int) -> GridSchedule:
    """The simulated (and checked) schedule of one run."""
    return _simulate(params, seed)[1]


def run(params: Mapping[str, object], seed: int) -> dict[str, float]:
    """Simulate one grid run and return its metrics (see ``run.metrics``)."""
    grid, result = _simulate(params, seed)
    values = grid_metrics(result, bool(params.get("bsld_floor_one", True)))
    for reason in (*CLEANING_REASONS, "too_wide"):
        values[f"n_dropped_{reason}"] = float(grid.dropped.get(reason, 0))
    for k, digest in enumerate(grid.digests, start=1):
        values[f"digest_log{k}"] = float(int(digest[:13], 16))
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


run.check = check
run.inputs = inputs
run.metrics = {
    **GRID_METRICS,
    **{
        f"n_dropped_{reason}": {"units": "1", "long_name": f"jobs dropped by the {reason} filter"}
        for reason in (*CLEANING_REASONS, "too_wide")
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
    parse=check,
    metrics=run.metrics,
    headline=("mean_wait", "mean_bsld", "swct_w"),
    inputs=inputs,
    example={"trace": "KTH-SP2-1996-2.1-cln.swf.gz", "machines": [64, 36], "jobs": 300},
)
