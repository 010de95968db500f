"""The ``jobs`` model: rigid parallel jobs on one site under a local scheduler.

``run(params, seed)`` replays an SWF trace (or a synthetic Lublin-Feitelson workload, or a
reference workload of the heterogeneous datacenter, datacenter.md) with FCFS, EASY,
conservative backfilling, SJF or Random, or a list order (PSRS, SMART; list-scheduling.md)
with a backfilling mode, or preemptive FCFS (PFCFS), and returns the metrics of
parallel-jobs.md section 7 (plus energy). ``schedule(params, seed)`` returns the whole
simulated schedule (per-job arrays) for plots.

The datacenter configuration is this model with a core-level platform (``rigid/platform.py``):
chosen by ``workload: datacenter_exp1|2|3`` or a heterogeneous mix (``hetero_fraction`` > 0)
on any workload; jobs then run ops / (slowest allocated core's speed) seconds.

Random streams: ``numpy.random.SeedSequence(seed).spawn(5)`` gives, in order, the workload
(synthetic jobs, random window start), platform, estimates (synthetic user estimates, noisy
estimates), policy (the ``random`` scheduler's draws) and availability streams.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

import numpy as np

from campaign.models.contract import Command, Model
from campaign.models.jobs.datacenter import reference_workload
from campaign.models.jobs.energy import METRICS as ENERGY_METRICS
from campaign.models.jobs.energy import NAN_METRICS, energy_metrics, platform_energy_metrics
from campaign.models.jobs.params import (
    DRAWN_PROCESSORS,
    PARAMS,
    SYNTHETIC_PROCESSORS,
    JobsParams,
    parse,
)
from campaign.models.rigid.classes import BREAKDOWN, class_metrics
from campaign.models.rigid.clock import month_slice
from campaign.models.rigid.generated import fit_workload, probabilistic, randomized
from campaign.models.rigid.metrics import (
    LIST_METRICS,
    METRICS,
    SAMPLES,
    job_samples,
    list_metrics,
    schedule_metrics,
)
from campaign.models.rigid.platform import Platform, mixed_processors
from campaign.models.rigid.simulate import Schedule, run_schedule
from campaign.models.rigid.swf import CLEANING_REASONS
from campaign.models.rigid.synthetic import lublin_feitelson
from campaign.models.rigid.workload import (
    Workload,
    drop_warmup,
    estimates_from_runtime,
    from_trace,
    scale_load,
    window,
)
from campaign.models.rigid.workloads import load_trace, locate
from campaign.models.rigid.workloads import main as workloads_main

__all__ = ["MODEL", "run", "schedule", "build_workload", "check", "parse", "PARAMS", "METRICS"]

DROP_REASONS = (*CLEANING_REASONS, "too_wide")


def check(params: Mapping[str, object]) -> None:
    """Refuse unknown, missing or bad parameters (one ValueError naming the parameter)."""
    parse(params)


def build_workload(
    p: JobsParams, streams: list[np.random.SeedSequence]
) -> tuple[Workload, int, dict[str, int]]:
    """The shaped workload, the site size and the jobs dropped per reason."""
    workload_rng = np.random.default_rng(streams[0])
    dropped = dict.fromkeys(DROP_REASONS, 0)
    processors = p.processors
    if p.workload == "synthetic":
        processors = processors or SYNTHETIC_PROCESSORS
        workload = lublin_feitelson(
            p.jobs or 1000,
            processors,
            workload_rng,
            np.random.default_rng(streams[2]),
            p.overestimate,
        )
        workload = drop_warmup(workload, p.warmup_days)
    elif p.workload == "randomized":
        processors = processors or DRAWN_PROCESSORS
        workload = randomized(p.jobs or 50000, processors, p.max_gap_s, workload_rng)
    elif p.workload == "probabilistic":
        processors = processors or DRAWN_PROCESSORS
        fit_trace = load_trace(p.fit_trace)
        fit = fit_workload(from_trace(fit_trace, False, processors)[0], processors)
        workload = probabilistic(fit, p.jobs or 50000, processors, workload_rng)
    elif p.datacenter:
        workload = reference_workload(p.workload, p.base_type.speed)
        processors = processors or workload.processors
        too_wide = workload.size > processors
        dropped["too_wide"] = int(too_wide.sum())
        workload = workload.take(~too_wide)
    else:
        trace = load_trace(p.trace)
        if p.max_processors is not None:
            processors = min(p.max_processors, trace.max_procs or p.max_processors)
        workload, counts = from_trace(trace, p.clean, processors)
        dropped.update(counts)
        if workload.processors is None:
            raise ValueError(
                f"trace {p.trace!r} has no MaxProcs header: give parameter 'processors'"
            )
        processors = workload.processors
        if p.month is not None:
            workload = month_slice(workload, trace, p.month)
        workload = drop_warmup(workload, p.warmup_days)
        workload = window(workload, p.jobs, p.days, p.window, workload_rng)
    if len(workload) == 0:
        gone = ", ".join(f"{n} {reason}" for reason, n in dropped.items() if n) or "none"
        raise ValueError(
            f"no job is left to simulate (jobs dropped: {gone}; then warmup_days, days and "
            "jobs shape the rest): every metric would be undefined"
        )
    workload = scale_load(workload.rebased(), p.load)
    if p.estimate_accuracy is not None or p.estimate_noise is not None:
        workload = estimates_from_runtime(
            workload, p.estimate_accuracy, p.estimate_noise, np.random.default_rng(streams[2])
        )
    return workload, int(processors), dropped


def build_platform(p: JobsParams, processors: int) -> Platform:
    """The core-level platform of ``processors`` cores (datacenter.md sections 1 and 5)."""
    base = p.base_type
    if processors % base.cores:
        raise ValueError(
            f"parameter 'cores_per_processor' ({base.cores}) must divide the site size "
            f"({processors} cores) of a core-level platform"
        )
    kinds = mixed_processors(
        processors // base.cores, base, p.hetero_fraction, p.hetero_clock, p.hetero_dynamic_power
    )
    return Platform(kinds, p.core_order)


def _simulate(p: JobsParams, seed: int) -> tuple[Schedule, int, dict[str, int], int]:
    """The schedule, the site size, the jobs dropped per reason and the jobs replayed with
    an unknown run time."""
    streams = np.random.SeedSequence(seed).spawn(5)
    workload, processors, dropped = build_workload(p, streams)
    platform = None
    if p.on_platform:
        platform = build_platform(p, processors)
        if workload.ops is None:  # a trace's runtime is its time on a reference core
            workload = replace(workload, ops=workload.runtime * p.base_type.speed)
    policy, options = p.policy()
    result = run_schedule(
        workload,
        processors,
        policy,
        p.estimate,
        p.kill_at_estimate,
        rng=np.random.default_rng(streams[3]),
        platform=platform,
        options=options,
    )
    return result, processors, dropped, workload.unknown_runtimes


def schedule(params: Mapping[str, object], seed: int) -> Schedule:
    """The simulated schedule (start, end, runtime, estimate per job) of one run."""
    return _simulate(parse(params), seed)[0]


def run(params: Mapping[str, object], seed: int) -> dict[str, float]:
    """Simulate one site and return its metrics (see `METRICS_TABLE`)."""
    p = parse(params)
    result, processors, dropped, unknown_runtimes = _simulate(p, seed)
    values = schedule_metrics(result, p.bsld_floor_one)
    values.update(list_metrics(result))
    if not p.energy:
        values.update(NAN_METRICS)
    elif result.platform is not None:
        values.update(platform_energy_metrics(result))
    else:
        cores = p.cores_per_processor
        if processors % cores:
            raise ValueError(
                f"parameter 'cores_per_processor' ({cores}) must divide the site size "
                f"({processors} processors) for the energy model"
            )
        values.update(energy_metrics(result, cores, p.static_power_w, p.dynamic_power_w))
    values["processors"] = float(processors)
    values.update({f"n_dropped_{reason}": float(n) for reason, n in dropped.items()})
    values["n_unknown_run_time"] = float(unknown_runtimes)
    values.update(job_samples(result, p.bsld_floor_one))
    values.update(class_metrics(result, p.class_width, p.class_runtime_s, p.bsld_floor_one))
    return values


def inputs(params: Mapping[str, object]) -> tuple[str, ...]:
    """The file a run reads (its trace): runs on one trace share a worker, and a trace
    rewritten in place is never hidden behind results stored before."""
    names = (params.get("trace"), params.get("fit_trace"))
    return tuple(str(locate(str(name))) for name in names if name is not None)


METRICS_TABLE = {
    **METRICS,
    **SAMPLES,
    **BREAKDOWN,
    **LIST_METRICS,
    **ENERGY_METRICS,
    "processors": {"units": "1", "long_name": "processors of the site"},
    "n_unknown_run_time": {
        "units": "1",
        "long_name": "simulated jobs whose trace run time is unknown (negative), replayed as 0 s",
    },
    **{
        f"n_dropped_{reason}": {
            "units": "1",
            "long_name": f"jobs dropped from the trace by the {reason} filter",
        }
        for reason in DROP_REASONS
    },
}


MODEL = Model(
    name="jobs",
    run=run,
    summary="rigid parallel jobs on one site: SWF traces, synthetic or datacenter workloads; "
    "FCFS, EASY, conservative backfilling, SJF, Random; list orders PSRS and SMART with "
    "no, EASY, conservative or greedy backfilling; preemptive FCFS; energy",
    params=PARAMS,
    parse=parse,
    metrics=METRICS_TABLE,
    headline=("mean_wait", "mean_bsld", "swct_w"),
    inputs=inputs,
    commands=(Command("workloads", "list, show or fetch SWF workload traces", workloads_main),),
    example={"workload": "synthetic", "jobs": 300, "scheduler": "easy"},
)
