"""Figures for a paper: metrics against factors, as a journal takes them.

A figure is a grid of panels: a row per metric, a column per level of the facet factor, a
series per level of the series factor; factors shown nowhere are pooled replicate by
replicate (as in a query) and named in the title. Kinds (`figure_panels`): means with their
intervals, differences from a baseline level with `compare`'s (paired) intervals, box or
violin plots and ECDFs of the replicates. Sizes, fonts and labels are `figure_style`'s:
column or page wide, Type 42 fonts in every PDF, the models' long names and units.

A categorical factor on the x axis gets dodged points with interval bars (one offset per
series, so bars never hide each other); a numeric one gets lines with interval bands. An axis
is logarithmic on request, and by default when its positive values span a factor of 10 or more
(a flat line next to one 20 times larger says nothing). Colours come from a qualitative
palette and markers cycle with a period prime to its size, so 14 or more series stay apart;
the legend sits outside the axes and the layout is constrained, so nothing is clipped.

A factor drawn over a range (along ``point``) is an axis like any other of a figure of means:
with more than `MAX_PLOT_VALUES` distinct values it is cut into bins of equal width on its
scale (`binned`), the points of a bin pooled replicate by replicate.

Only measurements are drawn: a metric that is the digest of an input, or that has one value
everywhere, is left out (`figure_metrics` says which and why).
"""

from __future__ import annotations

import math
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import xarray as xr  # noqa: E402

from campaign.analysis.metrics import left_out_metrics  # noqa: E402
from campaign.analysis.query import check_confidence, parse_where, select  # noqa: E402
from campaign.design.points import LOG, POINT  # noqa: E402
from campaign.errors import CampaignError, ParameterError  # noqa: E402
from campaign.render.figure_panels import (  # noqa: E402
    difference_series,
    draw_distributions,
    draw_ecdf,
    draw_intervals,
    factor_levels,
    mean_series,
    replicate_samples,
    replicate_series,
    replicate_values,
    series_levels,
)
from campaign.render.figure_style import (  # noqa: E402
    check_style,
    figure_size,
    figure_width,
    metric_label,
    styled,
    wrapped_title,
)
from campaign.results.assemble import factors_of, metrics_of, point_factors_of  # noqa: E402
from campaign.store.folder import make_folder  # noqa: E402

FIGURE_FORMATS = ("png", "pdf", "svg")
MARKERS = ("o", "s", "^", "D", "v", "P", "X")  # 7: prime to the palettes' 10 and 20 colours
LOG_SPAN = 10.0  # an axis whose positive values span this factor or more is logarithmic
LOG_CHOICES = ("auto", "x", "y", "xy", "none")
MAX_PLOT_VALUES = 12  # a factor along point with more distinct values is binned
X_BINS, SERIES_BINS = 10, 4
SAVE_DPI = 200  # a PNG sharp in print; the figure keeps its size (no tight bounding box)


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


KINDS = ("mean", "difference", "box", "violin", "ecdf")


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


