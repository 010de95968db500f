"""Check a spec's ``select:`` block (ranking and selection) into a `Selection`.

Every problem is one line naming the key and what is allowed, before anything runs: the
procedure, the metric and goal, the factor whose levels are the systems, the guarantee
(indifference zone, probability of correct selection) and the stages' sizes.
"""

from __future__ import annotations

import math
from typing import Any

from campaign.design import points as designs
from campaign.results.names import metric_name_problem
from campaign.spec.factors import Fail, is_number
from campaign.spec.types import Factor, Selection

PROCEDURES = {
    "kn": "Kim & Nelson's fully sequential KN (common random numbers through paired seeds)",
    "kn++": "KN++: KN with variances updated at every stage",
    "ocba": "Chen's OCBA: spends budget tasks per group where they matter most (no guarantee)",
    "gsp": "the Good Selection Procedure of Ni, Ciocan, Henderson & Hunter, for many workers",
}
SELECT_KEYS = {
    "metric": "the metric the best system has the best mean of",
    "goal": "min or max: which mean is best",
    "among": "the factor whose levels are the systems, at each combination of the others "
    "(default: every cell is a system)",
    "procedure": ", ".join(PROCEDURES) + " (default kn)",
    "indifference": "delta: a difference the selection may ignore, in the metric's units",
    "relative": "true: indifference is a share of the best first-stage mean, an estimate "
    "(default false)",
    "pcs": "the probability of a correct selection (default 0.95)",
    "first": "first-stage replicates per system (>= 2, default 10)",
    "batch": "replicates added per stage to each system in contention (default 5)",
    "budget": "tasks per group that ocba spends (ocba only)",
    "max_replicates": "most replicates a system may get (default 1000)",
    "rounds": "gsp's screening rounds before its final stage (gsp only, default 10)",
}


def parse_selection(
    raw: Any, factors: list[Factor], paired: list[str], design: str, fail: Fail
) -> Selection:
    """The ``select:`` block of a full factorial design with ``factors``."""
    if not isinstance(raw, dict):
        raise fail(f"select: expected a mapping with keys {', '.join(SELECT_KEYS)}")
    for key in raw:
        if key not in SELECT_KEYS:
            raise fail(f"select: unknown key {key!r}; allowed: {', '.join(SELECT_KEYS)}")
    for key in ("metric", "goal", "indifference"):
        if key not in raw:
            raise fail(f"select: missing key {key!r} ({SELECT_KEYS[key]})")
    if design != designs.FULL:
        raise fail(f"select: needs the full factorial design (design: full), not {design}")
    procedure = raw.get("procedure", "kn")
    if procedure not in PROCEDURES:
        raise fail(
            f"select.procedure: {procedure!r} is not allowed; use one of {', '.join(PROCEDURES)}"
        )
    among = parse_among(raw.get("among"), factors, fail)
    systems = systems_per_group(among, factors)
    if systems < 2:
        raise fail(f"select: {systems} system per group; selecting the best needs at least 2")
    check_pairing(procedure, among, factors, paired, fail)
    metric = raw["metric"]
    problem = metric_name_problem(metric)
    if problem is not None:
        raise fail(f"select.metric: {problem}")
    goal = raw["goal"]
    if goal not in ("min", "max"):
        raise fail(f"select.goal: {goal!r} is not allowed; use min or max")
    first = count(raw, "first", 10, 2, fail)
    selection = Selection(
        metric=metric,
        goal=goal,
        indifference=positive(raw, "indifference", fail),
        among=among,
        procedure=procedure,
        relative=flag(raw, "relative", fail),
        pcs=probability(raw.get("pcs", 0.95), systems, fail),
        first=first,
        batch=count(raw, "batch", 5, 1, fail),
        budget=budget_of(raw, procedure, systems * first, fail),
        max_replicates=count(raw, "max_replicates", 1000, first, fail),
        rounds=rounds_of(raw, procedure, fail),
    )
    return selection


def parse_among(among: Any, factors: list[Factor], fail: Fail) -> str | None:
    if among is None:
        return None
    names = [factor.name for factor in factors]
    if among not in names:
        allowed = ", ".join(names) or "no factors are defined"
        raise fail(f"select.among: {among!r} is not a factor; factors: {allowed}")
    return among


def systems_per_group(among: str | None, factors: list[Factor]) -> int:
    """The systems compared in each group: the levels of ``among``, or every cell."""
    if among is not None:
        return next(len(f.labels) for f in factors if f.name == among)
    return math.prod(len(f.labels) for f in factors)


def check_pairing(
    procedure: str, among: str | None, factors: list[Factor], paired: list[str], fail: Fail
) -> None:
    """GSP's screening and final stage assume independent systems: refuse systems that share
    seeds (KN takes common random numbers; OCBA claims no guarantee)."""
    shared = [among] if among is not None else [f.name for f in factors]
    common = [name for name in shared if name in paired]
    if procedure == "gsp" and common:
        raise fail(
            f"select.procedure: gsp assumes independent systems, but paired lists "
            f"{', '.join(common)} (their levels share seeds); remove it from paired, or use kn, "
            "which takes common random numbers"
        )


def count(raw: dict[str, Any], key: str, default: int, least: int, fail: Fail) -> int:
    value = raw.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int) or value < least:
        raise fail(f"select.{key}: {value!r} is not allowed; use an integer >= {least}")
    return value


def positive(raw: dict[str, Any], key: str, fail: Fail) -> float:
    value = raw.get(key)
    if not is_number(value) or not math.isfinite(value) or value <= 0:
        raise fail(f"select.{key}: {value!r} is not allowed; use a finite number > 0")
    return float(value)


def flag(raw: dict[str, Any], key: str, fail: Fail) -> bool:
    value = raw.get(key, False)
    if not isinstance(value, bool):
        raise fail(f"select.{key}: {value!r} is not allowed; use true or false")
    return value


def probability(value: Any, systems: int, fail: Fail) -> float:
    """A PCS above 1/k (picking a system at random does as well) and below 1."""
    if not is_number(value) or not 1 / systems < value < 1:
        raise fail(
            f"select.pcs: {value!r} is not allowed; use a number between 1/{systems} (a "
            "random pick among the systems) and 1"
        )
    return float(value)


def budget_of(raw: dict[str, Any], procedure: str, least: int, fail: Fail) -> int | None:
    if procedure != "ocba":
        if "budget" in raw:
            raise fail(
                f"select.budget: only ocba spends a budget; {procedure} stops once one system "
                "is left (max_replicates caps a system's replicates)"
            )
        return None
    if "budget" not in raw:
        raise fail("select: missing key 'budget' (tasks per group that ocba spends)")
    return count(raw, "budget", least, least, fail)


def rounds_of(raw: dict[str, Any], procedure: str, fail: Fail) -> int:
    if procedure != "gsp" and "rounds" in raw:
        raise fail(f"select.rounds: only gsp screens in a fixed number of rounds, not {procedure}")
    return count(raw, "rounds", 10, 1, fail)
