"""Turn ledger records into an xarray Dataset (raw replicates + summary) and a netCDF file.

One netCDF file whose root group plain ``xarray.open_dataset`` reads as one flat Dataset:

- coordinates: one dimension per factor (its level labels) and ``replicate`` (0..R-1);
- ``<metric>``: raw value per factor levels x replicate (NaN where missing or failed);
- ``status``: 0 missing, 1 ok, 2 failed per task; ``seed``: the task's seed;
- ``<metric>_mean``, ``_std``, ``_n``, ``_ci_low``, ``_ci_high``: per-cell summary;
- ``<sample>_count`` and ``<sample>_p<k>``: a sample's size and percentiles, metrics like any
  other (`campaign.results.samples`);
- ``<metric>_nan``: per cell, the finished replicates whose value is NaN (undefined), which
  the mean and ``_n`` leave out;
- ``<metric>_absent``, only for a metric some finished task did not return: per cell, those
  replicates (their value NaN in ``<metric>``, but none was given), left out alike;
- with a precision target, per cell: ``precision_met``, ``precision_state`` and
  ``precision_replicates`` (the replicates its rounds gave it);
- global attributes: the spec text and digest, model, base seed, confidence, versions, time,
  and ``headline_metrics``: the model's headline metrics, which rankings use by default.

Every variable of the root group lies on the factors (and ``replicate``), so
``to_dataframe()`` gives one row per task. What has a dimension of its own lives in a group,
where that dimension multiplies nothing out: the samples' quantiles (group ``samples``, on
``quantile``), each breakdown (group ``breakdowns/<dimension>``, such as ``job_class``;
`campaign.results.breakdowns`), the failed tasks' error texts (group ``failures``, one row
per failed task; `open_failures` reads it) and what each task cost (group ``resources``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import xarray as xr

from campaign.analysis.selection import Selections
from campaign.analysis.stats import Rounds, summarize
from campaign.design import points as designs
from campaign.design.tasks import Design, canonical
from campaign.results.breakdowns import breakdown_groups, split_breakdowns
from campaign.results.ledger_table import TaskTable, records_table
from campaign.results.names import entry_owner
from campaign.results.precision_variables import precision_variables
from campaign.results.provenance import provenance
from campaign.results.samples import SAMPLES_GROUP, sample_group, sample_metrics, split_samples
from campaign.results.selection import (
    SELECTION_ATTRIBUTE,
    selection_attribute,
    selection_variables,
)
from campaign.results.status import STATUS_FAILED, STATUS_MISSING, STATUS_NAMES, STATUS_OK


def metric_attributes(name: str, documented: Mapping[str, Mapping[str, str]]) -> dict[str, str]:
    """Units and long name of a metric from a model's ``metrics`` table (``{k}`` patterns ok)."""
    if name in documented:
        return {k: v for k, v in documented[name].items() if k != "kind"}
    for pattern, attrs in documented.items():
        if "{" in pattern:
            regex = re.escape(pattern).replace(r"\{k\}", r"(\d+)")
            regex = re.sub(r"\\\{[a-z_]+\\\}", r"(\\d+)", regex)
            match = re.fullmatch(regex, name)
            if match:
                values = dict(attrs)
                if "long_name" in values:
                    values["long_name"] = values["long_name"].replace("{k}", match.group(1))
                return values
    return {}


def assemble(
    design: Design,
    records: Mapping[str, dict[str, Any]] | TaskTable,
    confidence: float,
    documented: Mapping[str, Mapping[str, str]] | None = None,
    headline: Sequence[str] = (),
    rounds: Rounds | None = None,
    stages: Selections | None = None,
) -> xr.Dataset:
    """The root group of the results (one row per task): see `assemble_with_groups`."""
    root, _ = assemble_with_groups(
        design, records, confidence, documented, headline, rounds, stages
    )
    return root


