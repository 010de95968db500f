"""Check a spec's factors, their levels, and its design (which cells run).

A factor's levels are a list (numbers, strings or booleans of one kind), a mapping
label: value, or in a design of points (Latin hypercube, Sobol, Saltelli, Morris) a range
{low, high} (optionally scale: log, integer: true) whose labels are the design's points.
Each problem is one line naming the factor or key (see `campaign.spec.keys`).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from typing import Any

import numpy as np

from campaign.design import points as designs
from campaign.errors import CampaignError
from campaign.results.names import level_problem
from campaign.spec.names import factor_name_problem, label_problem, scalar_kind
from campaign.spec.schema import DESIGNS, RANGE
from campaign.spec.types import DesignSpec, Factor

Fail = Callable[[str], CampaignError]  # a message -> the error naming the spec file
RANGE_KEYS = set(RANGE.names)
RANGE_KEYS_REQUIRED = set(RANGE.required)
DESIGN_KEYS = {kind: section.names for kind, section in DESIGNS.items()}
DESIGN_EXAMPLES = {
    designs.FRACTIONAL: "generators: {d: a*b*c} or resolution: 4",
    designs.SALTELLI: "points: 64, second_order: false",
    designs.MORRIS: "trajectories: 20, levels: 4",
}


def parse_factors(
    raw: Any, params: dict[str, Any], fail: Fail, ranges: bool = False
) -> list[Factor]:
    """The factors in the order written; ``ranges``: a {low, high} mapping is a range."""
    if not isinstance(raw, dict):
        raise fail(f"factors: expected a mapping of factor: [levels], got {raw!r}")
    factors = []
    for name, levels in raw.items():
        problem = factor_name_problem(name)
        if problem is not None:
            raise fail(f"factors: {problem}")
        if name in params:
            raise fail(
                f"factors: {name!r} is also a fixed parameter in params; keep it in one place"
            )
        if ranges and isinstance(levels, dict) and RANGE_KEYS_REQUIRED <= set(levels) <= RANGE_KEYS:
            factors.append(parse_range(name, levels, fail))
        elif isinstance(levels, dict):
            factors.append(labelled_factor(name, levels, fail))
        else:
            factors.append(listed_factor(name, levels, fail))
    return factors


def labelled_factor(name: str, levels: dict[Any, Any], fail: Fail) -> Factor:
    """A factor written as a mapping label: value (any value; the labels are stored)."""
    if not levels:
        raise fail(f"factors.{name}: the level list is empty; give at least one level")
    labels = tuple(str(label) for label in levels)
    values = tuple(levels.values())
    if len(set(labels)) != len(labels):
        raise fail(f"factors.{name}: level labels repeat: {list(labels)}")
    first: dict[str, str] = {}  # a value as a cell's digest writes it -> its first label
    for label, value in zip(labels, values):
        written = json.dumps(value, sort_keys=True, allow_nan=True, default=str)
        if written in first:  # one cell twice: with shared seeds, one task key for both
            raise fail(
                f"factors.{name}: labels {first[written]!r} and {label!r} give the same value "
                f"{value!r}; a design runs each level once (one label, or more replicates)"
            )
        first[written] = label
    for label in labels:
        problem = level_problem(label, False) or label_problem(label)
        if problem is not None:
            raise fail(f"factors.{name}: level label {label!r} {problem}")
    return Factor(name, labels, values)


def listed_factor(name: str, levels: Any, fail: Fail) -> Factor:
    """A factor written as a list of levels of one kind (or one level), stored as they are."""
    if not isinstance(levels, list):
        levels = [levels]
    if not levels:
        raise fail(f"factors.{name}: the level list is empty; give at least one level")
    check_level_kinds(name, levels, fail)
    if len(set(levels)) != len(levels):
        raise fail(f"factors.{name}: levels repeat: {levels}")
    floats = any(isinstance(level, float) for level in levels)
    for level in levels:
        problem = level_problem(level, floats)
        if problem is not None:
            raise fail(
                f"factors.{name}: level {level!r} {problem}, so results cannot store it; "
                "write it as a string (quoted) or as a mapping label: value"
            )
    return Factor(name, tuple(levels), tuple(levels))


def check_level_kinds(name: str, levels: list[Any], fail: Fail) -> None:
    """Levels are numbers, strings or booleans, all of one kind; strings are one line."""
    kind = None
    for level in levels:
        level_kind = scalar_kind(level)
        if level_kind is None:
            raise fail(
                f"factors.{name}: level {level!r} is not allowed; levels are numbers, strings "
                f"or booleans (for other values write a mapping label: value)"
            )
        if kind is not None and level_kind != kind:
            raise fail(
                f"factors.{name}: level {level!r} is a {level_kind} but earlier levels are "
                f"{kind}s; levels of one factor must share a type (or write a mapping "
                f"label: value)"
            )
        kind = level_kind
        problem = label_problem(level) if isinstance(level, str) else None
        if problem is not None:
            raise fail(f"factors.{name}: level {level!r} {problem}")


def design_kind(raw: Any, fail: Fail) -> tuple[str, Any]:
    """The design's kind and its options, as written."""
    allowed = ", ".join(designs.KINDS)
    if isinstance(raw, str):
        kind, options = raw, None
    elif isinstance(raw, dict) and len(raw) == 1:
        ((kind, options),) = raw.items()
    else:
        raise fail(f"design: expected one of {allowed}, or a mapping kind: options, got {raw!r}")
    if kind not in designs.KINDS:
        raise fail(f"design: unknown design {kind!r}; designs: {allowed}")
    if kind == designs.FULL:
        if options not in (None, {}):
            raise fail(f"design.full: takes no options, got {options!r}")
        return kind, {}
    example = DESIGN_EXAMPLES.get(kind, "points: 20")
    if not isinstance(options, dict):
        raise fail(f"design.{kind}: expected a mapping ({example}), got {options!r}")
    return kind, DESIGNS[kind].check(options, fail)


