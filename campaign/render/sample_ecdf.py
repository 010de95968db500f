"""The figure of a sample's distribution: the CDF drawn from each task's stored quantiles,
pooled over replicates, a panel per level of a facet factor (`plot_ecdf`)."""

from __future__ import annotations

import textwrap

import numpy as np
import xarray as xr
from matplotlib.ticker import FuncFormatter

from campaign.errors import BadValue, ParameterError
from campaign.render.figure_labels import literal
from campaign.render.figure_style import new_figure
from campaign.render.figure_ticks import tick_text
from campaign.render.figures import spans_decades, style
from campaign.render.numbers import level
from campaign.results.assemble import factors_of


def plot_ecdf(
    dataset: xr.Dataset,
    sample: str,
    by: str | None = None,
    where: list[str] | None = None,
    facet: str | None = None,
):
    """A matplotlib Figure: the CDF of a sample pooled over replicates (and the factors not in
    ``by`` or ``facet``, within ``where``), one step line per level of ``by``, one panel per
    level of ``facet``; drawn from each task's stored quantiles, within
    `campaign.analysis.distributions.RESOLUTION` of the exact one."""
    from campaign.analysis.distributions import RESOLUTION, cell_cdfs
    from campaign.analysis.query import parse_where

    if facet and facet == by:
        raise ParameterError(f"{{facet}} {facet!r} is already the series ({{by}})", "facet")
    groups = checked_groups(dataset, facet, by)
    selection = parse_where(dataset, where or [])
    try:
        cdfs = cell_cdfs(dataset, sample, groups, selection)
    except ValueError as error:
        raise ParameterError(f"{{metric}} {error}", "metric") from None
    panels: dict[object, list] = {}
    for levels, curve in cdfs.items():
        panels.setdefault(levels[0] if facet else None, []).append(
            (levels[-1:] if by else (), curve)
        )
    figure = new_figure((7 if len(panels) == 1 else 3.2 * len(panels) + 1.5, 4.5))
    axes = figure.subplots(1, len(panels), sharex=True, sharey=True, squeeze=False)
    positive = []
    for panel, (key, curves) in zip(axes[0], panels.items()):
        positive.extend(draw_curves(panel, curves))
        if facet:
            panel.set_title(f"{facet} = {level(key)}", fontsize=9)
            literal(panel.title)
    units = dataset[sample].attrs.get("units")
    long_name = str(dataset[sample].attrs.get("long_name", sample)).removeprefix("quantiles of ")
    long_name = long_name.removesuffix(" per task")
    label = long_name[:1].upper() + long_name[1:] + (f" ({units})" if units else "")
    # a factor `where` holds at one level is not pooled: the title names it as selected
    held = {name for name, levels in selection.items() if len(levels) == 1}
    pooled = [f for f in factors_of(dataset) if f not in (by, facet) and f not in held]
    title = (
        f"{sample}: CDF pooled over replicates"
        + (f" and {', '.join(pooled)}" if pooled else "")
        + (f" ({'; '.join(where)})" if where else "")
        + f"\nresolution {RESOLUTION}"
    )
    heading = (
        figure.suptitle(title, fontsize=9) if facet else axes[0][0].set_title(title, fontsize=9)
    )
    for panel in axes[0]:
        if positive and spans_decades(positive):
            # a linear span of at least [0, 1]: a tick at 0 and one a decade or more below 1
            # would be drawn over each other
            panel.set_xscale("symlog", linthresh=max(min(positive), 1.0))
            panel.xaxis.set_major_formatter(FuncFormatter(lambda value, _: tick_text(value)))
        panel.set_xlabel(textwrap.fill(label, 60 if len(panels) == 1 else 30))
        literal(panel.xaxis.label)
        panel.set_ylim(0, 1.0)
        panel.grid(alpha=0.3)
    axes[0][0].set_ylabel("Cumulative share")
    if by:
        handles, names = axes[0][0].get_legend_handles_labels()
        legend = figure.legend(handles, names, loc="outside right upper", fontsize=8, title=by)
        literal(*legend.get_texts(), legend.get_title())
    literal(heading, axes[0][0].yaxis.label)
    return figure


def checked_groups(dataset: xr.Dataset, facet: str | None, by: str | None) -> list[str]:
    """The factors of the panels and of the series, each a factor of the tasks' samples."""
    factors = factors_of(dataset)
    for option, name in (("facet", facet), ("by", by)):
        if name and name not in factors:
            raise BadValue(option, name, f"is not a factor; factors: {', '.join(factors)}")
    return [name for name in (facet, by) if name]


NO_VALUES = "no values: no finished task with a sample"


def draw_curves(panel, curves: list) -> list[float]:
    """Each curve's steps on ``panel``, labelled by its level; a level without values says so
    in its label (a panel without any, in its middle), and a curve holding infinite values
    the shares it cannot draw (its steps stop short of 0 or 1). The positive values drawn."""
    positive = []
    unlabelled = []
    for (levels, (x, cdf)), (colour, _) in zip(curves, style(len(curves))):
        beyond = not_finite(x, cdf)
        label = None
        if levels:
            label = f"{level(levels[0])}{'' if x.size else ' (no values)'}"
            label += f" ({beyond})" if beyond else ""
        elif beyond:
            unlabelled.append(beyond)
        panel.step(x, cdf, where="post", color=colour, label=label)
        positive.extend(x[(x > 0) & np.isfinite(x)])
    if not any(x.size for _, (x, _) in curves):
        note = panel.text(0.5, 0.5, NO_VALUES, ha="center", va="center", transform=panel.transAxes)
        literal(note)
    if unlabelled:
        note = panel.text(
            0.98,
            0.02,
            unlabelled[0],
            ha="right",
            va="bottom",
            fontsize=8,
            transform=panel.transAxes,
        )
        literal(note)
    return positive


def not_finite(x: np.ndarray, cdf: np.ndarray) -> str:
    """The shares of a pooled CDF at -inf and at +inf (a NaN stored quantile counts there),
    in words: "" when every value is finite."""
    if not x.size:
        return ""
    low = float(cdf[0]) if x[0] == -np.inf else 0.0
    finite = np.isfinite(x)
    high = 1.0 - float(cdf[finite][-1]) if finite.any() else 1.0 - low
    high = high if x[-1] == np.inf else 0.0
    parts = [f"{percent(share)} at {sign}inf" for share, sign in ((low, "-"), (high, "+")) if share]
    return ", ".join(parts) + (" not drawn" if parts else "")


def percent(share: float) -> str:
    """A share in percent, never rounded to 0 % or 100 % when it is neither."""
    if 0 < share < 0.0005:
        return "<0.05%"
    if 0.9995 < share < 1:
        return ">99.95%"
    return f"{100 * share:.3g}%"
