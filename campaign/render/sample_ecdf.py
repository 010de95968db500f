"""The figure of a sample's distribution: the CDF drawn from each task's stored quantiles,
pooled over replicates (`plot_ecdf`)."""

from __future__ import annotations

import textwrap

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import xarray as xr  # noqa: E402
from matplotlib.ticker import FuncFormatter  # noqa: E402

from campaign.errors import ParameterError  # noqa: E402
from campaign.render.figure_labels import literal  # noqa: E402
from campaign.render.figure_ticks import tick_text  # noqa: E402
from campaign.render.figures import spans_decades, style  # noqa: E402
from campaign.render.numbers import level  # noqa: E402
from campaign.results.assemble import factors_of  # noqa: E402


def plot_ecdf(
    dataset: xr.Dataset, sample: str, by: str | None = None, where: list[str] | None = None
):
    """A matplotlib Figure: the CDF of a sample pooled over replicates (and the factors not in
    ``by``, within ``where``), one step line per level of ``by``; drawn from each task's
    stored quantiles, within `campaign.analysis.distributions.RESOLUTION` of the exact one."""
    from campaign.analysis.distributions import RESOLUTION, cell_cdfs
    from campaign.analysis.query import parse_where

    selection = parse_where(dataset, where or [])
    try:
        cdfs = cell_cdfs(dataset, sample, [by] if by else [], selection)
    except ValueError as error:
        raise ParameterError(f"{{metric}} {error}", "metric") from None
    figure, axes = plt.subplots(figsize=(7, 4.5), layout="constrained")
    positive = []
    for (levels, (x, cdf)), (colour, _) in zip(cdfs.items(), style(len(cdfs))):
        name = level(levels[0]) if levels else None
        axes.step(x, cdf, where="post", color=colour, label=name)
        positive.extend(x[x > 0])
    if positive and spans_decades(positive):
        # a linear span of at least [0, 1]: a tick at 0 and one a decade or more below 1 would
        # be drawn over each other
        axes.set_xscale("symlog", linthresh=max(min(positive), 1.0))
        axes.xaxis.set_major_formatter(FuncFormatter(lambda value, _: tick_text(value)))
    units = dataset[sample].attrs.get("units")
    long_name = str(dataset[sample].attrs.get("long_name", sample)).removeprefix("quantiles of ")
    long_name = long_name.removesuffix(" per task")
    label = long_name[:1].upper() + long_name[1:] + (f" ({units})" if units else "")
    axes.set_xlabel(textwrap.fill(label, 60))
    axes.set_ylabel("Cumulative share")
    # a factor `where` holds at one level is not pooled: the title names it as selected
    held = {name for name, levels in selection.items() if len(levels) == 1}
    pooled = [f for f in factors_of(dataset) if f != by and f not in held]
    axes.set_title(
        f"{sample}: CDF pooled over replicates"
        + (f" and {', '.join(pooled)}" if pooled else "")
        + (f" ({'; '.join(where)})" if where else "")
        + f"\nresolution {RESOLUTION}",
        fontsize=9,
    )
    if by:
        legend = figure.legend(loc="outside right upper", fontsize=8, title=by)
        literal(*legend.get_texts(), legend.get_title())
    literal(axes.title, axes.xaxis.label, axes.yaxis.label)
    axes.set_ylim(0, 1.0)
    axes.grid(alpha=0.3)
    return figure