def parse_design(
    kind: str, options: dict[str, Any], factors: list[Factor], seed: int, fail: Fail
) -> tuple[DesignSpec, list[Factor]]:
    """The design, and the factors with each range's labels set to its points' values."""
    if kind == designs.FULL:
        return DesignSpec(), factors
    if kind == designs.FRACTIONAL:
        return fractional_design(options, factors, fail), factors
    return point_design(kind, options, factors, seed, fail)


def fractional_design(options: dict[str, Any], factors: list[Factor], fail: Fail) -> DesignSpec:
    """A two-level fraction, from its generators or the standard one of a resolution."""
    kind = designs.FRACTIONAL
    where = f"design.{kind}"
    names = [f.name for f in factors]
    for factor in factors:
        if len(factor.labels) != 2:
            raise fail(
                f"{where}: factor {factor.name} has {len(factor.labels)} levels; a two-level "
                "fraction needs exactly two levels per factor (low first, then high)"
            )
    if len(factors) < 2:
        raise fail(f"{where}: a fraction needs at least two factors, got {len(factors)}")
    if ("generators" in options) == ("resolution" in options):
        raise fail(f"{where}: give generators (d: a*b*c) or resolution (3, 4, 5, ...), one")
    try:
        if "generators" in options:
            fraction = designs.parse_generators(options["generators"], names)
            return DesignSpec(kind, fraction)
        resolution = options["resolution"]
        if isinstance(resolution, bool) or not isinstance(resolution, int) or resolution < 3:
            raise fail(f"{where}.resolution: {resolution!r} is not allowed; use 3, 4, 5, ...")
        fraction = designs.standard_fraction(names, resolution)
    except designs.DesignError as error:
        key = "generators" if "generators" in options else "resolution"
        raise fail(f"{where}.{key}: {error}") from None
    return DesignSpec(kind, fraction, resolution)


def point_design(
    kind: str, options: dict[str, Any], factors: list[Factor], seed: int, fail: Fail
) -> tuple[DesignSpec, list[Factor]]:
    """A design of points over the ranges: its point counts, and the ranges' points."""
    where = f"design.{kind}"
    ranges = [f for f in factors if f.range is not None]
    if kind in (designs.SALTELLI, designs.MORRIS):
        design, unit = sampled_design(kind, options, len(ranges), seed, fail)
    else:
        if "points" not in options:
            raise fail(f"{where}: missing key 'points' (how many design points, e.g. points: 20)")
        try:
            sizes = designs.check_sizes(kind, options["points"])
        except designs.DesignError as error:
            raise fail(f"{where}.points: {error}") from None
        design = DesignSpec(kind, sizes=sizes)
    if not ranges:
        raise fail(
            f"{where}: no factor is a range; give at least one as {{low: number, high: number}}"
        )
    if kind not in (designs.SALTELLI, designs.MORRIS):
        unit = designs.unit_points(kind, design.sizes, len(ranges), seed)
    if kind == designs.MORRIS:
        for factor in ranges:
            check_morris_integers(factor, design.levels, fail)
    placed = []
    for factor in factors:
        if factor.range is not None:
            j = ranges.index(factor)
            drawn = designs.scale(
                unit[:, j], *factor.range, factor.scale == designs.LOG, factor.integer
            )
            values = tuple(int(v) if factor.integer else float(v) for v in drawn)
            factor = Factor(factor.name, values, values, factor.range, factor.scale, factor.integer)
        placed.append(factor)
    return design, placed


