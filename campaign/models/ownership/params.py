"""The parameters of the ownership model: their table, and the scenario they describe.

Every refusal is a ValueError naming the parameter and what is allowed, so a spec is refused
before anything runs. The table (`PARAMS`) holds each parameter's kind, default and meaning;
`parse` adds the rules that tie parameters together (shares sum to the machines, a list has one
entry per user, ``tasks`` excludes the parametric workload) and starts from the parameter set
of a named reference ``scenario`` when one is given.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

from campaign.models.contract import (
    Choice,
    Custom,
    Either,
    Flag,
    Integer,
    Kind,
    ListOf,
    Number,
    Param,
    Params,
    text_of,
)
from campaign.models.ownership.scenarios import REFERENCE_SCENARIOS
from campaign.models.ownership.simulator import POLICIES, Settings

PARAMETRIC = ("tasks_per_user", "task_duration_s", "submit_s", "duration_jitter", "interarrival_s")
WEIGHTS = ("equal", "share")
POSITIVE = Number(0, low_open=True)
NON_NEGATIVE = Number(0)


def per_user(kind: Kind) -> Either:
    """One value for every user, or a list of one per user."""
    return Either(kind, ListOf(kind, "such values, one per user"))


def _task(entry: object) -> tuple[int, float, float]:
    """One explicit task [user (1-based), submit_s, duration_s]."""
    if not isinstance(entry, list | tuple) or len(entry) != 3:
        raise ValueError(f"bad entry {entry!r}")
    user, submit, duration = entry
    try:
        return (
            Integer(1).convert(user),
            NON_NEGATIVE.convert(submit),
            POSITIVE.convert(duration),
        )
    except ValueError:
        raise ValueError(
            f"bad entry {entry!r}: user an integer >= 1, submit_s >= 0, duration_s > 0"
        ) from None


def _tasks(value: object) -> tuple[tuple[int, float, float], ...]:
    if not isinstance(value, list | tuple) or not value:
        raise ValueError
    return tuple(_task(entry) for entry in value)


PARAMS = Params(
    "ownership",
    Param(
        "scenario",
        Choice(*REFERENCE_SCENARIOS),
        None,
        "a reference scenario of the model document (section 8) as the base: the parameters "
        "it sets (machines, shares_pct, tasks_per_user, task_duration_s, submit_s) may not be "
        "given too",
        default_text="none",
    ),
    Param(
        "policy",
        Choice(*POLICIES),
        "osep",
        "osep preempts by killing, osep_checkpoint by checkpointing; fair_share never preempts",
    ),
    Param("machines", Integer(1), 10, "n: identical machines in the pool"),
    Param(
        "shares",
        ListOf(Integer(0), "machine counts, one per user, summing to machines"),
        None,
        "owner shares p_u in machines; their number is the number of users m",
        default_text="from shares_pct",
    ),
    Param(
        "shares_pct",
        ListOf(NON_NEGATIVE, "percentages of machines summing to 100, giving whole machines"),
        [50, 50],
        "owner shares in percent of machines (instead of shares)",
        unit="%",
    ),
    Param(
        "tasks",
        Custom("a list of [user (1-based), submit_s, duration_s]", _tasks),
        None,
        "an explicit workload instead of the parametric one",
        default_text="parametric",
    ),
    Param(
        "tasks_per_user",
        per_user(Either(Integer(0), Choice("machines", "share"))),
        10,
        "tasks per user: a count, machines (n) or share (the user's p_u); case 1 of the "
        "source is [machines, share]",
    ),
    Param(
        "task_duration_s",
        Either(
            POSITIVE,
            ListOf(
                Either(POSITIVE, ListOf(POSITIVE, "durations > 0")),
                "one per user: a duration, or a list of durations taken in turn",
            ),
        ),
        300.0,
        "task duration; a user's list of durations is cycled in turn ([600, 1800, 3600] is "
        "the mixed granularity)",
        unit="s",
    ),
    Param("submit_s", per_user(NON_NEGATIVE), 0.0, "when each user submits", unit="s"),
    Param(
        "duration_jitter",
        Number(0, 1, high_open=True),
        0.0,
        "c: durations times 1 + c U(-1, 1) (workload stream)",
    ),
    Param(
        "interarrival_s",
        NON_NEGATIVE,
        0.0,
        "> 0: each user's tasks are a Poisson stream from submit_s (workload stream)",
        unit="s",
    ),
    Param("update_interval_s", POSITIVE, 20.0, "T: decision epochs at k T", unit="s"),
    Param(
        "negotiation_offset_s",
        NON_NEGATIVE,
        None,
        "negotiation epochs at k T + offset, 0 <= offset < T",
        unit="s",
        default_text="T/2",
    ),
    Param("dispatch_delay_s", NON_NEGATIVE, 0.0, "from a match to the task's start", unit="s"),
    Param(
        "claim_reuse",
        Flag(),
        True,
        "a machine whose task completes starts the same user's next ready task at once "
        "(the user keeps the claim); false leaves it idle until the next negotiation",
    ),
    Param(
        "maxt",
        Either(Integer(0), Choice("all")),
        "all",
        "OSEP preemption budget per decision epoch",
    ),
    Param(
        "checkpoint_cost_s",
        NON_NEGATIVE,
        0.0,
        "checkpoint write, machine busy (osep_checkpoint)",
        unit="s",
    ),
    Param(
        "restart_cost_s", NON_NEGATIVE, 0.0, "extra run time on resume (osep_checkpoint)", unit="s"
    ),
    Param("priority_half_life_s", POSITIVE, 86400.0, "Fair-Share usage half-life h", unit="s"),
    Param(
        "fair_share_weights",
        Choice(*WEIGHTS),
        "equal",
        "equal (g_u = 1) or share (g_u = 1/p_u; a user with p_u = 0 gets machines only when "
        "no owner has ready tasks)",
    ),
    Param(
        "owner_load",
        Number(0, 1),
        0.0,
        "while a machine's owner uses it, tasks progress at rate 1 - owner_load (0: off)",
    ),
    Param("owner_off_s", POSITIVE, 3600.0, "mean owner-free period (exponential)", unit="s"),
    Param("owner_on_s", POSITIVE, 600.0, "mean owner-busy period (exponential)", unit="s"),
)


@dataclass(frozen=True)
class Recipe:
    """How to build the workload: an explicit task list, or per-user parametric tasks."""

    users: int
    explicit: tuple[tuple[int, float, float], ...] | None = None
    tasks_per_user: tuple[int, ...] = ()
    durations: tuple[tuple[float, ...], ...] = ()  # per user, cycled in turn
    submit: tuple[float, ...] = ()
    duration_jitter: float = 0.0
    interarrival: float = 0.0


@dataclass(frozen=True)
class Scenario:
    settings: Settings
    recipe: Recipe
    owner_off: float
    owner_on: float


def _per_user(value: object, name: str, users: int) -> list[object]:
    """A scalar applies to every user; a list must have one entry per user."""
    if isinstance(value, tuple):
        if len(value) != users:
            raise ValueError(
                f"parameter {name!r} must have one entry per user ({users}), got {len(value)}"
            )
        return list(value)
    return [value] * users


def _shares(params: Mapping[str, object], values: dict, machines: int) -> tuple[int, ...]:
    if values["shares"] is not None and "shares_pct" in params:
        raise ValueError("parameters 'shares' and 'shares_pct' exclude each other; give one")
    if values["shares"] is not None:
        shares = values["shares"]
        if sum(shares) != machines:
            raise ValueError(
                f"parameter 'shares' must sum to machines ({machines}), got {sum(shares)}"
            )
        return shares
    raw = values["shares_pct"]
    if abs(sum(raw) - 100) > 1e-9:
        raise ValueError(
            f"parameter 'shares_pct' must be percentages >= 0 summing to 100: {list(raw)}"
        )
    exact = [p * machines / 100 for p in raw]
    if any(abs(x - round(x)) > 1e-9 for x in exact):
        raise ValueError(
            f"parameter 'shares_pct' {list(raw)} of {machines} machines is not whole machines; "
            "use 'shares' (machine counts)"
        )
    return tuple(round(x) for x in exact)


def _explicit(
    tasks: tuple[tuple[int, float, float], ...], users: int
) -> tuple[tuple[int, float, float], ...]:
    for user, _, _ in tasks:
        if user > users:
            raise ValueError(f"parameter 'tasks': user must be 1..{users}, got {user!r}")
    return tuple((user - 1, submit, duration) for user, submit, duration in tasks)


def _task_count(value: object, machines: int, share: int) -> int:
    """A user's task count: a number, ``machines`` (n) or ``share`` (the user's p_u)."""
    if value == "machines":
        return machines
    if value == "share":
        return share
    return int(value)


def _recipe(
    params: Mapping[str, object], values: dict, shares: tuple[int, ...], machines: int
) -> Recipe:
    users = len(shares)
    if values["tasks"] is not None:
        mixed = [name for name in PARAMETRIC if name in params]
        if mixed:
            raise ValueError(f"parameter {mixed[0]!r} cannot be combined with 'tasks'")
        return Recipe(users, explicit=_explicit(values["tasks"], users))
    counts = tuple(
        _task_count(c, machines, share)
        for c, share in zip(
            _per_user(values["tasks_per_user"], "tasks_per_user", users), shares, strict=True
        )
    )
    if sum(counts) == 0:
        raise ValueError("parameter 'tasks_per_user' must give at least one task")
    durations = tuple(
        entry if isinstance(entry, tuple) else (entry,)
        for entry in _per_user(values["task_duration_s"], "task_duration_s", users)
    )
    submit = tuple(_per_user(values["submit_s"], "submit_s", users))
    return Recipe(
        users,
        tasks_per_user=counts,
        durations=durations,
        submit=submit,
        duration_jitter=values["duration_jitter"],
        interarrival=values["interarrival_s"],
    )


def _decided(base: Mapping[str, object]) -> dict[str, str]:
    """The parameters a reference scenario decides -> what it sets in their place: its own
    parameters, and those that exclude them (``shares`` and ``shares_pct``, ``tasks`` and the
    parametric workload)."""
    decided = {name: f"{name}: {text_of(value)}" for name, value in base.items()}
    for one, other in (("shares", "shares_pct"), ("shares_pct", "shares")):
        if one in base and other not in base:
            decided[other] = decided[one]
    parametric = [name for name in PARAMETRIC if name in base]
    if parametric and "tasks" not in base:
        decided["tasks"] = "the parametric workload (" + ", ".join(parametric) + ")"
    return decided


def with_scenario(params: Mapping[str, object]) -> Mapping[str, object]:
    """`params` on top of the parameter set of their ``scenario`` (if any). A parameter the
    scenario decides is refused rather than overriding it, so a result labelled with a
    scenario's name is always that scenario."""
    name = params.get("scenario")
    if name is None:
        return params
    name = PARAMS["scenario"].convert(name)
    base = REFERENCE_SCENARIOS[name]
    decided = _decided(base)
    for key in params:
        if key in decided:
            raise ValueError(
                f"parameter {key!r} cannot be combined with scenario {name!r}, which sets "
                f"{decided[key]}; drop {key!r}, or drop 'scenario' and give every parameter"
            )
    return {**base, **params}


