"""The parameters of the ``jobs`` model: their table, and the run they describe.

The table (`PARAMS`) holds each parameter's kind, default, unit and meaning; `parse` adds the
rules that tie parameters together (a trace or a generated workload, options that apply to one
of them only, estimates that exclude each other) and resolves the defaults that depend on the
workload, into one frozen `JobsParams`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, replace

from campaign.models.contract import (
    Choice,
    Custom,
    Either,
    Flag,
    Integer,
    Null,
    Number,
    Param,
    Params,
    Text,
)
from campaign.models.jobs.datacenter import EXPERIMENTS
from campaign.models.rigid.classes import CLASS_PARAMS
from campaign.models.rigid.clock import month_start
from campaign.models.rigid.orders import ORDER_NAMES
from campaign.models.rigid.platform import CORE_ORDERS, ProcessorType
from campaign.models.rigid.policies import (
    LIST_MODES,
    SCHEDULERS,
    EasyOptions,
    ListOptions,
    PfcfsOptions,
    PolicyOptions,
)
from campaign.models.rigid.policies.pfcfs import PRESETS, PfcfsParams
from campaign.models.rigid.workloads import load_trace, locate

DATACENTER = tuple(EXPERIMENTS)
DRAWN = ("randomized", "probabilistic")
"""Workloads of list-scheduling.md section 7 (M = processors, default 256; 50,000 jobs)."""
SYNTHETIC_PROCESSORS = 128
DRAWN_PROCESSORS = 256
"""Default site sizes of the synthetic and the drawn workloads."""
WORKLOADS = ("synthetic", *DATACENTER, *DRAWN)
ESTIMATES = ("user", "exact")
TRACE_ONLY = ("clean", "window", "days")
NOT_FOR_DATACENTER = ("clean", "window", "days", "jobs", "warmup_days", "overestimate")
LIST_PARAMS = ("order", "backfill", "weight", "reorder_ratio", "smart_gamma")
NOT_FOR_DRAWN = ("overestimate", "estimate_noise", "estimate_accuracy", "warmup_days")
NOT_WITH_MONTH = ("jobs", "days", "window", "warmup_days")
PFCFS_FIELDS = {
    "pfcfs_wide": "wide",
    "pfcfs_max_preemptions": "max_preemptions",
    "pfcfs_delay_s": "delay",
    "pfcfs_slice_s": "slice",
    "pfcfs_penalty_s": "penalty",
    "pfcfs_preempt": "preempt",
    "pfcfs_wait_half": "wait_half",
}
"""The pfcfs_* params and the preset field each overrides."""
POSITIVE = Number(0, low_open=True)
LIST_OPTIONS = ListOptions()  # the list policies' defaults
PRESET = "the preset's"


def _month(value: object) -> str:
    if not isinstance(value, str):
        raise ValueError
    try:
        month_start(value)
    except ValueError:
        raise ValueError from None
    return value


PARAMS = Params(
    "jobs",
    Param(
        "trace",
        Text("an SWF file name in the workloads folder, or a path"),
        None,
        "the trace to replay (give trace or workload)",
        default_text="none",
    ),
    Param(
        "workload",
        Choice(*WORKLOADS),
        None,
        "instead of a trace: synthetic (Lublin-Feitelson); a reference workload of "
        "datacenter.md section 4 on its platform (160, 200, 200 cores of the reference type); "
        "randomized or probabilistic (fitted to 'fit_trace'), list-scheduling.md section 7",
        default_text="none",
    ),
    Param(
        "month",
        Custom("YYYY-MM (a month)", _month),
        None,
        "trace: only the jobs submitted in that month on the trace's clock "
        "(list-scheduling.md 7.3), re-based to 0",
        default_text="none",
    ),
    Param(
        "max_gap_s",
        POSITIVE,
        3600.0,
        "randomized: gaps between submissions are U(0, max_gap_s)",
        unit="s",
    ),
    Param(
        "fit_trace",
        Text("an SWF file name in the workloads folder, or a path"),
        None,
        "probabilistic: the trace its distributions are fitted to",
        default_text="none",
    ),
    Param(
        "overestimate",
        Number(1),
        3.0,
        "synthetic: user estimates p' = p U(1, overestimate)",
    ),
    Param("clean", Flag(), False, "trace: apply the cleaning filters of parallel-jobs.md 1.2"),
    Param(
        "jobs",
        Integer(1),
        None,
        "jobs to simulate (after cleaning; at most those left: more is refused)",
        default_text="synthetic 1000; randomized, probabilistic 50000; a trace: all",
    ),
    Param(
        "days",
        POSITIVE,
        None,
        "trace: simulate the jobs submitted within this many days",
        unit="d",
        default_text="all",
    ),
    Param(
        "window",
        Choice("start", "random"),
        "start",
        "trace: where the jobs or days start; random draws it from the workload stream",
    ),
    Param("warmup_days", Number(0), 0, "drop the jobs of the workload's first days", unit="d"),
    Param("load", POSITIVE, 1.0, "divide inter-arrival times by this factor"),
    Param(
        "processors",
        Integer(1),
        None,
        "site size",
        default_text="the trace's MaxProcs; synthetic 128; randomized, probabilistic 256; "
        "datacenter: its platform's cores",
    ),
    Param(
        "max_processors",
        Integer(1),
        None,
        "trace: cut the site to min(this, MaxProcs) processors (wider jobs dropped); not with "
        "'processors'",
        default_text="none",
    ),
    Param(
        "scheduler",
        Choice(*SCHEDULERS),
        "easy",
        "the local scheduler; random draws from the policy stream",
    ),
    Param(
        "order",
        Choice(*ORDER_NAMES),
        LIST_OPTIONS.order,
        "list order of the waiting jobs (list-scheduling.md); with 'backfill', replaces "
        "'scheduler'",
    ),
    Param(
        "backfill",
        Choice(*LIST_MODES),
        "easy",
        "backfilling over the list order (greedy with fcfs: Garey & Graham)",
    ),
    Param(
        "weight",
        Choice("unit", "work"),
        LIST_OPTIONS.weight,
        "scheduler weight of a job in the list orders (work: size * estimate)",
    ),
    Param(
        "reorder_ratio",
        Either(Number(0, 1, high_open=True), Null("at every arrival")),
        LIST_OPTIONS.reorder_ratio,
        "recompute a PSRS or SMART order at an arrival once more than this share of the last "
        "computed order has started",
        default_text="2/3",
    ),
    Param(
        "smart_gamma",
        Number(1, low_open=True),
        LIST_OPTIONS.smart_gamma,
        "ratio of consecutive estimate bins of the SMART orders",
    ),
    Param(
        "pfcfs_preset",
        Choice(*PRESETS),
        "pfcfs1",
        "scheduler pfcfs: the preset of list-scheduling.md 5.4; the pfcfs_* params given "
        "override it",
    ),
    Param(
        "pfcfs_wide",
        Number(0, 1, low_open=True),
        None,
        "scheduler pfcfs: a job is wide iff size > this * processors",
        default_text=PRESET,
    ),
    Param(
        "pfcfs_max_preemptions",
        Either(Integer(0), Null("no limit")),
        None,
        "scheduler pfcfs: switches per wide job",
        default_text=PRESET,
    ),
    Param(
        "pfcfs_delay_s",
        Number(0),
        None,
        "scheduler pfcfs: wait of a wide job at the head before it preempts",
        unit="s",
        default_text=PRESET,
    ),
    Param(
        "pfcfs_slice_s",
        Either(POSITIVE, Choice("delay")),
        None,
        "scheduler pfcfs: gang length between switches (delay: pfcfs_delay_s)",
        unit="s",
        default_text=PRESET,
    ),
    Param(
        "pfcfs_penalty_s",
        Number(0),
        None,
        "scheduler pfcfs: time each switch costs the jobs it makes run (below the slice when "
        "a wide job may switch twice or more)",
        unit="s",
        default_text=PRESET,
    ),
    Param(
        "pfcfs_preempt",
        Choice("greedy", "all"),
        None,
        "scheduler pfcfs: victims greedy (few jobs) or all (every running job)",
        default_text=PRESET,
    ),
    Param(
        "pfcfs_wait_half",
        Flag(),
        None,
        "scheduler pfcfs: start a wide job's clock only once half the processors are free",
        default_text=PRESET,
    ),
    Param("estimate", Choice(*ESTIMATES), "user", "what schedulers plan with"),
    Param(
        "estimate_accuracy",
        POSITIVE,
        None,
        "a: user estimates EET = a p, p the runtime on a reference core",
        default_text="the trace's estimates (datacenter: their table's, a = 1.4)",
    ),
    Param(
        "estimate_noise",
        Number(1),
        None,
        "k: user estimates EET = p U(1, k) (estimates stream); not with estimate_accuracy",
        default_text="the trace's estimates",
    ),
    Param(
        "kill_at_estimate",
        Flag(),
        None,
        "kill a job at its user estimate",
        default_text="true; false for datacenter workloads (their reference simulator never kills)",
    ),
    Param(
        "backfill_after_start",
        Flag(),
        True,
        "EASY: backfill in a pass that started the queue head; false is the datacenter "
        "reference simulator's rule (such a pass backfills nothing); other schedulers ignore it",
    ),
    Param("bsld_floor_one", Flag(), True, "floor the bounded slowdown at 1"),
    *CLASS_PARAMS,
    Param(
        "energy",
        Flag(),
        None,
        "compute energy, edp and edp_stepwise on processors of cores (false: NaN)",
        default_text="false; true for datacenter workloads",
    ),
    Param(
        "cores_per_processor",
        Integer(1),
        8,
        "cores per processor (node) for the energy model and the core-level platform",
    ),
    Param("static_power_w", Number(0), 50.0, "static power of a processor", unit="W"),
    Param("dynamic_power_w", Number(0), 100.0, "dynamic power of a running core", unit="W"),
    Param(
        "hetero_fraction",
        Number(0, 1),
        0.0,
        "fraction of the processors whose clock rate and dynamic power are multiplied; > 0 "
        "runs on a core-level platform",
    ),
    Param("hetero_clock", POSITIVE, 2.0, "clock-rate multiplier of those processors"),
    Param("hetero_dynamic_power", Number(0), 2.0, "dynamic-power multiplier of those processors"),
    Param(
        "core_order",
        Choice(*CORE_ORDERS),
        "fastest",
        "core-level platform: the cores a starting job takes (fastest: ties lowest index; "
        "low_power: lowest dynamic power first)",
    ),
)


@dataclass(frozen=True)
class JobsParams:
    """One run's parameters, every default resolved."""

    trace: str | None
    workload: str | None  # synthetic, a datacenter or drawn workload, or None for a trace
    month: str | None
    max_gap_s: float
    fit_trace: str | None
    overestimate: float
    clean: bool
    jobs: int | None
    days: float | None
    window: str
    warmup_days: float
    load: float
    processors: int | None
    max_processors: int | None
    scheduler: str
    estimate: str
    estimate_accuracy: float | None
    estimate_noise: float | None
    kill_at_estimate: bool
    backfill_after_start: bool
    bsld_floor_one: bool
    class_width: int
    class_runtime_s: float
    energy: bool
    cores_per_processor: int
    static_power_w: float
    dynamic_power_w: float
    hetero_fraction: float
    hetero_clock: float
    hetero_dynamic_power: float
    core_order: str
    order: str
    backfill: str
    weight: str
    reorder_ratio: float | None
    smart_gamma: float
    listed: bool = False
    """Whether a list order with a backfilling mode replaces ``scheduler``."""
    pfcfs: PfcfsParams | None = None
    """Scheduler pfcfs: the preset with the pfcfs_* params given over it."""

    @property
    def datacenter(self) -> bool:
        return self.workload in DATACENTER

    @property
    def on_platform(self) -> bool:
        """Whether jobs run on a core-level platform (else on identical processors)."""
        return self.datacenter or self.hetero_fraction > 0

    def policy(self) -> tuple[str, PolicyOptions | None]:
        """The policy name and its options (a list order, or the arrival-order scheduler it
        is equivalent to; None: the policy's defaults)."""
        if self.pfcfs is not None:
            return "pfcfs", PfcfsOptions(params=self.pfcfs)
        if not self.listed:
            name = self.scheduler
        elif self.order == "fcfs" and self.backfill in ("none", "easy", "conservative"):
            name = {"none": "fcfs"}.get(self.backfill, self.backfill)
        else:
            options = ListOptions(
                order=self.order,
                weight=self.weight,
                reorder_ratio=self.reorder_ratio,
                smart_gamma=self.smart_gamma,
            )
            return LIST_MODES[self.backfill], options
        if name == "easy":
            return name, EasyOptions(backfill_after_start=self.backfill_after_start)
        return name, None

    @property
    def base_type(self) -> ProcessorType:
        """The reference processor type with the site's cores and powers."""
        return ProcessorType(
            cores=self.cores_per_processor,
            static_power=self.static_power_w,
            dynamic_power=self.dynamic_power_w,
        )


