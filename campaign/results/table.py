"""The task table: per task (in task order) its status and metric values, read from the
stored records; and the failed tasks' table, one row per failed task."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import xarray as xr

from campaign.design import points as designs
from campaign.design.tasks import Design, canonical
from campaign.results.check import storable_records
from campaign.results.names import entry_owner
from campaign.results.status import STATUS_FAILED, STATUS_OK


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
                if wanted is not None and entry_owner(name) not in wanted:
                    continue
                column = columns[name] = np.full(design.size, np.nan)
            column[index] = value
    return status, columns, failures


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
