"""Breakdowns in a results file: metrics per label of an extra dimension (per job class), each
dimension in a group of its own.

A model may return a breakdown named by its dimension, ``{"job_class": {"narrow_short":
{"mean_wait": ...}, ...}}``; a record keeps it as scalars ``mean_wait@job_class=narrow_short``
(`campaign.results.names.breakdown_entries`). Here they become the group
``breakdowns/<dimension>``: one variable per metric, ``<metric>_by_<dimension>`` (a name no
factor's coordinate in the group takes: a breakdown's ``jobs`` beside a factor ``jobs``), on
the factors, ``replicate`` and the dimension (its labels in the order the model gives them). A
group per dimension, so that neither the root group (one row per task) nor another breakdown
is multiplied out by it. `campaign.analysis.breakdown.as_factor` turns the dimension into a
factor for queries and figures.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import xarray as xr

from campaign.results.names import BREAKDOWN_ENTRY

BREAKDOWNS_GROUP = "breakdowns"


def group_name(dimension: str) -> str:
    """The netCDF group of a breakdown: ``breakdowns/job_class``."""
    return f"{BREAKDOWNS_GROUP}/{dimension}"


def variable_name(metric: str, dimension: str) -> str:
    """A breakdown's variable: in its group, and in the root of a results file written before
    breakdowns had groups of their own."""
    return f"{metric}_by_{dimension}"


def metric_name(variable: str, dimension: str) -> str | None:
    """The metric of a breakdown's variable (`variable_name`), None for another variable."""
    suffix = variable_name("", dimension)
    return variable[: -len(suffix)] if variable.endswith(suffix) else None


def split_breakdowns(
    columns: dict[str, np.ndarray],
    dims: Sequence[str],
    documented: Mapping[str, Mapping[str, str]],
) -> tuple[dict[str, np.ndarray], dict[str, dict[str, xr.Variable]]]:
    """The other columns, and per breakdown dimension its coordinate and metrics' variables."""
    others: dict[str, np.ndarray] = {}
    found: dict[str, dict[str, dict[str, np.ndarray]]] = {}  # dimension -> metric -> label
    for name, column in columns.items():
        match = BREAKDOWN_ENTRY.match(name)
        if match is None:
            others[name] = column
            continue
        per_metric = found.setdefault(match["dimension"], {})
        per_metric.setdefault(match["metric"], {})[match["label"]] = column
    breakdowns: dict[str, dict[str, xr.Variable]] = {}
    for dimension, metrics in found.items():
        others.pop(dimension, None)  # the column a spec's metrics: made for it
        labels = list(dict.fromkeys(label for per in metrics.values() for label in per))
        variables: dict[str, xr.Variable] = {}
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
        breakdowns[dimension] = variables
    return others, breakdowns


def breakdown_groups(
    breakdowns: Mapping[str, Mapping[str, xr.Variable]],
    coordinates: Mapping[str, xr.Variable],
    kept: int,
) -> dict[str, xr.Dataset]:
    """Per breakdown, its group (`group_name`): its metrics of the ``kept`` replicates, with
    the task coordinates (``coordinates``) and its own, so that the group reads alone."""
    groups = {}
    for dimension, variables in breakdowns.items():
        data = {
            name: xr.Variable(variable.dims, variable.values[..., :kept, :], variable.attrs)
            for name, variable in variables.items()
            if name != dimension
        }
        group = xr.Dataset(data, coords={**coordinates, dimension: variables[dimension]})
        group.attrs["title"] = f"metrics per {dimension.replace('_', ' ')} of each task"
        groups[group_name(dimension)] = group
    return groups
