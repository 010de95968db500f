"""The one table renderer: every command's table goes through `render`, whatever the format.

CSV and JSON carry the data (full precision, NaN as empty or null); aligned text, Markdown,
LaTeX (booktabs) and HTML show `Shown` cells that an adapter formatted for a reader with
`campaign.render.numbers`, the labels first (left-aligned), the numbers after (right-aligned),
notes below the table. Cells are made safe for each reader (`campaign.render.cells`).
"""

from __future__ import annotations

import html
import json
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
}


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
        return json.dumps(records, indent=2) + "\n"
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

    def line(cells, aligned=True):
        return "  ".join(
            c.rjust(w) if aligned and a == "r" else c.ljust(w)
            for c, w, a in zip(cells, widths, align)
        ).rstrip()

    lines = [*shown.above, line(header, shown.header_aligned)]
    if shown.rule:
        lines.append("  ".join("-" * w for w in widths))
    lines += [line(r) for r in rows]
    return "\n".join(lines + shown.below) + "\n"


def markdown(shown: Shown) -> str:
    def line(items):
        return "| " + " | ".join(markdown_cell(i) for i in items) + " |"

    rule = ["---"] * shown.labels + ["---:"] * (len(shown.header) - shown.labels)
    lines = [line(shown.header), "| " + " | ".join(rule) + " |", *(line(r) for r in shown.rows)]
    return "\n".join(lines + ([""] + shown.below if shown.below else [])) + "\n"


def latex_escape(text: str) -> str:
    return "".join(LATEX_SPECIAL.get(c, c) for c in one_line(text)).replace("±", r"$\pm$")


def latex(shown: Shown) -> str:
    """A booktabs tabular (``\\usepackage{booktabs}``), the notes as comments."""
    columns = "l" * shown.labels + "r" * (len(shown.header) - shown.labels)
    lines = [
        rf"\begin{{tabular}}{{{columns}}}",
        r"\toprule",
        " & ".join(latex_escape(h) for h in shown.header) + r" \\",
        r"\midrule",
        *(" & ".join(latex_escape(c) for c in row) + r" \\" for row in shown.rows),
        r"\bottomrule",
        r"\end{tabular}",
    ]
    return "\n".join(lines + [f"% {note}" for note in shown.below]) + "\n"


def to_html(shown: Shown) -> str:
    def cell(tag, content, i):
        kind = "factor" if i < shown.labels else "number"
        return f'<{tag} class="{kind}">{html.escape(content)}</{tag}>'

    lines = ['<table class="summary">', "<thead><tr>"]
    lines.append("".join(cell("th", h, i) for i, h in enumerate(shown.header)) + "</tr></thead>")
    lines.append("<tbody>")
    lines += [
        "<tr>" + "".join(cell("td", c, i) for i, c in enumerate(r)) + "</tr>" for r in shown.rows
    ]
    lines.append("</tbody></table>")
    lines += [f'<p class="note">{html.escape(note)}</p>' for note in shown.below]
    return "\n".join(lines) + "\n"


WRITERS = {"text": text, "markdown": markdown, "latex": latex, "html": to_html}
