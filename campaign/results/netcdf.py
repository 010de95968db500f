"""The results file on disk: written atomically in time proportional to its variables, and
read back (`open_results`, `open_failures`, `open_samples`, `open_breakdown`), files of
earlier layouts too."""

from __future__ import annotations

import os
import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import netCDF4
import numpy as np
import xarray as xr

from campaign.errors import CampaignError
from campaign.results.accepted_changes import accepted_note
from campaign.results.breakdowns import BREAKDOWNS_GROUP, group_name, metric_name
from campaign.results.resource_group import RESOURCES_GROUP
from campaign.results.samples import QUANTILE, SAMPLES_GROUP, samples_of, samples_view
from campaign.results.spec_edited import edited_note
from campaign.results.stale_sources import stale_note
from campaign.store.folder import LEDGER_BATCHES, LEDGER_FOLDER, RESULTS_FILE
from campaign.store.unwritten import unwritten_note

FAILURES_GROUP = "failures"


def write_netcdf(
    dataset: xr.Dataset,
    path: Path,
    failures: xr.Dataset | None = None,
    resources: xr.Dataset | None = None,
    groups: Mapping[str, xr.Dataset] | None = None,
) -> Path:
    """Write atomically, so a crash never leaves a half-written results file and a reader
    opens the previous file or the whole new one. ``failures`` (see `failure_table`) goes
    into the group ``failures``, ``resources`` (what each task cost, see
    `campaign.results.resources`) into the group ``resources``, and each of ``groups`` (the
    samples and breakdowns of `campaign.results.assemble.assemble_with_groups`) into the
    group of its name.

    Written in time proportional to the number of variables, as far as netCDF-4 allows:
    coordinates are defined first (a variable defined before its dimension's coordinate is
    attached to the dimension twice) and every variable is defined before any data is
    written (netCDF-4 otherwise leaves and re-enters its define mode for each variable, at a
    cost growing with the variables already in the file).
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    dataset = _coordinates_first(dataset)
    encoding = _compressed(dataset)
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
        for name, group in (groups or {}).items():
            group.to_netcdf(
                tmp,
                mode="a",
                group=name,
                engine="netcdf4",
                format="NETCDF4",
                encoding=_compressed(group),
            )
        for group, table in ((FAILURES_GROUP, failures), (RESOURCES_GROUP, resources)):
            if table is not None:  # a row per task: bytes shuffled, then compressed
                encoding = _compressed(table, shuffle=True)
                table.to_netcdf(tmp, mode="a", group=group, engine="netcdf4", encoding=encoding)
        with open(tmp, "rb+") as handle:
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
    return path


def _compressed(dataset: xr.Dataset, shuffle: bool = False) -> dict[str, dict[str, Any]]:
    """The encoding of a dataset's variables: numbers compressed (``shuffle``: their bytes
    shuffled first, which compresses numbers of similar size better), coordinates without a
    fill value (CF: coordinate variables hold no missing values)."""
    compression = {"zlib": True, "complevel": 4, **({"shuffle": True} if shuffle else {})}
    encoding: dict[str, dict[str, Any]] = {
        # Variables, not data_vars.items(): each DataArray built looks at every variable
        name: dict(compression)
        for name in dataset.data_vars
        if (variable := dataset.variables[name]).dtype.kind in "fiu" and variable.ndim > 0
    }
    encoding.update({name: {"_FillValue": None} for name in dataset.coords})
    return encoding


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
        raise CampaignError(f"no results file at {path}{unwritten_note(path.parent)}")
    return path


def open_results(path: str | Path) -> xr.Dataset:
    """Reopen the root group of a results file fully in memory (the file is closed
    afterwards): one row per task.

    Files written before failures, samples and breakdowns had groups of their own held them
    in the root, on dimensions of their own (``failure``, ``quantile``, ``job_class``); they
    are left out here (`open_failures`, `open_samples` and `open_breakdown` read them), so
    every results file gives one row per task.
    """
    dataset = _open_root(path)
    samples, breakdowns = _legacy_extras(dataset)
    legacy = [name for name in LEGACY_FAILURE_VARIABLES if name in dataset]
    legacy += samples + [name for names in breakdowns.values() for name in names.values()]
    if not legacy:
        return dataset
    dataset = dataset.drop_vars(legacy)
    unused = [d for d in (QUANTILE, *breakdowns) if d in dataset.dims and not _used(dataset, d)]
    return dataset.drop_vars([d for d in unused if d in dataset.variables])


def _used(dataset: xr.Dataset, dimension: str) -> bool:
    return any(dimension in dataset.variables[name].dims for name in dataset.data_vars)


def _open_root(path: str | Path) -> xr.Dataset:
    """The root group of a results file, or one line saying why it is not one."""
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
    notes = (BEHIND if ledger_is_newer(path) else None, edited_note(dataset.attrs))
    for note in (*notes, stale_note(path, dataset), accepted_note(dataset.attrs)):
        said = dataset.attrs.get("incomplete")
        if note:
            dataset.attrs["incomplete"] = (f"{said}; it " if said else "") + note
    return dataset


BEHIND = (
    "was written before tasks that the ledger beside it holds finished (a run stopped, or "
    "still runs, before writing it again): these numbers lack them; `campaign status SPEC` "
    "counts them, `campaign run SPEC` writes them in"
)


def ledger_is_newer(path: Path) -> bool:
    """Whether the ledger beside results file ``path`` holds a batch stored after the file was
    written: every command that writes results.nc does so after the last batch it stores
    (and compacts), so a later batch is one of a run that has not written it again."""
    written = os.stat(path).st_mtime_ns
    for batch in (path.parent / LEDGER_FOLDER).glob(LEDGER_BATCHES):
        try:
            if batch.stat().st_mtime_ns > written:
                return True
        except FileNotFoundError:  # compacted away as it was listed
            continue
    return False


def _legacy_extras(root: xr.Dataset) -> tuple[list[str], dict[str, dict[str, str]]]:
    """The samples and the breakdowns (dimension -> metric -> variable) that the root of a
    file written before they had groups of their own holds; none in a file of today."""
    dims = {str(name): root.variables[name].dims for name in root.data_vars}
    return samples_of(root), _legacy_breakdowns(dims)


def _legacy_breakdowns(dims: dict[str, tuple[str, ...]]) -> dict[str, dict[str, str]]:
    """The breakdowns (dimension -> metric -> variable) among a root's variables (their
    dimensions by name): those over the tasks' dimensions and one more, named for it."""
    tasks = dims["status"]
    breakdowns: dict[str, dict[str, str]] = {}
    for name, over in dims.items():
        if len(over) != len(tasks) + 1 or over[:-1] != tasks or over[-1] == QUANTILE:
            continue
        metric = metric_name(name, over[-1])
        if metric is not None:
            breakdowns.setdefault(over[-1], {})[metric] = name
    return breakdowns


