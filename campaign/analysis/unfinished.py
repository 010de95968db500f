"""The tasks a table's means and n leave out because they did not finish: failed, or not run
yet (missing), counted over the cells a query shows, so that its table can say so."""

from __future__ import annotations

import numpy as np
import xarray as xr

from campaign.analysis.stats import percent
from campaign.results.status import STATUS_FAILED, STATUS_MISSING

ROUNDS = ("precision_replicates", "selection_replicates")  # a cell's replicates, when they vary
PRECISION_STATE, AT_MAX = "precision_state", 2  # a cell stopped at max_replicates, target unmet


def unfinished_tasks(
    selected: xr.Dataset, rounds: list[str], results: xr.Dataset
) -> dict[str, int | str]:
    """The failed and the missing tasks of the cells queried (``tasks_failed``,
    ``tasks_missing``) in ``selected`` (their ``status``). With a precision target or a
    selection, a cell's tasks are its replicates so far (the variable named in ``rounds``),
    not the padding past them; with a precision target, also the cells that never met it
    (`precision_unmet`)."""
    status = selected["status"]
    counts = {
        "tasks_failed": int((status == STATUS_FAILED).sum()),
        "tasks_missing": int(not_run(selected, rounds).sum()),
    }
    return counts | precision_unmet(selected, results)


def precision_unmet(selected: xr.Dataset, results: xr.Dataset) -> dict[str, int | str]:
    """With a precision target: the cells of ``selected`` that stopped at max_replicates
    without meeting it (``precision_unmet``), and the target (``precision_target``, from
    ``results``' ``precision_met``), so that a table of their intervals can say so."""
    if PRECISION_STATE not in selected.variables or "precision_met" not in results.variables:
        return {}
    attrs = results["precision_met"].attrs
    confidence = float(attrs.get("confidence", 0.95))
    target = (
        f"half-width at most {attrs.get('target_half_width', '?')} at {percent(confidence)} "
        f"confidence, for {', '.join(str(attrs.get('metrics', '')).split())}"
    )
    unmet = int((selected[PRECISION_STATE] == AT_MAX).sum())
    return {"precision_unmet": unmet, "precision_target": target}


def not_run(selected: xr.Dataset, rounds: list[str]) -> xr.DataArray:
    """Which tasks of ``selected`` (over its ``status``'s dimensions) are missing among those
    its cells plan so far (`unfinished_tasks`)."""
    status = selected["status"]
    planned = xr.ones_like(status, dtype=bool)
    for name in rounds:
        replicate = xr.DataArray(np.arange(status.sizes["replicate"]), dims="replicate")
        planned = replicate < selected[name]
    return ((status == STATUS_MISSING) & planned).transpose(*status.dims)


def carried(results: xr.Dataset) -> dict[str, str]:
    """The ``incomplete`` attribute of ``results`` (why results.nc lacks tasks: written
    before tasks finished), for an analysis's result to carry on to its table; {} if none."""
    said = results.attrs.get("incomplete")
    return {"incomplete": str(said)} if said else {}


def written_before(attrs) -> list[str]:
    """The note under any table of results that lack tasks (`carried`): the numbers are not
    the campaign's as it stands. Empty for current results."""
    said = attrs.get("incomplete")
    return [f"results.nc {said}"] if said else []
