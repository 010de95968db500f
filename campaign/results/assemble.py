"""Turn ledger records into an xarray Dataset (raw replicates + summary) and a netCDF file.

One flat netCDF file, readable with plain ``xarray.open_dataset``:

- coordinates: one dimension per factor (its level labels) and ``replicate`` (0..R-1);
- ``<metric>``: raw value per factor levels x replicate (NaN where missing or failed);
- ``status``: 0 missing, 1 ok, 2 failed per task; ``seed``: the task's seed;
- ``<metric>_mean``, ``_std``, ``_n``, ``_ci_low``, ``_ci_high``: per-cell summary;
- ``<metric>_nan``: per cell, the finished replicates whose value is NaN (undefined), which
  the mean and ``_n`` leave out;
- with a precision target, per cell: ``precision_met``, ``precision_state`` and
  ``precision_replicates`` (the replicates its rounds gave it);
- global attributes: the spec text and digest, model, base seed, confidence, versions, time,
  and ``headline_metrics``: the model's headline metrics, which rankings use by default.

Every variable of the root group lies on the factors (and ``replicate``), so
``to_dataframe()`` gives one row per task. The failed tasks' error texts live in the netCDF
group ``failures`` (one row per failed task: key, cell, replicate, error text and the factor
levels), where their own dimension does not multiply out the task table;
`open_failures` reads it.
"""

from __future__ import annotations

import json
import os
import platform
import re
import time
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from importlib import metadata
from pathlib import Path
from typing import Any

import netCDF4
import numpy as np
import xarray as xr

from campaign.analysis.stats import Rounds, summarize
from campaign.design import points as designs
from campaign.design.tasks import Design, canonical
from campaign.errors import CampaignError
from campaign.models import model_reference
from campaign.results.names import name_clashes
from campaign.results.resources import RESOURCES_GROUP
from campaign.results.status import STATUS_FAILED, STATUS_MISSING, STATUS_NAMES, STATUS_OK
from campaign.store.folder import RESULTS_FILE

VERSIONED_PACKAGES = ("campaign", "numpy", "xarray", "dask", "distributed", "netCDF4", "scipy")


def metric_attributes(name: str, documented: Mapping[str, Mapping[str, str]]) -> dict[str, str]:
    """Units and long name of a metric from a model's ``metrics`` table (``{k}`` patterns ok)."""
    if name in documented:
        return dict(documented[name])
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
    records: Mapping[str, dict[str, Any]],
    confidence: float,
    documented: Mapping[str, Mapping[str, str]] | None = None,
    headline: Sequence[str] = (),
    rounds: Rounds | None = None,
) -> xr.Dataset:
    """The raw and summary Dataset of a design from the stored records (missing ones as NaN).

    ``documented`` gives the metrics' units and long names, ``headline`` the model's headline
    metrics (those in the results are named in the ``headline_metrics`` attribute).

    With a precision target, ``rounds`` says where each cell stands, decided from the same
    records (`campaign.plan.plan.replay_rounds`): each cell holds the replicates its rounds gave
    it, and tasks and missing ones are counted within them.
    """
    spec = design.spec
    if (spec.precision is None) != (rounds is None):
        raise ValueError("a campaign's rounds go with its precision target, and only with it")
    documented = documented or {}
    shape = (*design.shape, spec.replicates)
    dims = [*design.dims, "replicate"]
    records = storable_records(records, spec)
    status, columns, _ = task_table(design, records, spec.metrics)
    planned = np.ones(design.size, dtype=bool)
    if rounds is not None:
        planned = (np.arange(spec.replicates) < rounds.target[:, None]).ravel()
        # a result beyond its cell's rounds (left by other precision settings) is not part
        # of this campaign's sample
        status[~planned] = STATUS_MISSING
        for column in columns.values():
            column[~planned] = np.nan
    provenance_status = status[planned]
    status = status.reshape(shape)
    seeds = design.seeds.reshape(shape)
    columns = {name: column.reshape(shape) for name, column in columns.items()}

    kept = spec.replicates  # replicates beyond every cell's rounds are left out
    if rounds is not None:
        kept = int(rounds.target.max(initial=0))
    variables: dict[str, xr.Variable] = {}  # coordinates first: see `write_netcdf`
    variables.update(_factor_coordinates(design))
    # the replicates are an ensemble: CF's standard name lets summaries name it in cell_methods
    variables["replicate"] = xr.IndexVariable(
        "replicate",
        np.arange(kept),
        {"long_name": "replicate index", "standard_name": "realization", "units": "1"},
    )
    for name, column in columns.items():
        variables[name] = xr.Variable(dims, column[..., :kept], metric_attributes(name, documented))
    variables["status"] = xr.Variable(
        dims,
        status[..., :kept],
        {
            "long_name": "task status",
            "flag_values": np.array([STATUS_MISSING, STATUS_OK, STATUS_FAILED], dtype=np.int8),
            "flag_meanings": " ".join(STATUS_NAMES.values()),
        },
    )
    variables["seed"] = xr.Variable(
        dims, seeds[..., :kept], {"long_name": "random seed of the task"}
    )
    raw = xr.Dataset(variables)
    variables.update(summarize(raw, list(columns), confidence).variables)
    variables.update(_nan_counts(raw, list(columns)))
    if rounds is not None:
        precision = _precision_variables(rounds, raw, spec.precision)
        variables.update({name: array.variable for name, array in precision.items()})
    dataset = xr.Dataset(variables, attrs=provenance(design, confidence, provenance_status))
    dataset = dataset.set_coords([f.name for f in spec.factors if f.name not in design.dims])
    dataset.attrs["headline_metrics"] = " ".join(m for m in headline if m in columns)
    return dataset


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


