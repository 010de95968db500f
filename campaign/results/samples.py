"""Samples in a results file: each task's sample as its quantiles on a fixed grid, in a group
of their own, and the percentiles a spec keeps of it as ordinary metrics.

A model may return a 1-D array (every job's wait, say); a record keeps its size and its
quantiles at every whole percentile (`campaign.results.names.sample_entries`). Here the
columns of those entries become, per sample ``s``:

- in the root group, ``s_count``: the sample's size per task, and ``s_p<k>``: its ``k``-th
  percentile per task for each ``k`` the spec's ``percentiles:`` keeps, metrics with their
  mean and interval over replicates like any other;
- in the group ``samples``, ``s``: its quantiles per task, on the factors, ``replicate`` and
  ``quantile`` (the probabilities 0, 0.01, ..., 1; the first and last are the sample's
  minimum and maximum). Their own dimension lies in that group alone, so the root group stays
  one row per task.

`samples_view` joins the group to the tasks' status and sample sizes: what a pooled CDF needs.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import xarray as xr

from campaign.results.names import QUANTILE_GRID, SAMPLE_MARK, quantile_label, sample_names

QUANTILE = "quantile"
SAMPLES_GROUP = "samples"


def split_samples(
    columns: dict[str, np.ndarray],
    dims: Sequence[str],
    percentiles: Sequence[int],
    documented: Mapping[str, Mapping[str, str]],
) -> tuple[dict[str, np.ndarray], dict[str, xr.Variable], dict[str, dict[str, str]]]:
    """The scalar columns (derived ones added), the samples' variables, and the units and long
    names of the derived metrics."""
    scalars = dict(columns)
    samples: dict[str, xr.Variable] = {}
    attributes: dict[str, dict[str, str]] = {}
    for name in sample_names(columns):
        labels = [f"{name}{SAMPLE_MARK}{quantile_label(p)}" for p in QUANTILE_GRID]
        quantiles = np.stack([scalars.pop(label) for label in labels], axis=-1)
        count = scalars.pop(f"{name}{SAMPLE_MARK}n")
        scalars.pop(name, None)  # the column a spec's metrics: made for it before its entries
        declared = dict(documented.get(name, {}))
        declared.pop("kind", None)
        units = declared.get("units", "")
        long_name = declared.get("long_name", name)
        samples[name] = xr.Variable(
            [*dims, QUANTILE],
            quantiles,
            {
                **declared,
                "long_name": f"quantiles of {long_name} per task",
                "comment": "each task's sample kept as its quantiles at every whole percentile "
                "(linear interpolation between finite neighbours; +-inf where the rank "
                "reaches an infinite value); quantile 0 and 1 are its minimum and maximum",
            },
        )
        size, *kept = sample_metrics(name, percentiles)
        scalars[size] = count
        attributes[size] = {"units": "1", "long_name": f"size of the {name} sample"}
        for percentile, derived in zip(percentiles, kept):
            scalars[derived] = quantiles[..., percentile]
            attributes[derived] = {
                "units": units,
                "long_name": f"{ordinal(percentile)} percentile of {long_name}",
            }
    return scalars, samples, attributes


def sample_metrics(name: str, percentiles: Sequence[int]) -> list[str]:
    """The metrics of the root group a sample ``name`` gives: its size, then the percentiles
    the spec keeps."""
    return [f"{name}_count", *(f"{name}_p{percentile}" for percentile in percentiles)]


def sample_group(
    samples: Mapping[str, xr.Variable], coordinates: Mapping[str, xr.Variable], kept: int
) -> xr.Dataset | None:
    """The group ``samples``: each sample's quantiles of the ``kept`` replicates, with the
    task coordinates (``coordinates``) so that the group reads alone; None without samples."""
    if not samples:
        return None
    variables = {
        name: xr.Variable(sample.dims, sample.values[..., :kept, :], sample.attrs)
        for name, sample in samples.items()
    }
    group = xr.Dataset(variables, coords={**coordinates, QUANTILE: quantile_coordinate()})
    group.attrs["title"] = "each task's samples, kept as their quantiles at every whole percentile"
    return group


def quantile_coordinate() -> xr.IndexVariable:
    return xr.IndexVariable(
        QUANTILE,
        QUANTILE_GRID,
        {"long_name": "probability of the quantile (cumulative share of the sample)", "units": "1"},
    )


def samples_of(dataset: xr.Dataset) -> list[str]:
    """The samples a dataset holds (variables on ``quantile`` beside ``replicate``): those of a
    `samples_view`, or of a results file's root written before samples had a group."""
    # by its variables: `data_vars.items()` builds a DataArray per variable, each scanning
    # every variable for its coordinates (quadratic in a file of thousands of metrics)
    dims = {name: dataset.variables[name].dims for name in dataset.data_vars}
    return [name for name, on in dims.items() if QUANTILE in on and "replicate" in on]


def samples_view(tasks: xr.Dataset, group: xr.Dataset) -> xr.Dataset:
    """The samples of ``group`` with, from the results' root ``tasks``, each task's status and
    each sample's size (``<sample>_count``): what pooling tasks' samples needs."""
    names = samples_of(group)
    joined = {name: group[name] for name in names}
    joined["status"] = tasks["status"]
    for name in names:
        joined[f"{name}_count"] = tasks[f"{name}_count"]
    return xr.Dataset(joined, attrs=tasks.attrs)


def ordinal(number: int) -> str:
    if 10 <= number % 100 <= 20:
        return f"{number}th"
    return f"{number}{ {1: 'st', 2: 'nd', 3: 'rd'}.get(number % 10, 'th') }"
