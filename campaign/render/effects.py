"""Which factors matter, in any format: the analysis of variance of
`campaign.analysis.anova.effects` (aligned text with the main effects under it), or on a
two-level fraction each main effect with its aliases (`campaign.analysis.fraction_effects`)."""

from __future__ import annotations

import json

import pandas as pd
import xarray as xr

from campaign.analysis.anova import BLOCKS, RESIDUAL, effects_table
from campaign.analysis.unfinished import written_before
from campaign.render.cells import one_line
from campaign.render.interval_columns import COMPLETE_REPLICATES, with_interval
from campaign.render.numbers import (
    bounds,
    estimate,
    fixed,
    is_missing,
    number,
    p_value,
    plain,
    signed,
)
from campaign.render.table import Shown, check_format, render

FRACTION_COLUMNS = ["term", "low", "high", "effect", "ci_low", "ci_high", "p_value", "n", "aliases"]


def render_effects(result: xr.Dataset, fmt: str = "text", digits: int | None = None) -> str:
    """The analysis in ``fmt``: text (with the main effects) or any other; in Markdown, LaTeX
    and HTML numbers are written for a paper (``digits`` significant digits of F and of the
    main effects, default 4; a fraction's effects as ``effect ± half-width``)."""
    if result.attrs.get("design") == "fractional":
        return render_fraction_effects(result, fmt, digits)
    frame = effects_table(result)
    fmt = check_format(fmt)
    if fmt in ("csv", "json"):
        return render(with_main_effects(frame, result.attrs), fmt)
    paper = fmt != "text"
    effect = (lambda v: ("+" if v >= 0 else "") + plain(v, digits or 4)) if paper else signed
    attrs = result.attrs
    left_out = left_out_words(attrs)
    which = (
        "the replicates of every cell that have a finite value"
        if left_out
        else "every replicate of every cell"
    )
    above = [
        f"{attrs['metric']}: analysis of variance of {attrs['observations']} values ({which}; "
        "type II sums of squares; share = % of the total sum of squares)"
    ]
    if attrs.get("paired"):
        above.append(
            f"split plot: {attrs['paired']} paired ({_blocks(attrs)}); terms without a paired "
            f"factor are tested against '{BLOCKS}', the others against '{RESIDUAL}'"
        )
    header = ["rank", "term", "df", "share (%)", "F", "p", "tested against"]
    rows = [
        [
            str(row["rank"]) if row["rank"] else "",
            row["term"],
            str(row["df"]),
            fixed(row["share"]),
            "" if is_missing(row["F"]) else number(row["F"], digits or 4),
            p_value(row["p_value"]),
            row["tested_against"],
        ]
        for row in frame.to_dict("records")
    ]
    units = f" [{attrs['units']}]" if attrs.get("units") else ""
    below = [f"main effects{units} (level mean over the other factors' cells - mean of all cells):"]
    for factor, effects_of_levels in json.loads(attrs["main_effects"]).items():
        shown = ", ".join(
            f"{one_line(level)} {effect(value)}" for level, value in effects_of_levels.items()
        )
        below.append(f"  {factor}: {shown}")
    below += written_before(attrs)
    if left_out:  # under the table too in Markdown, LaTeX and HTML, which show no lines above
        if fmt == "text":
            above.insert(1, f"left out: {left_out}")
        else:
            below.append(f"left out: {left_out}")
    table = Shown(header, rows, 2, above=above, below=below, align="rlrrrrl")
    return render(frame, fmt, table)


def with_main_effects(frame: pd.DataFrame, attrs) -> pd.DataFrame:
    """The terms, then a row per level of each factor (term: the factor; level; main_effect
    in ``units``, the metric's): the numbers the text shows under its table, for CSV and
    JSON, whose one table has no place below it."""
    rows = [
        {
            "term": factor,
            "level": _number(level),
            "main_effect": value,
            "units": attrs.get("units", ""),
        }
        for factor, levels in json.loads(attrs["main_effects"]).items()
        for level, value in levels.items()
    ]
    main = pd.DataFrame(rows)
    main["level"] = pd.Series([row["level"] for row in rows], dtype=object)  # 1, not 1.0
    whole = pd.concat([frame, main], ignore_index=True)
    return whole.astype({"rank": "Int64", "df": "Int64"})  # no 1.0 for the terms' rank


