"""What one panel of a figure draws, per kind; the numbers come from `campaign.analysis`.

- ``mean``: each series' mean and interval against the x factor (`summary_table`);
- ``difference``: each level of the series factor minus the baseline level, with the
  intervals `campaign.analysis.comparison.compare` computes (paired when the levels share
  seeds), against the x factor;
- ``box`` and ``violin``: the replicates' values per x level and series;
- ``ecdf``: the empirical distribution function of each series' sample.

A category on the x axis gets dodged symbols (one offset per series, so none hides
another); numbers get lines with interval bands. An ECDF draws a `Sample` per series: today
the replicates' values (each replicate's value, the other factors averaged within it); a
distribution stored per task would be one more source of samples with weights.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import xarray as xr

from campaign.analysis.comparison import compare
from campaign.analysis.query import positions, summary_table
from campaign.analysis.stats import per_replicate
from campaign.render.figure_ticks import tick_text
from campaign.render.numbers import level as level_text

DODGE = 0.8  # the share of a category's width the series spread over


@dataclass(frozen=True)
class Series:
    """One series of a panel: its label, colour index, x values, and the numbers drawn."""

    label: str | None
    index: int
    x: list[Any]
    middle: np.ndarray
    low: np.ndarray | None = None
    high: np.ndarray | None = None
    values: list[np.ndarray] | None = None  # box, violin: the replicates per x level


@dataclass(frozen=True)
class Sample:
    """The values whose distribution an ECDF draws, each with a weight (1 for a replicate)."""

    label: str | None
    index: int
    values: np.ndarray
    weights: np.ndarray | None = None

    def steps(self) -> tuple[np.ndarray, np.ndarray]:
        """The ECDF's jumps: sorted values and the cumulative share at each."""
        keep = np.isfinite(self.values)
        values = self.values[keep]
        weights = np.ones_like(values) if self.weights is None else self.weights[keep]
        order = np.argsort(values, kind="stable")
        cumulative = np.cumsum(weights[order])
        return values[order], cumulative / cumulative[-1] if cumulative.size else cumulative


def factor_levels(data: xr.Dataset, name: str) -> list[Any]:
    """A factor's levels: a dimension's in order, a factor along ``point`` its distinct
    values, sorted (as a query groups them)."""
    if name in data.dims:
        return list(data[name].values)
    return list(np.unique(data[name].values))


def series_levels(data: xr.Dataset, by: str | None) -> list[Any]:
    return factor_levels(data, by) if by else [None]


def mean_series(data, metric, x, by, confidence) -> tuple[list[Series], np.ndarray]:
    """Mean and interval per series; also the counts of replicates behind them."""
    table = summary_table(data, [metric], [x] + ([by] if by else []), None, confidence)
    out = []
    for index, level in enumerate(series_levels(data, by)):
        rows = table if by is None else table[table[by].to_numpy() == level]
        out.append(
            Series(
                None if by is None else level_text(level),
                index,
                list(rows[x]),
                rows[f"{metric}_mean"].to_numpy(dtype=float),
                rows[f"{metric}_ci_low"].to_numpy(dtype=float),
                rows[f"{metric}_ci_high"].to_numpy(dtype=float),
            )
        )
    return out, table[f"{metric}_n"].to_numpy()


def difference_series(data, metric, x, by, baseline, confidence) -> tuple[list[Series], xr.Dataset]:
    """Each level of ``by`` but the baseline, minus the baseline, with `compare`'s intervals;
    also the comparison itself (its method and counts)."""
    result = compare(data, by, baseline, metric, by=[x], confidence=confidence)
    levels = series_levels(data, by)
    out = []
    for at, level in enumerate(result[by].values):
        one = result.isel({by: at})
        out.append(
            Series(
                level_text(level),
                positions(np.array(levels, dtype=object), [level])[0],
                list(one[x].values),
                one["difference"].values.astype(float),
                one["difference_low"].values.astype(float),
                one["difference_high"].values.astype(float),
            )
        )
    return out, result


def replicate_values(data: xr.Dataset, metric: str, keep: list[str]) -> xr.DataArray:
    """Each replicate's value per combination of ``keep`` (the others averaged within it)."""
    return per_replicate(data[metric], keep)


def replicate_series(data, metric, x, by) -> tuple[list[Series], np.ndarray]:
    """The replicates' values per x level, a series per level of ``by``."""
    keep = [x] + ([by] if by else [])
    values = replicate_values(data, metric, keep)
    out, counts = [], []
    for index, level in enumerate(series_levels(data, by)):
        one = values if by is None else values.isel({by: index})
        per_x = [one.isel({x: i}).values for i in range(one.sizes[x])]
        per_x = [v[np.isfinite(v)] for v in per_x]
        counts += [v.size for v in per_x]
        middle = np.array([np.median(v) if v.size else np.nan for v in per_x])
        label = None if by is None else level_text(level)
        out.append(Series(label, index, list(data[x].values), middle, values=per_x))
    return out, np.array(counts)


def replicate_samples(data: xr.Dataset, metric: str, by: str | None) -> list[Sample]:
    """Per level of ``by``: every replicate's value, the other factors averaged within it."""
    values = replicate_values(data, metric, [by] if by else [])
    out = []
    for index, level in enumerate(series_levels(data, by)):
        one = values if by is None else values.isel({by: index})
        label = None if by is None else level_text(level)
        out.append(Sample(label, index, np.ravel(one.values).astype(float)))
    return out


