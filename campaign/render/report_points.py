"""How the report shows a design of points (hundreds of points drawn over ranges): each
metric's figure against the factor that drives it most by the sensitivity indices, and its
table cut to the first points, their values to a few significant digits."""

from __future__ import annotations

import pandas as pd
import xarray as xr

from campaign.analysis.sensitivity import (
    DEFAULT_METHOD,
    REGRESSION,
    most_influential,
    sensitivity,
)
from campaign.design.points import POINT
from campaign.errors import CampaignError
from campaign.render.figure_layout import check_axes, default_axes
from campaign.results.assemble import factors_of, point_factors_of

SHOWN_POINTS = 10  # rows of a metric's table on a design of points
DIGITS = 4  # significant digits of a point's factor values in that table
AXIS_RESAMPLES = 10  # the indices only rank the factors here: their intervals are not shown


def figure_axes(dataset: xr.Dataset, metric: str) -> tuple[str | None, str | None, str]:
    """The x factor and series factor of a metric's figure, and a caption saying why: on a
    design of points, the factor with the largest index of the design's default sensitivity
    method (when the indices are defined); else the figures' defaults, and no caption."""
    x, by = default_axes(dataset)
    if dataset.attrs.get("design") not in DEFAULT_METHOD or POINT not in factors_of(dataset):
        return x, by, ""
    try:
        bootstrap = DEFAULT_METHOD[dataset.attrs["design"]] != REGRESSION
        result = sensitivity(dataset, metric, resamples=AXIS_RESAMPLES if bootstrap else None)
    except (CampaignError, ValueError):  # no index (failed points, crossed factors...)
        return x, by, ""
    found = most_influential(result)
    if found is None:
        return x, by, ""
    factor, words = found
    x, by = check_axes(dataset, factor, None)
    caption = f"Against {factor}: the factor with the largest {words} ({result.method}; see "
    return x, by, caption + "Sensitivity)."


def points_summary(
    dataset: xr.Dataset, frame: pd.DataFrame, metric: str
) -> tuple[pd.DataFrame, str]:
    """A metric's summary table on a design of points: its first `SHOWN_POINTS` rows, each
    point's factor values to `DIGITS` significant digits, and a note saying how many rows
    there are and where all are; other designs' tables as they are, with no note."""
    if POINT not in factors_of(dataset):
        return frame, ""
    frame = frame.copy()
    for name in point_factors_of(dataset):
        if name in frame and frame[name].dtype.kind == "f":
            frame[name] = [f"{value:.{DIGITS}g}" for value in frame[name]]
    if len(frame) <= SHOWN_POINTS:
        return frame, ""
    note = (
        f"The first {SHOWN_POINTS} of {len(frame)} rows (each point's factor values to {DIGITS} "
        f"significant digits); every one, in full: campaign query RESULTS --metric {metric} "
        "--format csv."
    )
    return frame.head(SHOWN_POINTS), note
