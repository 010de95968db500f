"""The failed tasks' table of a results file, one row per failed task (the task table
itself: `campaign.results.ledger_table`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import xarray as xr

from campaign.design import points as designs
from campaign.design.tasks import Design, canonical
from campaign.results.ledger_table import TaskTable, records_table
from campaign.results.status import STATUS_FAILED


def failure_table(
    dataset: xr.Dataset, design: Design, records: Mapping[str, dict[str, Any]] | TaskTable
) -> xr.Dataset:
    """The failed tasks of an assembled Dataset (status 2), one row each on dimension
    ``failure``: task key, cell (its levels as JSON), replicate, error text, and one variable
    per factor holding the task's level, so that its ``to_dataframe()`` is tidy too."""
    spec = design.spec
    table = records if isinstance(records, TaskTable) else records_table(design, records)
    status = dataset["status"].values.reshape(len(design.cells), -1)
    cells, replicates = np.nonzero(status == STATUS_FAILED)
    indices = (cells * spec.replicates + replicates).tolist()
    tasks = [design.task(index) for index in indices]
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
                np.array([table.errors.get(index) or "" for index in indices], dtype=object),
                {"long_name": "error message of a failed task"},
            ),
            **factor_levels,
        },
        attrs={"title": "failed tasks and their error texts, one row per failed task"},
    )
