"""What dispatch sends for a plan's tasks: one `Item` per task, its params shared by the
tasks of a cell, its seed, the fields of its ledger record, and its input group (tasks that
read the same heavy inputs are batched together). `run` and `verify` send tasks this one way,
so a rerun to compare is the run's own task."""

from __future__ import annotations

from typing import Any

from campaign.design.tasks import cell_params
from campaign.execute.batching import Item
from campaign.plan.sources import task_inputs
from campaign.plan.state import Plan, RunState


def task_items(plan: Plan | RunState, todo: list[int], run_id: str) -> list[Item]:
    """What dispatch sends for the given task indices: params (one dict per cell: the worker
    copies it for each task), seed, and the fields of the ledger record."""
    spec, design, model = plan.spec, plan.design, plan.model
    params_by_cell: dict[tuple[int, ...], dict[str, Any]] = {}
    group_by_cell: dict[tuple[int, ...], Any] = {}
    items = []
    for task in design.tasks(todo):
        params = params_by_cell.get(task.cell)
        if params is None:
            params = params_by_cell[task.cell] = cell_params(spec, task.cell)
            group_by_cell[task.cell] = task_inputs(model, params) if model.inputs else None
        meta = {
            "key": task.key,
            "cell": design.cell_label(task.cell),
            "replicate": task.replicate,
            "run": run_id,
        }
        group = group_by_cell[task.cell]  # dispatch batches tasks of one group together
        items.append(Item(key=task.key, params=params, seed=task.seed, meta=meta, group=group))
    return items