def check_morris_integers(factor: Factor, levels: int, fail: Fail) -> None:
    """Refuse an integer range whose values on Morris's grid are not evenly spaced on its
    scale: an elementary effect divides each step by the grid's step, so 0, 1, 3, 4 for the
    grid of 4 levels on 0..4 would give y = 3k an effect of 13.5 where the range moves y 12."""
    if not factor.integer:
        return
    log = factor.scale == designs.LOG
    values = designs.scale(np.linspace(0, 1, levels), *factor.range, log, True)
    steps = np.diff(np.log(values) if log else values.astype(float))
    if np.allclose(steps, steps[0], rtol=1e-9, atol=0):
        return
    low, high = factor.range
    hint = (
        f"make high - low a multiple of levels - 1 ({levels - 1})"
        if not log
        else "give it another range or levels, or leave integer out"
    )
    raise fail(
        f"factors.{factor.name}: on Morris's grid of {levels} levels the integer range "
        f"{low} to {high}{' (log scale)' if log else ''} takes the values "
        f"{', '.join(str(v) for v in values)}, not evenly spaced, so its elementary effects "
        f"would be wrong; {hint}"
    )


def sampled_design(
    kind: str, options: dict[str, Any], dims: int, seed: int, fail: Fail
) -> tuple[DesignSpec, Any]:
    """A Saltelli sample (``points`` base samples, ``second_order``) or Morris trajectories
    (``trajectories``, ``levels``), and its points in the unit cube (none without ranges)."""
    where = f"design.{kind}"
    count_key = "points" if kind == designs.SALTELLI else "trajectories"
    if count_key not in options:
        what = "base samples" if kind == designs.SALTELLI else "trajectories"
        raise fail(f"{where}: missing key {count_key!r} (how many {what}, e.g. {count_key}: 32)")
    samples = options[count_key]
    if isinstance(samples, bool) or not isinstance(samples, int) or not 2 <= samples:
        raise fail(f"{where}.{count_key}: {samples!r} is not allowed; use an integer of 2 or more")
    second_order = options.get("second_order", True)
    levels = options.get("levels", 4)
    if kind == designs.SALTELLI and not isinstance(second_order, bool):
        raise fail(f"{where}.second_order: {second_order!r} is not allowed; use true or false")
    if kind == designs.MORRIS and (
        isinstance(levels, bool) or not isinstance(levels, int) or levels < 2 or levels % 2
    ):
        raise fail(f"{where}.levels: {levels!r} is not allowed; use an even integer of 2 or more")
    per_sample = designs.points_per_sample(kind, dims, second_order)
    if samples * per_sample > designs.MAX_POINTS:
        raise fail(
            f"{where}.{count_key}: {samples} x {per_sample} points per sample is more than "
            f"{designs.MAX_POINTS:,} points"
        )
    if kind == designs.SALTELLI:
        design = DesignSpec(
            kind, sizes=(samples * per_sample,), samples=samples, second_order=second_order
        )
        unit = designs.saltelli_points(samples, dims, second_order, seed) if dims else None
    else:
        design = DesignSpec(kind, sizes=(samples * per_sample,), samples=samples, levels=levels)
        unit = designs.morris_points(samples, dims, levels, seed) if dims else None
    return design, unit


def parse_range(name: str, levels: dict[str, Any], fail: Fail) -> Factor:
    """A factor given as a range {low, high} (scale: linear or log; integer: true or false)
    of a design of points."""
    low, high = levels["low"], levels["high"]
    scale, integer = levels.get("scale", designs.LINEAR), levels.get("integer", False)
    for value in (low, high):
        if not is_number(value) or not math.isfinite(value):
            raise fail(f"factors.{name}: range bound {value!r} is not allowed; use finite numbers")
    if not low < high:
        raise fail(f"factors.{name}: the range needs low < high, got low {low!r}, high {high!r}")
    if scale not in designs.SCALES:
        raise fail(f"factors.{name}: scale {scale!r} is not allowed; use linear or log")
    if scale == designs.LOG and low <= 0:
        raise fail(f"factors.{name}: a log scale needs low > 0, got low {low!r}")
    if not isinstance(integer, bool):
        raise fail(f"factors.{name}: integer {integer!r} is not allowed; use true or false")
    if integer and not (float(low).is_integer() and float(high).is_integer()):
        raise fail(
            f"factors.{name}: an integer range needs integer bounds, got low {low!r}, high {high!r}"
        )
    bounds = (int(low), int(high)) if integer else (float(low), float(high))
    return Factor(name, (), (), bounds, scale, integer)


def is_number(value: Any) -> bool:
    """An int or float, and not a boolean."""
    return isinstance(value, int | float) and not isinstance(value, bool)
