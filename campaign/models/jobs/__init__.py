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
from campaign.models.jobs.datacenter import EXPERIMENTS, reference_workload
from campaign.models.jobs.energy import METRICS as ENERGY_METRICS
from campaign.models.jobs.energy import NAN_METRICS, energy_metrics, platform_energy_metrics
from campaign.models.rigid.clock import month_slice, month_start
from campaign.models.rigid.generated import fit_workload, probabilistic, randomized
from campaign.models.rigid.metrics import LIST_METRICS, METRICS, list_metrics, schedule_metrics
from campaign.models.rigid.orders import ORDER_NAMES
from campaign.models.rigid.platform import CORE_ORDERS, Platform, ProcessorType, mixed_processors
from campaign.models.rigid.policies import LIST_MODES, SCHEDULERS, Options
from campaign.models.rigid.policies.pfcfs import PRESETS, PfcfsParams
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

__all__ = ["MODEL", "run", "schedule", "build_workload", "check", "PARAMS", "METRICS"]

DROP_REASONS = (*CLEANING_REASONS, "too_wide")

DATACENTER = tuple(EXPERIMENTS)
DRAWN = ("randomized", "probabilistic")
"""Workloads of list-scheduling.md section 7 (M = processors, default 256; 50,000 jobs)."""
WORKLOADS = ("synthetic", *DATACENTER, *DRAWN)

