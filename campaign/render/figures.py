"""Figures for a paper: one metric's mean and confidence interval against a factor.

A categorical factor on the x axis gets dodged points with interval bars (one offset per
series, so bars never hide each other); a numeric one gets lines with interval bands. An axis
is logarithmic on request, and by default when its positive values span a factor of 10 or more
(a flat line next to one 20 times larger says nothing). Colours come from a qualitative
palette and markers cycle with a period prime to its size, so 14 or more series stay apart;
the legend sits outside the axes and the layout is constrained, so nothing is clipped.

A factor drawn over a range (along ``point``) is an axis like any other: with more than
`MAX_PLOT_VALUES` distinct values it is cut into bins of equal width on its scale (`binned`),
the points of a bin pooled replicate by replicate.

Only measurements are drawn: a metric that is the digest of an input, or that has one value
everywhere, is left out (`figure_metrics` says which and why).
"""

from __future__ import annotations

import math
import textwrap
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import xarray as xr  # noqa: E402

from campaign.analysis.metrics import left_out_metrics  # noqa: E402
from campaign.analysis.query import summary_table  # noqa: E402
from campaign.design.points import LOG, POINT  # noqa: E402
from campaign.errors import CampaignError, ParameterError  # noqa: E402
from campaign.results.assemble import factors_of, metrics_of, point_factors_of  # noqa: E402
from campaign.store.folder import make_folder  # noqa: E402

FIGURE_FORMATS = ("png", "pdf", "svg")
MARKERS = ("o", "s", "^", "D", "v", "P", "X")  # 7: prime to the palettes' 10 and 20 colours
LOG_SPAN = 10.0  # an axis whose positive values span this factor or more is logarithmic
LOG_CHOICES = ("auto", "x", "y", "xy", "none")
MAX_PLOT_VALUES = 12  # a factor along point with more distinct values is binned
X_BINS, SERIES_BINS = 10, 4

plt.rcParams["svg.fonttype"] = "none"  # text stays text in SVG: searchable, editable


def figure_metrics(dataset: xr.Dataset, metrics: list[str] | None = None) -> list[str]:
    """The metrics worth a figure, in the given order (default: all of them)."""
    skipped = left_out_metrics(dataset)
    return [m for m in (metrics or metrics_of(dataset)) if m not in skipped]


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


def distinct(dataset: xr.Dataset, name: str) -> int:
    if name in dataset.dims:
        return dataset.sizes[name]
    return len(np.unique(dataset[name].values))


def binned(dataset: xr.Dataset, name: str, bins: int) -> tuple[xr.Dataset, str]:
    """``dataset`` with a factor along ``point`` of many values replaced by the centre of its
    bin (``bins`` of equal width, on a log scale for a range drawn on one), and the words for
    it; unchanged (and no words) for a dimension or a factor of few values."""
    if name in dataset.dims or distinct(dataset, name) <= MAX_PLOT_VALUES:
        return dataset, ""
    values = dataset[name].values.astype(float)
    log = dataset[name].attrs.get("sampling_scale") == LOG and values.min() > 0
    shown = np.log(values) if log else values
    edges = np.linspace(shown.min(), shown.max(), bins + 1)
    index = np.clip(np.searchsorted(edges, shown, side="right") - 1, 0, bins - 1)
    centres = (edges[:-1] + edges[1:]) / 2
    centres = np.exp(centres) if log else centres
    centres = np.array([float(f"{c:.4g}") for c in centres])  # labels a reader can read
    coordinate = xr.Variable(POINT, centres[index], dataset[name].attrs)
    scale = "log-" if log else ""
    return dataset.assign_coords({name: coordinate}), f"{name}: {bins} {scale}equal bins"


def default_axes(dataset: xr.Dataset, lines: str | None = None) -> tuple[str | None, str | None]:
    """The factor on the x axis (most levels, numeric first) and the one for the series; the x
    axis is never ``lines``, the factor already chosen for the series."""
    factors = [f for f in drawn_factors(dataset) if f != lines]
    if not factors:
        return None, None
    paired = dataset.attrs.get("paired", "").split()
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


def spans_decades(values) -> bool:
    """Whether positive values span a factor of `LOG_SPAN` or more (any value <= 0 rules a
    log axis out)."""
    values = np.asarray(values, dtype=float)
    values = values[np.isfinite(values)]
    if values.size < 2 or values.min() <= 0:
        return False
    return values.max() / values.min() >= LOG_SPAN