def _groups(path: Path) -> set[str]:
    """The groups of a results file, nested ones by their path (``breakdowns/job_class``)."""
    with netCDF4.Dataset(path) as handle:
        return _groups_of(handle)


def _groups_of(handle: netCDF4.Dataset) -> set[str]:
    """`_groups` of a file already open."""
    found = set()
    pending = list(handle.groups.values())
    while pending:
        group = pending.pop()
        found.add(group.path.lstrip("/"))
        pending.extend(group.groups.values())
    return found


def stored_samples(path: str | Path) -> list[str]:
    """The samples a results file keeps (without reading their values)."""
    path = results_file(path)
    if SAMPLES_GROUP in _groups(path):
        with xr.open_dataset(path, group=SAMPLES_GROUP, engine="netcdf4") as group:
            return samples_of(group)
    with xr.open_dataset(path, engine="netcdf4") as root:
        return samples_of(root)


def stored_breakdowns(path: str | Path) -> dict[str, list[str]]:
    """Per breakdown dimension of a results file, the metrics it holds (without reading
    their values)."""
    path = results_file(path)
    # the root's variables by name and dimensions, for a file written before breakdowns had
    # groups of their own (read so, xarray would decode each of thousands of metrics' variables)
    with netCDF4.Dataset(path) as handle:
        groups = _groups_of(handle)
        dims = {name: tuple(v.dimensions) for name, v in handle.variables.items()}
    prefix = f"{BREAKDOWNS_GROUP}/"
    found = {}
    for name in sorted(groups):
        if name.startswith(prefix) and "/" not in name[len(prefix) :]:
            dimension = name[len(prefix) :]
            with xr.open_dataset(path, group=name, engine="netcdf4") as group:
                named = [metric_name(str(v), dimension) for v in group.data_vars]
                found[dimension] = [m for m in named if m is not None]
    if found:
        return found
    legacy = _legacy_breakdowns({n: d for n, d in dims.items() if d != (n,)})
    return {dim: list(names) for dim, names in legacy.items()}


def open_samples(path: str | Path) -> xr.Dataset:
    """The samples of a results file (group ``samples``) with each task's status and each
    sample's size from the root: every task's quantiles, as
    `campaign.analysis.distributions.cell_cdfs` pools them. A file without samples gives
    a dataset without them."""
    path = results_file(path)
    root = _open_root(path)
    if SAMPLES_GROUP in _groups(path):
        group = xr.load_dataset(path, group=SAMPLES_GROUP, engine="netcdf4")
    else:  # written before samples had a group of their own
        group = root[samples_of(root)]
    return samples_view(root, group)


def open_breakdown(path: str | Path, dimension: str) -> xr.Dataset:
    """The group of breakdown ``dimension`` (``job_class``): its metrics per task and label
    (``<metric>_by_<dimension>``); one clear error for a dimension the file does not have."""
    path = results_file(path)
    found = stored_breakdowns(path)
    if dimension not in found:
        raise CampaignError(
            f"{dimension!r} is not a breakdown of the results; breakdowns: "
            f"{', '.join(found) or 'none'}"
        )
    if group_name(dimension) in _groups(path):
        return xr.load_dataset(path, group=group_name(dimension), engine="netcdf4")
    root = _open_root(path)  # written before breakdowns had groups of their own
    names = _legacy_extras(root)[1][dimension]
    return xr.Dataset({name: root[name] for name in names.values()})


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