def assemble_with_groups(
    design: Design,
    records: Mapping[str, dict[str, Any]] | TaskTable,
    confidence: float,
    documented: Mapping[str, Mapping[str, str]] | None = None,
    headline: Sequence[str] = (),
    rounds: Rounds | None = None,
    stages: Selections | None = None,
) -> tuple[xr.Dataset, dict[str, xr.Dataset]]:
    """The raw and summary Dataset of a design from the stored records (by task key, or their
    `TaskTable`; missing ones as NaN), and the groups beside it by name: ``samples`` and
    ``breakdowns/<dimension>`` where the model returns them.

    ``documented`` gives the metrics' units and long names, ``headline`` the model's headline
    metrics (those in the results are named in the ``headline_metrics`` attribute).

    With a precision target, ``rounds`` says where each cell stands, decided from the same
    records (`campaign.plan.plan.replay_rounds`): each cell holds the replicates its rounds gave
    it, and tasks and missing ones are counted within them. With a selection, ``stages`` does
    the same from its stages (`campaign.plan.state.RunState.stages`).
    """
    spec = design.spec
    if (spec.precision is None) != (rounds is None):
        raise ValueError("a campaign's rounds go with its precision target, and only with it")
    if (spec.selection is None) != (stages is None):
        raise ValueError("a campaign's stages go with its selection, and only with it")
    documented = documented or {}
    shape = (*design.shape, spec.replicates)
    dims = [*design.dims, "replicate"]
    given = rounds.target if rounds is not None else stages.replicates if stages else None
    status, columns, absent, provenance_status = _planned_table(design, records, given)
    columns = {name: column.reshape(shape) for name, column in columns.items()}
    columns, samples, derived = split_samples(columns, dims, spec.percentiles, documented)
    columns, breakdowns = split_breakdowns(columns, dims, documented)
    documented = {**documented, **derived}
    owners = {name: name for name in absent}  # a metric's or a sample's root metrics
    owners.update(
        (d, s) for s in samples if s in absent for d in sample_metrics(s, spec.percentiles)
    )

    kept = spec.replicates  # replicates beyond every cell's rounds are left out
    if given is not None:
        kept = int(given.max(initial=0))
    variables: dict[str, xr.Variable] = {}  # coordinates first: see `write_netcdf`
    variables.update(_factor_coordinates(design))
    variables["replicate"] = _replicate_coordinate(kept)
    coordinates = dict(variables)  # what the groups repeat, to read alone
    for name, column in columns.items():
        variables[name] = xr.Variable(dims, column[..., :kept], metric_attributes(name, documented))
    seeds = design.seeds.reshape(shape)
    variables.update(_task_variables(dims, status.reshape(shape), seeds, kept))
    raw = xr.Dataset(variables)
    variables.update(summarize(raw, list(columns), confidence).variables)
    absent = {
        name: absent[owners[name]].reshape(shape)[..., :kept] for name in columns if name in owners
    }
    variables.update(_nan_counts(raw, list(columns), absent))
    if rounds is not None:
        precision = precision_variables(rounds, raw, spec.precision)
        variables.update({name: array.variable for name, array in precision.items()})
    if stages is not None:
        variables.update(selection_variables(stages, dims[:-1], shape[:-1]))
    dataset = xr.Dataset(variables, attrs=provenance(design, confidence, provenance_status))
    if stages is not None:
        dataset.attrs[SELECTION_ATTRIBUTE] = selection_attribute(spec.selection)
    dataset = dataset.set_coords([f.name for f in spec.factors if f.name not in design.dims])
    dataset.attrs["headline_metrics"] = " ".join(m for m in headline if m in columns)
    groups = breakdown_groups(breakdowns, coordinates, kept)
    sampled = sample_group(samples, coordinates, kept)
    if sampled is not None:
        groups = {SAMPLES_GROUP: sampled, **groups}
    return dataset, groups


