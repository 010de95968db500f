"""The parameters of the ``grid`` model: their table, and the run they describe.

The table (`PARAMS`) holds each parameter's kind, default, unit and meaning; the simulation
options take their defaults from `GridOptions` (parallel-jobs.md section 10), so each default
is written once. `parse` adds the rules that tie parameters together (a mix of logs or one
trace on machines, options of one sharing mode only) and resolves the defaults that depend on
the workload source, into one frozen `GridParams`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from campaign.models.contract import (
    Choice,
    Custom,
    Either,
    Flag,
    Integer,
    ListOf,
    Null,
    Number,
    Param,
    Params,
    Text,
)
from campaign.models.grid.broker import SCOPES, STRATEGIES
from campaign.models.grid.configs import CONFIGS, MACHINES, MIXES, resolve_logs
from campaign.models.grid.economic import MULTISITE, EconomicOptions
from campaign.models.grid.economic.criteria import OWNER_FUNCTIONS, USER_FUNCTIONS
from campaign.models.grid.economic.domains import TOPOLOGIES
from campaign.models.grid.predict import MATCHES, PREDICTORS
from campaign.models.grid.schedule import ESTIMATES, SHARING, GridOptions
from campaign.models.rigid.classes import CLASS_PARAMS
from campaign.models.rigid.policies import POLICIES, SCHEDULERS
from campaign.models.rigid.workloads import locate, workloads_folder

LOCAL_POLICIES = tuple(
    name for name in SCHEDULERS if name != "random" and not POLICIES[name].preemptive
)
"""Site schedulers of a grid: ``random`` needs a policy stream the grid does not hand out, and
the grid's schedule does not follow preempted jobs (``pfcfs``)."""

SINGLE_TRACE = ("trace", "machines", "clean", "skip_jobs", "window", "warmup_days")
POOLED = ("job_sharing", "multisite")
DEFAULT_MIX_DAYS = 180.0
OPTIONS = GridOptions()
ECONOMIC = EconomicOptions()
ECONOMIC_ONLY = (
    "hops",
    "topology",
    "offers_per_machine",
    "shifts",
    "multisite",
    "min_multisite",
    "max_multisite",
)
"""Settings of sharing economic alone (mf and uf are ignored elsewhere, see `_sharing_rules`)."""
POSITIVE = Number(0, low_open=True)


@dataclass(frozen=True)
class Site:
    """One log of a mix and the site it runs on (``processors`` None: the log's MaxProcs)."""

    trace: str
    processors: int | None
    warmup_days: float


SITE_KEYS = {"trace": Text(), "processors": Either(Integer(1), Null()), "warmup_days": Number(0)}


def _sites(value: object) -> tuple[Site, ...]:
    if not isinstance(value, list | tuple) or not value:
        raise ValueError
    sites = []
    for entry in value:
        if not isinstance(entry, Mapping) or "trace" not in entry:
            raise ValueError(f"every entry needs a 'trace', got {entry!r}")
        extra = sorted(set(entry) - set(SITE_KEYS))
        if extra:
            raise ValueError(f"unknown key {extra[0]!r}; allowed: {', '.join(SITE_KEYS)}")
        values = {}
        for key, kind in SITE_KEYS.items():
            try:
                values[key] = kind.convert(entry.get(key, 0 if key == "warmup_days" else None))
            except ValueError:
                raise ValueError(
                    f"{key!r} must be {kind.allowed}, got {entry.get(key)!r}"
                ) from None
        sites.append(Site(**values))
    return tuple(sites)


