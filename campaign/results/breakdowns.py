"""Breakdowns in a results file: metrics per label of an extra dimension (per job class).

A model may return a breakdown named by its dimension, ``{"job_class": {"narrow_short":
{"mean_wait": ...}, ...}}``; a record keeps it as scalars ``mean_wait@job_class=narrow_short``
(`campaign.results.names.breakdown_entries`). Here they become one variable per metric,
``<metric>_by_<dimension>``, on the factors, ``replicate`` and the dimension (its labels in
the order the model gives them). `campaign.analysis.breakdown.as_factor` turns the dimension
into a factor for queries and figures.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import xarray as xr

from campaign.results.names import BREAKDOWN_ENTRY


def variable_name(metric: str, dimension: str) -> str:
    return f"{metric}_by_{dimension}"


def split_breakdowns(
    columns: dict[str, np.ndarray],
    dims: Sequence[str],
    documented: Mapping[str, Mapping[str, str]],
) -> tuple[dict[str, np.ndarray], dict[str, xr.Variable]]:
    """The other columns, and each breakdown's variables and coordinates."""
    others: dict[str, np.ndarray] = {}
    found: dict[str, dict[str, dict[str, np.ndarray]]] = {}  # dimension -> metric -> label
    for name, column in columns.items():
        match = BREAKDOWN_ENTRY.match(name)
        if match is None:
            others[name] = column
            continue
        per_metric = found.setdefault(match["dimension"], {})
        per_metric.setdefault(match["metric"], {})[match["label"]] = column
    variables: dict[str, xr.Variable] = {}
    for dimension, metrics in found.items():
        others.pop(dimension, None)  # the column a spec's metrics: made for it
        labels = list(dict.fromkeys(label for per in metrics.values() for label in per))
        variables[dimension] = xr.IndexVariable(
            dimension,
            np.array(labels, dtype=object),
            {"long_name": dict(documented.get(dimension, {})).get("long_name", dimension)},
        )
        shape = next(iter(next(iter(metrics.values())).values())).shape
        for metric, per_label in metrics.items():
            nan = np.full(shape, np.nan)
            values = np.stack([per_label.get(label, nan) for label in labels], axis=-1)
            declared = {k: v for k, v in documented.get(metric, {}).items() if k != "kind"}
            long_name = declared.get("long_name", metric)
            variables[variable_name(metric, dimension)] = xr.Variable(
                [*dims, dimension],
                values,
                {**declared, "long_name": f"{long_name}, per {dimension.replace('_', ' ')}"},
            )
    return others, variables