def design_attributes(spec) -> dict[str, str]:
    """Global attributes saying which cells the design ran: its kind and, for a fraction,
    its generators, defining relation and alias chains (main effects and two-factor
    interactions); for Latin hypercube or Sobol points, their counts and the ranges."""
    design = spec.design
    attrs = {"design": design.kind}
    if design.fraction is not None:
        fraction = design.fraction
        attrs.update(
            design_title=fraction.title,
            design_generators=fraction.generator_text(),
            design_defining_relation=fraction.relation_text(),
            design_aliases="; ".join(fraction.alias_lines()),
            design_resolution=str(fraction.resolution or "full"),
        )
    elif design.kind != designs.FULL:
        attrs.update(
            design_points=" ".join(map(str, design.sizes)),
            design_ranges=canonical({f.name: list(f.range) for f in spec.factors if f.range}),
        )
    return attrs


def _nan_counts(raw: xr.Dataset, metrics: list[str]) -> dict[str, xr.Variable]:
    """Per cell and metric, the finished replicates whose value is NaN (an undefined value).

    The mean and ``_n`` leave them out; this count says they exist.
    """
    finished = raw["status"].values == STATUS_OK
    dims = raw["status"].dims[:-1]
    counts = {}
    for metric in metrics:
        values = raw.variables[metric].values
        counts[f"{metric}_nan"] = xr.Variable(
            dims,
            np.count_nonzero(finished & np.isnan(values), axis=-1).astype(np.int64),
            {
                "long_name": f"finished replicates whose {metric} is NaN (undefined; left out "
                "of the mean and n)",
                "cell_methods": "realization: sum (count of finished replicates with a NaN value)",
            },
        )
    return counts


def refusal(
    metrics: Mapping[str, float],
    factors: list[str],
    wanted: tuple[str, ...] | None,
    others: Iterable[str] = (),
) -> str | None:
    """Why a finished task's metrics cannot go into the results file; None when they can.

    A metric the spec keeps (``wanted``) must be there; without ``wanted`` every returned
    name is kept, and none may take the name of a factor or of a summary variable of
    another metric (``others``: the names other tasks returned).
    """
    if wanted:
        missing = [name for name in wanted if name not in metrics]
        if missing:
            return (
                f"the model returned no metric {missing[0]!r}, which the spec's metrics: "
                f"keeps; it returned: {', '.join(metrics) or 'none'}"
            )
        return None
    clashes = name_clashes(factors, [*others, *metrics])
    for name in metrics:
        if name in clashes:
            return f"{clashes[name]}; a results file cannot hold both"
    return None


