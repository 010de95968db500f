"""The tasks a table's means and n leave out because they did not finish: failed, or not run
yet (missing), counted over the cells a query shows, so that its table can say so."""

from __future__ import annotations

import numpy as np
import xarray as xr

from campaign.results.status import STATUS_FAILED, STATUS_MISSING

ROUNDS = ("precision_replicates", "selection_replicates")  # a cell's replicates, when they vary


def unfinished_tasks(selected: xr.Dataset, rounds: list[str]) -> dict[str, int]:
    """The failed and the missing tasks of the cells queried (``tasks_failed``,
    ``tasks_missing``) in ``selected`` (their ``status``). With a precision target or a
    selection, a cell's tasks are its replicates so far (the variable named in ``rounds``),
    not the padding past them."""
    status = selected["status"]
    return {
        "tasks_failed": int((status == STATUS_FAILED).sum()),
        "tasks_missing": int(not_run(selected, rounds).sum()),
    }


def not_run(selected: xr.Dataset, rounds: list[str]) -> xr.DataArray:
    """Which tasks of ``selected`` (over its ``status``'s dimensions) are missing among those
    its cells plan so far (`unfinished_tasks`)."""
    status = selected["status"]
    planned = xr.ones_like(status, dtype=bool)
    for name in rounds:
        replicate = xr.DataArray(np.arange(status.sizes["replicate"]), dims="replicate")
        planned = replicate < selected[name]
    return ((status == STATUS_MISSING) & planned).transpose(*status.dims)
