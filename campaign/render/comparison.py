"""A comparison of `campaign.analysis.comparison.compare` in any format: aligned text with the
line saying how the intervals were made and the warnings a reader needs, or its data."""

from __future__ import annotations

import xarray as xr

from campaign.analysis.comparison import comparison_table, notes
from campaign.analysis.stats import percent
from campaign.render.cells import one_line
from campaign.render.interval_columns import PAIRED_DIFFERENCES, WELCH, with_interval
from campaign.render.numbers import bounds, estimate, mean_pm, number, plain, resolving
from campaign.render.table import Shown, check_format, pivot, pivot_frame, render


def render_comparison(
    result: xr.Dataset, fmt: str = "text", digits: int | None = None, pivot: str | None = None
) -> str:
    """The comparison in ``fmt``: text (with its method line and warnings) or any other.
    Markdown, LaTeX and HTML show each difference and ratio as ``value ± half-width``, to
    the digits its interval supports (or ``digits`` significant digits); ``pivot``: a factor
    whose levels go across, as groups of columns."""
    frame = comparison_table(result)
    fmt = check_format(fmt)
    if fmt in ("csv", "json"):
        if pivot:
            keys = [d for d in result["difference"].dims if d != pivot]
            frame = pivot_frame(frame, pivot, keys)
        method = PAIRED_DIFFERENCES if result.attrs["paired"] else WELCH
        return render(with_interval(frame, result.attrs["confidence"], method), fmt)
    shown = paper_table(result, frame, digits) if fmt != "text" else text_table(result, frame)
    return render(frame, fmt, pivot_table(shown, pivot) if pivot else shown)


def paper_table(result: xr.Dataset, frame, digits: int | None) -> Shown:
    """One notation for every interval: ``value ± half-width``; the method in the notes."""
    attrs = result.attrs
    factor, baseline = attrs["factor"], one_line(attrs["baseline"])
    dims = list(result["difference"].dims)
    units = result["mean"].attrs.get("units")
    unit_text = f" [{units}]" if units else ""
    header = [*dims, "n", f"{baseline} (baseline){unit_text}", f"mean{unit_text}"]
    header += [f"difference{unit_text}", "ratio"]
    rows = []
    for record in frame.to_dict("records"):
        ratio_half = (record["ratio_high"] - record["ratio_low"]) / 2
        half = record["difference_half_width"]  # the means to its place, as the difference
        rows.append(
            [
                *(str(record[d]) for d in dims),
                counted(record, attrs),
                plain(
                    record["baseline_mean"],
                    digits or resolving(record["baseline_mean"], half, 4, 2),
                ),
                plain(record["mean"], digits or resolving(record["mean"], half, 4, 2)),
                estimate(record["difference"], record["difference_half_width"], digits),
                estimate(record["ratio"], ratio_half, digits),
            ]
        )
    below = [
        f"{attrs['metric']}: each level of {factor} against {baseline}; difference = level - "
        f"{baseline}, ratio = level / {baseline} (ratio of the means), each ± the half-width "
        f"of its {percent(attrs['confidence'])} interval",
        attrs["method"],
    ]
    if attrs.get("pooled"):
        below.append(f"pooled replicate by replicate over: {attrs['pooled']}")
    return Shown(header, rows, len(dims), below=below + notes(result))


def pivot_table(shown: Shown, factor: str) -> Shown:
    return pivot(shown, factor)


def counted(record: dict, attrs: dict) -> str:
    """Pairs, or replicates of the level / of the baseline when they differ (Welch)."""
    if attrs["paired"] or record["n"] == record["n_baseline"]:
        return f"{record['n']}"
    return f"{record['n']}/{record['n_baseline']}"


def text_table(result: xr.Dataset, frame) -> Shown:
    attrs = result.attrs
    factor, baseline = attrs["factor"], one_line(attrs["baseline"])
    dims = list(result["difference"].dims)
    units = result["mean"].attrs.get("units")
    unit_text = f" [{units}]" if units else ""
    header = [
        *dims,
        "n",
        f"{baseline} (baseline)",
        "mean",
        f"difference{unit_text}",
        "difference interval",
        "ratio",
        "ratio interval",
    ]
    rows = []
    for record in frame.to_dict("records"):
        half = record["difference_half_width"]
        low, high = record["difference_low"], record["difference_high"]
        ratio_half = (record["ratio_high"] - record["ratio_low"]) / 2
        ratio_digits = resolving(record["ratio"], ratio_half, 4, 2)
        rows.append(
            [
                *(str(record[d]) for d in dims),
                counted(record, attrs),
                number(record["baseline_mean"], resolving(record["baseline_mean"], half, 6, 3)),
                number(record["mean"], resolving(record["mean"], half, 6, 3)),
                mean_pm(record["difference"], half),
                bounds(low, high, resolving(max(abs(low), abs(high)), half, 4, 2), "-"),
                number(record["ratio"], ratio_digits),
                bounds(record["ratio_low"], record["ratio_high"], ratio_digits, "-"),
            ]
        )
    above = [
        f"{attrs['metric']}: each level of {factor} against {baseline}; difference = level - "
        f"{baseline}, ratio = level / {baseline} (ratio of the means)",
        attrs["method"],
    ]
    if attrs.get("pooled"):
        above.append(f"pooled replicate by replicate over: {attrs['pooled']}")
    return Shown(header, rows, len(dims), above=above, below=notes(result))