def _planned_table(
    design: Design, records: Mapping[str, dict[str, Any]] | TaskTable, given: np.ndarray | None
) -> tuple[np.ndarray, dict[str, np.ndarray], dict[str, np.ndarray], np.ndarray]:
    """The status and metric columns of every task, which finished tasks did not return a
    metric (per metric, a sample by its name, only where one did not), and the status of
    the planned ones (for the provenance); with rounds or stages (``given``: the replicates
    each cell got), a task beyond its cell's replicates is missing."""
    spec = design.spec
    table = records if isinstance(records, TaskTable) else records_table(design, records)
    status = table.status.copy()
    columns = table.kept(spec.metrics)
    planned = np.ones(design.size, dtype=bool)
    if given is not None:
        planned = (np.arange(spec.replicates) < given[:, None]).ravel()
        # a result beyond its cell's rounds (left by other precision settings) is not part
        # of this campaign's sample
        status[~planned] = STATUS_MISSING
        columns = {name: np.where(planned, column, np.nan) for name, column in columns.items()}
    absent = {}
    for owner in dict.fromkeys(entry_owner(name) for name in columns):
        lacking = table.absent(owner) & planned
        if lacking.any():
            absent[owner] = lacking
    return status, columns, absent, status[planned]


def _replicate_coordinate(kept: int) -> xr.IndexVariable:
    # the replicates are an ensemble: CF's standard name lets summaries name it in cell_methods
    return xr.IndexVariable(
        "replicate",
        np.arange(kept),
        {"long_name": "replicate index", "standard_name": "realization", "units": "1"},
    )


def _task_variables(
    dims: list[str], status: np.ndarray, seeds: np.ndarray, kept: int
) -> dict[str, xr.Variable]:
    """Each task's status (CF flags) and seed, of the ``kept`` replicates."""
    return {
        "status": xr.Variable(
            dims,
            status[..., :kept],
            {
                "long_name": "task status",
                "flag_values": np.array([STATUS_MISSING, STATUS_OK, STATUS_FAILED], dtype=np.int8),
                "flag_meanings": " ".join(STATUS_NAMES.values()),
            },
        ),
        "seed": xr.Variable(dims, seeds[..., :kept], {"long_name": "random seed of the task"}),
    }


def _factor_coordinates(design: Design) -> dict[str, xr.Variable]:
    """A coordinate per factor: its levels along its own dimension, or, for a factor of the
    design points, its value at each point along ``point`` (beside the ``point`` index)."""
    spec = design.spec
    variables: dict[str, xr.Variable] = {}
    on_points = [i for i, f in enumerate(spec.factors) if f.name not in design.dims]
    if designs.POINT in design.dims:
        variables[designs.POINT] = xr.IndexVariable(
            designs.POINT,
            np.arange(spec.design.points),
            {"long_name": f"design point ({spec.design.kind})"},
        )
    for i, factor in enumerate(spec.factors):
        attrs = {"long_name": f"factor {factor.name}"}
        if factor.labelled:
            attrs["level_values"] = canonical(dict(zip(factor.labels, factor.values)))
        if factor.name in spec.paired:
            attrs["paired"] = "levels share seeds (common random numbers)"
        if factor.range is not None:
            attrs["valid_range"] = np.array(factor.range)
            attrs["sampling_scale"] = factor.scale  # how the design drew it (linear or log)
        if i in on_points and factor.range is None:
            attrs["levels"] = canonical(list(factor.labels))  # in order: low, high
        if i in on_points:
            indices = [cell[i] for cell in design.cells[: spec.design.points]]
            labels = np.array(factor.labels)[indices]
            variables[factor.name] = xr.Variable(designs.POINT, labels, attrs)
            continue
        labels = xr.DataArray(list(factor.labels), dims=factor.name).variable
        variables[factor.name] = labels.to_index_variable()
        variables[factor.name].attrs = attrs
    return variables