def dodge(index: int, count: int) -> float:
    """The sideways offset of series ``index`` of ``count`` at a category."""
    return 0.0 if count < 2 else (index - (count - 1) / 2) * DODGE / count


def draw_intervals(axes, series: list[Series], levels: list, numeric: bool, styles) -> list:
    """Means (or differences) with their intervals: lines and bands on a numeric axis, dodged
    points with bars on categories. Returns one legend handle per series."""
    handles = []
    for i, one in enumerate(series):
        colour, marker = styles[one.index]
        gid = f"series{i}"
        if numeric:
            xs = np.asarray(one.x, dtype=float)
            (line,) = axes.plot(xs, one.middle, color=colour, marker=marker, label=one.label)
            line.set_gid(gid)
            band = axes.fill_between(xs, one.low, one.high, color=colour, alpha=0.18, lw=0)
            band.set_gid(f"{gid}-interval")
            alone = isolated(one.low, one.high)
            if alone.any():  # a band needs a neighbour with an interval: a bar instead
                low, high, middle = one.low[alone], one.high[alone], one.middle[alone]
                bars = axes.errorbar(
                    xs[alone], middle, yerr=np.vstack([middle - low, high - middle]),
                    color=colour, linestyle="none", capsize=2, alpha=0.6,
                )  # fmt: skip
                bars.lines[2][0].set_gid(f"{gid}-interval-bars")
            handles.append(line)
        else:
            xs = np.array(positions(np.array(levels, dtype=object), one.x), dtype=float)
            xs += dodge(i, len(series))
            # a cell without an interval (one replicate, NaN) gets no bar: a bar of length 0
            # would read as an exact value
            errors = np.vstack([one.middle - one.low, one.high - one.middle]).astype(float)
            bars = axes.errorbar(
                xs, one.middle, yerr=errors, color=colour, marker=marker, linestyle="none",
                capsize=2, label=one.label,
            )  # fmt: skip
            bars.lines[0].set_gid(gid)
            handles.append(bars)
    return handles


def isolated(low, high) -> np.ndarray:
    """The points that have an interval but no neighbour with one: a band between
    neighbours leaves them out (a cell beside one of a single replicate, or NaN)."""
    has = np.isfinite(np.asarray(low, dtype=float)) & np.isfinite(np.asarray(high, dtype=float))
    before = np.concatenate([[False], has[:-1]])
    after = np.concatenate([has[1:], [False]])
    return has & ~before & ~after


def draw_distributions(axes, series: list[Series], kind: str, styles, log_values=False) -> list:
    """Box or violin plots of the replicates, dodged per series; with ``log_values`` the
    violins are densities of log10 values, on an axis labelled at the powers of 10. Returns
    legend handles."""
    from matplotlib.patches import Patch

    handles = []
    width = DODGE / max(len(series), 1) * 0.85
    for i, one in enumerate(series):
        colour, _ = styles[one.index]
        xs = np.arange(len(one.values)) + dodge(i, len(series))
        drawn = [(x, v) for x, v in zip(xs, one.values) if v.size]
        if not drawn:
            continue
        at, data = [x for x, _ in drawn], [v for _, v in drawn]
        if log_values:
            data = [np.log10(v[v > 0]) for v in data]
        if kind == "box":
            parts = axes.boxplot(
                data, positions=at, widths=width, patch_artist=True, manage_ticks=False,
                flierprops={"markersize": 2, "markeredgecolor": colour},
                medianprops={"color": "black"},
            )  # fmt: skip
            for box in parts["boxes"]:
                box.set(facecolor=colour, alpha=0.6, edgecolor=colour, gid=f"series{i}")
            for median in parts["medians"]:
                median.set_gid(f"series{i}-median")
        else:
            parts = axes.violinplot(
                data, positions=at, widths=width, showmedians=True, showextrema=False
            )
            for body in parts["bodies"]:
                body.set(facecolor=colour, edgecolor=colour, alpha=0.6, gid=f"series{i}")
            parts["cmedians"].set(color="black")
        handles.append(Patch(facecolor=colour, alpha=0.6, label=one.label))
    if log_values:
        power_ticks(axes)
    return handles


def power_ticks(axes) -> None:
    """Ticks of an axis of log10 values at the whole powers, labelled 100, 1000, ..."""
    from matplotlib.ticker import FuncFormatter, MaxNLocator

    axes.yaxis.set_major_locator(MaxNLocator(integer=True))
    axes.yaxis.set_major_formatter(FuncFormatter(lambda value, _: tick_text(10.0**value)))


def draw_ecdf(axes, samples: list[Sample], styles) -> list:
    """Each sample's ECDF as a step line. Returns legend handles."""
    handles = []
    for i, sample in enumerate(samples):
        colour, _ = styles[sample.index]
        xs, shares = sample.steps()
        if xs.size == 0:
            continue
        (line,) = axes.step(
            np.concatenate([[xs[0]], xs]),
            np.concatenate([[0.0], shares]),
            where="post",
            color=colour,
            label=sample.label,
            gid=f"series{i}",
        )
        handles.append(line)
    axes.set_ylim(0, 1.02)
    return handles
