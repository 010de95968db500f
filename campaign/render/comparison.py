"""A comparison of `campaign.analysis.comparison.compare` in any format: aligned text with the
line saying how the intervals were made and the warnings a reader needs, or its data."""

from __future__ import annotations

import xarray as xr

from campaign.analysis.comparison import comparison_table, notes
from campaign.render.cells import one_line
from campaign.render.numbers import bounds, mean_pm, number
from campaign.render.table import Shown, check_format, render


def render_comparison(result: xr.Dataset, fmt: str = "text") -> str:
    """The comparison in ``fmt``: text (with its method line and warnings) or any other."""
    frame = comparison_table(result)
    if check_format(fmt) in ("csv", "json"):
        return render(frame, fmt)
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
        count = (
            f"{record['n']}"
            if attrs["paired"] or record["n"] == record["n_baseline"]
            else f"{record['n']}/{record['n_baseline']}"
        )
        rows.append(
            [
                *(str(record[d]) for d in dims),
                count,
                number(record["baseline_mean"]),
                number(record["mean"]),
                mean_pm(record["difference"], record["difference_half_width"]),
                bounds(record["difference_low"], record["difference_high"], 4, "-"),
                number(record["ratio"], 4),
                bounds(record["ratio_low"], record["ratio_high"], 4, "-"),
            ]
        )
    above = [
        f"{attrs['metric']}: each level of {factor} against {baseline}; difference = level - "
        f"{baseline}, ratio = level / {baseline} (ratio of the means)",
        attrs["method"],
    ]
    if attrs.get("pooled"):
        above.append(f"pooled replicate by replicate over: {attrs['pooled']}")
    shown = Shown(header, rows, len(dims), above=above, below=notes(result))
    return render(frame, fmt, shown)
