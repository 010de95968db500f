"""What each task cost: its wall time and peak memory, as stored with its result, per task
(the group ``resources`` of results.nc) and summed up per cell and for the campaign.

Timings differ from run to run, so they stay out of the results' root group, which holds
only what the same spec and seed reproduce bit for bit."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import xarray as xr

RESOURCES_GROUP = "resources"


@dataclass(frozen=True)
class CellCost:
    """The measured tasks of one cell: how many, their mean and longest wall time (seconds)
    and their largest peak memory (bytes; NaN where no task measured it)."""

    cell: str
    tasks: int
    mean_seconds: float
    max_seconds: float
    peak_memory: float


@dataclass(frozen=True)
class Costs:
    """The measured tasks of a campaign, per cell (slowest mean first) and in all."""

    cells: list[CellCost]
    tasks: int
    seconds: float
    peak_memory: float

    @property
    def mean_seconds(self) -> float:
        return self.seconds / self.tasks if self.tasks else float("nan")


def measured(records: Mapping[str, Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The records that say what their task cost: finished (ok or failed) with a wall time."""
    return [
        record
        for record in records.values()
        if record.get("status") in ("ok", "failed") and "elapsed" in record
    ]


def cell_label(record: Mapping[str, Any]) -> str:
    """A record's cell as its factor levels, `a=1, b=x` (or "(single cell)")."""
    cell = record.get("cell") or {}
    return ", ".join(f"{name}={level}" for name, level in cell.items()) or "(single cell)"


def costs(records: Mapping[str, Mapping[str, Any]]) -> Costs:
    """Per cell and in all, what the finished tasks among ``records`` cost."""
    by_cell: dict[str, list[Mapping[str, Any]]] = {}
    for record in measured(records):
        by_cell.setdefault(cell_label(record), []).append(record)
    cells = []
    for label, group in by_cell.items():
        seconds = np.array([float(r["elapsed"]) for r in group])
        memory = np.array([float(r.get("peak_memory", np.nan)) for r in group])
        cells.append(
            CellCost(
                label,
                len(group),
                float(seconds.mean()),
                float(seconds.max()),
                float(np.nanmax(memory)) if np.isfinite(memory).any() else float("nan"),
            )
        )
    cells.sort(key=lambda cell: (-cell.mean_seconds, cell.cell))
    memory = [cell.peak_memory for cell in cells if np.isfinite(cell.peak_memory)]
    return Costs(
        cells=cells,
        tasks=sum(cell.tasks for cell in cells),
        seconds=float(sum(cell.mean_seconds * cell.tasks for cell in cells)),
        peak_memory=max(memory) if memory else float("nan"),
    )


def resource_table(records: Mapping[str, Mapping[str, Any]]) -> xr.Dataset:
    """The group ``resources``: one row per finished task (by task key) with its cell (its
    factor levels as JSON), replicate, status, wall time, peak memory and worker."""
    rows = sorted(measured(records), key=lambda record: record["key"])

    def column(values: list[Any], dtype: Any, attrs: dict[str, str]):
        return ("task", np.array(values, dtype=dtype), attrs)

    return xr.Dataset(
        {
            "task_key": column([r["key"] for r in rows], object, {"long_name": "task key"}),
            "task_cell": column(
                [json.dumps(r.get("cell") or {}) for r in rows],
                object,
                {"long_name": "factor levels of the task"},
            ),
            "task_replicate": column(
                [int(r.get("replicate", -1)) for r in rows],
                np.int64,
                {"long_name": "replicate of the task"},
            ),
            "task_ok": column(
                [r["status"] == "ok" for r in rows],
                np.int8,
                {"long_name": "1 if the task finished ok, 0 if it failed"},
            ),
            "elapsed": column(
                [float(r["elapsed"]) for r in rows],
                np.float64,
                {"long_name": "wall time of the task on its worker", "units": "s"},
            ),
            "peak_memory": column(
                [float(r.get("peak_memory", np.nan)) for r in rows],
                np.float64,
                {
                    "long_name": "peak resident memory of the worker process during the task",
                    "units": "bytes",
                },
            ),
            "worker": column(
                [str(r.get("worker", "")) for r in rows],
                object,
                {"long_name": "address of the worker that ran the task"},
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


def table_costs(table: xr.Dataset) -> Costs:
    """`costs` of the tasks of a ``resources`` group."""
    records = {
        str(key): {
            "cell": json.loads(str(cell)),
            "status": "ok" if ok else "failed",
            "elapsed": float(elapsed),
            "peak_memory": float(memory),
        }
        for key, cell, ok, elapsed, memory in zip(
            table["task_key"].values,
            table["task_cell"].values,
            table["task_ok"].values,
            table["elapsed"].values,
            table["peak_memory"].values,
        )
    }
    return costs(records)
