"""The ranking of `campaign.analysis.ranking.degradation` in any format: sorted by rank, the
percentages with two decimals for a reader (more when the narrowest interval needs them), at
full precision in CSV and JSON (whose readers get the numbers, not the notes)."""

from __future__ import annotations

import math
from collections.abc import Sequence

import pandas as pd
import xarray as xr

from campaign.analysis.ranking import ranking_rows
from campaign.analysis.ranking_text import Ranking
from campaign.render.interval_columns import PAIRED_REPLICATES, REPLICATES, with_interval
from campaign.render.numbers import count, estimate, fixed, half_width_place, plain
from campaign.render.table import Shown, check_format, render


def ranking_frame(result: xr.Dataset) -> pd.DataFrame:
    """The rows of `ranking_rows` as a table; the rank an integer (empty when unranked)."""
    header, rows = ranking_rows(result)
    frame = pd.DataFrame(rows, columns=header)
    frame["rank"] = frame["rank"].astype("Int64")
    return frame


def with_levels(frame: pd.DataFrame, result: xr.Dataset) -> pd.DataFrame:
    """``frame`` with the factor's levels as they are (-0.5 a number, as in every other CSV
    and JSON), not the text the aligned table shows."""
    factor = frame.columns[1]
    values = [value.item() if hasattr(value, "item") else value for value in result[factor].values]
    by_text = {str(value): value for value in values}
    levels = pd.Series([by_text[text] for text in frame[factor]], index=frame.index, dtype=object)
    return frame.assign(**{factor: levels})


def render_ranking(
    result: xr.Dataset, fmt: str = "text", notes: Sequence[str] = (), digits: int | None = None
) -> str:
    """The ranking in ``fmt``; Markdown, LaTeX and HTML put ``notes`` under the table (aligned
    text is the table alone: a command prints its title and notes around it) and write the
    replicates' degradation as ``value ± half-width`` (to the digits its interval supports,
    or ``digits``), the one interval notation of every table for a paper."""
    frame = ranking_frame(result)
    fmt = check_format(fmt)
    if fmt in ("csv", "json"):
        method = PAIRED_REPLICATES if result.attrs.get("paired") else REPLICATES
        frame = with_levels(frame, result)
        return render(with_interval(frame, result.attrs["confidence"], method), fmt)
    header, rows = ranking_rows(result)
    if fmt != "text":
        return render(frame, fmt, paper_ranking(header, rows, notes, digits))
    decimals = percent_decimals(rows)
    cells = [
        [count(rank), level, *(fixed(x, decimals) for x in numbers), str(n)]
        for rank, level, *numbers, n in rows
    ]
    shown = Shown(
        header,
        cells,
        2,
        below=list(notes),
        align="rlrrrrr",
        min_widths={0: 4, len(header) - 1: 4},
        header_aligned=True,
        rule=False,
    )
    return render(frame, fmt, shown)


def percent_decimals(rows) -> int:
    """Decimals of the text table's percentages: 2, or as many as show the narrowest
    interval's half-width to 2 significant digits (an interval of 0.000128 to 0.000164 %
    written 0.00 to 0.00 would say the level does not differ from the best)."""
    halves = [(high - low) / 2 for *_, low, high, _ in rows]
    narrowest = min((h for h in halves if math.isfinite(h) and h > 0), default=None)
    if narrowest is None:
        return 2
    return min(12, max(2, -half_width_place(narrowest, 2)))


def paper_ranking(header, rows, notes: Sequence[str], digits: int | None) -> Shown:
    """rank, level, D_means (%), D_replicates (%) ± half-width of its interval, n."""
    cells = []
    for rank, level, means, replicates, low, high, n in rows:
        spread = estimate(replicates, (high - low) / 2, digits)
        cells.append([count(rank), level, plain(means, digits or 4), spread, str(n)])
    shown_header = [header[0], header[1], header[2], f"{header[3]} ± half-width", header[-1]]
    return Shown(shown_header, cells, 2, below=list(notes), align="rlrrr")


def render_ranking_text(ranking: Ranking) -> str:
    """Title, aligned table and notes: what `query --rank` prints and the report shows."""
    table = render_ranking(ranking.result).rstrip("\n")
    return "\n".join([ranking.title, table, *ranking.wrapped_notes()])