def _number(level: str) -> object:
    """A level as its number when it is one (a CSV cell ``-2.0``, not the text ``'-2.0``
    kept from a spreadsheet's formulas), else its text."""
    for kind in (int, float):
        try:
            return kind(level)
        except ValueError:
            pass
    return level


def left_out_words(attrs) -> str:
    """The values the analysis left out, in words ("" when none)."""
    parts = [
        (attrs.get("left_out_failed", 0), "value of a failed task", "values of failed tasks"),
        (
            attrs.get("left_out_missing", 0),
            "value of a task not run (missing)",
            "values of tasks not run (missing)",
        ),
        (
            attrs.get("left_out_infinite", 0),
            "infinite (inf or -inf) value",
            "infinite (inf or -inf) values",
        ),
        (attrs.get("left_out_nan", 0), "NaN value", "NaN values"),
    ]
    words = [f"{n} {one if n == 1 else many}" for n, one, many in parts if n]
    return ", ".join(words)


def _blocks(attrs) -> str:
    """What forms a block of the split plot: tasks sharing a seed, with their values along a
    breakdown's dimension when that is paired (a task's values there share its seed)."""
    dimension = attrs.get("breakdown")
    if not dimension:
        return "tasks sharing a seed form a block"
    if attrs["paired"].split() == [dimension]:
        return f"each task's values per {dimension} form a block"
    return f"tasks sharing a seed, with their values per {dimension}, form a block"


def render_fraction_effects(
    result: xr.Dataset, fmt: str = "text", digits: int | None = None
) -> str:
    """Main effects of a fraction in ``fmt``: text (with what each effect estimates) or any
    other; Markdown, LaTeX and HTML write each effect as ``effect ± half-width``."""
    frame = result.to_dataframe().reset_index()[FRACTION_COLUMNS].rename(columns={"term": "factor"})
    fmt = check_format(fmt)
    attrs = result.attrs
    if fmt in ("csv", "json"):
        return render(with_interval(frame, attrs["confidence"], COMPLETE_REPLICATES), fmt)
    units = f" [{attrs['units']}]" if attrs.get("units") else ""
    level = f"{100 * attrs['confidence']:g}%"
    above = [
        f"{attrs['metric']}: main effects{units} on the {attrs['design_title']} (mean at the "
        f"high level - mean at the low level, within each of {attrs['replicates']} complete "
        f"replicates; {level} interval over them)",
        f"defining relation: {attrs['design_defining_relation']}",
    ]
    above += fraction_left_out(attrs)
    header = ["factor", "low", "high", "effect", "interval", "p", "aliased with (up to 2FI)"]
    rows = [
        [
            row["factor"],
            row["low"],
            row["high"],
            signed(row["effect"]),
            bounds(row["ci_low"], row["ci_high"], 4),
            p_value(row["p_value"]),
            ", ".join(row["aliases"].split()) or "none",
        ]
        for row in frame.to_dict("records")
    ]
    aliased = [row for row in rows if row[-1] != "none"]
    below = []
    if aliased:
        below.append(
            "each effect estimates the sum of the effects aliased with it: "
            + "; ".join(alias_sum(row[0], row[-1].split(", ")) for row in aliased[:3])
            + ("; ..." if len(aliased) > 3 else "")
        )
    below += written_before(attrs)
    if fmt != "text":  # one interval notation: effect ± half-width
        header = [*header[:3], "effect ± half-width", *header[5:]]
        for row, record in zip(rows, frame.to_dict("records")):
            half = (record["ci_high"] - record["ci_low"]) / 2
            row[3:5] = [estimate(record["effect"], half, digits)]
        below = [*above, *below]
        above = []
    table = Shown(header, rows, 3, above=above, below=below, align="lllrlrl")
    return render(frame, fmt, table)


def fraction_left_out(attrs) -> list[str]:
    """The note on a fraction's replicates left out (none when every one is complete)."""
    if not attrs.get("left_out"):
        return []
    return [
        f"{attrs['left_out']} replicates left out: some run of the fraction has no value in them"
    ]


def alias_sum(effect: str, aliases: list[str]) -> str:
    """``a + bd - ce``: an effect and its signed aliases as the sum a fraction estimates."""
    terms = [f"- {w[1:]}" if w.startswith("-") else f"+ {w}" for w in aliases]
    return " ".join([effect, *terms])