def as_failed(record: dict[str, Any], error: str) -> None:
    """Turn a finished task's record into a failed one, in place (the driver counts it so)."""
    record.pop("metrics", None)
    record.update(status="failed", error=f"ValueError: {error}", traceback="")


def storable_records(records: Mapping[str, dict[str, Any]], spec) -> Mapping[str, dict[str, Any]]:
    """The records, with finished tasks whose metrics a results file cannot hold as failed.

    Results stored before their names were checked (or that clash only with another
    task's names) are caught here, so results.nc is always written.
    """
    factors = [f.name for f in spec.factors]
    names: set[str] = set()
    if not spec.metrics:
        for record in records.values():
            if record["status"] == "ok":
                names.update(record["metrics"])
    others = [] if spec.metrics else sorted(names)
    if not spec.metrics and not name_clashes(factors, others):
        return records
    checked = dict(records)
    for key, record in records.items():
        if record["status"] != "ok":
            continue
        problem = refusal(record["metrics"], factors, spec.metrics, others)
        if problem is not None:
            checked[key] = failed = dict(record)
            as_failed(failed, problem)
    return checked


class CheckedStore:
    """Stores finished tasks' records through ``store`` (the ledger's ``append``), each ok
    record first checked: one whose metrics a results file cannot hold is stored as failed,
    saying why (so a rerun retries it once the model or spec is fixed).

    A metric the spec keeps that a task did not return is most likely misspelt in
    ``metrics:``: once that batch is stored, the run stops with one line.
    """

    def __init__(self, spec, store: Callable[[list[dict[str, Any]]], Any]):
        self.spec = spec
        self.store = store
        self.factors = [f.name for f in spec.factors]
        self.seen: set[str] = set()

    def __call__(self, records: list[dict[str, Any]]) -> None:
        stop = None
        for record in records:
            if record["status"] != "ok":
                continue
            problem = refusal(record["metrics"], self.factors, self.spec.metrics, self.seen)
            if problem is None:
                self.seen.update(record["metrics"])
                continue
            if self.spec.metrics and stop is None:
                stop = f"{self.spec.path or 'spec'}: metrics: {problem} (model {self.spec.model})"
            as_failed(record, problem)
        self.store(records)
        if stop is not None:
            raise CampaignError(
                f"{stop}; fix the name in metrics: and run again (a model returns NaN for an "
                "undefined value, never leaves a metric out)"
            )


def task_table(
    design: Design, records: Mapping[str, dict[str, Any]], wanted: tuple[str, ...] | None = None
) -> tuple[np.ndarray, dict[str, np.ndarray], list[tuple[int, dict[str, Any]]]]:
    """Per task (in task order) its status and metric values, and the failed tasks' records.

    With ``wanted``, only those metrics are kept (NaN where a task did not return one).
    """
    status = np.zeros(design.size, dtype=np.int8)
    columns: dict[str, np.ndarray] = {name: np.full(design.size, np.nan) for name in wanted or ()}
    failures = []
    for index, key in enumerate(design.keys()):
        record = records.get(key)
        if record is None:
            continue
        if record["status"] != "ok":
            status[index] = STATUS_FAILED
            failures.append((index, record))
            continue
        status[index] = STATUS_OK
        for name, value in record["metrics"].items():
            column = columns.get(name)
            if column is None:
                if wanted is not None:
                    continue
                column = columns[name] = np.full(design.size, np.nan)
            column[index] = value
    return status, columns, failures


PRECISION_STATES = {"running": 0, "met": 1, "at_max": 2, "waiting": 3}


