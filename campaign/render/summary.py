"""The summary table of `campaign.analysis.query.summary_table` in any format.

Aligned text (what `campaign query` and `campaign run` print): per metric the mean ± the
interval's half-width, a count of replicates, and notes on replicates left out, NaN values
and intervals over fewer than 5 replicates.
Paper formats (Markdown, LaTeX, HTML): per metric the mean ± half-width, to the digits its
interval supports (`numbers.estimate`), the metric's units in its header, what the numbers are
in a note. Any format can pivot: a factor's levels across, as groups of columns. CSV and JSON:
every column at full precision, then the intervals' level and method
(`campaign.render.interval_columns`).
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from campaign.analysis.query import factor_columns
from campaign.analysis.stats import few_replicates_warning, percent
from campaign.render.interval_columns import REPLICATES, with_interval
from campaign.render.numbers import estimate, mean_pm
from campaign.render.table import Shown, check_format, pivot, pivot_frame, render


def column_total(frame: pd.DataFrame, column: str) -> int:
    return int(frame[column].sum()) if column in frame else 0


def fewest_replicates(frame: pd.DataFrame, metrics: list[str]) -> list[str]:
    """The warnings when some interval of the table rests on too few replicates (a mean of
    one replicate has no interval: it is counted apart; one of none has nothing to warn of)."""
    counts = [frame[f"{m}_n"] for m in metrics if f"{m}_n" in frame]
    found = [int(n) for column in counts for n in column if n > 1]
    lines = [few_replicates_warning(min(found))] if found else []
    single = sum(int(n) == 1 for column in counts for n in column)
    if single:
        lines.append(
            f"warning: {single} mean(s) rest on 1 replicate, without an interval; add replicates"
        )
    return [line for line in lines if line]


def interval_note(confidence: float) -> str:
    """What the numbers of a summary table are."""
    return (
        f"mean ± half-width of the {percent(confidence)} confidence interval (Student t) over n "
        "replicates"
    )


def unfinished_notes(frame: pd.DataFrame) -> list[str]:
    """The queried cells' tasks that are not in the means: failed or not run (a query's
    ``tasks_failed`` and ``tasks_missing``), why results.nc lacks some (``incomplete``), and
    the cells that stopped at max_replicates short of a precision target
    (``precision_unmet``)."""
    failed, missing = frame.attrs.get("tasks_failed", 0), frame.attrs.get("tasks_missing", 0)
    notes = []
    parts = [f"{failed} tasks failed"] * bool(failed)
    parts += [f"{missing}{'' if failed else ' tasks'} not run (missing)"] * bool(missing)
    if parts:
        notes.append(
            f"{' and '.join(parts)} in these cells: left out of the means and n (campaign "
            "status lists them)"
        )
    if frame.attrs.get("incomplete"):
        notes.append(f"results.nc {frame.attrs['incomplete']}")
    unmet = frame.attrs.get("precision_unmet", 0)
    if unmet:
        cells, its = (
            ("1 cell", "its interval is")
            if unmet == 1
            else (f"{unmet} cells", "their intervals are")
        )
        notes.append(
            f"{cells} in these rows stopped at max_replicates without meeting the precision "
            f"target ({frame.attrs['precision_target']}): {its} wider than the target "
            "(precision_state in results.nc)"
        )
    return notes


def counts(row: dict[str, Any], metrics: list[str], stat: str) -> str:
    """One count per row: the metrics' counts joined by '/' when they differ."""
    values = {int(row[f"{m}_{stat}"]) for m in metrics if f"{m}_{stat}" in row}
    return "/".join(str(v) for v in sorted(values))


def render_summary(
    frame: pd.DataFrame,
    metrics: list[str],
    fmt: str = "text",
    units: dict[str, str] | None = None,
    confidence: float | None = None,
    max_rows: int = 0,
    digits: int | None = None,
    pivot: str | None = None,
) -> str:
    """The summary table in ``fmt``; text shows at most ``max_rows`` rows (0: all).
    ``confidence``: the intervals' level, which the other formats always say (95 % when not
    given) and text says under the table when given (a table under a heading that says it
    leaves it out); ``digits``: significant digits of the means (default: from each
    interval); ``pivot``: a factor whose levels go across, as groups of columns."""
    fmt = check_format(fmt)
    factors = factor_columns(frame, metrics)
    if fmt in ("csv", "json"):
        if pivot:
            frame = pivot_frame(frame, pivot, [f for f in factors if f != pivot])
        level = confidence if confidence is not None else frame.attrs.get("confidence", 0.95)
        return render(with_interval(frame, level, REPLICATES), fmt)
    if fmt == "text":
        shown = text_table(frame, metrics, 0 if pivot else max_rows, digits)
        if confidence is not None:
            shown.below[:0] = [interval_note(confidence), *unfinished_notes(frame)]
    else:
        shown = paper_table(frame, metrics, units or {}, confidence or 0.95, digits)
    return render(frame, fmt, pivot_table(shown, pivot) if pivot else shown)