def style(count: int) -> list[tuple[tuple[float, ...], str]]:
    """(colour, marker) of each of ``count`` series, all different: a qualitative palette of
    10 colours (20 beyond 10 series), markers cycling with a period of 7."""
    if count <= 10:
        colours = list(plt.get_cmap("tab10").colors)
    else:
        tab20 = list(plt.get_cmap("tab20").colors)
        colours = tab20[0::2] + tab20[1::2]  # the strong shades first
    return [(colours[i % len(colours)], MARKERS[i % len(MARKERS)]) for i in range(count)]


def check_axes(dataset: xr.Dataset, x: str | None, by: str | None) -> tuple[str, str | None]:
    """The x factor and the series factor to draw: given ones checked, missing ones chosen."""
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
    default_x, default_by = default_axes(dataset, lines=by)
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


def check_metric(dataset: xr.Dataset, metric: str) -> None:
    """Refuse a metric that is not in the results or that a figure would mislead on."""
    available = metrics_of(dataset)
    if metric not in available:
        raise ParameterError(
            f"{{metric}} {metric!r} is not in the results; metrics: {', '.join(available)}",
            "metric",
        )
    reason = left_out_metrics(dataset).get(metric)
    if reason is not None:
        shown = ", ".join(figure_metrics(dataset)) or "none"
        raise ParameterError(
            f"{{metric}} {metric!r} has nothing to plot ({reason}); metrics to plot: {shown}",
            "metric",
        )


def plot_metric(
    dataset: xr.Dataset,
    metric: str,
    x: str | None = None,
    by: str | None = None,
    where: list[str] | None = None,
    confidence: float | None = None,
    log: str = "auto",
):
    """A matplotlib Figure: mean of ``metric`` against ``x`` with its interval, a series per
    level of ``by``; the other factors pooled replicate by replicate, as in a query.
    ``log``: ``auto`` (an axis spanning decades), ``x``, ``y``, ``xy`` or ``none``."""
    if log not in LOG_CHOICES:
        raise ParameterError(f"{{log}} {log!r} is not allowed; use {', '.join(LOG_CHOICES)}", "log")
    x, by = check_axes(dataset, x, by)
    check_metric(dataset, metric)
    dataset, x_bins = binned(dataset, x, X_BINS)
    dataset, series_bins = binned(dataset, by, SERIES_BINS) if by else (dataset, "")
    table = summary_table(dataset, [metric], [x] + ([by] if by else []), where, confidence)
    numeric = dataset[x].dtype.kind in "fiu"
    if log in ("x", "xy") and not numeric:
        raise ParameterError(f"{{log}} {log}: the x axis ({x}) is not numeric", "log")
    levels = list(dict.fromkeys(table[x]))
    ordered = by is not None and by not in dataset.dims  # a factor along point: by value
    series = list(table.groupby(by, sort=ordered)) if by else [(None, table)]
    figure, axes = plt.subplots(figsize=(7, 4.5), layout="constrained")
    width = 0.8 if len(series) > 1 else 0.0
    handles = []
    for i, ((label, rows), (colour, marker)) in enumerate(zip(series, style(len(series)))):
        mean = rows[f"{metric}_mean"].to_numpy(dtype=float)
        low = rows[f"{metric}_ci_low"].to_numpy(dtype=float)
        high = rows[f"{metric}_ci_high"].to_numpy(dtype=float)
        name = None if label is None else str(label)
        gid = f"series{i}"
        if numeric:
            xs = rows[x].to_numpy(dtype=float)
            (line,) = axes.plot(xs, mean, color=colour, marker=marker, label=name, gid=gid)
            handles.append(line)
            band = axes.fill_between(xs, low, high, color=colour, alpha=0.18, linewidth=0)
            band.set_gid(f"{gid}-interval")
        else:
            offset = (i - (len(series) - 1) / 2) * width / len(series)
            xs = np.array([levels.index(v) for v in rows[x]], dtype=float) + offset
            errors = np.nan_to_num(np.vstack([mean - low, high - mean]))
            bars = axes.errorbar(
                xs, mean, yerr=errors, color=colour, marker=marker, linestyle="none",
                capsize=2, markersize=5, label=name,
            )  # fmt: skip
            bars.lines[0].set_gid(gid)
            handles.append(bars)
    if not numeric:
        axes.set_xticks(range(len(levels)), [str(v) for v in levels])
        literal(*axes.get_xticklabels())
        if len(levels) > 6 or max(len(str(v)) for v in levels) > 8:
            axes.tick_params(axis="x", labelrotation=45)
            for tick in axes.get_xticklabels():
                tick.set_horizontalalignment("right")
        axes.set_xlim(-0.6, len(levels) - 0.4)
    if log in ("x", "xy") or (log == "auto" and numeric and spans_decades(levels)):
        axes.set_xscale("log")
    if log in ("y", "xy") or (log == "auto" and spans_decades(table[f"{metric}_mean"])):
        axes.set_yscale("log")
    units = dataset[metric].attrs.get("units")
    axes.set_xlabel(x)
    label = f"{dataset[metric].attrs.get('long_name', metric)}" + (f" [{units}]" if units else "")
    axes.set_ylabel(textwrap.fill(label, 45))  # a long name on one line outgrows the figure
    level = confidence or float(dataset.attrs.get("confidence", 0.95))
    bins = "; ".join(filter(None, [x_bins, series_bins]))
    title = f"{metric}: mean and {level:.0%} interval" + (f"\n({bins})" if bins else "")
    axes.set_title(title, fontsize=10)
    if by:
        columns = math.ceil(len(series) / 18)
        names = [str(label) for label, _ in series]  # given, so "_a" is no hidden label
        legend = figure.legend(
            handles, names, loc="outside right upper", fontsize=8, ncols=columns, title=by
        )
        literal(*legend.get_texts(), legend.get_title())
    literal(axes.title, axes.xaxis.label, axes.yaxis.label)
    axes.grid(alpha=0.3)
    return figure


