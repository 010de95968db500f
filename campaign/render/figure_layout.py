"""What a figure shows where: the kind, the metrics, and the factors on the x axis, of the
series and of the panels, checked when given and chosen when not (`check_layout`).

A factor shown nowhere is averaged replicate by replicate. Where that could mislead, a figure
given no facet factor shows one in panels instead (`default_facet`): among the factors it
would average over that have at most `FACET_LEVELS` levels, a numeric one whose levels span a
factor of `WIDE_SPAN` or more (the widest first: a mean over levels 10 times apart is mostly
the largest's), else the one with the fewest levels. What is still averaged is named in the
title, with its range where its levels span that factor."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import xarray as xr

from campaign.design.points import POINT
from campaign.errors import CampaignError, ParameterError
from campaign.render.figure_bins import distinct
from campaign.render.numbers import level
from campaign.results.assemble import factors_of, point_factors_of

KINDS = ("mean", "difference", "box", "violin", "ecdf")
FACET_LEVELS = 5  # a factor averaged over otherwise is shown in panels when it has this few
WIDE_SPAN = 10.0  # levels whose largest is this many times the smallest are never averaged


@dataclass(frozen=True)
class Layout:
    """What a figure shows where: the kind, the metrics (one row of panels each), the x
    factor, the series factor, the facet factor (one column of panels per level) and the
    factors pooled (averaged replicate by replicate), named on the figure."""

    kind: str
    metrics: list[str]
    x: str | None
    by: str | None
    facet: str | None
    pooled: list[str]
    wide: dict[str, str] = field(default_factory=dict)  # factors spanning WIDE_SPAN: range
    chosen_facet: bool = False  # the facet factor was chosen, not given


def level_span(data: xr.Dataset, name: str) -> float:
    """How many times its smallest level a numeric factor's largest is (0: not numeric or not
    all positive)."""
    if data[name].dtype.kind not in "fiu":
        return 0.0
    values = np.asarray(data[name].values, dtype=float)
    values = values[np.isfinite(values)]
    if values.size < 2 or values.min() <= 0:
        return 0.0
    return float(values.max() / values.min())


def default_facet(data: xr.Dataset, pooled: list[str]) -> str | None:
    """The factor a figure shows in panels rather than averages over (see the module): of
    ``pooled`` with at most `FACET_LEVELS` levels, the widest numeric one spanning
    `WIDE_SPAN`, else the one with the fewest levels; None when none has so few."""
    few = [f for f in pooled if f != POINT and data.sizes[f] <= FACET_LEVELS]
    if not few:
        return None

    def order(name: str) -> tuple:
        span = level_span(data, name)
        return (-(span if span >= WIDE_SPAN else 0.0), data.sizes[name], pooled.index(name))

    return min(few, key=order)


def axis_factors(dataset: xr.Dataset) -> list[str]:
    """The factors a figure can draw: the dimensions, and the factors along ``point``."""
    factors = factors_of(dataset)
    return factors + (point_factors_of(dataset) if POINT in factors else [])


def drawn_factors(dataset: xr.Dataset) -> list[str]:
    """The factors a default figure draws: those drawn over ranges rather than ``point``."""
    factors = factors_of(dataset)
    ranges = [f for f in point_factors_of(dataset) if "valid_range" in dataset[f].attrs]
    if POINT in factors and ranges:
        return [f for f in factors if f != POINT] + ranges
    return factors


def default_axes(
    dataset: xr.Dataset, lines: str | None = None, avoid: str | None = None
) -> tuple[str | None, str | None]:
    """The factor on the x axis (most levels, numeric first) and the one for the series; the x
    axis is never ``lines``, the factor already chosen for the series, and neither is
    ``avoid`` (the factor of the panels)."""
    factors = [f for f in drawn_factors(dataset) if f not in (lines, avoid)]
    if not factors:
        return None, None
    paired = [f for f in dataset.attrs.get("paired", "").split() if f in factors]
    ranked = sorted(
        factors,
        key=lambda f: (
            dataset[f].dtype.kind not in "fiu",
            -distinct(dataset, f),
            factors.index(f),
        ),
    )
    x = next((f for f in ranked if f not in paired), ranked[0])
    by = next((f for f in paired if f != x), None)
    if by is None:
        by = next((f for f in factors if f != x), None)
    return x, by


def check_axes(
    dataset: xr.Dataset, x: str | None, by: str | None, avoid: str | None = None
) -> tuple[str, str | None]:
    """The x factor and the series factor to draw: given ones checked, missing ones chosen
    (never ``avoid``, the factor of the panels)."""
    factors = axis_factors(dataset)
    for option, name in (("x", x), ("by", by)):
        if name is not None and name not in factors:
            raise ParameterError(
                f"{{{option}}} {name!r} is not a factor; factors: {', '.join(factors) or 'none'}",
                option,
            )
    if x is not None and x == by:
        raise ParameterError(
            f"{{x}} and {{by}} are both {x!r}: the lines need another factor than the x axis "
            f"(factors: {', '.join(factors)}), or leave {{by}} out",
            "x",
            "by",
        )
    default_x, default_by = default_axes(dataset, lines=by, avoid=avoid)
    x = x or default_x
    by = by if by is not None else (default_by if default_by != x else None)
    if x is None:
        if by is not None:
            raise ParameterError(
                f"{{by}} {by!r} leaves no factor for the x axis: the results have no other one",
                "by",
            )
        raise CampaignError("the results have no factors to plot against")
    return x, by


def check_layout(data, kind, metrics, x, by, facet) -> Layout:
    """The factors on each axis, checked (given ones) or chosen (missing ones; a facet factor
    by `default_facet`, unless ``facet`` is False: no panels, every factor not shown
    averaged)."""
    factors = factors_of(data)
    if facet is False:
        facet = ""
    if facet and facet not in factors:
        raise ParameterError(
            f"{{facet}} {facet!r} is not a factor; factors: {', '.join(factors)}", "facet"
        )
    if facet and facet in (x, by):
        raise ParameterError(
            f"{{facet}} {facet!r} is already on the {'x axis' if facet == x else 'series'}; "
            "give another factor",
            "facet",
        )
    if kind == "ecdf":
        if x is not None:
            raise ParameterError(
                "{x}: an ECDF has the metric's values on its x axis; use {facet} for panels "
                "per level of a factor",
                "x",
                "facet",
            )
        if by is not None and by not in factors:
            raise ParameterError(
                f"{{by}} {by!r} is not a factor; factors: {', '.join(factors)}", "by"
            )
        if by is None:
            paired = str(data.attrs.get("paired", "")).split()
            by = next((f for f in [*paired, *factors] if f in factors and f != facet), None)
    else:
        x, by = check_axes(data, x, by, avoid=facet)
    if kind == "difference" and by is None:
        raise ParameterError(
            "{by}: a difference figure needs a factor whose levels are compared", "by"
        )
    along_points = [(o, n) for o, n in (("x", x), ("by", by)) if n and n not in data.dims]
    if along_points and kind != "mean":
        option, name = along_points[0]
        raise ParameterError(
            f"{{{option}}} {name!r} is a factor along point (a design of points): only kind "
            "'mean' draws it",
            option,
        )
    shown = {x, by, facet, *([POINT] if along_points else [])}
    pooled = [f for f in factors if f not in shown and data.sizes[f] > 1]
    chosen = facet is None and default_facet(data, pooled)
    if chosen:
        facet, pooled = chosen, [f for f in pooled if f != chosen]
    wide = {
        f: level_range(data, f)
        for f in [*pooled, *([facet] if facet else [])]
        if level_span(data, f) >= WIDE_SPAN
    }
    return Layout(kind, metrics, x, by, facet or None, pooled, wide, bool(chosen))


def level_range(data: xr.Dataset, name: str) -> str:
    """A numeric factor's smallest and largest levels, in words: ``1e+07 to 1e+08``."""
    values = data[name].values
    return f"{level(values.min())} to {level(values.max())}"