def text_table(
    frame: pd.DataFrame, metrics: list[str], max_rows: int = 0, digits: int | None = None
) -> Shown:
    factors = factor_columns(frame, metrics)
    shown = frame if not max_rows or len(frame) <= max_rows else frame.head(max_rows)
    left_out = {m: column_total(frame, f"{m}_left_out") for m in metrics}
    any_left_out = any(left_out.values())
    rows = []
    for row in shown.to_dict("records"):  # iterrows would turn integer levels into floats
        cells = [str(row[c]) for c in factors]
        if digits is None:
            cells += [mean_pm(row[f"{m}_mean"], row[f"{m}_half_width"]) for m in metrics]
        else:
            cells += [estimate(row[f"{m}_mean"], row[f"{m}_half_width"], digits) for m in metrics]
        cells.append(counts(row, metrics, "n"))
        if any_left_out:
            cells.append(counts(row, metrics, "left_out"))
        rows.append(cells)
    header = [*factors, *metrics, "n", *(["left out"] if any_left_out else [])]
    below = []
    if len(shown) < len(frame):
        below.append(f"... {len(frame) - len(shown)} more rows (campaign query shows them all)")
    below += value_notes(frame, metrics)
    return Shown(header, rows, len(factors), below=below)


def value_notes(frame: pd.DataFrame, metrics: list[str]) -> list[str]:
    """The notes under the text table on the values its means lack (replicates left out, NaN
    or absent values) and on intervals over too few replicates: what a CSV or JSON reader gets
    on stderr too (`campaign.render.data_notes`)."""
    notes = []
    for metric in metrics:
        left_out = column_total(frame, f"{metric}_left_out")
        if left_out:
            notes.append(
                f"{metric}: {left_out} replicates left out (some of the pooled cells "
                "have no value in them: failed, missing or NaN); means and n are over complete "
                "replicates"
            )
    for metric in metrics:
        undefined = column_total(frame, f"{metric}_nan")
        if undefined:
            notes.append(
                f"{metric}: {undefined} values NaN (finished tasks, the value undefined); left "
                "out of the means and n"
            )
        absent = column_total(frame, f"{metric}_absent")
        if absent:
            notes.append(
                f"{metric}: {absent} values absent (finished tasks that did not return it); "
                "left out of the means and n"
            )
    return notes + fewest_replicates(frame, metrics)


def paper_table(
    frame: pd.DataFrame,
    metrics: list[str],
    units: dict[str, str],
    confidence: float,
    digits: int | None = None,
) -> Shown:
    """Per metric one column, ``mean ± half-width`` to the digits its interval supports;
    the notes below say what the numbers are."""
    factors = factor_columns(frame, metrics)
    header = list(factors)
    for metric in metrics:
        unit = units.get(metric)
        header.append(f"{metric} [{unit}]" if unit and unit != "1" else metric)
    header.append("n")
    rows = []
    for row in frame.to_dict("records"):  # iterrows would turn integer levels into floats
        line = [str(row[f]) for f in factors]
        for metric in metrics:
            line.append(estimate(row[f"{metric}_mean"], row[f"{metric}_half_width"], digits))
        line.append(counts(row, metrics, "n"))
        rows.append(line)
    notes = [interval_note(confidence), *unfinished_notes(frame)]
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
        absent = column_total(frame, f"{metric}_absent")
        if absent:
            notes.append(f"{metric}: {absent} values absent (not returned), left out")
    notes += fewest_replicates(frame, metrics)
    return Shown(header, rows, len(factors), below=notes)


def pivot_table(shown: Shown, factor: str) -> Shown:
    """The table with ``factor``'s levels across; ``n`` stays per group of columns."""
    return pivot(shown, factor)
