"""The summary table of `campaign.analysis.query.summary_table` in any format.

Aligned text (what `campaign query` and `campaign run` print): per metric the mean ± the
interval's half-width, a count of replicates, and notes on replicates left out and NaN values.
Paper formats (Markdown, LaTeX, HTML): per metric the mean ± half-width and the interval
itself, the metric's units in its header. CSV and JSON: every column at full precision.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from campaign.analysis.query import factor_columns
from campaign.render.numbers import bounds, mean_pm
from campaign.render.table import Shown, check_format, render


def column_total(frame: pd.DataFrame, column: str) -> int:
    return int(frame[column].sum()) if column in frame else 0


def counts(row: dict[str, Any], metrics: list[str], stat: str) -> str:
    """One count per row: the metrics' counts joined by '/' when they differ."""
    values = {int(row[f"{m}_{stat}"]) for m in metrics if f"{m}_{stat}" in row}
    return "/".join(str(v) for v in sorted(values))


def render_summary(
    frame: pd.DataFrame,
    metrics: list[str],
    fmt: str = "text",
    units: dict[str, str] | None = None,
    confidence: float = 0.95,
    max_rows: int = 0,
) -> str:
    """The summary table in ``fmt``; text shows at most ``max_rows`` rows (0: all)."""
    fmt = check_format(fmt)
    if fmt == "text":
        return render(frame, fmt, text_table(frame, metrics, max_rows))
    if fmt in ("csv", "json"):
        return render(frame, fmt)
    return render(frame, fmt, paper_table(frame, metrics, units or {}, confidence))


def text_table(frame: pd.DataFrame, metrics: list[str], max_rows: int = 0) -> Shown:
    factors = factor_columns(frame, metrics)
    shown = frame if not max_rows or len(frame) <= max_rows else frame.head(max_rows)
    left_out = {m: column_total(frame, f"{m}_left_out") for m in metrics}
    any_left_out = any(left_out.values())
    rows = []
    for row in shown.to_dict("records"):  # iterrows would turn integer levels into floats
        cells = [str(row[c]) for c in factors]
        cells += [mean_pm(row[f"{m}_mean"], row[f"{m}_half_width"]) for m in metrics]
        cells.append(counts(row, metrics, "n"))
        if any_left_out:
            cells.append(counts(row, metrics, "left_out"))
        rows.append(cells)
    header = [*factors, *metrics, "n", *(["left out"] if any_left_out else [])]
    below = []
    if len(shown) < len(frame):
        below.append(f"... {len(frame) - len(shown)} more rows (campaign query shows them all)")
    for metric in metrics:
        if left_out[metric]:
            below.append(
                f"{metric}: {left_out[metric]} replicates left out (some of the pooled cells "
                "have no value in them: failed, missing or NaN); means and n are over complete "
                "replicates"
            )
    for metric in metrics:
        undefined = column_total(frame, f"{metric}_nan")
        if undefined:
            below.append(
                f"{metric}: {undefined} values NaN (finished tasks, the value undefined); left "
                "out of the means and n"
            )
    return Shown(header, rows, len(factors), below=below)


def paper_table(
    frame: pd.DataFrame, metrics: list[str], units: dict[str, str], confidence: float
) -> Shown:
    factors = factor_columns(frame, metrics)
    header = list(factors)
    for metric in metrics:
        unit = units.get(metric)
        header.append(f"{metric} [{unit}]" if unit and unit != "1" else metric)
        header.append(f"{confidence:.0%} interval")
    header.append("n")
    rows = []
    for row in frame.to_dict("records"):  # iterrows would turn integer levels into floats
        line = [str(row[f]) for f in factors]
        for metric in metrics:
            line.append(mean_pm(row[f"{metric}_mean"], row[f"{metric}_half_width"]))
            line.append(bounds(row[f"{metric}_ci_low"], row[f"{metric}_ci_high"]))
        line.append(counts(row, metrics, "n"))
        rows.append(line)
    notes = []
    for metric in metrics:
        left_out = column_total(frame, f"{metric}_left_out")
        if left_out:
            notes.append(
                f"{metric}: {left_out} replicates left out (some pooled cell has no value in "
                "them); means and n are over complete replicates"
            )
        undefined = column_total(frame, f"{metric}_nan")
        if undefined:
            notes.append(f"{metric}: {undefined} values NaN (undefined), left out")
    return Shown(header, rows, len(factors), below=notes)
