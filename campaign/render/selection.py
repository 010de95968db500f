"""A selection's outcome in any format: the guarantee, a row per group (the system selected,
how, at what cost against Rinott's count) and a row per system (its state, the stage that
decided it, its replicates and mean), from `campaign.analysis.selection_report`."""

from __future__ import annotations

import pandas as pd

from campaign.analysis.selection_report import DECIDED, SelectionReport
from campaign.render.cells import one_line
from campaign.render.numbers import fixed, is_missing, number
from campaign.render.table import Shown, check_format, render

GROUP_COLUMNS = ["selected", "ending", "stages", "delta", "tasks", "rinott", "saved"]


def render_selection(report: SelectionReport, fmt: str = "text", digits: int | None = None) -> str:
    """Text (both tables, the guarantee above and the notes below) or any other format: CSV
    and JSON one row per system with its group's columns, at full precision, then the
    guarantee's probability of correct selection and the procedure."""
    fmt = check_format(fmt)
    if fmt in ("csv", "json"):
        return render(machine_table(report), fmt)
    groups, systems = group_shown(report, digits, fmt == "text"), system_shown(report, digits)
    return render(report.groups, fmt, groups) + "\n" + render(report.systems, fmt, systems)


def machine_table(report: SelectionReport) -> pd.DataFrame:
    """A row per system, its group's outcome beside it, then the guarantee's ``pcs`` (empty
    for OCBA, which has none) and the ``procedure``: a table passed on alone says them."""
    levels = levels_of(report)
    group = report.groups.rename(columns={c: f"group_{c}" for c in [*GROUP_COLUMNS, "apcs"]})
    if not levels:
        table = report.systems.assign(**{c: group[c].iloc[0] for c in group.columns})
    else:
        table = report.systems.merge(group, on=levels, how="left")
    selection = report.selection
    pcs = float("nan") if selection.procedure == "ocba" else selection.pcs
    return table.assign(pcs=pcs, procedure=selection.procedure)


def levels_of(report: SelectionReport) -> list[str]:
    """The factors that name a group (all but the systems' own)."""
    return [c for c in report.groups.columns if c not in (*GROUP_COLUMNS, "apcs")]


def group_shown(report: SelectionReport, digits: int | None, text: bool) -> Shown:
    """The group table; the guarantee above it in aligned text, else first under it."""
    levels = levels_of(report)
    ocba = report.selection.procedure == "ocba"
    header = [*levels, *GROUP_COLUMNS[:-1], "saved (%)", *(["approx. PCS"] if ocba else [])]
    rows = []
    for row in report.groups.to_dict("records"):
        cells = [str(row[level]) for level in levels]
        cells += [str(row["selected"]) or "-", row["ending"], str(row["stages"])]
        rinott = "" if pd.isna(row["rinott"]) else f"{row['rinott']:,}"
        cells += [number(row["delta"], digits or 6), f"{row['tasks']:,}", rinott]
        cells.append("" if is_missing(row["saved"]) else fixed(100 * row["saved"], 1))
        if ocba:
            cells.append("" if is_missing(row["apcs"]) else fixed(row["apcs"], 3))
        rows.append(cells)
    align = "l" * (len(levels) + 2) + "r" * (len(header) - len(levels) - 2)
    total = f"tasks: {report.tasks:,} in all" + rinott_words(report) + saved_words(report)
    guarantee = [one_line(line) for line in report.guarantee]
    return Shown(
        header,
        rows,
        len(levels) + 2,
        above=[*guarantee, ""] if text else [],
        below=[total] if text else [*guarantee, total],
        align=align,
    )


def rinott_words(report: SelectionReport) -> str:
    """Rinott's count over the groups past their first stage (the others have none yet)."""
    counted = report.groups["rinott"].notna()
    if not counted.any():
        return ""
    words = f"; Rinott's count {report.rinott:,}"
    if not counted.all():
        past = int(counted.sum())
        words += f" (of the {past} {'group' if past == 1 else 'groups'} past their first stage)"
    return words


def saved_words(report: SelectionReport) -> str:
    """The share of Rinott's count saved, over the groups that decided: one stopped at
    max_replicates has not the guarantee Rinott's count buys, one still running or waiting
    may need many more tasks."""
    decided = report.groups[report.groups["ending"].isin(DECIDED)]
    rinott = int(decided["rinott"].sum())
    if not rinott:
        return ""
    saved = fixed(100 * (1 - int(decided["tasks"].sum()) / rinott), 1)
    if len(decided) == len(report.groups):
        return f" ({saved}% saved)"
    groups = "group" if len(decided) == 1 else "groups"
    return f" ({saved}% saved in the {len(decided)} {groups} that decided)"


def system_shown(report: SelectionReport, digits: int | None) -> Shown:
    frame = report.systems
    metric = report.selection.metric
    labels = [c for c in frame.columns if c not in ("state", "stage", "replicates", metric)]
    header = [*labels, "state", "stage", "replicates", f"{metric} (mean)"]
    rows = [
        [
            *(str(row[label]) for label in labels),
            row["state"],
            "" if row["stage"] < 0 else str(row["stage"]),
            str(row["replicates"]),
            number(row[metric], digits or 6),
        ]
        for row in frame.to_dict("records")
    ]
    align = "l" * (len(labels) + 1) + "rrr"
    return Shown(header, rows, len(labels) + 1, below=report.notes, align=align)
