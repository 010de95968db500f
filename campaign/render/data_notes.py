"""What a CSV or JSON table cannot say in its cells: its numbers lack tasks (failed, not run,
or finished after results.nc was written). The text and paper formats say it under the table;
a command printing CSV or JSON says it on stderr (`data_notes`), its output the data alone."""

from __future__ import annotations

import pandas as pd
import xarray as xr

from campaign.analysis.unfinished import written_before


def data_notes(result) -> list[str]:
    """The notes of what ``result``'s numbers lack: a query's unfinished tasks and stale
    results.nc, or any other analysis's stale results.nc."""
    from campaign.analysis.ranking_text import Ranking
    from campaign.render.summary import unfinished_notes

    if isinstance(result, pd.DataFrame):
        return unfinished_notes(result)
    if isinstance(result, Ranking):
        return written_before(result.result.attrs)
    if isinstance(result, xr.Dataset):
        return written_before(result.attrs)
    return []
