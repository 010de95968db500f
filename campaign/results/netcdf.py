"""The results file on disk: written atomically in time proportional to its variables, and
read back (`open_results`, `open_failures`), files of earlier layouts too."""

from __future__ import annotations

import os
import uuid
from pathlib import Path
from typing import Any

import netCDF4
import numpy as np
import xarray as xr

from campaign.errors import CampaignError
from campaign.results.resources import RESOURCES_GROUP
from campaign.store.folder import RESULTS_FILE

FAILURES_GROUP = "failures"


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