PARAMS: dict[str, str] = {
    "trace": "SWF file name in the workloads folder, or a path",
    "month": "YYYY-MM: only the trace's jobs submitted in that month on its clock "
    "(list-scheduling.md 7.3), re-based to 0",
    "max_gap_s": "workload randomized: gaps between submissions are U(0, this) s (default 3600)",
    "fit_trace": "workload probabilistic: the SWF trace its distributions are fitted to",
    "workload": "'synthetic' for a Lublin-Feitelson workload instead of a trace; 'randomized' "
    "or 'probabilistic' (fitted to 'fit_trace') for those of list-scheduling.md section 7; "
    f"{', '.join(DATACENTER)} for the reference workloads of datacenter.md section 4 (on "
    "their platform: 160, 200, 200 cores of the reference type)",
    "overestimate": "synthetic user estimates p' = p * U(1, overestimate) (default 3)",
    "clean": "apply the cleaning filters of parallel-jobs.md 1.2 (default false)",
    "jobs": "number of jobs to simulate (after cleaning; synthetic default 1000)",
    "days": "simulate the jobs submitted within this many days",
    "window": "'start' (default) or 'random': window start drawn from the workload stream",
    "warmup_days": "drop the jobs of the trace's first days (default 0)",
    "load": "divide inter-arrival times by this factor (default 1)",
    "max_processors": "cut a trace's site to at most this many processors (wider jobs "
    "dropped): min(this, MaxProcs); not with 'processors'",
    "processors": "site size (default: the trace's MaxProcs; synthetic 128; datacenter "
    "workloads: their platform's cores)",
    "scheduler": f"{', '.join(SCHEDULERS)} (default easy); random draws from the policy stream",
    "order": f"list order of the waiting jobs (list-scheduling.md): {', '.join(ORDER_NAMES)} "
    "(default fcfs); with 'backfill', replaces 'scheduler'",
    "backfill": f"backfilling over the list order: {', '.join(LIST_MODES)} (default easy; "
    "greedy with fcfs = Garey & Graham)",
    "weight": "scheduler weight of a job in the list orders: unit (default) or work "
    "(size * estimate)",
    "reorder_ratio": "recompute a PSRS or SMART order at an arrival once more than this share "
    "of the last computed order has started (default 2/3; null: at every arrival)",
    "smart_gamma": "ratio of consecutive estimate bins of the SMART orders (default 2)",
    "pfcfs_preset": f"scheduler pfcfs: {', '.join(PRESETS)} (default pfcfs1); the pfcfs_* "
    "params given override it",
    "pfcfs_wide": "scheduler pfcfs: a job is wide iff size > this * processors (0 < x <= 1)",
    "pfcfs_max_preemptions": "scheduler pfcfs: switches per wide job (int >= 0; null: no limit)",
    "pfcfs_delay_s": "scheduler pfcfs: wait of a wide job at the head before it preempts (s)",
    "pfcfs_slice_s": "scheduler pfcfs: gang length between switches (s > 0, or 'delay')",
    "pfcfs_penalty_s": "scheduler pfcfs: time each switch costs the jobs it makes run (s)",
    "pfcfs_preempt": "scheduler pfcfs: victims greedy (few jobs) or all (every running job)",
    "pfcfs_wait_half": "scheduler pfcfs: start a wide job's clock only once half the "
    "processors are free",
    "estimate": "what schedulers plan with: user (default) or exact",
    "estimate_accuracy": "user estimates EET = a * p with p the runtime on a reference core "
    "(datacenter workloads default to their table's EET, i.e. a = 1.4)",
    "estimate_noise": "user estimates EET = p * U(1, k), k = this value (estimates stream); "
    "not with estimate_accuracy",
    "kill_at_estimate": "kill a job at its user estimate (default true; false for datacenter "
    "workloads, whose reference simulator never kills)",
    "backfill_after_start": "EASY: backfill in a pass that started the queue head (default "
    "true); false is the datacenter reference simulator's rule (such a pass backfills "
    "nothing); other schedulers ignore it",
    "bsld_floor_one": "floor the bounded slowdown at 1 (default true)",
    "energy": "compute energy, edp and edp_stepwise on processors of cores (default false: "
    "NaN; true for datacenter workloads)",
    "cores_per_processor": "cores per processor for the energy model and the core-level "
    "platform (default 8)",
    "static_power_w": "static power of a processor, W (default 50)",
    "dynamic_power_w": "dynamic power of a running core, W (default 100)",
    "hetero_fraction": "fraction of the processors (nodes) whose clock rate and dynamic power "
    "are multiplied (default 0: homogeneous); > 0 runs on a core-level platform",
    "hetero_clock": "clock-rate multiplier of those processors (default 2)",
    "hetero_dynamic_power": "dynamic-power multiplier of those processors (default 2)",
    "core_order": "core-level platform: cores a starting job takes, fastest (default; ties "
    "lowest index) or low_power (lowest dynamic power first)",
}
ESTIMATES = ("user", "exact")
NOT_FOR_DATACENTER = ("clean", "window", "days", "jobs", "warmup_days", "overestimate")


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


def _datacenter(params: Mapping[str, object]) -> bool:
    return params.get("workload") in DATACENTER


def _kill(params: Mapping[str, object]) -> bool:
    return bool(params.get("kill_at_estimate", not _datacenter(params)))


def _on_platform(params: Mapping[str, object]) -> bool:
    """Whether jobs run on a core-level platform (else on identical processors)."""
    return _datacenter(params) or float(params.get("hetero_fraction") or 0) > 0