PARAMS = Params(
    "grid",
    Param(
        "trace",
        Text("an SWF file name in the workloads folder, or a path"),
        None,
        "one trace on machines (with a machine config or 'machines')",
        default_text="none",
    ),
    Param(
        "config",
        Choice(*CONFIGS),
        None,
        "named configuration: machine sizes (m64 ... m512, with 'trace') or a mix of logs "
        "(grid1, grid2, pwa4, pwa3: see configs.py)",
        default_text="none",
    ),
    Param(
        "machines",
        ListOf(Integer(1), "machine sizes (integers >= 1)"),
        None,
        "machine sizes for a single-trace run instead of a config",
        default_text="none",
    ),
    Param(
        "sites",
        Custom("a non-empty list of {trace, processors, warmup_days}", _sites),
        None,
        "a mix of logs, one site each: processors default to the log's MaxProcs, warmup_days to 0",
        default_text="none",
    ),
    Param("clean", Flag(), False, "single trace: apply the cleaning filters of section 1.2"),
    Param(
        "jobs",
        Integer(1),
        None,
        "number of jobs (horizon of a mix, or extract length of a trace: at most those left)",
        default_text="all (a mix: those of 'days')",
    ),
    Param(
        "days",
        POSITIVE,
        None,
        "horizon in days",
        unit="d",
        default_text="a mix without 'jobs': 180; a trace: all",
    ),
    Param("skip_jobs", Integer(0), 0, "single trace: start the extract at this job index"),
    Param(
        "window",
        Choice("start", "random"),
        "start",
        "single trace: where the extract starts; random draws it from the workload stream",
    ),
    Param("warmup_days", Number(0), 0, "single trace: drop the first days", unit="d"),
    Param(
        "window_offset",
        Either(Integer(0), Choice("random")),
        0,
        "start this many weeks later (a mix also takes 'random': drawn per seed)",
    ),
    Param("load", POSITIVE, 1.0, "divide inter-arrival times by this factor"),
    Param(
        "max_width",
        Either(Integer(1), Choice("largest", "local"), Null("no cap")),
        None,
        "wide-job cap: jobs wider are split into parts (local: the home machine's size)",
    ),
    Param(
        "sharing",
        Choice(*SHARING),
        OPTIONS.sharing,
        "broker: a broker places each job on one site; local: the job at position i (from 0) "
        "runs on machine i mod M; job_sharing, multisite: one central queue (multisite "
        "co-allocates a job over several machines); economic: each job books the best offer "
        "of the domains its request reaches (economic.md)",
    ),
    Param("strategy", Choice(*STRATEGIES), OPTIONS.strategy, "broker allocation strategy"),
    Param(
        "local_scheduler",
        Choice(*LOCAL_POLICIES),
        OPTIONS.local_scheduler,
        "site scheduler (job_sharing and multisite: easy only)",
    ),
    Param("overhead", Number(0), OPTIONS.overhead, "multi-site runtime stretch o"),
    Param(
        "max_parts",
        Integer(1),
        OPTIONS.max_parts,
        "multisite, economic: most machines one job may span (economic: at least 2)",
        default_text="all",
    ),
    Param(
        "mf",
        Choice(*OWNER_FUNCTIONS),
        ECONOMIC.mf,
        "economic: owner function MF1-MF6, the price of an offer (other sharing modes ignore it)",
    ),
    Param(
        "uf",
        Choice(*USER_FUNCTIONS),
        ECONOMIC.uf,
        "economic: user function UF1-UF5 that picks the offer (other sharing modes ignore it)",
    ),
    Param(
        "hops", Integer(0), ECONOMIC.hops, "economic: a request reaches domains this many hops away"
    ),
    Param("topology", Choice(*TOPOLOGIES), ECONOMIC.topology, "economic: the domain graph"),
    Param(
        "offers_per_machine",
        Integer(1),
        ECONOMIC.offers_per_machine,
        "economic: K, offers of one machine (and multi-site offers) per request",
    ),
    Param("shifts", Integer(1), ECONOMIC.shifts, "economic: Z, start shifts tried per offer"),
    Param(
        "multisite",
        Choice(*MULTISITE),
        ECONOMIC.multisite,
        "economic: multi-site offers only for jobs no reached machine can take alone, for "
        "every job, or never",
    ),
    Param(
        "min_multisite",
        Integer(1),
        ECONOMIC.min_multisite,
        "economic: MinMS, fewest processors of a multi-site part",
    ),
    Param(
        "max_multisite",
        Either(Integer(1), Null("no cap")),
        ECONOMIC.max_multisite,
        "economic: MaxMS, most processors of a multi-site part and of a single-machine job",
    ),
    Param(
        "place_on_arrival",
        Flag(),
        OPTIONS.place_on_arrival,
        "job_sharing, multisite: start a job when it arrives if it can start now (BestFit, "
        "else co-allocated), even ahead of queued jobs, as the source's grid scheduler did; "
        "only a job that cannot start waits in the EASY queue",
    ),
    Param("local_estimate", Choice(*ESTIMATES), OPTIONS.local_estimate, "what sites plan with"),
    Param(
        "broker_estimate", Choice(*ESTIMATES), OPTIONS.broker_estimate, "what the broker plans with"
    ),
    Param("predictor", Choice(*PREDICTORS), OPTIONS.predictor, "runtime predictor"),
    Param("history", Integer(1), OPTIONS.history, "history window k"),
    Param("search", Integer(-1), OPTIONS.search, "search extension w of Hk (-1: all)"),
    Param("match", Choice(*MATCHES), OPTIONS.match, "match condition of the history"),
    Param("match_lo", Number(0, 100), OPTIONS.match_lo, "lower match tolerance", unit="%"),
    Param("match_hi", Number(0), OPTIONS.match_hi, "upper match tolerance", unit="%"),
    Param("c2", Number(0, 1, low_open=True), OPTIONS.c2, "constant factor of predictor c2"),
    Param(
        "admissibility",
        Either(Number(0, 1, low_open=True), Null("all feasible sites")),
        OPTIONS.admissibility,
        "alpha: the sites a broker considers",
    ),
    Param("include_new_job", Flag(), OPTIONS.include_new_job, "MLp, MPL, MLB count the new job"),
    Param(
        "tentative_scope",
        Choice(*SCOPES),
        OPTIONS.tentative_scope,
        "the jobs of a site's tentative schedule",
    ),
    Param("kill_at_estimate", Flag(), OPTIONS.kill_at_estimate, "kill a job at its user estimate"),
    Param("bsld_floor_one", Flag(), True, "floor the bounded slowdown at 1"),
    *CLASS_PARAMS,
)