def literal(*texts) -> None:
    """Draw texts as written: a `$` in a level, factor or metric name is a dollar sign, not
    mathtext (which fails on `$\\frac{1}{$` and eats the dollars of `cost $5 to $10`), and
    no LaTeX either."""
    for text in texts:
        text.set_parse_math(False)
        text.set_usetex(False)


def save_figure(figure, path: Path) -> None:
    """Write a figure (its folder made if missing) and close it; the tight bounding box
    keeps every label and the legend inside the image."""
    make_folder(path.parent, f"--out {path}")
    try:
        figure.savefig(path, dpi=150, bbox_inches="tight")
    except OSError as error:
        raise CampaignError(f"cannot write {path}: {error.strerror}") from None
    finally:
        plt.close(figure)


def write_figures(figure, folder: Path, name: str, formats=FIGURE_FORMATS) -> list[Path]:
    """Write one figure as ``folder/name.<format>`` for each format; close it."""
    make_folder(folder, f"figures folder {folder}")
    paths = [folder / f"{name}.{fmt}" for fmt in formats]
    try:
        for path in paths:
            figure.savefig(path, dpi=150, bbox_inches="tight")
    except OSError as error:
        raise CampaignError(f"cannot write {path}: {error.strerror}") from None
    finally:
        plt.close(figure)
    return paths


def plot_ecdf(
    dataset: xr.Dataset, sample: str, by: str | None = None, where: list[str] | None = None
):
    """A matplotlib Figure: the CDF of a sample pooled over replicates (and the factors not in
    ``by``, within ``where``), one step line per level of ``by``; drawn from each task's
    stored quantiles, within `campaign.analysis.distributions.RESOLUTION` of the exact one."""
    from campaign.analysis.distributions import RESOLUTION, cell_cdfs
    from campaign.analysis.query import parse_where

    try:
        cdfs = cell_cdfs(dataset, sample, [by] if by else [], parse_where(dataset, where or []))
    except ValueError as error:
        raise ParameterError(f"{{metric}} {error}", "metric") from None
    figure, axes = plt.subplots(figsize=(7, 4.5), layout="constrained")
    positive = []
    for (levels, (x, cdf)), (colour, _) in zip(cdfs.items(), style(len(cdfs))):
        name = str(levels[0]) if levels else None
        axes.step(x, cdf, where="post", color=colour, label=name)
        positive.extend(x[x > 0])
    if positive and spans_decades(positive):
        axes.set_xscale("symlog", linthresh=max(min(positive), 1e-9))
    units = dataset[sample].attrs.get("units")
    long_name = str(dataset[sample].attrs.get("long_name", sample)).removeprefix("quantiles of ")
    long_name = long_name.removesuffix(" per task")
    axes.set_xlabel(textwrap.fill(long_name + (f" [{units}]" if units else ""), 60))
    axes.set_ylabel("cumulative share")
    pooled = [f for f in factors_of(dataset) if f != by]
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
