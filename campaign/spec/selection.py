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
from campaign.spec.schema import PROCEDURES, SELECT
from campaign.spec.types import Factor, Selection

SELECT_KEYS = SELECT.docs()  # each key and its description


def systems_share_seeds(selection: Selection, factors: list[str], paired: list[str]) -> bool:
    """Whether some systems of a group share seeds: ``among`` (or, with every cell a system,
    any factor) is paired. KN++'s constant then takes Bonferroni's bound; the spec's
    description says so."""
    shared = [selection.among] if selection.among is not None else factors
    return any(name in paired for name in shared)


def parse_selection(
    raw: Any, factors: list[Factor], paired: list[str], design: str, fail: Fail
) -> Selection:
    """The ``select:`` block of a full factorial design with ``factors``."""
    SELECT.check(raw, fail)
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
    indifference, relative = positive(raw, "indifference", fail), flag(raw, "relative", fail)
    if relative and indifference >= 1:
        raise fail(
            f"select.indifference: {raw['indifference']!r} is a share of the best first-stage "
            f"mean (relative: true), {100 * indifference:g}% of it; use a number below 1 (0.05 "
            "for 5%), or relative: false for a difference in the metric's units"
        )
    selection = Selection(
        metric=metric,
        goal=goal,
        indifference=indifference,
        among=among,
        procedure=procedure,
        relative=relative,
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