def plot(
    dataset: xr.Dataset,
    metrics: str | list[str],
    kind: str = "mean",
    x: str | None = None,
    by: str | None = None,
    facet: str | None = None,
    where: list[str] | dict | None = None,
    baseline: Any = None,
    confidence: float | None = None,
    log: str = "auto",
    size: str | tuple[float, float] = "page",
    style: str = "paper",
    formula: bool = False,
    title: bool = True,
):
    """A matplotlib Figure of ``metrics`` (a row of panels each), one column of panels per
    level of ``facet``, a series per level of ``by``; the factors shown nowhere are pooled
    replicate by replicate, as in a query, and named on the figure.

    ``kind``: ``mean`` (mean and interval against ``x``), ``difference`` (each level of
    ``by`` minus ``baseline``, default its first level, with `compare`'s intervals), ``box``
    or ``violin`` (the replicates against ``x``), ``ecdf`` (the replicates' distribution).
    ``size``: ``column`` (3.5 in wide), ``page`` (7.1 in) or ``WxH`` in inches; ``style``:
    ``paper`` or ``screen``; ``formula``: the long names' formulas in the labels; ``log``:
    ``auto`` (an axis spanning decades), ``x``, ``y``, ``xy`` or ``none``."""
    metrics = check_request(dataset, metrics, kind, log, style, size, confidence)
    data = select(dataset, parse_where(dataset, where or []))
    layout = check_layout(data, kind, metrics, x, by, facet)
    baseline = check_baseline(data, layout, baseline)
    data, bins = binned_axes(data, layout)
    if confidence is None:
        confidence = float(dataset.attrs.get("confidence", 0.95))
    numeric = layout.x is not None and data[layout.x].dtype.kind in "fiu"
    if log in ("x", "xy") and kind != "ecdf" and not numeric:
        raise ParameterError(f"{{log}} {log}: the x axis ({layout.x}) is not numeric", "log")
    if kind in ("box", "violin") and log in ("x", "xy"):
        raise ParameterError(f"{{log}} {log}: a {kind} plot's x axis has categories", "log")
    facets = list(data[layout.facet].values) if layout.facet else [None]
    width, _ = figure_width(size)
    series_count = len(series_levels(data, layout.by)) - (kind == "difference")
    legend_right = bool(layout.by) and (width >= 5 or series_count > 6)
    figsize = figure_size(size, len(metrics), len(facets), legend_right)
    logs = [violin_log(data, metric, layout, log) for metric in metrics]
    with styled(style, width):
        figure, grid = plt.subplots(
            len(metrics), len(facets), figsize=figsize, layout="constrained", squeeze=False,
            sharex="row" if kind == "ecdf" else "all", sharey="all" if kind == "ecdf" else "row",
        )  # fmt: skip
        notes, handles = Notes(), []
        notes.bins = bins
        for row, metric in enumerate(metrics):
            for column, level in enumerate(facets):
                panel = data if level is None else select(data, {layout.facet: [level]})
                axes = grid[row][column]
                drawn = draw_panel(
                    axes, panel, metric, layout, baseline, confidence, notes, logs[row]
                )
                handles = handles or drawn
                if level is not None and row == 0:
                    axes.set_title(f"{layout.facet} = {level}")
                    literal(axes.title)
            scale_axes(grid[row], layout, log, numeric, data)
            label_row(grid[row], dataset[metric].attrs, metric, layout, formula, figsize)
        finish(figure, grid, data, layout, handles, legend_right, numeric)
        if title:
            heading(figure, notes.title(layout, baseline, confidence), figsize[0])
    return figure


def binned_axes(data: xr.Dataset, layout: Layout) -> tuple[xr.Dataset, list[str]]:
    """The data with a factor along ``point`` of many values on the x axis or the series cut
    into bins (`binned`), and the words for the title."""
    data, x_bins = binned(data, layout.x, X_BINS) if layout.x else (data, "")
    data, series_bins = binned(data, layout.by, SERIES_BINS) if layout.by else (data, "")
    return data, [words for words in (x_bins, series_bins) if words]


def check_request(dataset, metrics, kind, log, style, size, confidence) -> list[str]:
    """The metrics as a list, each option checked, before anything is computed."""
    check_confidence(confidence)
    if kind not in KINDS:
        raise ParameterError(f"{{kind}} {kind!r} is not allowed; use {', '.join(KINDS)}", "kind")
    if log not in LOG_CHOICES:
        raise ParameterError(f"{{log}} {log!r} is not allowed; use {', '.join(LOG_CHOICES)}", "log")
    check_style(style)
    figure_width(size)
    metrics = [metrics] if isinstance(metrics, str) else list(metrics)
    if not metrics:
        raise ParameterError("{metric}: give at least one metric", "metric")
    for metric in metrics:
        check_metric(dataset, metric)
    return metrics


def check_baseline(data: xr.Dataset, layout: Layout, baseline: Any) -> Any:
    """A difference's baseline (default: the first level of the series factor); refused for
    any other kind."""
    if layout.kind == "difference":
        return baseline if baseline is not None else data[layout.by].values[0]
    if baseline is not None:
        raise ParameterError(
            f"{{baseline}} is for kind 'difference' (each level against a baseline), not "
            f"{layout.kind!r}",
            "baseline",
        )
    return None


def heading(figure, text: str, width: float) -> None:
    """The figure's title, wrapped to its width."""
    title = figure.suptitle(text)
    title.set_text(wrapped_title(text, width, title.get_fontsize()))
    literal(title)


