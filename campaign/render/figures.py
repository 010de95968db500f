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
with more than `campaign.render.figure_bins.MAX_PLOT_VALUES` distinct values it is cut into
bins of equal width on its scale (`binned`), the points of a bin pooled replicate by replicate.

Only measurements are drawn: a metric that is the digest of an input, or that has one value
everywhere, is left out (`figure_metrics` says which and why).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import matplotlib
import numpy as np
import xarray as xr

from campaign.analysis.metrics import left_out_metrics
from campaign.analysis.query import check_confidence, parse_where, select
from campaign.analysis.unfinished import written_before
from campaign.errors import CampaignError, ParameterError
from campaign.render.figure_bins import SERIES_BINS, X_BINS, binned
from campaign.render.figure_labels import finish, heading, label_row, literal
from campaign.render.figure_layout import KINDS, Layout, check_layout
from campaign.render.figure_notes import Notes
from campaign.render.figure_panels import (
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
from campaign.render.figure_style import (
    check_style,
    figure_size,
    figure_width,
    new_figure,
    styled,
)
from campaign.render.figure_ticks import log_ticks
from campaign.render.numbers import level as level_text
from campaign.results.assemble import metrics_of
from campaign.store.folder import make_folder

FIGURE_FORMATS = ("png", "pdf", "svg")
MARKERS = ("o", "s", "^", "D", "v", "P", "X")  # 7: prime to the palettes' 10 and 20 colours
LOG_SPAN = 10.0  # an axis whose positive values span this factor or more is logarithmic
LOG_CHOICES = ("auto", "x", "y", "xy", "none")
SAVE_DPI = 200  # a PNG sharp in print; the figure keeps its size (no tight bounding box)


def figure_metrics(dataset: xr.Dataset, metrics: list[str] | None = None) -> list[str]:
    """The metrics worth a figure, in the given order (default: all of them)."""
    skipped = left_out_metrics(dataset)
    return [m for m in (metrics or metrics_of(dataset)) if m not in skipped]


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
        colours = list(matplotlib.colormaps["tab10"].colors)
    else:
        tab20 = list(matplotlib.colormaps["tab20"].colors)
        colours = tab20[0::2] + tab20[1::2]  # the strong shades first
    return [(colours[i % len(colours)], MARKERS[i % len(MARKERS)]) for i in range(count)]


def check_metric(dataset: xr.Dataset, metric: str) -> None:
    """Refuse a metric that is not in the results or that a figure would mislead on (one of
    `plot`'s ``metrics``)."""
    available = metrics_of(dataset)
    if metric not in available:
        raise ParameterError(
            f"{{metrics}} {metric!r} is not in the results; metrics: {', '.join(available)}",
            "metrics",
        )
    reason = left_out_metrics(dataset).get(metric)
    if reason is not None:
        shown = ", ".join(figure_metrics(dataset)) or "none"
        raise ParameterError(
            f"{{metrics}} {metric!r} has nothing to plot ({reason}); metrics to plot: {shown}",
            "metrics",
        )


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
    replicate by replicate, as in a query, and named on the figure. ``facet`` None: a
    factor averaging could mislead on, if any (`figure_layout.default_facet`); False: none.

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
        figure = new_figure(figsize)
        grid = figure.subplots(
            len(metrics), len(facets), squeeze=False,
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
                    axes.set_title(f"{layout.facet} = {level_text(level)}")
                    literal(axes.title)
            scale_axes(grid[row], layout, log, numeric, data)
            label_row(grid[row], dataset[metric].attrs, metric, layout, formula, figsize)
        beside = finish(figure, grid, data, layout, handles, legend_right, numeric)
        if title:
            heading(figure, notes.title(layout, baseline, confidence), figsize[0], beside)
    made_from(figure, dataset.attrs)
    return figure


def made_from(figure, attrs) -> None:
    """Note on ``figure`` the results it is drawn from (results.nc's digest and time of
    writing), which every file written of it carries in its metadata (`file_metadata`), and
    the tasks those lack (``campaign_lacks``: results.nc written before some finished)."""
    figure.campaign_lacks = written_before(attrs)
    if attrs.get("results_digest"):
        figure.campaign_source = (
            f"campaign results {attrs['results_digest']} (results.nc created "
            f"{attrs.get('created', '?')}, spec {attrs.get('spec_digest', '?')})"
        )


METADATA_KEYS = {".png": "Source", ".svg": "Source", ".pdf": "Subject"}  # what each format takes


def file_metadata(figure, path: Path) -> dict[str, str] | None:
    """The metadata of an image file of ``figure``: the results it was drawn from."""
    source, key = getattr(figure, "campaign_source", None), METADATA_KEYS.get(path.suffix.lower())
    return {key: source} if source and key else None


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
    if confidence is not None and kind not in ("mean", "difference"):  # else taken, unused
        raise ParameterError(
            f"{{confidence}} is for kinds 'mean' and 'difference' (their intervals), not "
            f"{kind!r}, which draws the replicates",
            "confidence",
        )
    if log not in LOG_CHOICES:
        raise ParameterError(f"{{log}} {log!r} is not allowed; use {', '.join(LOG_CHOICES)}", "log")
    check_style(style)
    figure_width(size)
    metrics = [metrics] if isinstance(metrics, str) else list(metrics)
    if not metrics:
        raise ParameterError("{metrics}: give at least one metric", "metrics")
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


def violin_log(data: xr.Dataset, metric: str, layout: Layout, log: str) -> bool:
    """Whether a violin plot's densities are of log10 values (asked, or auto where the
    replicates span decades): a density drawn on a log axis would be the linear one, bent."""
    if layout.kind != "violin" or log == "none":
        return False
    if log != "auto":
        return "y" in log
    keep = [name for name in (layout.x, layout.by, layout.facet) if name]  # as drawn
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
        notes.add_infinite([s.values for s in samples])
        return draw_ecdf(axes, samples, styles)
    levels = factor_levels(panel, layout.x)
    numeric = panel[layout.x].dtype.kind in "fiu"
    if kind in ("box", "violin"):
        series, counts = replicate_series(panel, metric, layout.x, layout.by)
        notes.add(counts)
        keep = [layout.x, *([layout.by] if layout.by else [])]
        notes.add_infinite([replicate_values(panel, metric, keep).values])
        return draw_distributions(axes, series, kind, styles, log_values)
    if kind == "difference":
        series, result = difference_series(panel, metric, layout.x, layout.by, baseline, confidence)
        notes.add(result["n"].values)
        notes.method = "paired" if result.attrs["paired"] else "Welch"
        axes.axhline(0, color="0.4", linewidth=0.6, zorder=0)
    else:
        series, counts = mean_series(panel, metric, layout.x, layout.by, confidence)
        notes.add(counts)
    notes.add_infinite([one.middle for one in series], "point")
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
            log_ticks(getattr(axes, f"{value_axis}axis"), drawn)
        if x_log:
            axes.set_xscale("log")


def panel_values(axes, axis: str) -> np.ndarray:
    """The data values a panel draws along ``axis`` as lines and markers: means (not their
    interval bands, which may cross 0), box whiskers and medians, ECDF steps."""
    values = [np.asarray(getattr(line, f"get_{axis}data")(), dtype=float) for line in axes.lines]
    values = [v for v in values if v.size]
    return np.concatenate(values) if values else np.array([])


def save_figure(figure, path: Path) -> None:
    """Write a figure (its folder made if missing); the constrained layout keeps every label
    and the legend inside the image."""
    make_folder(path.parent, f"{{out}} {path}", "out")
    try:
        figure.savefig(path, dpi=SAVE_DPI, metadata=file_metadata(figure, path))
    except OSError as error:
        raise CampaignError(f"cannot write {path}: {error.strerror}") from None


def write_figures(figure, folder: Path, name: str, formats=FIGURE_FORMATS) -> list[Path]:
    """Write one figure as ``folder/name.<format>`` for each format."""
    make_folder(folder, f"figures folder {folder}")
    paths = [folder / f"{name}.{fmt}" for fmt in formats]
    try:
        for path in paths:
            figure.savefig(path, dpi=SAVE_DPI, metadata=file_metadata(figure, path))
    except OSError as error:
        raise CampaignError(f"cannot write {path}: {error.strerror}") from None
    return paths