def precision_state(rounds: Rounds) -> np.ndarray:
    """Per cell: 0 running, 1 met, 2 stopped at max_replicates, 3 waiting on failed tasks."""
    state = np.zeros(rounds.target.shape, dtype=np.int8)
    for name, code in PRECISION_STATES.items():
        if name != "running":
            state[getattr(rounds, name)] = code
    return state


def _precision_variables(rounds: Rounds, raw: xr.Dataset, precision) -> dict[str, xr.DataArray]:
    dims = [d for d in raw["status"].dims if d != "replicate"]
    shape = raw["status"].shape[:-1]
    target = f"{precision.half_width:g}" + (" x |mean|" if precision.relative else "")
    return {
        "precision_met": xr.DataArray(
            rounds.met.reshape(shape).astype(np.int8),
            dims=dims,
            attrs={
                "long_name": "1 if every precision metric's interval half-width met the target",
                "target_half_width": target,
                "confidence": precision.confidence,
                "metrics": " ".join(precision.metrics),
            },
        ),
        "precision_state": xr.DataArray(
            precision_state(rounds).reshape(shape),
            dims=dims,
            attrs={
                "long_name": "where the cell stands against the precision target",
                "flag_values": np.array(list(PRECISION_STATES.values()), dtype=np.int8),
                "flag_meanings": "running met max_replicates waiting_on_failed_tasks",
            },
        ),
        "precision_replicates": xr.DataArray(
            rounds.target.reshape(shape),
            dims=dims,
            attrs={"long_name": "replicates the stopping rule gave the cell (0..n-1)"},
        ),
    }


FAILURES_GROUP = "failures"


def failure_table(
    dataset: xr.Dataset, design: Design, records: Mapping[str, dict[str, Any]]
) -> xr.Dataset:
    """The failed tasks of an assembled Dataset (status 2), one row each on dimension
    ``failure``: task key, cell (its levels as JSON), replicate, error text, and one variable
    per factor holding the task's level, so that its ``to_dataframe()`` is tidy too."""
    spec = design.spec
    records = storable_records(records, spec)
    status = dataset["status"].values.reshape(len(design.cells), -1)
    cells, replicates = np.nonzero(status == STATUS_FAILED)
    tasks = [design.task(int(c) * spec.replicates + int(r)) for c, r in zip(cells, replicates)]
    factor_levels = {
        factor.name: (
            "failure",
            np.array(list(factor.labels))[[task.cell[axis] for task in tasks]],
            {"long_name": f"factor {factor.name} of a failed task"},
        )
        for axis, factor in enumerate(spec.factors)
    }
    if designs.POINT in design.dims:
        factor_levels[designs.POINT] = (
            "failure",
            cells.astype(np.int64) % spec.design.points,
            {"long_name": "design point of a failed task"},
        )
    return xr.Dataset(
        {
            "failure_key": (
                "failure",
                np.array([t.key for t in tasks], dtype=object),
                {"long_name": "task key of a failed task"},
            ),
            "failure_cell": (
                "failure",
                np.array([canonical(design.cell_label(t.cell)) for t in tasks], dtype=object),
                {"long_name": "factor levels of a failed task"},
            ),
            "failure_replicate": (
                "failure",
                np.array([t.replicate for t in tasks], dtype=np.int64),
                {"long_name": "replicate of a failed task"},
            ),
            "failure_error": (
                "failure",
                np.array([records[t.key].get("error", "") for t in tasks], dtype=object),
                {"long_name": "error message of a failed task"},
            ),
            **factor_levels,
        },
        attrs={"title": "failed tasks and their error texts, one row per failed task"},
    )


def package_version(package: str) -> str:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return "not installed"


def package_versions() -> dict[str, str]:
    versions = {"python": platform.python_version()}
    for package in VERSIONED_PACKAGES:
        versions[package] = package_version(package)
    return versions