def plot_metric(
    dataset: xr.Dataset,
    metric: str,
    x: str | None = None,
    by: str | None = None,
    where: list[str] | None = None,
    confidence: float | None = None,
    log: str = "auto",
    **options,
):
    """A matplotlib Figure: mean of ``metric`` against ``x`` with its interval, a series per
    level of ``by`` (`plot` of kind ``mean`` for one metric)."""
    return plot(dataset, metric, "mean", x, by, None, where, None, confidence, log, **options)


def figure_name(metrics: str | list[str], kind: str = "mean") -> str:
    """The file name of a figure (without suffix): its metrics, then its kind unless mean."""
    names = [metrics] if isinstance(metrics, str) else list(metrics)
    return "+".join(names) + ("" if kind == "mean" else f"-{kind}")


def check_layout(data, kind, metrics, x, by, facet) -> Layout:
    """The factors on each axis, checked (given ones) or chosen (missing ones)."""
    factors = factors_of(data)
    if facet is not None and facet not in factors:
        raise ParameterError(
            f"{{facet}} {facet!r} is not a factor; factors: {', '.join(factors)}", "facet"
        )
    if facet is not None and facet in (x, by):
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
    return Layout(kind, metrics, x, by, facet, pooled)


class Notes:
    """What the panels say about their numbers, for the figure's title."""

    def __init__(self) -> None:
        self.counts: list[int] = []
        self.method = ""
        self.bins: list[str] = []  # factors along point cut into bins, in words

    def add(self, counts) -> None:
        self.counts += [int(c) for c in np.ravel(counts) if np.isfinite(c)]

    def replicates(self) -> str:
        if not self.counts:
            return "no replicates"
        low, high = min(self.counts), max(self.counts)
        return f"{low} replicates" if low == high else f"{low} to {high} replicates"

    def title(self, layout: Layout, baseline: Any, confidence: float) -> str:
        level = f"{confidence:.0%}"
        what = {
            "mean": f"Mean and {level} interval over {self.replicates()}",
            "difference": f"Difference from {layout.by} = {baseline}, "
            f"{self.method} {level} interval over {self.replicates()}",
            "box": f"{self.replicates().capitalize()}: median, quartiles, 1.5 IQR whiskers",
            "violin": f"Distribution and median of {self.replicates()}",
            "ecdf": f"Empirical distribution of {self.replicates()}",
        }[layout.kind]
        if layout.pooled:
            each = "" if layout.kind in ("mean", "difference") else "each replicate's "
            what += f"; {each}mean over {' and '.join(layout.pooled)}"
        if self.bins:
            what += f" ({'; '.join(self.bins)})"
        return what


def violin_log(data: xr.Dataset, metric: str, layout: Layout, log: str) -> bool:
    """Whether a violin plot's densities are of log10 values (asked, or auto where the
    replicates span decades): a density drawn on a log axis would be the linear one, bent."""
    if layout.kind != "violin" or log == "none":
        return False
    if log != "auto":
        return "y" in log
    keep = [layout.x] + ([layout.by] if layout.by else [])
    return spans_decades(replicate_values(data, metric, keep).values)


def draw_panel(
    axes, panel, metric, layout: Layout, baseline, confidence, notes: Notes, log_values=False
) -> list:
    """Draw one panel; return its legend handles."""
    styles = style(len(series_levels(panel, layout.by)))
    kind = layout.kind
    if kind == "ecdf":
        samples = replicate_samples(panel, metric, layout.by)
        notes.add([np.isfinite(s.values).sum() for s in samples])
        return draw_ecdf(axes, samples, styles)
    levels = factor_levels(panel, layout.x)
    numeric = panel[layout.x].dtype.kind in "fiu"
    if kind in ("box", "violin"):
        series, counts = replicate_series(panel, metric, layout.x, layout.by)
        notes.add(counts)
        return draw_distributions(axes, series, kind, styles, log_values)
    if kind == "difference":
        series, result = difference_series(panel, metric, layout.x, layout.by, baseline, confidence)
        notes.add(result["n"].values)
        notes.method = "paired" if result.attrs["paired"] else "Welch"
        axes.axhline(0, color="0.4", linewidth=0.6, zorder=0)
    else:
        series, counts = mean_series(panel, metric, layout.x, layout.by, confidence)
        notes.add(counts)
    return draw_intervals(axes, series, levels, numeric, styles)


