"""Plots and a readable report of a results Dataset.

A plot shows one metric's mean and confidence interval against one factor, one line per level
of another factor; the remaining factors are pooled replicate by replicate, as in a query.
A report is a folder with one such plot per metric and a Markdown page of summary tables,
the model's headline metrics first.
"""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import xarray as xr  # noqa: E402
from matplotlib.backend_bases import FigureCanvasBase  # noqa: E402

from campaign.errors import CampaignError  # noqa: E402
from campaign.query import format_table, summary_table  # noqa: E402
from campaign.results import factors_of, headline_metrics, metrics_of  # noqa: E402


def image_path(out: str | Path) -> Path:
    """Where ``plot --out`` writes: a file of an image format matplotlib writes (``.png`` added
    to a name without a suffix) whose folder exists or can be made: checked before anything
    is read (`save_figure` makes the folder)."""
    path = Path(out).expanduser()
    formats = sorted(FigureCanvasBase.get_supported_filetypes())
    if path.is_dir():
        raise CampaignError(
            f"--out {out} is a folder; give an image file such as {path / 'plot.png'}"
        )
    if not path.suffix:
        path = path.with_name(f"{path.name}.png")
    if path.suffix[1:].lower() not in formats:
        raise CampaignError(
            f"--out {out}: {path.suffix!r} is not an image format matplotlib writes; use "
            f"{', '.join('.' + f for f in formats)}"
        )
    check_folder(path.parent, f"--out {out}")
    return path


def check_folder(folder: Path, what: str) -> None:
    """Refuse a folder path that a file blocks: the path itself or one of its parents."""
    for place in (folder, *folder.parents):
        if place.exists():
            if not place.is_dir():
                raise CampaignError(f"{what}: {place} is a file, not a folder")
            return


def make_folder(folder: Path, what: str) -> None:
    """Make ``folder`` (and its parents) or say in one line why it cannot be."""
    check_folder(folder, what)
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise CampaignError(f"{what}: cannot make the folder {folder}: {error.strerror}") from None


def save_figure(figure, path: Path) -> None:
    """Write a figure (its folder made if missing) and close it."""
    make_folder(path.parent, f"--out {path}")
    try:
        figure.savefig(path, dpi=110)
    except OSError as error:
        raise CampaignError(f"cannot write {path}: {error.strerror}") from None
    finally:
        plt.close(figure)


def default_axes(dataset: xr.Dataset, lines: str | None = None) -> tuple[str | None, str | None]:
    """The factor on the x axis (most levels, numeric first) and the one for the lines; the x
    axis is never ``lines``, the factor already chosen for the lines."""
    factors = [f for f in factors_of(dataset) if f != lines]
    if not factors:
        return None, None
    paired = dataset.attrs.get("paired", "").split()
    ranked = sorted(
        factors,
        key=lambda f: (dataset[f].dtype.kind not in "fiu", -dataset.sizes[f], factors.index(f)),
    )
    x = next((f for f in ranked if f not in paired), ranked[0])
    by = next((f for f in paired if f != x), None)
    if by is None:
        by = next((f for f in factors if f != x), None)
    return x, by


def plot_metric(
    dataset: xr.Dataset,
    metric: str,
    x: str | None = None,
    by: str | None = None,
    where: list[str] | None = None,
    confidence: float | None = None,
):
    """A matplotlib Figure: mean of ``metric`` vs ``x`` with interval bars, a line per ``by``."""
    factors = factors_of(dataset)
    for option, name in (("--x", x), ("--by", by)):
        if name is not None and name not in factors:
            raise CampaignError(
                f"{option} {name!r} is not a factor; factors: {', '.join(factors) or 'none'}"
            )
    if x is not None and x == by:
        raise CampaignError(
            f"--x and --by are both {x!r}: the lines need another factor than the x axis "
            f"(factors: {', '.join(factors)}), or leave --by out"
        )
    default_x, default_by = default_axes(dataset, lines=by)
    x = x or default_x
    by = by if by is not None else (default_by if default_by != x else None)
    if x is None:
        if by is not None:
            raise CampaignError(
                f"--by {by!r} leaves no factor for the x axis: the results have no other one"
            )
        raise CampaignError("the results have no factors to plot against")
    groups = [x] + ([by] if by else [])
    table = summary_table(dataset, [metric], groups, where, confidence)
    attrs = dataset[metric].attrs
    figure, axes = plt.subplots(figsize=(7, 4.5))
    numeric = dataset[x].dtype.kind in "fiu"
    levels = list(dict.fromkeys(table[x]))
    positions = {level: (level if numeric else i) for i, level in enumerate(levels)}
    for label, rows in table.groupby(by, sort=False) if by else [(None, table)]:
        xs = [positions[v] for v in rows[x]]
        axes.errorbar(
            xs,
            rows[f"{metric}_mean"],
            yerr=np.nan_to_num(rows[f"{metric}_half_width"].to_numpy(dtype=float)),
            marker="o",
            capsize=3,
            label=None if label is None else f"{by}={label}",
        )
    if not numeric:
        axes.set_xticks(range(len(levels)), [str(v) for v in levels])
    units = attrs.get("units")
    axes.set_xlabel(x)
    axes.set_ylabel(f"{attrs.get('long_name', metric)}" + (f" [{units}]" if units else ""))
    level = confidence or float(dataset.attrs.get("confidence", 0.95))
    axes.set_title(f"{metric}: mean and {level:.0%} interval", fontsize=10)
    if by:
        axes.legend(fontsize=8)
    axes.grid(alpha=0.3)
    figure.tight_layout()
    return figure


def write_report(dataset: xr.Dataset, folder: Path, metrics: list[str] | None = None) -> Path:
    """A folder with a plot per metric and report.md holding the summary tables (by default
    every metric, the headline ones first)."""
    folder = Path(folder)
    make_folder(folder, "report")
    if not metrics:
        available = metrics_of(dataset)
        headline = [m for m in headline_metrics(dataset) if m in available]
        metrics = headline + [m for m in available if m not in headline]
    x, by = default_axes(dataset)
    lines = [
        f"# {dataset.attrs.get('title', 'campaign results')}",
        "",
        f"Model `{dataset.attrs.get('model')}`, base seed {dataset.attrs.get('base_seed')}, "
        f"{dataset.attrs.get('tasks_ok')} of {dataset.attrs.get('tasks')} tasks ok "
        f"({dataset.attrs.get('tasks_failed')} failed), created {dataset.attrs.get('created')}.",
        "",
    ]
    for metric in metrics:
        if x is not None:
            save_figure(plot_metric(dataset, metric, x, by), folder / f"{metric}.png")
            lines += [f"## {metric}", "", f"![{metric}]({metric}.png)", ""]
        else:
            lines += [f"## {metric}", ""]
        frame = summary_table(dataset, [metric])
        lines += ["```", format_table(frame, [metric], "table"), "```", ""]
    lines += ["## Spec", "", "```yaml", dataset.attrs.get("spec", "").rstrip(), "```", ""]
    path = folder / "report.md"
    try:
        path.write_text("\n".join(lines))
    except OSError as error:
        raise CampaignError(f"cannot write {path}: {error.strerror}") from None
    return path