def _workload_rules(params: Mapping[str, object], kind: str) -> None:
    for name in TRACE_ONLY:
        if name in params:
            raise ValueError(f"parameter {name!r} applies to traces, not to 'workload: {kind}'")
    if kind in DATACENTER:
        for name in NOT_FOR_DATACENTER:
            if name in params:
                raise ValueError(
                    f"parameter {name!r} does not apply to 'workload: {kind}' (fixed jobs)"
                )
    elif kind in DRAWN:
        for name in NOT_FOR_DRAWN:
            if name in params:
                raise ValueError(f"parameter {name!r} does not apply to 'workload: {kind}'")
    elif "estimate_noise" in params:
        raise ValueError(
            "parameter 'estimate_noise' does not apply to 'workload: synthetic': "
            "use 'overestimate' (the same p * U(1, k) estimates)"
        )
    elif "estimate_accuracy" in params and "overestimate" in params:
        raise ValueError("parameters 'estimate_accuracy' and 'overestimate' exclude each other")


def _list_rules(params: Mapping[str, object]) -> bool:
    """Whether a list order replaces the scheduler (``order`` or ``backfill`` given)."""
    if "order" not in params and "backfill" not in params:
        for name in LIST_PARAMS:
            if name in params:
                raise ValueError(
                    f"parameter {name!r} applies to list scheduling: give 'order' and/or 'backfill'"
                )
        return False
    if "scheduler" in params:
        raise ValueError(
            "parameter 'scheduler' excludes 'order' and 'backfill' (fcfs with none, easy or "
            "conservative is scheduler fcfs, easy or conservative)"
        )
    return True


