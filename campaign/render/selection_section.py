"""The report's section on a selection: the guarantee, the system selected in each group, the
systems eliminated on the way and the tasks saved (`campaign.analysis.selection_report`)."""

from __future__ import annotations

import xarray as xr

from campaign.analysis.selection_report import selection_report
from campaign.render.selection import render_selection
from campaign.results.selection import SELECTION_ATTRIBUTE


def selection_section(dataset: xr.Dataset) -> str:
    """HTML: the selection's two tables (groups, systems) with the guarantee and notes, or
    nothing for results without a selection."""
    if not dataset.attrs.get(SELECTION_ATTRIBUTE):
        return ""
    report = selection_report(dataset)
    return "\n".join(
        [
            '<h2 id="selection">Selection of the best system</h2>',
            render_selection(report, "html"),
        ]
    )
