"""The ``jobs`` model: rigid parallel jobs on one site under a local scheduler.

``run(params, seed)`` replays an SWF trace (or a synthetic Lublin-Feitelson workload) with
FCFS, EASY or conservative backfilling and returns the metrics of parallel-jobs.md section 7.
``schedule(params, seed)`` returns the whole simulated schedule (per-job arrays) for plots.

Random streams: ``numpy.random.SeedSequence(seed).spawn(5)`` gives, in order, the workload
(synthetic jobs, random window start), platform, estimates (synthetic user estimates), policy
and availability streams.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from campaign.models.jobs.energy import METRICS as ENERGY_METRICS
from campaign.models.jobs.energy import energy_metrics
from campaign.models.jobs.metrics import METRICS, schedule_metrics
from campaign.models.jobs.simulate import Schedule, run_schedule
from campaign.models.jobs.site import POLICIES
from campaign.models.jobs.swf import CLEANING_REASONS
from campaign.models.jobs.synthetic import lublin_feitelson
from campaign.models.jobs.workload import (
    Workload,
    drop_warmup,
    from_trace,
    scale_load,
    window,
)
from campaign.models.jobs.workloads import load_trace, locate

__all__ = ["run", "schedule", "build_workload", "check", "PARAMS", "METRICS"]

DROP_REASONS = (*CLEANING_REASONS, "too_wide")

PARAMS: dict[str, str] = {
    "trace": "SWF file name in the workloads folder, or a path",
    "workload": "'synthetic' for a Lublin-Feitelson workload instead of a trace",
    "overestimate": "synthetic user estimates p' = p * U(1, overestimate) (default 3)",
    "clean": "apply the cleaning filters of parallel-jobs.md 1.2 (default false)",
    "jobs": "number of jobs to simulate (after cleaning; synthetic default 1000)",
    "days": "simulate the jobs submitted within this many days",
    "window": "'start' (default) or 'random': window start drawn from the workload stream",
    "warmup_days": "drop the jobs of the trace's first days (default 0)",
    "load": "divide inter-arrival times by this factor (default 1)",
    "processors": "site size (default: the trace's MaxProcs; synthetic 128)",
    "scheduler": "fcfs, easy (default), conservative or accasim_easy",
    "estimate": "what schedulers plan with: user (default) or exact",
    "kill_at_estimate": "kill a job at its user estimate (default true)",
    "bsld_floor_one": "floor the bounded slowdown at 1 (default true)",
    "energy": "compute energy and edp on processors of cores (default false: NaN)",
    "cores_per_processor": "cores per processor for the energy model (default 8)",
    "static_power_w": "static power of a processor, W (default 50)",
    "dynamic_power_w": "dynamic power of a running core, W (default 100)",
}
ESTIMATES = ("user", "exact")


def _get(params: Mapping[str, object], name: str, kinds: tuple[type, ...], default, check=None):
    value = params.get(name, default)
    if value is None:
        return None
    if isinstance(value, bool) and bool not in kinds:
        raise ValueError(f"parameter {name!r} must be a number, got {value!r}")
    if not isinstance(value, kinds):
        expected = " or ".join(kind.__name__ for kind in kinds)
        raise ValueError(f"parameter {name!r} must be {expected}, got {value!r}")
    if check is not None and not check(value):
        raise ValueError(f"parameter {name!r} is out of range: {value!r}")
    return value


def _choice(params: Mapping[str, object], name: str, allowed: tuple[str, ...], default: str):
    value = params.get(name, default)
    if value not in allowed:
        raise ValueError(f"parameter {name!r} must be one of {', '.join(allowed)}, got {value!r}")
    return value


def check(params: Mapping[str, object]) -> None:
    """Refuse unknown, missing or bad parameters (one ValueError naming the parameter)."""
    unknown = sorted(set(params) - set(PARAMS))
    if unknown:
        raise ValueError(
            f"unknown parameter {unknown[0]!r} for model jobs; allowed: {', '.join(PARAMS)}"
        )
    has_trace = params.get("trace") is not None
    synthetic = params.get("workload") is not None
    if has_trace == synthetic:
        raise ValueError(
            "model jobs needs exactly one of 'trace' (a file) or 'workload: synthetic'"
        )
    if synthetic:
        _choice(params, "workload", ("synthetic",), "synthetic")
        for name in ("clean", "window", "days"):
            if name in params:
                raise ValueError(
                    f"parameter {name!r} applies to traces, not to 'workload: synthetic'"
                )
    else:
        trace = params["trace"]
        if not isinstance(trace, str):
            raise ValueError(f"parameter 'trace' must be a file name or path, got {trace!r}")
        locate(trace)
        if "overestimate" in params:
            raise ValueError("parameter 'overestimate' applies to 'workload: synthetic' only")
    _get(params, "overestimate", (int, float), 3.0, lambda v: v >= 1)
    _get(params, "clean", (bool,), False)
    _get(params, "jobs", (int,), None, lambda v: v >= 1)
    _get(params, "days", (int, float), None, lambda v: v > 0)
    _choice(params, "window", ("start", "random"), "start")
    _get(params, "warmup_days", (int, float), 0, lambda v: v >= 0)
    _get(params, "load", (int, float), 1.0, lambda v: v > 0)
    _get(params, "processors", (int,), None, lambda v: v >= 1)
    _choice(params, "scheduler", POLICIES, "easy")
    _choice(params, "estimate", ESTIMATES, "user")
    _get(params, "kill_at_estimate", (bool,), True)
    _get(params, "bsld_floor_one", (bool,), True)
    _get(params, "energy", (bool,), False)
    _get(params, "cores_per_processor", (int,), 8, lambda v: v >= 1)
    _get(params, "static_power_w", (int, float), 50.0, lambda v: v >= 0)
    _get(params, "dynamic_power_w", (int, float), 100.0, lambda v: v >= 0)


def build_workload(
    params: Mapping[str, object], streams: list[np.random.SeedSequence]
) -> tuple[Workload, int, dict[str, int]]:
    """The shaped workload, the site size and the jobs dropped per reason."""
    workload_rng = np.random.default_rng(streams[0])
    dropped = dict.fromkeys(DROP_REASONS, 0)
    processors = params.get("processors")
    if params.get("workload") == "synthetic":
        processors = int(processors or 128)
        jobs = int(params.get("jobs") or 1000)
        workload = lublin_feitelson(
            jobs,
            processors,
            workload_rng,
            np.random.default_rng(streams[2]),
            float(params.get("overestimate", 3.0)),
        )
        workload = drop_warmup(workload, float(params.get("warmup_days", 0)))
    else:
        trace = load_trace(str(params["trace"]))
        workload, counts = from_trace(trace, bool(params.get("clean", False)), processors)
        dropped.update(counts)
        if workload.processors is None:
            raise ValueError(
                f"trace {params['trace']!r} has no MaxProcs header: give parameter 'processors'"
            )
        processors = workload.processors
        workload = drop_warmup(workload, float(params.get("warmup_days", 0)))
        workload = window(
            workload,
            params.get("jobs"),
            params.get("days"),
            str(params.get("window", "start")),
            workload_rng,
        )
    workload = scale_load(workload.rebased(), float(params.get("load", 1.0)))
    return workload, int(processors), dropped


def schedule(params: Mapping[str, object], seed: int) -> Schedule:
    """The simulated schedule (start, end, runtime, estimate per job) of one run."""
    check(params)
    streams = np.random.SeedSequence(seed).spawn(5)
    workload, processors, _ = build_workload(params, streams)
    return run_schedule(
        workload,
        processors,
        str(params.get("scheduler", "easy")),
        str(params.get("estimate", "user")),
        bool(params.get("kill_at_estimate", True)),
    )


def run(params: Mapping[str, object], seed: int) -> dict[str, float]:
    """Simulate one site and return its metrics (see ``run.metrics``)."""
    check(params)
    streams = np.random.SeedSequence(seed).spawn(5)
    workload, processors, dropped = build_workload(params, streams)
    result = run_schedule(
        workload,
        processors,
        str(params.get("scheduler", "easy")),
        str(params.get("estimate", "user")),
        bool(params.get("kill_at_estimate", True)),
    )
    values = schedule_metrics(result, bool(params.get("bsld_floor_one", True)))
    if params.get("energy", False):
        cores = int(params.get("cores_per_processor", 8))
        if processors % cores:
            raise ValueError(
                f"parameter 'cores_per_processor' ({cores}) must divide the site size "
                f"({processors} processors) for the energy model"
            )
        values.update(
            energy_metrics(
                result,
                cores,
                float(params.get("static_power_w", 50.0)),
                float(params.get("dynamic_power_w", 100.0)),
            )
        )
    else:
        values.update(energy=float("nan"), edp=float("nan"))
    values["processors"] = float(processors)
    values.update({f"n_dropped_{reason}": float(n) for reason, n in dropped.items()})
    return values


def inputs(params: Mapping[str, object]) -> tuple[str, ...]:
    """The heavy input a run reads (its trace), so runs on one trace can share a worker."""
    trace = params.get("trace")
    return () if trace is None else (str(trace),)


run.check = check
run.inputs = inputs
run.metrics = {
    **METRICS,
    **ENERGY_METRICS,
    "processors": {"units": "1", "long_name": "processors of the site"},
    **{
        f"n_dropped_{reason}": {
            "units": "1",
            "long_name": f"jobs dropped from the trace by the {reason} filter",
        }
        for reason in DROP_REASONS
    },
}