def _source_rules(params: Mapping[str, object], values: dict[str, object]) -> None:
    """A month of a trace, the drawn workloads' own params, a trace's site cut."""
    kind = values["workload"]
    if values["month"] is not None:
        if kind is not None:
            raise ValueError("parameter 'month' applies to traces")
        for name in NOT_WITH_MONTH:
            if name in params:
                raise ValueError(f"parameter {name!r} does not apply with 'month'")
    if kind != "randomized" and "max_gap_s" in params:
        raise ValueError("parameter 'max_gap_s' applies to 'workload: randomized' only")
    if kind == "probabilistic":
        if values["fit_trace"] is None:
            raise ValueError("'workload: probabilistic' needs 'fit_trace' (an SWF file name)")
        locate(values["fit_trace"])
    elif "fit_trace" in params:
        raise ValueError("parameter 'fit_trace' applies to 'workload: probabilistic' only")
    if "max_processors" in params and ("processors" in params or kind is not None):
        raise ValueError("parameter 'max_processors' cuts a trace's site: not with 'processors'")


def _pfcfs(params: Mapping[str, object], values: dict[str, object]) -> PfcfsParams | None:
    """Scheduler pfcfs: the preset with the pfcfs_* params given over it (taken out of
    ``values``)."""
    preset = values.pop("pfcfs_preset")
    changes = {}
    for name, field in PFCFS_FIELDS.items():
        value = values.pop(name)
        if name in params and (value is not None or PARAMS[name].takes_null):
            changes[field] = None if value == "delay" else value
    given = [name for name in ("pfcfs_preset", *PFCFS_FIELDS) if name in params]
    if values["scheduler"] != "pfcfs":
        if given:
            raise ValueError(f"parameter {given[0]!r} needs 'scheduler: pfcfs'")
        return None
    if values["workload"] in DATACENTER or values["hetero_fraction"] > 0:
        raise ValueError(
            "scheduler pfcfs runs on identical processors: not with datacenter workloads or "
            "hetero_fraction > 0"
        )
    pfcfs = replace(PRESETS[preset], **changes)
    gang = pfcfs.delay if pfcfs.slice is None else pfcfs.slice
    switches = math.inf if pfcfs.max_preemptions is None else pfcfs.max_preemptions
    if switches >= 2 and gang <= 0:
        raise ValueError(
            "scheduler pfcfs would run gangs of 0 s: a gang slice of 0 s (pfcfs_slice_s "
            "'delay' with pfcfs_delay_s 0) switches a wide job back at the next event, "
            "whenever it comes; allowed: pfcfs_slice_s > 0 or a delay > 0, or "
            "pfcfs_max_preemptions 0 or 1"
        )
    if pfcfs.penalty > 0 and switches >= 2 and pfcfs.penalty >= gang:
        raise ValueError(
            f"pfcfs_penalty_s {pfcfs.penalty:g} must be shorter than the gang slice "
            f"({gang:g} s, pfcfs_slice_s or the delay): the jobs a switch makes run execute from "
            "t + penalty and the next switch comes at t + slice; allowed: a penalty below the "
            "slice, or pfcfs_max_preemptions 1"
        )
    return pfcfs


