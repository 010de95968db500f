"""The report's section on which factors drawn over ranges drive the headline metrics: the
table of `campaign sensitivity` (its default method for the design) per metric, or the one
line saying why the results cannot give it (failed points of a Saltelli sample, ...)."""

from __future__ import annotations

import xarray as xr

from campaign.analysis.sensitivity import DEFAULT_METHOD, sensitivity
from campaign.render.analysis_section import analysis_metrics, attempt
from campaign.render.sensitivity import render_sensitivity


def sensitivity_section(dataset: xr.Dataset) -> str:
    """HTML: a block per analysed metric, or nothing for a design that draws no points."""
    if dataset.attrs.get("design") not in DEFAULT_METHOD:
        return ""
    parts = ['<h2 id="sensitivity">Sensitivity to the sampled factors</h2>']
    for metric in analysis_metrics(dataset):
        parts.append(
            attempt(
                f"Sensitivity: {metric}",
                lambda m=metric: render_sensitivity([sensitivity(dataset, m)]).rstrip("\n"),
            )
        )
    return "\n".join(parts)
