"""Summary tables for a paper or a page: Markdown, LaTeX (booktabs) and HTML.

The rows are those of `campaign.analysis.query.summary_table`; per metric, the mean ± the interval's
half-width, then the interval itself, with the metric's units in its header; a last column
counts the replicates. Notes (replicates left out, NaN values) follow the table.
"""

from __future__ import annotations

import html

import numpy as np
import pandas as pd

from campaign.analysis.query import COLUMN_STATS, _column_total, _counts
from campaign.analysis.ranking import ranking_rows
from campaign.errors import CampaignError
from campaign.render.cells import markdown_cell, one_line, to_csv

TABLE_FORMATS = ("markdown", "latex", "html")
LATEX_SPECIAL = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
}


def number(value: float, digits: int = 6) -> str:
    """A value as the tables write it: ``digits`` significant digits, ``nan`` for none."""
    return "nan" if value is None or np.isnan(value) else f"{value:.{digits}g}"


def cells(frame: pd.DataFrame, metrics: list[str], units: dict[str, str], confidence: float):
    """Header and rows of plain text cells, and the notes under the table."""
    factors = [
        c
        for c in frame.columns
        if not any(c.startswith(f"{m}_") and c[len(m) + 1 :] in COLUMN_STATS for m in metrics)
    ]
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
            mean, half = row[f"{metric}_mean"], row[f"{metric}_half_width"]
            low, high = row[f"{metric}_ci_low"], row[f"{metric}_ci_high"]
            line.append(number(mean) if np.isnan(half) else f"{number(mean)} ± {number(half, 3)}")
            line.append("" if np.isnan(low) else f"[{number(low)}, {number(high)}]")
        line.append(_counts(row, metrics, "n"))
        rows.append(line)
    notes = []
    for metric in metrics:
        left_out = _column_total(frame, f"{metric}_left_out")
        if left_out:
            notes.append(
                f"{metric}: {left_out} replicates left out (some pooled cell has no value in "
                "them); means and n are over complete replicates"
            )
        undefined = _column_total(frame, f"{metric}_nan")
        if undefined:
            notes.append(f"{metric}: {undefined} values NaN (undefined), left out")
    return header, rows, len(factors), notes


def render(
    frame: pd.DataFrame,
    metrics: list[str],
    fmt: str,
    units: dict[str, str] | None = None,
    confidence: float = 0.95,
) -> str:
    """The summary table in ``fmt``: markdown, latex or html."""
    if fmt not in TABLE_FORMATS:
        raise CampaignError(f"--format {fmt!r} is not allowed; use {', '.join(TABLE_FORMATS)}")
    header, rows, factors, notes = cells(frame, metrics, units or {}, confidence)
    return {"markdown": markdown, "latex": latex, "html": to_html}[fmt](
        header, rows, factors, notes
    )


def format_ranking_as(result, fmt: str, notes: list[str]) -> str:
    """The ranking of `campaign.analysis.ranking.degradation` in ``fmt``: csv or json (numbers, the
    notes left out: they are for a reader), or markdown, latex or html (two decimals, the
    notes under the table)."""
    header, rows = ranking_rows(result)
    if fmt in ("csv", "json"):
        frame = pd.DataFrame(rows, columns=header)
        frame["rank"] = frame["rank"].astype("Int64")
        if fmt == "csv":
            return to_csv(frame)
        return frame.to_json(orient="records", indent=1) + "\n"
    if fmt not in TABLE_FORMATS:
        raise CampaignError(
            f"--format {fmt!r} is not allowed; use csv, json, {', '.join(TABLE_FORMATS)}"
        )
    text = [
        ["-" if np.isnan(rank) else str(int(rank)), level, *(f"{x:.2f}" for x in numbers), str(n)]
        for rank, level, *numbers, n in rows
    ]
    return {"markdown": markdown, "latex": latex, "html": to_html}[fmt](header, text, 2, notes)


def markdown(header: list[str], rows: list[list[str]], factors: int, notes: list[str]) -> str:
    def line(items):
        return "| " + " | ".join(markdown_cell(i) for i in items) + " |"

    rule = ["---"] * factors + ["---:"] * (len(header) - factors)
    text = [line(header), "| " + " | ".join(rule) + " |", *(line(r) for r in rows)]
    return "\n".join(text + ([""] + notes if notes else [])) + "\n"


def latex_escape(text: str) -> str:
    return "".join(LATEX_SPECIAL.get(c, c) for c in one_line(text)).replace("±", r"$\pm$")


def latex(header: list[str], rows: list[list[str]], factors: int, notes: list[str]) -> str:
    """A booktabs tabular (``\\usepackage{booktabs}``)."""
    columns = "l" * factors + "r" * (len(header) - factors)
    text = [
        rf"\begin{{tabular}}{{{columns}}}",
        r"\toprule",
        " & ".join(latex_escape(h) for h in header) + r" \\",
        r"\midrule",
        *(" & ".join(latex_escape(c) for c in row) + r" \\" for row in rows),
        r"\bottomrule",
        r"\end{tabular}",
    ]
    return "\n".join(text + [f"% {note}" for note in notes]) + "\n"


def to_html(header: list[str], rows: list[list[str]], factors: int, notes: list[str]) -> str:
    def cell(tag, text, i):
        kind = "factor" if i < factors else "number"
        return f'<{tag} class="{kind}">{html.escape(text)}</{tag}>'

    text = ['<table class="summary">', "<thead><tr>"]
    text.append("".join(cell("th", h, i) for i, h in enumerate(header)) + "</tr></thead>")
    text.append("<tbody>")
    text += ["<tr>" + "".join(cell("td", c, i) for i, c in enumerate(r)) + "</tr>" for r in rows]
    text.append("</tbody></table>")
    text += [f'<p class="note">{html.escape(note)}</p>' for note in notes]
    return "\n".join(text) + "\n"