def _site_size(values: Mapping[str, object]) -> int | None:
    """The site size a run will have (None: a trace without MaxProcs, refused at the run)."""
    kind = values["workload"]
    if values["processors"] is not None:
        return int(values["processors"])
    if kind in DATACENTER:
        return EXPERIMENTS[kind].cores
    if kind is not None:
        return SYNTHETIC_PROCESSORS if kind == "synthetic" else DRAWN_PROCESSORS
    procs = load_trace(values["trace"]).max_procs
    cut = values["max_processors"]
    return procs if cut is None else min(cut, procs or cut)


def _cores_rule(values: Mapping[str, object]) -> None:
    """The energy model and the core-level platform count whole processors of
    ``cores_per_processor`` cores: refuse a site they do not divide before any task runs
    (a trace's MaxProcs is read, once per process, only for them)."""
    platform = values["workload"] in DATACENTER or values["hetero_fraction"] > 0
    if not (values["energy"] or platform):
        return
    site = _site_size(values)
    cores = values["cores_per_processor"]
    if site is not None and site % cores:
        use = "cores) of a core-level platform" if platform else "processors) for the energy model"
        raise ValueError(
            f"parameter 'cores_per_processor' ({cores}) must divide the site size ({site} "
            f"{use}; allowed: a divisor of {site}, or 'processors' a multiple of {cores}"
        )