def scale_axes(row, layout: Layout, log: str, numeric: bool, data: xr.Dataset) -> None:
    """Logarithmic axes where asked, or (auto) where the drawn values span decades."""
    value_axis = "x" if layout.kind == "ecdf" else "y"
    drawn = np.concatenate([panel_values(axes, value_axis) for axes in row])
    if (log == "auto" and layout.kind == "difference") or layout.kind == "violin":
        value_log = False  # differences change sign; violins draw log10 values themselves
    else:
        value_log = value_axis in log if log != "auto" else spans_decades(drawn)
    x_log = layout.kind in ("mean", "difference") and (
        "x" in log if log != "auto" else numeric and spans_decades(data[layout.x].values)
    )
    for axes in row:
        if value_log:
            getattr(axes, f"set_{value_axis}scale")("log")
        if x_log:
            axes.set_xscale("log")


def panel_values(axes, axis: str) -> np.ndarray:
    """The data values a panel draws along ``axis`` as lines and markers: means (not their
    interval bands, which may cross 0), box whiskers and medians, ECDF steps."""
    values = [np.asarray(getattr(line, f"get_{axis}data")(), dtype=float) for line in axes.lines]
    values = [v for v in values if v.size]
    return np.concatenate(values) if values else np.array([])


def label_row(row, attrs, metric, layout: Layout, formula: bool, figsize) -> None:
    """The metric's label on the row's value axis (the first panel), the factor on x; a label
    longer than its panel's side wraps."""
    if layout.kind == "difference":
        label = metric_label(attrs, metric, formula, prefix="difference in")
    else:
        label = metric_label(attrs, metric, formula)
    points = row[0].yaxis.label.get_fontsize()
    rows = row[0].get_gridspec().nrows
    across = fitting(figsize[0] / len(row), points)
    high = fitting(figsize[1] / rows, points)
    for column, axes in enumerate(row):
        if layout.kind == "ecdf":  # one label under the row's middle panel
            axes.set_xlabel(textwrap.fill(label, across) if column == len(row) // 2 else "")
            axes.set_yticks([0, 0.25, 0.5, 0.75, 1])
        else:
            axes.set_xlabel(layout.x)
        literal(axes.xaxis.label)
        axes.grid(alpha=0.3)
    first = row[0]
    ecdf = layout.kind == "ecdf"
    first.set_ylabel("Fraction of replicates" if ecdf else textwrap.fill(label, high))
    literal(first.yaxis.label)


def fitting(inches: float, points: float) -> int:
    """How many characters of a ``points`` font fit in ``inches``, less the tick labels."""
    return max(16, int((inches - 0.5) * 72 / (points * 0.55)))


def finish(figure, grid, data, layout: Layout, handles, legend_right, numeric) -> None:
    """Category ticks, x labels on the bottom row only, and one legend for the figure."""
    rows = len(grid)
    for r, row in enumerate(grid):
        for axes in row:
            if layout.kind != "ecdf" and r < rows - 1:
                axes.set_xlabel("")
            if layout.kind != "ecdf" and (not numeric or layout.kind in ("box", "violin")):
                category_ticks(axes, factor_levels(data, layout.x))
    if not layout.by or not handles:
        return
    names = [h.get_label() for h in handles]
    if legend_right:
        legend = figure.legend(
            handles, names, loc="outside right upper", ncols=math.ceil(len(handles) / 18),
            title=layout.by,
        )  # fmt: skip
    else:
        legend = figure.legend(
            handles, names, loc="outside lower center", ncols=min(len(handles), 4),
            title=layout.by,
        )  # fmt: skip
    literal(*legend.get_texts(), legend.get_title())


def category_ticks(axes, levels: list) -> None:
    axes.set_xticks(range(len(levels)), [str(v) for v in levels])
    literal(*axes.get_xticklabels())
    if len(levels) > 6 or max(len(str(v)) for v in levels) > 8:
        axes.tick_params(axis="x", labelrotation=45)
        for tick in axes.get_xticklabels():
            tick.set_horizontalalignment("right")
    axes.set_xlim(-0.6, len(levels) - 0.4)


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
    make_folder(path.parent, f"{{out}} {path}", "out")
    try:
        figure.savefig(path, dpi=SAVE_DPI)
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
            figure.savefig(path, dpi=SAVE_DPI)
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
