"""A factor drawn over a range (along ``point``) on a figure's axis: with more than
`MAX_PLOT_VALUES` distinct values it is cut into bins of equal width on its scale (`binned`),
the points of a bin pooled replicate by replicate."""

from __future__ import annotations

import numpy as np
import xarray as xr

from campaign.design.points import LOG, POINT

MAX_PLOT_VALUES = 12  # a factor along point with more distinct values is binned
X_BINS, SERIES_BINS = 10, 4


def distinct(dataset: xr.Dataset, name: str) -> int:
    if name in dataset.dims:
        return dataset.sizes[name]
    return len(np.unique(dataset[name].values))


def binned(dataset: xr.Dataset, name: str, bins: int) -> tuple[xr.Dataset, str]:
    """``dataset`` with a factor along ``point`` of many values replaced by the centre of its
    bin (``bins`` of equal width, on a log scale for a range drawn on one), and the words for
    it; unchanged (and no words) for a dimension or a factor of few values."""
    if name in dataset.dims or distinct(dataset, name) <= MAX_PLOT_VALUES:
        return dataset, ""
    values = dataset[name].values.astype(float)
    log = dataset[name].attrs.get("sampling_scale") == LOG and values.min() > 0
    shown = np.log(values) if log else values
    edges = np.linspace(shown.min(), shown.max(), bins + 1)
    index = np.clip(np.searchsorted(edges, shown, side="right") - 1, 0, bins - 1)
    centres = (edges[:-1] + edges[1:]) / 2
    centres = np.exp(centres) if log else centres
    centres = np.array([float(f"{c:.4g}") for c in centres])  # labels a reader can read
    coordinate = xr.Variable(POINT, centres[index], dataset[name].attrs)
    scale = "log-" if log else ""
    return dataset.assign_coords({name: coordinate}), f"{name}: {bins} {scale}equal bins"