@dataclass(frozen=True)
class GridParams:
    """One run's parameters, every default resolved."""

    trace: str | None
    config: str | None
    machines: tuple[int, ...] | None
    sites: tuple[Site, ...] | None
    clean: bool
    jobs: int | None
    days: float | None
    skip_jobs: int
    window: str
    warmup_days: float
    window_offset: int | str
    load: float
    max_width: int | str | None
    sharing: str
    strategy: str
    local_scheduler: str
    overhead: float
    max_parts: int | None
    place_on_arrival: bool
    local_estimate: str
    broker_estimate: str
    predictor: str
    history: int
    search: int
    match: str
    match_lo: float
    match_hi: float
    c2: float
    admissibility: float | None
    include_new_job: bool
    tentative_scope: str
    kill_at_estimate: bool
    bsld_floor_one: bool
    class_width: int
    class_runtime_s: float
    mf: int
    uf: int
    hops: int
    topology: str
    offers_per_machine: int
    shifts: int
    multisite: str
    min_multisite: int
    max_multisite: int | None

    @property
    def is_mix(self) -> bool:
        """Whether the jobs come from a mix of logs (else from one trace on machines)."""
        return self.sites is not None or self.config in MIXES

    def options(self, home: Sequence[int] | None = None) -> GridOptions:
        """The simulation options, ``home`` the home machine of every job."""
        return GridOptions(
            sharing=self.sharing,
            strategy=self.strategy,
            local_scheduler=self.local_scheduler,
            overhead=self.overhead,
            max_parts=self.max_parts,
            place_on_arrival=self.place_on_arrival,
            local_estimate=self.local_estimate,
            broker_estimate=self.broker_estimate,
            kill_at_estimate=self.kill_at_estimate,
            predictor=self.predictor,
            history=self.history,
            search=self.search,
            match=self.match,
            match_lo=self.match_lo,
            match_hi=self.match_hi,
            c2=self.c2,
            admissibility=self.admissibility,
            include_new_job=self.include_new_job,
            tentative_scope=self.tentative_scope,
            economic=EconomicOptions(
                mf=self.mf,
                uf=self.uf,
                hops=self.hops,
                topology=self.topology,
                offers_per_machine=self.offers_per_machine,
                shifts=self.shifts,
                multisite=self.multisite,
                min_multisite=self.min_multisite,
                max_multisite=self.max_multisite,
            ),
            home=home,
        )


