"""A breakdown's dimension as a factor: the results seen per job class, for queries and
figures.

A results file keeps a breakdown in the group ``breakdowns/<dimension>``: each metric as
``<metric>_by_<dimension>`` on the factors, ``replicate`` and the dimension
(`campaign.results.breakdowns`). `as_factor` gives a dataset where the dimension is one more
factor: each metric under its name (unless a factor has it), the task status and seed
repeated along it. Every query, comparison and figure then takes it like any factor
(``--by job_class``). The classes of one task come from one run with one seed, so the view
lists the dimension under ``paired`` (with the factors the results already pair): comparisons,
rankings and the analysis of variance read pairing there, and ``breakdown`` names the
dimension so that they can say why its levels are paired.
"""

from __future__ import annotations

from pathlib import Path

import xarray as xr

from campaign.errors import CampaignError
from campaign.results.breakdowns import metric_name
from campaign.results.netcdf import open_breakdown, stored_breakdowns

BREAKDOWN = "breakdown"  # the attribute of a view naming the breakdown's dimension


def as_factor(dataset: xr.Dataset, breakdown: xr.Dataset) -> xr.Dataset:
    """The results (the root group, ``dataset``) with the dimension of ``breakdown`` (its group,
    `campaign.results.netcdf.open_breakdown`) as a factor placed last among the factors,
    holding the metrics broken down along it."""
    tasks = dataset.variables["status"].dims
    extra = [d for d in breakdown.dims if d not in tasks]
    if len(extra) != 1:
        raise CampaignError(
            f"a breakdown lies on the tasks' dimensions and one of its own; this one has "
            f"{', '.join(extra) or 'none'} beside them"
        )
    dimension = extra[0]
    order = [*tasks[:-1], dimension, tasks[-1]]
    labels = breakdown[dimension]
    taken = set(dataset.variables) - set(dataset.data_vars)  # coordinates: the factors...
    variables = {}
    for name in breakdown.data_vars:
        metric = metric_name(str(name), dimension)
        if metric is not None and dimension in breakdown[name].dims:
            shown = metric if metric not in taken | {dimension} else str(name)
            variables[shown] = breakdown[name].transpose(*order)
    metrics = list(variables)
    for name in ("status", "seed"):
        variables[name] = dataset[name].broadcast_like(labels).transpose(*order)
    view = xr.Dataset(variables, attrs=dataset.attrs)
    view.attrs["paired"] = " ".join([*str(dataset.attrs.get("paired", "")).split(), dimension])
    view.attrs[BREAKDOWN] = dimension
    view = view.assign_coords({dimension: labels.values.astype(str)})
    view[dimension].attrs = {"long_name": f"factor {dimension}"}
    headline = [m for m in str(dataset.attrs.get("headline_metrics", "")).split() if m in metrics]
    view.attrs["headline_metrics"] = " ".join(headline)
    return view


def factor_view(dataset: xr.Dataset, path: str | Path, names) -> xr.Dataset:
    """The results as `as_factor` gives them when ``names`` (factors a command was given in
    ``--by``, ``--x``, ``--where`` or ``--factor``) name a breakdown dimension of the results
    file at ``path`` (whose root group is ``dataset``); else as they are."""
    found = stored_breakdowns(path)
    wanted = [name for name in found if name in set(names)]
    if len(wanted) > 1:
        raise CampaignError(f"breakdowns {', '.join(wanted)}: name one at a time")
    return as_factor(dataset, open_breakdown(path, wanted[0])) if wanted else dataset


def mentioned(by=None, where=None, *others) -> list[str]:
    """The factor names of command options: ``--by`` lists, ``--where`` clauses, others."""
    names = [*(by or []), *(o for o in others if o)]
    for clause in where or []:
        names.append(str(clause).split("=")[0].split("<")[0].split(">")[0].split("!")[0].strip())
    return names