def _nan_counts(
    raw: xr.Dataset, metrics: list[str], absent: Mapping[str, np.ndarray]
) -> dict[str, xr.Variable]:
    """Per cell and metric, the finished replicates whose value is NaN (an undefined value),
    and, for a metric some finished task did not return (``absent``: per task, as ``raw``
    lays it), the replicates that did not: NaN in the raw values too, but no value given.

    The mean and ``_n`` leave both out; these counts say they exist, and which is which.
    """
    finished = raw["status"].values == STATUS_OK
    dims = raw["status"].dims[:-1]
    counts = {}
    for metric in metrics:
        values = raw.variables[metric].values
        lacking = absent.get(metric)
        undefined = finished & np.isnan(values)
        if lacking is not None:
            undefined &= ~lacking
        counts[f"{metric}_nan"] = xr.Variable(
            dims,
            np.count_nonzero(undefined, axis=-1).astype(np.int64),
            {
                "long_name": f"finished replicates whose {metric} is NaN (undefined; left out "
                "of the mean and n)",
                "cell_methods": "realization: sum (count of finished replicates with a NaN value)",
            },
        )
        if lacking is not None:
            counts[f"{metric}_absent"] = xr.Variable(
                dims,
                np.count_nonzero(finished & lacking, axis=-1).astype(np.int64),
                {
                    "long_name": f"finished replicates that returned no {metric} (left out of "
                    "the mean and n)",
                    "cell_methods": "realization: sum (count of finished replicates without "
                    "the metric)",
                },
            )
    return counts


def factors_of(dataset: xr.Dataset) -> list[str]:
    return [d for d in dataset.variables["status"].dims if d != "replicate"]


def point_factors_of(dataset: xr.Dataset) -> list[str]:
    """The factors whose values lie along ``point`` (a design other than full), if any."""
    return [
        name
        for name, coordinate in dataset.coords.items()
        if coordinate.dims == (designs.POINT,) and name != designs.POINT
    ]


def metrics_of(dataset: xr.Dataset) -> list[str]:
    """Raw metric variables: those laid out like ``status`` that are not bookkeeping.

    Read through ``variables``: ``dataset[name]`` (and ``data_vars.items()``) builds a
    DataArray by looking at every variable, so thousands of metrics would take quadratic time.
    """
    variables = dataset.variables
    dims = variables["status"].dims
    return [
        name
        for name in dataset.data_vars
        if variables[name].dims == dims and name not in ("status", "seed")
    ]


def metric_arrays(dataset: xr.Dataset, names: Iterable[str]) -> dict[str, xr.DataArray]:
    """``{name: dataset[name]}`` in time proportional to the names, whatever the variables.

    ``dataset[name]`` looks at every variable of the dataset for its coordinates; here each
    array takes its coordinates from the few the dataset has.
    """
    coordinates = {name: dataset.variables[name] for name in dataset.coords}
    arrays = {}
    for name in names:
        variable = dataset.variables[name]
        dims = set(variable.dims)
        arrays[name] = xr.DataArray(
            variable,
            coords={k: v for k, v in coordinates.items() if set(v.dims) <= dims},
            name=name,
        )
    return arrays


def headline_metrics(dataset: xr.Dataset) -> list[str]:
    """The model's headline metrics a results file names (none in files made before it did)."""
    return str(dataset.attrs.get("headline_metrics", "")).split()


NAN_NOTE_METRICS = 8  # a longer list is cut, saying how many more


def nan_note(dataset: xr.Dataset) -> str | None:
    """One line naming the metrics that finished tasks returned as NaN, with their counts."""
    return _count_note(dataset, "nan", "NaN values (undefined; left out of the means and n)")


def absent_note(dataset: xr.Dataset) -> str | None:
    """One line naming the metrics that some finished tasks did not return, with their
    counts (not NaN values: nothing was given)."""
    words = "Absent values (finished tasks that did not return them; left out of the means and n)"
    return _count_note(dataset, "absent", words)


def _count_note(dataset: xr.Dataset, suffix: str, words: str) -> str | None:
    variables = dataset.variables
    counts = [
        (metric, int(variables[f"{metric}_{suffix}"].values.sum()))
        for metric in metrics_of(dataset)
        if f"{metric}_{suffix}" in variables
    ]
    counts = [(metric, count) for metric, count in counts if count]
    if not counts:
        return None
    shown = ", ".join(f"{metric} {count}" for metric, count in counts[:NAN_NOTE_METRICS])
    more = len(counts) - NAN_NOTE_METRICS
    tail = f" and {more} more metrics (campaign query shows them)" if more > 0 else ""
    return f"{words}: {shown}{tail}; each <metric>_{suffix} in results.nc counts them per cell"