def parse(params: Mapping[str, object]) -> Scenario:
    """Validate `params` and return the scenario they describe."""
    params = with_scenario(params)
    values = PARAMS.values(params)
    machines = values["machines"]
    shares = _shares(params, values, machines)
    interval = values["update_interval_s"]
    offset = values["negotiation_offset_s"]
    if offset is None:
        offset = interval / 2
    elif not offset < interval:
        raise ValueError(
            f"parameter 'negotiation_offset_s' must be a number >= 0 and < update_interval_s "
            f"({interval}), got {offset!r}"
        )
    maxt = values["maxt"]
    settings = Settings(
        machines=machines,
        shares=shares,
        policy=values["policy"],
        interval=interval,
        offset=offset,
        dispatch_delay=values["dispatch_delay_s"],
        claim_reuse=values["claim_reuse"],
        maxt=math.inf if maxt == "all" else float(maxt),
        checkpoint_cost=values["checkpoint_cost_s"],
        restart_cost=values["restart_cost_s"],
        half_life=values["priority_half_life_s"],
        share_weighted=values["fair_share_weights"] == "share",
        owner_load=values["owner_load"],
    )
    return Scenario(
        settings=settings,
        recipe=_recipe(params, values, shares, machines),
        owner_off=values["owner_off_s"],
        owner_on=values["owner_on_s"],
    )
