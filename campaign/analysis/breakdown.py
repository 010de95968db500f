"""A breakdown's dimension as a factor: the results seen per job class, for queries and
figures.

A results file keeps a breakdown as ``<metric>_by_<dimension>`` on the factors,
``replicate`` and the dimension (`campaign.results.breakdowns`). `as_factor` gives a dataset
where the dimension is one more factor: each such variable under its metric's name, the task
status and seed repeated along it. Every query, comparison and figure then takes it like any
factor (``--by job_class``). A class's replicates are the tasks' replicates, so classes of
one task are paired.
"""

from __future__ import annotations

import xarray as xr

from campaign.errors import CampaignError


def breakdown_dimensions(dataset: xr.Dataset) -> dict[str, list[str]]:
    """Per breakdown dimension of a results file, the metrics it holds."""
    tasks = dataset.variables["status"].dims
    found: dict[str, list[str]] = {}
    for name in dataset.data_vars:
        dims = dataset.variables[name].dims
        if len(dims) != len(tasks) + 1 or dims[:-1] != tasks:
            continue
        suffix = f"_by_{dims[-1]}"
        if name.endswith(suffix):
            found.setdefault(dims[-1], []).append(name[: -len(suffix)])
    return found


def as_factor(dataset: xr.Dataset, dimension: str) -> xr.Dataset:
    """The results with ``dimension`` as a factor (placed last among the factors), holding
    the metrics broken down along it; one clear error for a dimension it does not have."""
    found = breakdown_dimensions(dataset)
    if dimension not in found:
        raise CampaignError(
            f"{dimension!r} is not a breakdown of the results; breakdowns: "
            f"{', '.join(found) or 'none'}"
        )
    tasks = dataset.variables["status"].dims
    order = [*tasks[:-1], dimension, tasks[-1]]
    labels = dataset[dimension]
    variables = {
        metric: dataset[f"{metric}_by_{dimension}"].transpose(*order) for metric in found[dimension]
    }
    for name in ("status", "seed"):
        variables[name] = dataset[name].broadcast_like(labels).transpose(*order)
    view = xr.Dataset(variables, attrs=dataset.attrs)
    view = view.assign_coords({dimension: labels.values.astype(str)})
    view[dimension].attrs = {"long_name": f"factor {dimension}"}
    headline = [m for m in str(dataset.attrs.get("headline_metrics", "")).split() if m in found]
    view.attrs["headline_metrics"] = " ".join(headline)
    return view


def factor_view(dataset: xr.Dataset, names) -> xr.Dataset:
    """The results as `as_factor` gives them when ``names`` (factors a command was given in
    ``--by``, ``--x``, ``--where`` or ``--factor``) name a breakdown dimension; else as they
    are."""
    found = breakdown_dimensions(dataset)
    wanted = [name for name in found if name in set(names)]
    if len(wanted) > 1:
        raise CampaignError(f"breakdowns {', '.join(wanted)}: name one at a time")
    return as_factor(dataset, wanted[0]) if wanted else dataset


def mentioned(by=None, where=None, *others) -> list[str]:
    """The factor names of command options: ``--by`` lists, ``--where`` clauses, others."""
    names = [*(by or []), *(o for o in others if o)]
    for clause in where or []:
        names.append(str(clause).split("=")[0].split("<")[0].split(">")[0].split("!")[0].strip())
    return names
