"""The one table renderer: every command's table goes through `render`, whatever the format.

CSV and JSON carry the data (full precision, NaN as empty or null, an infinite value as
``inf`` or the string ``"Infinity"``, JSON having no number for it); aligned text, Markdown,
LaTeX (booktabs) and HTML show `Shown` cells that an adapter formatted for a reader with
`campaign.render.numbers`, the labels first (left-aligned), the numbers after (right-aligned),
notes below the table. Cells are made safe for each reader (`campaign.render.cells`).
"""

from __future__ import annotations

import html
import json
import re
from dataclasses import dataclass, field

import pandas as pd

from campaign.errors import ParameterError
from campaign.render.cells import markdown_cell, one_line, to_csv
from campaign.render.numbers import json_value

FORMATS = ("text", "csv", "json", "markdown", "latex", "html")
ALIASES = {"table": "text"}  # the commands' name of aligned text
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
    "<": r"\textless{}",
    ">": r"\textgreater{}",
}

POWER = re.compile("×10([⁰¹²³⁴⁵⁶⁷⁸⁹⁻]+)")
PLAIN_DIGITS = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹⁻", "0123456789-")


@dataclass(frozen=True)
class Shown:
    """A table as a reader sees it: header and rows of text cells, ``labels`` leading label
    columns, lines above (aligned text only) and notes below. ``align`` ("l"/"r" per column)
    and ``min_widths`` change the aligned text only; ``header_aligned`` aligns each header like
    its column (else left); ``rule`` draws dashes under the header."""

    header: list[str]
    rows: list[list[str]]
    labels: int
    above: list[str] = field(default_factory=list)
    below: list[str] = field(default_factory=list)
    align: str | None = None
    min_widths: dict[int, int] = field(default_factory=dict)
    header_aligned: bool = False
    rule: bool = True
    groups: list[tuple[str, int]] = field(default_factory=list)
    """Labels above the header, each over that many of the value columns (a pivot's levels)."""


def check_format(fmt: str, allowed: tuple[str, ...] = FORMATS) -> str:
    """The format's own name; a format not in ``allowed`` is refused."""
    fmt = ALIASES.get(fmt, fmt)
    if fmt not in allowed:
        raise ParameterError(f"{{fmt}} must be one of {', '.join(allowed)}; got {fmt!r}", "fmt")
    return fmt


def render(frame: pd.DataFrame, fmt: str, shown: Shown | None = None) -> str:
    """``frame`` in ``fmt``, ending in one newline: CSV or JSON of its data, or ``shown`` (by
    default the frame's cells as they are) as aligned text, Markdown, LaTeX or HTML."""
    fmt = check_format(fmt)
    if fmt == "csv":
        return to_csv(frame)
    if fmt == "json":
        records = [{k: json_value(v) for k, v in row.items()} for row in frame.to_dict("records")]
        return json.dumps(records, indent=2, allow_nan=False) + "\n"
    if shown is None:
        shown = Shown([str(c) for c in frame.columns], plain_rows(frame), 0)
    return WRITERS[fmt](shown)


def plain_rows(frame: pd.DataFrame) -> list[list[str]]:
    # to_dict, not iterrows: iterrows would turn integer levels into floats
    return [[str(v) for v in row.values()] for row in frame.to_dict("records")]


def text(shown: Shown) -> str:
    """Columns two spaces apart, each as wide as its widest cell; no trailing spaces."""
    header = [one_line(h) for h in shown.header]
    rows = [[one_line(c) for c in r] for r in shown.rows]
    align = shown.align or "l" * shown.labels + "r" * (len(header) - shown.labels)
    widths = [
        max(len(h), shown.min_widths.get(i, 0), *(len(r[i]) for r in rows))
        for i, h in enumerate(header)
    ]
    at = shown.labels
    for label, span in shown.groups:  # a group's columns as wide as its label, at least
        short = len(one_line(label)) - (sum(widths[at : at + span]) + 2 * (span - 1))
        if short > 0:
            widths[at + span - 1] += short
        at += span

    def line(cells, aligned=True):
        return "  ".join(
            c.rjust(w) if aligned and a == "r" else c.ljust(w)
            for c, w, a in zip(cells, widths, align)
        ).rstrip()

    lines = [*shown.above]
    if shown.groups:
        lines.append(group_line(shown, widths))
    lines.append(line(header, shown.header_aligned))
    if shown.rule:
        lines.append("  ".join("-" * w for w in widths))
    lines += [line(r) for r in rows]
    return "\n".join(lines + shown.below) + "\n"


def alignment(shown: Shown) -> str:
    """Each column's alignment: ``align`` when given, else labels left and numbers right."""
    if shown.align and len(shown.align) == len(shown.header):
        return shown.align
    return "l" * shown.labels + "r" * (len(shown.header) - shown.labels)


def group_line(shown: Shown, widths: list[int]) -> str:
    """The group labels, each over the columns it spans (aligned text)."""
    cells = ["  ".join(" " * w for w in widths[: shown.labels])]
    at = shown.labels
    for label, span in shown.groups:
        width = sum(widths[at : at + span]) + 2 * (span - 1)
        cells.append(one_line(label).ljust(width))
        at += span
    return "  ".join(cells).rstrip()


def grouped_header(shown: Shown) -> list[str]:
    """The header with each value column's group before it, for formats without spans."""
    if not shown.groups:
        return shown.header
    names = [label for label, span in shown.groups for _ in range(span)]
    values = [f"{g}: {h}" for g, h in zip(names, shown.header[shown.labels :])]
    return shown.header[: shown.labels] + values