def parse(params: Mapping[str, object]) -> JobsParams:
    """Check ``params`` (one ValueError naming the parameter) and resolve every default."""
    values = PARAMS.values(params)
    trace, kind = values["trace"], values["workload"]
    if (trace is None) == (kind is None):
        raise ValueError(
            "model jobs needs exactly one of 'trace' (a file) or 'workload' (synthetic, "
            f"{', '.join(DATACENTER)}, {', '.join(DRAWN)})"
        )
    if kind is not None:
        _workload_rules(params, kind)
    else:
        locate(trace)  # one error naming a missing trace, before anything runs
        if "overestimate" in params:
            raise ValueError("parameter 'overestimate' applies to 'workload: synthetic' only")
    _source_rules(params, values)
    listed = _list_rules(params)
    pfcfs = _pfcfs(params, values)
    accuracy = values["estimate_accuracy"]
    if accuracy is not None and values["estimate_noise"] is not None:
        raise ValueError("parameters 'estimate_accuracy' and 'estimate_noise' exclude each other")
    datacenter = kind in DATACENTER
    if values["kill_at_estimate"] is None:
        values["kill_at_estimate"] = not datacenter
    if values["energy"] is None:
        values["energy"] = datacenter
    if accuracy is not None and accuracy < 1 and values["kill_at_estimate"]:
        raise ValueError(
            f"parameter 'estimate_accuracy' {accuracy!r} < 1 would kill every job at a * p: "
            "set 'kill_at_estimate: false' (the datacenter configuration never kills)"
        )
    _cores_rule(values)
    return JobsParams(**values, listed=listed, pfcfs=pfcfs)
