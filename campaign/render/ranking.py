"""The ranking of `campaign.analysis.ranking.degradation` in any format: sorted by rank, the
percentages with two decimals for a reader, at full precision in CSV and JSON (whose readers
get the numbers, not the notes)."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd
import xarray as xr

from campaign.analysis.ranking import ranking_rows
from campaign.analysis.ranking_text import Ranking
from campaign.render.numbers import count, fixed
from campaign.render.table import Shown, check_format, render


def ranking_frame(result: xr.Dataset) -> pd.DataFrame:
    """The rows of `ranking_rows` as a table; the rank an integer (empty when unranked)."""
    header, rows = ranking_rows(result)
    frame = pd.DataFrame(rows, columns=header)
    frame["rank"] = frame["rank"].astype("Int64")
    return frame


def render_ranking(result: xr.Dataset, fmt: str = "text", notes: Sequence[str] = ()) -> str:
    """The ranking in ``fmt``; Markdown, LaTeX and HTML put ``notes`` under the table (aligned
    text is the table alone: a command prints its title and notes around it)."""
    frame = ranking_frame(result)
    if check_format(fmt) in ("csv", "json"):
        return render(frame, fmt)
    header, rows = ranking_rows(result)
    cells = [
        [count(rank), level, *map(fixed, numbers), str(n)] for rank, level, *numbers, n in rows
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


def render_ranking_text(ranking: Ranking) -> str:
    """Title, aligned table and notes: what `query --rank` prints and the report shows."""
    table = render_ranking(ranking.result).rstrip("\n")
    return "\n".join([ranking.title, table, *ranking.wrapped_notes()])