def check(params: Mapping[str, object]) -> None:
    """Refuse unknown, missing or bad parameters (one ValueError naming the parameter)."""
    unknown = sorted(set(params) - set(PARAMS))
    if unknown:
        raise ValueError(
            f"unknown parameter {unknown[0]!r} for model jobs; allowed: {', '.join(PARAMS)}"
        )
    has_trace = params.get("trace") is not None
    generated = params.get("workload") is not None
    if has_trace == generated:
        raise ValueError(
            "model jobs needs exactly one of 'trace' (a file) or 'workload' (synthetic, "
            f"{', '.join(DATACENTER)}, {', '.join(DRAWN)})"
        )
    if generated:
        kind = _choice(params, "workload", WORKLOADS, "synthetic")
        for name in ("clean", "window", "days"):
            if name in params:
                raise ValueError(f"parameter {name!r} applies to traces, not to 'workload: {kind}'")
        if kind in DATACENTER:
            for name in NOT_FOR_DATACENTER:
                if name in params:
                    raise ValueError(
                        f"parameter {name!r} does not apply to 'workload: {kind}' (fixed jobs)"
                    )
        elif kind in DRAWN:
            for name in ("overestimate", "estimate_noise", "estimate_accuracy", "warmup_days"):
                if name in params:
                    raise ValueError(f"parameter {name!r} does not apply to 'workload: {kind}'")
        elif "estimate_noise" in params:
            raise ValueError(
                "parameter 'estimate_noise' does not apply to 'workload: synthetic': "
                "use 'overestimate' (the same p * U(1, k) estimates)"
            )
        elif "estimate_accuracy" in params and "overestimate" in params:
            raise ValueError("parameters 'estimate_accuracy' and 'overestimate' exclude each other")
    else:
        trace = params["trace"]
        if not isinstance(trace, str):
            raise ValueError(f"parameter 'trace' must be a file name or path, got {trace!r}")
        locate(trace)
        if "overestimate" in params:
            raise ValueError("parameter 'overestimate' applies to 'workload: synthetic' only")
        if params.get("month") is not None:
            for name in ("jobs", "days", "window", "warmup_days"):
                if name in params:
                    raise ValueError(f"parameter {name!r} does not apply with 'month'")
            if not isinstance(params["month"], str):
                raise ValueError(f"parameter 'month' must be YYYY-MM, got {params['month']!r}")
            month_start(params["month"])
    if params.get("workload") != "randomized" and "max_gap_s" in params:
        raise ValueError("parameter 'max_gap_s' applies to 'workload: randomized' only")
    if params.get("workload") == "probabilistic":
        fit = params.get("fit_trace")
        if not isinstance(fit, str):
            raise ValueError("'workload: probabilistic' needs 'fit_trace' (an SWF file name)")
        locate(fit)
    elif "fit_trace" in params:
        raise ValueError("parameter 'fit_trace' applies to 'workload: probabilistic' only")
    if params.get("month") is not None and not has_trace:
        raise ValueError("parameter 'month' applies to traces")
    _get(params, "max_gap_s", (int, float), 3600.0, lambda v: v > 0)
    _get(params, "overestimate", (int, float), 3.0, lambda v: v >= 1)
    _get(params, "clean", (bool,), False)
    _get(params, "jobs", (int,), None, lambda v: v >= 1)
    _get(params, "days", (int, float), None, lambda v: v > 0)
    _choice(params, "window", ("start", "random"), "start")
    _get(params, "warmup_days", (int, float), 0, lambda v: v >= 0)
    _get(params, "load", (int, float), 1.0, lambda v: v > 0)
    _get(params, "processors", (int,), None, lambda v: v >= 1)
    _get(params, "max_processors", (int,), None, lambda v: v >= 1)
    if "max_processors" in params and ("processors" in params or not has_trace):
        raise ValueError("parameter 'max_processors' cuts a trace's site: not with 'processors'")
    _choice(params, "scheduler", SCHEDULERS, "easy")
    _check_list(params)
    _check_pfcfs(params)
    _choice(params, "estimate", ESTIMATES, "user")
    accuracy = _get(params, "estimate_accuracy", (int, float), None, lambda v: v > 0)
    _get(params, "estimate_noise", (int, float), None, lambda v: v >= 1)
    if accuracy is not None and params.get("estimate_noise") is not None:
        raise ValueError("parameters 'estimate_accuracy' and 'estimate_noise' exclude each other")
    _get(params, "kill_at_estimate", (bool,), True)
    if accuracy is not None and accuracy < 1 and _kill(params):
        raise ValueError(
            f"parameter 'estimate_accuracy' {accuracy!r} < 1 would kill every job at a * p: "
            "set 'kill_at_estimate: false' (the datacenter configuration never kills)"
        )
    _get(params, "backfill_after_start", (bool,), True)
    _get(params, "bsld_floor_one", (bool,), True)
    _get(params, "energy", (bool,), False)
    _get(params, "cores_per_processor", (int,), 8, lambda v: v >= 1)
    _get(params, "static_power_w", (int, float), 50.0, lambda v: v >= 0)
    _get(params, "dynamic_power_w", (int, float), 100.0, lambda v: v >= 0)
    _get(params, "hetero_fraction", (int, float), 0.0, lambda v: 0 <= v <= 1)
    _get(params, "hetero_clock", (int, float), 2.0, lambda v: v > 0)
    _get(params, "hetero_dynamic_power", (int, float), 2.0, lambda v: v >= 0)
    _choice(params, "core_order", CORE_ORDERS, "fastest")