def provenance(design: Design, confidence: float, status: np.ndarray) -> dict[str, Any]:
    spec = design.spec
    created = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    return {
        "title": f"campaign {spec.name}",
        "campaign_name": spec.name,
        "description": spec.description,
        "model": spec.model,
        "model_reference": model_reference(spec.model),
        "base_seed": str(spec.seed),
        "replicates": spec.replicates,
        "factors": " ".join(f.name for f in spec.factors),
        **design_attributes(spec),
        "paired": " ".join(spec.paired),
        "params": canonical(spec.params),
        "confidence": confidence,
        "tasks": int(status.size),
        "tasks_ok": int((status == STATUS_OK).sum()),
        "tasks_failed": int((status == STATUS_FAILED).sum()),
        "tasks_missing": int((status == STATUS_MISSING).sum()),
        "spec": spec.text,
        "spec_digest": "sha256:" + spec.digest,
        "versions": json.dumps(package_versions(), sort_keys=True),
        "created": created,
        "host": platform.node(),
        "Conventions": "CF-1.11",
        "history": f"{created} created by campaign {package_version('campaign')} from spec "
        f"{spec.name} (sha256:{spec.digest[:12]})",
        "layout": (
            "raw metric per factor levels x replicate (one row per task in to_dataframe; "
            "a design other than full lies on its crossed factors and point, each point's "
            "factor values coordinates along point); "
            "status 0 missing 1 ok 2 failed; "
            "<metric>_mean/_std/_n/_ci_low/_ci_high per cell (Student t over replicates); "
            "<metric>_nan per cell: finished replicates whose value is NaN; "
            "group failures: failure_* and the factor levels per failed task"
        ),
    }


def source_provenance(identity: Mapping[str, Any]) -> dict[str, str]:
    """Global attributes saying what the results were computed from (campaign.json): digests
    of the model's code and of the input files, and any choice made when they changed."""
    sources = identity.get("sources")
    if not sources:
        return {}
    algorithm = sources.get("algorithm", "")
    return {
        "model_code_digest": f"{algorithm}:{sources.get('model_code', '')}",
        "model_code_files": json.dumps(sources.get("model_files") or {}, sort_keys=True),
        "input_digests": json.dumps(sources.get("inputs") or {}, sort_keys=True),
        "source_changes": json.dumps(identity.get("source_changes") or []),
    }


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
    variables = dataset.variables
    counts = [
        (metric, int(variables[f"{metric}_nan"].values.sum()))
        for metric in metrics_of(dataset)
        if f"{metric}_nan" in variables
    ]
    counts = [(metric, count) for metric, count in counts if count]
    if not counts:
        return None
    shown = ", ".join(f"{metric} {count}" for metric, count in counts[:NAN_NOTE_METRICS])
    more = len(counts) - NAN_NOTE_METRICS
    tail = f" and {more} more metrics (campaign query shows them)" if more > 0 else ""
    return (
        f"NaN values (undefined; left out of the means and n): {shown}{tail}; each "
        "<metric>_nan in results.nc counts them per cell"
    )


