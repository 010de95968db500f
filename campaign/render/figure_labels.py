"""The words of a figure: its title, each row's axis labels, category ticks and the legend,
all drawn as written (`literal`)."""

from __future__ import annotations

import math
import textwrap

from campaign.render.figure_layout import Layout
from campaign.render.figure_panels import factor_levels
from campaign.render.figure_style import metric_label, wrapped_title
from campaign.render.figure_ticks import level_ticks
from campaign.render.numbers import level


def heading(figure, text: str, width: float, beside_legend: bool = False) -> None:
    """The figure's title, wrapped to its width (to three quarters of it ``beside_legend``,
    one at the top right, which a wider title would run into)."""
    title = figure.suptitle(text)
    width = width * 0.75 if beside_legend else width
    title.set_text(wrapped_title(text, width, title.get_fontsize()))
    literal(title)


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


def finish(figure, grid, data, layout: Layout, handles, legend_right, numeric) -> bool:
    """Category ticks, x labels on the bottom row only, and one legend for the figure;
    whether that legend is at the top right (`heading` keeps the title clear of it)."""
    rows = len(grid)
    for r, row in enumerate(grid):
        for axes in row:
            if layout.kind != "ecdf" and r < rows - 1:
                axes.set_xlabel("")
            if layout.kind != "ecdf" and (not numeric or layout.kind in ("box", "violin")):
                category_ticks(axes, factor_levels(data, layout.x))
            elif layout.kind != "ecdf":
                integer = data[layout.x].dtype.kind in "iu"
                level_ticks(axes.xaxis, factor_levels(data, layout.x), integer)
    if not layout.by or not handles:
        return False
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
    return legend_right


def category_ticks(axes, levels: list) -> None:
    names = [level(v) for v in levels]
    axes.set_xticks(range(len(levels)), names)
    literal(*axes.get_xticklabels())
    if len(levels) > 6 or max(len(name) for name in names) > 8:
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