LIST_PARAMS = ("order", "backfill", "weight", "reorder_ratio", "smart_gamma")


def _listed(params: Mapping[str, object]) -> bool:
    """Whether a list order with a backfilling mode replaces the ``scheduler``."""
    return "order" in params or "backfill" in params


def _check_list(params: Mapping[str, object]) -> None:
    if not _listed(params):
        for name in LIST_PARAMS:
            if name in params:
                raise ValueError(
                    f"parameter {name!r} applies to list scheduling: give 'order' and/or 'backfill'"
                )
        return
    if "scheduler" in params:
        raise ValueError(
            "parameter 'scheduler' excludes 'order' and 'backfill' (fcfs with none, easy or "
            "conservative is scheduler fcfs, easy or conservative)"
        )
    _choice(params, "order", ORDER_NAMES, "fcfs")
    _choice(params, "backfill", tuple(LIST_MODES), "easy")
    _choice(params, "weight", ("unit", "work"), "unit")
    _get(params, "reorder_ratio", (int, float), 2 / 3, lambda v: 0 <= v < 1)
    _get(params, "smart_gamma", (int, float), 2.0, lambda v: v > 1)


PFCFS_PARAMS = {
    "pfcfs_wide": "wide",
    "pfcfs_max_preemptions": "max_preemptions",
    "pfcfs_delay_s": "delay",
    "pfcfs_slice_s": "slice",
    "pfcfs_penalty_s": "penalty",
    "pfcfs_preempt": "preempt",
    "pfcfs_wait_half": "wait_half",
}


def _check_pfcfs(params: Mapping[str, object]) -> None:
    given = [name for name in ("pfcfs_preset", *PFCFS_PARAMS) if name in params]
    if params.get("scheduler") != "pfcfs":
        if given:
            raise ValueError(f"parameter {given[0]!r} needs 'scheduler: pfcfs'")
        return
    if _on_platform(params):
        raise ValueError(
            "scheduler pfcfs runs on identical processors: not with datacenter workloads or "
            "hetero_fraction > 0"
        )
    if params.get("pfcfs_preset") is not None:
        _choice(params, "pfcfs_preset", tuple(PRESETS), "pfcfs1")
    _get(params, "pfcfs_wide", (int, float), 0.5, lambda v: 0 < v <= 1)
    _get(params, "pfcfs_max_preemptions", (int,), None, lambda v: v >= 0)
    _get(params, "pfcfs_delay_s", (int, float), 600.0, lambda v: v >= 0)
    if params.get("pfcfs_slice_s") != "delay":
        _get(params, "pfcfs_slice_s", (int, float), 600.0, lambda v: v > 0)
    _get(params, "pfcfs_penalty_s", (int, float), 0.0, lambda v: v >= 0)
    _choice(params, "pfcfs_preempt", ("greedy", "all"), "greedy")
    _get(params, "pfcfs_wait_half", (bool,), False)


