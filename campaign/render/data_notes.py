"""What a CSV or JSON table cannot say in its cells: its numbers lack tasks (failed, not run,
or finished after results.nc was written, whose spec file may have been edited since) or
values (a selection's means over fewer values than their replicates, replicates left out of
a ranking's interval, a comparison's values without their pair, an analysis of variance's
failed or infinite values). The text and paper formats say it under the table; a command
printing CSV or JSON says it on stderr (`data_notes`), its output the data alone."""

from __future__ import annotations

import pandas as pd
import xarray as xr

from campaign.analysis.unfinished import written_before


def data_notes(result) -> list[str]:
    """The notes of what ``result``'s numbers lack: a query's unfinished tasks, any analysis's
    stale results.nc, and the values each analysis left out; for a query, a ranking and a
    comparison, every warning and note their text tables show but a ranking's legend (too
    few replicates, NaN values, no ratio, several intervals at once, a Friedman test)."""
    from campaign.analysis.comparison import notes
    from campaign.analysis.ranking_text import Ranking
    from campaign.analysis.selection_report import SelectionReport
    from campaign.analysis.sensitivity import Sensitivity
    from campaign.render.effects import fraction_left_out, left_out_words
    from campaign.render.sensitivity import csv_notes
    from campaign.render.summary import unfinished_notes, value_notes

    if isinstance(result, pd.DataFrame):
        return unfinished_notes(result) + value_notes(result, list(result.attrs["metrics"]))
    if isinstance(result, SelectionReport):
        return result.lacks
    if isinstance(result, Sensitivity):
        return csv_notes(result)
    if isinstance(result, Ranking):
        return result.caveats()
    if not isinstance(result, xr.Dataset):
        return []
    if result.attrs.get("analysis") == "comparison":  # every warning its text table shows
        return notes(result)
    if result.attrs.get("design") == "fractional":
        return written_before(result.attrs) + fraction_left_out(result.attrs)
    left = left_out_words(result.attrs)
    return written_before(result.attrs) + [f"left out: {left}"] * bool(left)
