"""The group ``resources`` of results.nc: what each finished task cost, one row per task, in
a few bytes a row: the task's cell and worker as integer codes into the group's tables of
cells (their factor levels) and workers (their addresses), never a string per task.

A file written before the codes holds a string per task (``task_key``, ``task_cell``,
``worker``); `table_costs` reads both."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import xarray as xr

from campaign.results.resources import Costs, cell_label, grouped_costs

if TYPE_CHECKING:
    from campaign.results.ledger_table import TaskTable

RESOURCES_GROUP = "resources"
TASK, CELL, WORKER = "task", "cell", "worker"


def resource_table(table: TaskTable, window: np.ndarray | None = None) -> xr.Dataset:
    """The group ``resources`` of a task table: one row per measured task (in task order)
    with its cell, replicate, success, wall time, peak memory and worker; with ``window``
    (cells x replicates, as `campaign.plan.replicates` holds it), of the tasks it holds."""
    design, costs = table.design, table.costs
    replicates = design.spec.replicates
    rows = np.flatnonzero(within(costs.measured, window))
    workers = costs.workers.all_codes()[rows]
    levels = [json.dumps(design.cell_label(cell), default=str) for cell in design.cells]

    def column(values: np.ndarray, attrs: dict[str, str]) -> tuple:
        return (TASK, values, attrs)

    return xr.Dataset(
        {
            "task_cell": column(
                (rows // replicates).astype(np.int32),
                {"long_name": "the task's cell: its place along cell (cell_levels)"},
            ),
            "task_replicate": column(
                (rows % replicates).astype(np.int32), {"long_name": "replicate of the task"}
            ),
            "task_ok": column(
                costs.ok[rows].astype(np.int8),
                {"long_name": "1 if the task finished ok, 0 if it failed"},
            ),
            "elapsed": column(
                costs.elapsed[rows],
                {"long_name": "wall time of the task on its worker", "units": "s"},
            ),
            "peak_memory": column(
                costs.peak_memory[rows],
                {
                    "long_name": "peak resident memory of the worker process during the task",
                    "units": "bytes",
                },
            ),
            "task_worker": column(
                workers.astype(np.int32),
                {"long_name": "the worker that ran the task: its place along worker"},
            ),
            "cell_levels": (
                CELL,
                np.array(levels, dtype=object),
                {"long_name": "factor levels of the cell (JSON)"},
            ),
            WORKER: (
                WORKER,
                np.array([str(name) for name in costs.workers.values], dtype=object),
                {"long_name": "address of a worker that ran tasks"},
            ),
        },
        attrs={"title": "what each finished task cost: wall time and peak memory"},
    )


def open_resources(path: Path) -> xr.Dataset | None:
    """The group ``resources`` of a results file, or None in a file made before it existed."""
    import netCDF4

    with netCDF4.Dataset(path) as handle:
        if RESOURCES_GROUP not in handle.groups:
            return None
    return xr.load_dataset(path, group=RESOURCES_GROUP, engine="netcdf4")


def task_levels(group: xr.Dataset) -> np.ndarray:
    """Each task's factor levels (JSON), from either layout of the group."""
    cells = group["task_cell"].values
    if "cell_levels" not in group:  # written before the codes: a string per task
        return cells
    return np.asarray(group["cell_levels"].values, dtype=object)[cells]


def table_costs(group: xr.Dataset) -> Costs:
    """`Costs` of the tasks of a ``resources`` group (of either layout)."""
    cells = group["task_cell"].values
    if "cell_levels" in group:
        texts = np.asarray(group["cell_levels"].values, dtype=object)
    else:  # written before the codes: each task's levels as text
        texts, cells = np.unique(cells.astype(str), return_inverse=True)
    labels = [cell_label({"cell": json.loads(str(text))}) for text in texts]
    return grouped_costs(
        labels,
        np.asarray(cells, dtype=np.int64).ravel(),
        group["elapsed"].values.astype(float),
        group["peak_memory"].values.astype(float),
    )


def task_costs(table: TaskTable, window: np.ndarray | None = None) -> Costs:
    """`Costs` of the measured tasks of a task table (with ``window``: of those it holds)."""
    design, costs = table.design, table.costs
    rows = np.flatnonzero(within(costs.measured, window))
    labels = [cell_label({"cell": design.cell_label(cell)}) for cell in design.cells]
    cells = rows // design.spec.replicates
    return grouped_costs(labels, cells, costs.elapsed[rows], costs.peak_memory[rows])


def within(measured: np.ndarray, window: np.ndarray | None) -> np.ndarray:
    """The measured tasks (a flag per task, in task order) that a replicate window holds: with
    a precision target or a selection, a cell's stored replicates beyond the rounds it runs
    now (a target since loosened) are not among its results, so not among their costs."""
    return measured if window is None else measured & np.ravel(window)[: measured.size]