def _pfcfs(params: Mapping[str, object]) -> PfcfsParams:
    """The preset (default pfcfs1) with the explicit pfcfs_* params over it."""
    preset = params.get("pfcfs_preset") or "pfcfs1"
    changes = {}
    for name, field in PFCFS_PARAMS.items():
        if name in params:
            value = params[name]
            if name == "pfcfs_slice_s":
                value = None if value == "delay" else float(value)
            elif isinstance(value, (int, float)) and not isinstance(value, bool):
                value = value if name == "pfcfs_max_preemptions" else float(value)
            changes[field] = value
    return replace(PRESETS[str(preset)], **changes)


def _policy(params: Mapping[str, object]) -> tuple[str, Options]:
    """The policy name and its options (a list order, or the arrival-order scheduler it is
    equivalent to)."""
    if params.get("scheduler") == "pfcfs":
        return "pfcfs", Options(pfcfs=_pfcfs(params))
    if not _listed(params):
        return str(params.get("scheduler", "easy")), Options()
    order = str(params.get("order", "fcfs"))
    backfill = str(params.get("backfill", "easy"))
    if order == "fcfs" and backfill in ("none", "easy", "conservative"):
        return {"none": "fcfs"}.get(backfill, backfill), Options()
    ratio = params["reorder_ratio"] if "reorder_ratio" in params else 2 / 3
    options = Options(
        order=order,
        weight=str(params.get("weight", "unit")),
        reorder_ratio=None if ratio is None else float(ratio),
        smart_gamma=float(params.get("smart_gamma", 2.0)),
    )
    return LIST_MODES[backfill], options


def _base_type(params: Mapping[str, object]) -> ProcessorType:
    """The reference processor type with the site's cores and powers."""
    return ProcessorType(
        cores=int(params.get("cores_per_processor", 8)),
        static_power=float(params.get("static_power_w", 50.0)),
        dynamic_power=float(params.get("dynamic_power_w", 100.0)),
    )


def build_workload(
    params: Mapping[str, object], streams: list[np.random.SeedSequence]
) -> tuple[Workload, int, dict[str, int]]:
    """The shaped workload, the site size and the jobs dropped per reason."""
    workload_rng = np.random.default_rng(streams[0])
    dropped = dict.fromkeys(DROP_REASONS, 0)
    processors = params.get("processors")
    kind = params.get("workload")
    if kind == "synthetic":
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
    elif kind == "randomized":
        processors = int(processors or 256)
        jobs = int(params.get("jobs") or 50000)
        gap = float(params.get("max_gap_s", 3600.0))
        workload = randomized(jobs, processors, gap, workload_rng)
    elif kind == "probabilistic":
        processors = int(processors or 256)
        jobs = int(params.get("jobs") or 50000)
        fit_trace = load_trace(str(params["fit_trace"]))
        fit = fit_workload(from_trace(fit_trace, False, processors)[0], processors)
        workload = probabilistic(fit, jobs, processors, workload_rng)
    elif kind in DATACENTER:
        workload = reference_workload(str(kind), _base_type(params).speed)
        processors = int(processors or workload.processors)
        too_wide = workload.size > processors
        dropped["too_wide"] = int(too_wide.sum())
        workload = workload.take(~too_wide)
    else:
        trace = load_trace(str(params["trace"]))
        cap = params.get("max_processors")
        if cap is not None:
            processors = min(int(cap), trace.max_procs or int(cap))
        workload, counts = from_trace(trace, bool(params.get("clean", False)), processors)
        dropped.update(counts)
        if workload.processors is None:
            raise ValueError(
                f"trace {params['trace']!r} has no MaxProcs header: give parameter 'processors'"
            )
        processors = workload.processors
        if params.get("month") is not None:
            workload = month_slice(workload, trace, str(params["month"]))
        workload = drop_warmup(workload, float(params.get("warmup_days", 0)))
        workload = window(
            workload,
            params.get("jobs"),
            params.get("days"),
            str(params.get("window", "start")),
            workload_rng,
        )
    if len(workload) == 0:
        gone = ", ".join(f"{n} {reason}" for reason, n in dropped.items() if n) or "none"
        raise ValueError(
            f"no job is left to simulate (jobs dropped: {gone}; then warmup_days, days and "
            "jobs shape the rest): every metric would be undefined"
        )
    workload = scale_load(workload.rebased(), float(params.get("load", 1.0)))
    accuracy = params.get("estimate_accuracy")
    noise = params.get("estimate_noise")
    if accuracy is not None or noise is not None:
        workload = estimates_from_runtime(
            workload,
            None if accuracy is None else float(accuracy),
            None if noise is None else float(noise),
            np.random.default_rng(streams[2]),
        )
    return workload, int(processors), dropped


