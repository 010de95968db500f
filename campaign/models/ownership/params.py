"""Read and validate the parameters of the ownership model into plain dataclasses.

Every refusal is a ValueError naming the parameter and what is allowed, so a spec is refused
before anything runs. Defaults are listed in `DEFAULTS` (and in the package docstring).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from numbers import Real

from campaign.models.ownership.simulator import POLICIES, Settings

DEFAULTS: dict[str, object] = {
    "policy": "osep",
    "machines": 10,
    "shares": None,
    "shares_pct": [50, 50],
    "tasks": None,
    "tasks_per_user": 10,
    "task_duration_s": 300.0,
    "submit_s": 0.0,
    "duration_jitter": 0.0,
    "interarrival_s": 0.0,
    "update_interval_s": 20.0,
    "negotiation_offset_s": None,
    "dispatch_delay_s": 0.0,
    "claim_reuse": True,
    "maxt": "all",
    "checkpoint_cost_s": 0.0,
    "restart_cost_s": 0.0,
    "priority_half_life_s": 86400.0,
    "fair_share_weights": "equal",
    "owner_load": 0.0,
    "owner_off_s": 3600.0,
    "owner_on_s": 600.0,
}
PARAMETRIC = ("tasks_per_user", "task_duration_s", "submit_s", "duration_jitter", "interarrival_s")
WEIGHTS = ("equal", "share")


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


def _is_number(value: object) -> bool:
    return isinstance(value, Real) and not isinstance(value, bool) and math.isfinite(value)


def _number(
    params: Mapping[str, object],
    name: str,
    low: float,
    high: float = math.inf,
    *,
    open_low: bool = False,
    closed_high: bool = False,
) -> float:
    value = params.get(name, DEFAULTS[name])
    lower = f"> {low}" if open_low else f">= {low}"
    upper = "" if high == math.inf else f" and {'<=' if closed_high else '<'} {high}"
    if (
        not _is_number(value)
        or value < low
        or (open_low and value == low)
        or value > high
        or (value == high and not closed_high)
    ):
        raise ValueError(f"parameter {name!r} must be a number {lower}{upper}, got {value!r}")
    return float(value)


def _integer(value: object, name: str, low: int) -> int:
    if isinstance(value, bool) or not _is_number(value) or value != int(value) or value < low:
        raise ValueError(f"parameter {name!r} must be an integer >= {low}, got {value!r}")
    return int(value)


def _per_user(value: object, name: str, users: int) -> list[object]:
    """A scalar applies to every user; a list must have one entry per user."""
    if isinstance(value, Sequence) and not isinstance(value, str):
        if len(value) != users:
            raise ValueError(
                f"parameter {name!r} must have one entry per user ({users}), got {len(value)}"
            )
        return list(value)
    return [value] * users


def _flag(params: Mapping[str, object], name: str) -> bool:
    value = params.get(name, DEFAULTS[name])
    if not isinstance(value, bool):
        raise ValueError(f"parameter {name!r} must be true or false, got {value!r}")
    return value


def _choice(params: Mapping[str, object], name: str, allowed: Sequence[str]) -> str:
    value = params.get(name, DEFAULTS[name])
    if value not in allowed:
        raise ValueError(f"parameter {name!r} must be one of {', '.join(allowed)}; got {value!r}")
    return str(value)


def _shares(params: Mapping[str, object], machines: int) -> tuple[int, ...]:
    if params.get("shares") is not None and "shares_pct" in params:
        raise ValueError("parameters 'shares' and 'shares_pct' exclude each other; give one")
    if params.get("shares") is not None:
        raw = params["shares"]
        if not isinstance(raw, Sequence) or isinstance(raw, str) or not raw:
            raise ValueError(f"parameter 'shares' must be a list of machine counts, got {raw!r}")
        shares = tuple(_integer(p, "shares", 0) for p in raw)
        if sum(shares) != machines:
            raise ValueError(
                f"parameter 'shares' must sum to machines ({machines}), got {sum(shares)}"
            )
        return shares
    raw = params.get("shares_pct", DEFAULTS["shares_pct"])
    if not isinstance(raw, Sequence) or isinstance(raw, str) or not raw:
        raise ValueError(f"parameter 'shares_pct' must be a list of percentages, got {raw!r}")
    if not all(_is_number(p) and p >= 0 for p in raw) or abs(sum(raw) - 100) > 1e-9:
        raise ValueError(f"parameter 'shares_pct' must be percentages >= 0 summing to 100: {raw}")
    exact = [p * machines / 100 for p in raw]
    if any(abs(x - round(x)) > 1e-9 for x in exact):
        raise ValueError(
            f"parameter 'shares_pct' {list(raw)} of {machines} machines is not whole machines; "
            "use 'shares' (machine counts)"
        )
    return tuple(round(x) for x in exact)


def _maxt(params: Mapping[str, object]) -> float:
    value = params.get("maxt", DEFAULTS["maxt"])
    if value == "all":
        return math.inf
    if isinstance(value, str):
        raise ValueError(f"parameter 'maxt' must be an integer >= 0 or 'all', got {value!r}")
    return float(_integer(value, "maxt", 0))


def _explicit(raw: object, users: int) -> tuple[tuple[int, float, float], ...]:
    form = "a list of [user (1-based), submit_s, duration_s]"
    if not isinstance(raw, Sequence) or isinstance(raw, str) or not raw:
        raise ValueError(f"parameter 'tasks' must be {form}, got {raw!r}")
    tasks = []
    for item in raw:
        if not isinstance(item, Sequence) or isinstance(item, str) or len(item) != 3:
            raise ValueError(f"parameter 'tasks' must be {form}; bad entry {item!r}")
        user, submit, duration = item
        if isinstance(user, bool) or not _is_number(user) or user != int(user):
            raise ValueError(f"parameter 'tasks': user must be 1..{users}, got {user!r}")
        if not 1 <= user <= users:
            raise ValueError(f"parameter 'tasks': user must be 1..{users}, got {user!r}")
        if not _is_number(submit) or submit < 0:
            raise ValueError(f"parameter 'tasks': submit_s must be >= 0, got {submit!r}")
        if not _is_number(duration) or duration <= 0:
            raise ValueError(f"parameter 'tasks': duration_s must be > 0, got {duration!r}")
        tasks.append((int(user) - 1, float(submit), float(duration)))
    return tuple(tasks)


def _task_count(value: object, machines: int, share: int) -> int:
    """A user's task count: a number, ``machines`` (n) or ``share`` (the user's p_u)."""
    if value == "machines":
        return machines
    if value == "share":
        return share
    if isinstance(value, str):
        raise ValueError(
            "parameter 'tasks_per_user' must be an integer >= 0, 'machines' or 'share' "
            f"(per user or for all), got {value!r}"
        )
    return _integer(value, "tasks_per_user", 0)


def _recipe(params: Mapping[str, object], shares: tuple[int, ...], machines: int) -> Recipe:
    users = len(shares)
    if params.get("tasks") is not None:
        mixed = [name for name in PARAMETRIC if name in params]
        if mixed:
            raise ValueError(f"parameter {mixed[0]!r} cannot be combined with 'tasks'")
        return Recipe(users, explicit=_explicit(params["tasks"], users))
    raw_counts = params.get("tasks_per_user", DEFAULTS["tasks_per_user"])
    counts = tuple(
        _task_count(c, machines, share)
        for c, share in zip(_per_user(raw_counts, "tasks_per_user", users), shares, strict=True)
    )
    if sum(counts) == 0:
        raise ValueError("parameter 'tasks_per_user' must give at least one task")
    durations = []
    raw_durations = params.get("task_duration_s", DEFAULTS["task_duration_s"])
    for entry in _per_user(raw_durations, "task_duration_s", users):
        cycle = entry if isinstance(entry, Sequence) and not isinstance(entry, str) else [entry]
        if not cycle or not all(_is_number(d) and d > 0 for d in cycle):
            raise ValueError(
                "parameter 'task_duration_s' must be a number > 0, or one entry per user "
                f"(a number or a list of numbers cycled in turn); got {raw_durations!r}"
            )
        durations.append(tuple(float(d) for d in cycle))
    submit = []
    for value in _per_user(params.get("submit_s", DEFAULTS["submit_s"]), "submit_s", users):
        if not _is_number(value) or value < 0:
            raise ValueError(f"parameter 'submit_s' must be >= 0 (per user), got {value!r}")
        submit.append(float(value))
    return Recipe(
        users,
        tasks_per_user=counts,
        durations=tuple(durations),
        submit=tuple(submit),
        duration_jitter=_number(params, "duration_jitter", 0.0, 1.0),
        interarrival=_number(params, "interarrival_s", 0.0),
    )


def parse(params: Mapping[str, object]) -> Scenario:
    """Validate `params` and return the scenario they describe."""
    unknown = sorted(set(params) - set(DEFAULTS))
    if unknown:
        raise ValueError(
            f"unknown parameter {unknown[0]!r} for model ownership; "
            f"allowed: {', '.join(sorted(DEFAULTS))}"
        )
    policy = _choice(params, "policy", POLICIES)
    machines = _integer(params.get("machines", DEFAULTS["machines"]), "machines", 1)
    shares = _shares(params, machines)
    interval = _number(params, "update_interval_s", 0.0, open_low=True)
    if params.get("negotiation_offset_s") is None:
        offset = interval / 2
    else:
        offset = _number(params, "negotiation_offset_s", 0.0, interval)
    settings = Settings(
        machines=machines,
        shares=shares,
        policy=policy,
        interval=interval,
        offset=offset,
        dispatch_delay=_number(params, "dispatch_delay_s", 0.0),
        claim_reuse=_flag(params, "claim_reuse"),
        maxt=_maxt(params),
        checkpoint_cost=_number(params, "checkpoint_cost_s", 0.0),
        restart_cost=_number(params, "restart_cost_s", 0.0),
        half_life=_number(params, "priority_half_life_s", 0.0, open_low=True),
        share_weighted=_choice(params, "fair_share_weights", WEIGHTS) == "share",
        owner_load=_number(params, "owner_load", 0.0, 1.0, closed_high=True),
    )
    return Scenario(
        settings=settings,
        recipe=_recipe(params, shares, machines),
        owner_off=_number(params, "owner_off_s", 0.0, open_low=True),
        owner_on=_number(params, "owner_on_s", 0.0, open_low=True),
    )