def _source_rules(params: Mapping[str, object], values: dict[str, object]) -> None:
    """A mix of logs, or one trace on machines; each trace found before anything runs."""
    config, sites = values["config"], values["sites"]
    if sites is not None and config is not None:
        raise ValueError("give either 'sites' or 'config', not both")
    if sites is not None or config in MIXES:
        for name in SINGLE_TRACE:
            if params.get(name) is not None:
                raise ValueError(
                    f"parameter {name!r} applies to single-trace runs, not to a mix of logs "
                    "('sites' or config grid1, grid2, pwa4, pwa3)"
                )
        if config in MIXES:
            resolve_logs(MIXES[config], workloads_folder())  # one error naming missing logs
        for site in sites or ():
            locate(site.trace)
        if values["jobs"] is None and values["days"] is None:
            values["days"] = DEFAULT_MIX_DAYS
        return
    if values["trace"] is None:
        raise ValueError(
            "model grid needs 'trace' with a machine config (m64 ...) or 'machines', "
            "or a mix of logs: 'sites' or config grid1, grid2, pwa4, pwa3"
        )
    locate(values["trace"])
    if (config is None) == (values["machines"] is None):
        raise ValueError(
            "a single-trace run needs exactly one of 'machines' or 'config' "
            f"({', '.join(MACHINES)})"
        )
    if values["window_offset"] == "random":
        raise ValueError(
            "parameter 'window_offset' must be an integer >= 0 on a single trace "
            "('random' is for a mix of logs), got 'random'"
        )


def _economic_rules(params: Mapping[str, object], values: dict[str, object]) -> None:
    """The economic settings go with sharing economic (mf and uf are ignored elsewhere, so a
    spec may cross them with ``sharing``); reservations must outlast their jobs."""
    if values["sharing"] != "economic":
        for name in ECONOMIC_ONLY:
            if params.get(name) is not None:
                raise ValueError(f"parameter {name!r} applies to sharing: economic only")
        return
    if values["max_parts"] is not None and values["max_parts"] < 2:
        raise ValueError("parameter 'max_parts' must be an integer >= 2 with sharing economic")
    high = values["max_multisite"]
    if high is not None and high < values["min_multisite"]:
        raise ValueError("parameter 'max_multisite' must be at least 'min_multisite'")
    if values["local_estimate"] == "predicted":
        raise ValueError(
            "parameter 'local_estimate' must be user or exact with sharing economic "
            "(a reservation must outlast its job)"
        )
    if not values["kill_at_estimate"] and values["local_estimate"] != "exact":
        raise ValueError(
            "parameter 'kill_at_estimate' must be true with sharing economic unless "
            "local_estimate is exact (a reservation must outlast its job)"
        )


def _sharing_rules(values: dict[str, object]) -> None:
    sharing = values["sharing"]
    if values["max_width"] == "local" and sharing != "local":
        raise ValueError("parameter 'max_width': 'local' (home machine size) needs sharing: local")
    if sharing in POOLED and values["local_scheduler"] != "easy":
        raise ValueError(f"parameter 'local_scheduler' must be easy with sharing {sharing}")
    if values["max_parts"] is not None and sharing not in ("multisite", "economic"):
        raise ValueError("parameter 'max_parts' applies to sharing: multisite or economic only")
    if values["place_on_arrival"] and sharing not in POOLED:
        raise ValueError(
            "parameter 'place_on_arrival' applies to sharing: job_sharing or multisite only"
        )


def parse(params: Mapping[str, object]) -> GridParams:
    """Check ``params`` (one ValueError naming the parameter) and resolve every default."""
    values = PARAMS.values(params)
    _source_rules(params, values)
    _sharing_rules(values)
    _economic_rules(params, values)
    return GridParams(**values)