def build_platform(params: Mapping[str, object], processors: int) -> Platform:
    """The core-level platform of ``processors`` cores (datacenter.md sections 1 and 5)."""
    base = _base_type(params)
    if processors % base.cores:
        raise ValueError(
            f"parameter 'cores_per_processor' ({base.cores}) must divide the site size "
            f"({processors} cores) of a core-level platform"
        )
    kinds = mixed_processors(
        processors // base.cores,
        base,
        float(params.get("hetero_fraction", 0.0)),
        float(params.get("hetero_clock", 2.0)),
        float(params.get("hetero_dynamic_power", 2.0)),
    )
    return Platform(kinds, str(params.get("core_order", "fastest")))


def _simulate(params: Mapping[str, object], seed: int) -> tuple[Schedule, int, dict[str, int], int]:
    """The schedule, the site size, the jobs dropped per reason and the jobs replayed with
    an unknown run time."""
    check(params)
    streams = np.random.SeedSequence(seed).spawn(5)
    workload, processors, dropped = build_workload(params, streams)
    platform = None
    if _on_platform(params):
        platform = build_platform(params, processors)
        if workload.ops is None:  # a trace's runtime is its time on a reference core
            workload = replace(workload, ops=workload.runtime * _base_type(params).speed)
    policy, options = _policy(params)
    result = run_schedule(
        workload,
        processors,
        policy,
        str(params.get("estimate", "user")),
        _kill(params),
        rng=np.random.default_rng(streams[3]),
        platform=platform,
        backfill_after_start=bool(params.get("backfill_after_start", True)),
        options=options,
    )
    return result, processors, dropped, workload.unknown_runtimes


def schedule(params: Mapping[str, object], seed: int) -> Schedule:
    """The simulated schedule (start, end, runtime, estimate per job) of one run."""
    return _simulate(params, seed)[0]


def run(params: Mapping[str, object], seed: int) -> dict[str, float]:
    """Simulate one site and return its metrics (see ``run.metrics``)."""
    result, processors, dropped, unknown_runtimes = _simulate(params, seed)
    values = schedule_metrics(result, bool(params.get("bsld_floor_one", True)))
    values.update(list_metrics(result))
    if not params.get("energy", _datacenter(params)):
        values.update(NAN_METRICS)
    elif result.platform is not None:
        values.update(platform_energy_metrics(result))
    else:
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
    values["processors"] = float(processors)
    values.update({f"n_dropped_{reason}": float(n) for reason, n in dropped.items()})
    values["n_unknown_run_time"] = float(unknown_runtimes)
    return values


def inputs(params: Mapping[str, object]) -> tuple[str, ...]:
    """The file a run reads (its trace): runs on one trace share a worker, and a trace
    rewritten in place is never hidden behind results stored before."""
    names = (params.get("trace"), params.get("fit_trace"))
    return tuple(str(locate(str(name))) for name in names if name is not None)


run.check = check
run.inputs = inputs
run.metrics = {
    **METRICS,
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
    parse=check,
    metrics=run.metrics,
    headline=("mean_wait", "mean_bsld", "swct_w"),
    inputs=inputs,
    commands=(Command("workloads", "list, show or fetch SWF workload traces", workloads_main),),
    example={"workload": "synthetic", "jobs": 300, "scheduler": "easy"},
)