def markdown(shown: Shown) -> str:
    def line(items):
        return "| " + " | ".join(markdown_cell(i) for i in items) + " |"

    rule = ["---:" if a == "r" else "---" for a in alignment(shown)]
    header = grouped_header(shown)
    lines = [line(header), "| " + " | ".join(rule) + " |", *(line(r) for r in shown.rows)]
    return "\n".join(lines + ([""] + shown.below if shown.below else [])) + "\n"


def latex_escape(text: str) -> str:
    """Text as LaTeX typesets it: special characters escaped, ``±`` and a power of ten
    (``×10⁶``) in math mode."""
    escaped = "".join(LATEX_SPECIAL.get(c, c) for c in one_line(text)).replace("±", r"$\pm$")
    return POWER.sub(lambda m: rf"$\times 10^{{{m.group(1).translate(PLAIN_DIGITS)}}}$", escaped)


def latex(shown: Shown) -> str:
    """A booktabs tabular (``\\usepackage{booktabs}``), the notes as comments."""
    columns = "".join(alignment(shown))
    lines = [rf"\begin{{tabular}}{{{columns}}}", r"\toprule", *latex_groups(shown)]
    lines += [
        " & ".join(latex_escape(h) for h in shown.header) + r" \\",
        r"\midrule",
        *(" & ".join(latex_escape(c) for c in row) + r" \\" for row in shown.rows),
        r"\bottomrule",
        r"\end{tabular}",
    ]
    return "\n".join(lines + [f"% {note}" for note in shown.below]) + "\n"


def latex_groups(shown: Shown) -> list[str]:
    """A header row of centred group labels, each ruled over its columns."""
    if not shown.groups:
        return []
    cells, rules, at = [""] * shown.labels, [], shown.labels + 1
    for label, span in shown.groups:
        cells.append(rf"\multicolumn{{{span}}}{{c}}{{{latex_escape(label)}}}")
        rules.append(rf"\cmidrule(lr){{{at}-{at + span - 1}}}")
        at += span
    return [" & ".join(cells) + r" \\", " ".join(rules)]


def to_html(shown: Shown) -> str:
    def cell(tag, content, i):
        kind = "factor" if i < shown.labels else "number"
        return f'<{tag} class="{kind}">{html.escape(content)}</{tag}>'

    lines = ['<table class="summary">', "<thead>"]
    if shown.groups:
        spans = [f'<th colspan="{shown.labels}"></th>'] if shown.labels else []
        spans += [f'<th colspan="{n}">{html.escape(label)}</th>' for label, n in shown.groups]
        lines.append('<tr class="groups">' + "".join(spans) + "</tr>")
    lines.append("<tr>")
    lines.append("".join(cell("th", h, i) for i, h in enumerate(shown.header)) + "</tr></thead>")
    lines.append("<tbody>")
    lines += [
        "<tr>" + "".join(cell("td", c, i) for i, c in enumerate(r)) + "</tr>" for r in shown.rows
    ]
    lines.append("</tbody></table>")
    lines += [f'<p class="note">{html.escape(note)}</p>' for note in shown.below]
    return "\n".join(lines) + "\n"


WRITERS = {"text": text, "markdown": markdown, "latex": latex, "html": to_html}


def pivot(shown: Shown, column: str) -> Shown:
    """``shown`` with the levels of its label column ``column`` across: a row per combination
    of the other label columns, and per level (in order of appearance) the value columns,
    grouped under ``column = level``; a missing combination's cells are empty."""
    at = check_pivot(shown.header[: shown.labels], column)
    keys = [h for i, h in enumerate(shown.header[: shown.labels]) if i != at]
    values = shown.header[shown.labels :]
    levels: list[str] = []
    rows: dict[tuple[str, ...], dict[str, list[str]]] = {}
    for row in shown.rows:
        key = tuple(c for i, c in enumerate(row[: shown.labels]) if i != at)
        level = row[at]
        if level not in levels:
            levels.append(level)
        rows.setdefault(key, {})[level] = row[shown.labels :]
    empty = [""] * len(values)
    body = [
        [*key, *(cell for level in levels for cell in cells.get(level, empty))]
        for key, cells in rows.items()
    ]
    return Shown(
        [*keys, *(values * len(levels))],
        body,
        len(keys),
        above=shown.above,
        below=shown.below,
        groups=[(f"{column} = {level}", len(values)) for level in levels],
    )


def pivot_frame(frame: pd.DataFrame, column: str, keys: list[str]) -> pd.DataFrame:
    """The data of a pivoted table (CSV, JSON): a row per combination of ``keys``, each other
    column once per level of ``column``, named ``name[column=level]``."""
    check_pivot([*keys, *(c for c in frame.columns if c == column)], column)
    values = [c for c in frame.columns if c != column and c not in keys]
    levels = list(dict.fromkeys(frame[column]))
    parts = []
    for level in levels:
        part = frame[frame[column] == level][[*keys, *values]]
        part = part.rename(columns={v: f"{v}[{column}={level}]" for v in values})
        parts.append(part.set_index(keys) if keys else part.reset_index(drop=True))
    if not keys:
        return pd.concat(parts, axis=1)
    return pd.concat(parts, axis=1).reset_index()


def check_pivot(labels: list[str], column: str) -> int:
    if column not in labels:
        raise ParameterError(
            f"{{pivot}} {column!r} is not a factor of the table's rows; rows: "
            f"{', '.join(labels) or 'none'} (a query or comparison given the pivot groups by it)",
            "pivot",
        )
    return labels.index(column)