def write_netcdf(
    dataset: xr.Dataset,
    path: Path,
    failures: xr.Dataset | None = None,
    resources: xr.Dataset | None = None,
) -> Path:
    """Write atomically, so a crash never leaves a half-written results file and a reader
    opens the previous file or the whole new one. ``failures`` (see `failure_table`) goes
    into the group ``failures``, ``resources`` (what each task cost, see
    `campaign.results.resources`) into the group ``resources``.

    Written in time proportional to the number of variables, as far as netCDF-4 allows:
    coordinates are defined first (a variable defined before its dimension's coordinate is
    attached to the dimension twice) and every variable is defined before any data is
    written (netCDF-4 otherwise leaves and re-enters its define mode for each variable, at a
    cost growing with the variables already in the file).
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    dataset = _coordinates_first(dataset)
    encoding = {  # Variables, not data_vars.items(): each DataArray built looks at every variable
        name: {"zlib": True, "complevel": 4}
        for name in dataset.data_vars
        if (variable := dataset.variables[name]).dtype.kind in "fiu" and variable.ndim > 0
    }
    # CF: coordinate variables hold no missing values, so no _FillValue
    encoding.update({name: {"_FillValue": None} for name in dataset.coords})
    # a name of its own: concurrent writers never share one, readers never see it
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{uuid.uuid4().hex[:8]}.tmp")
    try:
        store = xr.backends.NetCDF4DataStore.open(tmp, mode="w", format="NETCDF4")
        try:
            writes = _DeferredWrites()
            dataset.dump_to_store(store, writer=writes, encoding=encoding)
            writes.write()
        finally:
            store.close()
        for group, table in ((FAILURES_GROUP, failures), (RESOURCES_GROUP, resources)):
            if table is not None:
                table.to_netcdf(tmp, mode="a", group=group, engine="netcdf4", format="NETCDF4")
        with open(tmp, "rb+") as handle:
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
    return path


def _coordinates_first(dataset: xr.Dataset) -> xr.Dataset:
    """The dataset with its coordinates ahead of its data variables (the order written)."""
    order = [*dataset.coords, *dataset.data_vars]
    if list(dataset.variables) == order:
        return dataset
    ordered = xr.Dataset(coords=dataset.coords, attrs=dataset.attrs)
    return ordered.assign({name: dataset.variables[name] for name in dataset.data_vars})


class _DeferredWrites:
    """Collects the data of the variables a netCDF store defines, to write once all are."""

    def __init__(self) -> None:
        self.pending: list[tuple[Any, Any, Any]] = []

    def add(self, source: Any, target: Any, region: Any = None) -> None:
        self.pending.append((source, target, ... if region is None else region))

    def write(self) -> None:
        for source, target, region in self.pending:
            target[region] = source
        self.pending.clear()


LEGACY_FAILURE_VARIABLES = ("failure_key", "failure_cell", "failure_replicate", "failure_error")


def results_file(path: str | Path) -> Path:
    """The results file named by ``path``: the file itself or results.nc in that folder."""
    path = Path(path)
    if path.is_dir():
        path = path / RESULTS_FILE
    if not path.exists():
        raise CampaignError(f"no results file at {path}")
    return path


def open_results(path: str | Path) -> xr.Dataset:
    """Reopen a results file fully in memory (the file is closed afterwards).

    Files written before failures had a group of their own held them on a ``failure``
    dimension of the root; they are left out here (`open_failures` reads them), so every
    results file gives one row per task.
    """
    path = results_file(path)
    try:
        dataset = xr.load_dataset(path, engine="netcdf4")
    except (OSError, ValueError) as error:
        reason = (getattr(error, "strerror", None) or str(error)).replace("\n", " ")
        raise CampaignError(
            f"{path} is not a readable netCDF file ({reason}); give the results.nc that "
            "`campaign run` wrote, or its folder"
        ) from None
    if "status" not in dataset or "replicate" not in dataset["status"].dims:
        raise CampaignError(
            f"{path} is a netCDF file but not campaign results (no 'status' over 'replicate'); "
            "give the results.nc that `campaign run` wrote, or its folder"
        )
    legacy = [name for name in LEGACY_FAILURE_VARIABLES if name in dataset]
    return dataset.drop_vars(legacy) if legacy else dataset


def open_failures(path: str | Path) -> xr.Dataset:
    """The failed tasks of a results file: one row per failed task on dimension ``failure``
    (``failure_key``, ``failure_cell``, ``failure_replicate``, ``failure_error`` and, in files
    that have them, the factor levels)."""
    path = results_file(path)
    with netCDF4.Dataset(path) as handle:
        grouped = FAILURES_GROUP in handle.groups
    if grouped:
        return xr.load_dataset(path, group=FAILURES_GROUP, engine="netcdf4")
    root = xr.load_dataset(path, engine="netcdf4")
    legacy = [name for name in LEGACY_FAILURE_VARIABLES if name in root]
    if legacy:
        return root[legacy]
    empty = np.array([], dtype=object)
    return xr.Dataset(
        {
            "failure_key": ("failure", empty),
            "failure_cell": ("failure", empty),
            "failure_replicate": ("failure", np.array([], dtype=np.int64)),
            "failure_error": ("failure", empty),
        }
    )
