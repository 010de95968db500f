"""What dispatch sends for a plan's tasks: one `Item` per task, its params shared by the
tasks of a cell, its seed, the fields of its ledger record, and its input group (tasks that
read the same heavy inputs are batched together), made as dispatch takes them
(`TaskItems`), so that a run of ten million tasks never holds ten million items. `run` and
`verify` send tasks this one way, so a rerun to compare is the run's own task."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from campaign.design.tasks import cell_params
from campaign.execute.batching import Item
from campaign.plan.outside_files import outside_values
from campaign.plan.sources import task_inputs
from campaign.plan.state import Plan, RunState

CELLS_HELD = 4096  # cells whose params are kept to share among their tasks' items


class TaskItems:
    """The items of the tasks ``todo`` (task indices) of a plan, in that order: params (one
    dict per cell, shared by its items: the worker copies it for each task), seed, and the
    fields of the ledger record. Sized, and made anew at each iteration."""

    def __init__(self, plan: Plan | RunState, todo: Sequence[int], run_id: str):
        self.plan = plan
        self.todo = todo
        self.run_id = run_id

    def __len__(self) -> int:
        return len(self.todo)

    def __iter__(self) -> Iterator[Item]:
        spec, design, model = self.plan.spec, self.plan.design, self.plan.model
        by_cell: dict[tuple[int, ...], tuple[dict[str, Any], dict[str, Any], Any]] = {}
        for task in design.tasks(self.todo):
            held = by_cell.get(task.cell)
            if held is None:
                if len(by_cell) >= CELLS_HELD:
                    by_cell.clear()
                params = cell_params(spec, task.cell)
                group = task_inputs(model, params) if model.inputs else None
                if spec.command is not None:  # files its params name by absolute path
                    group = outside_values(spec.command, params) or None
                digests = self.digests(group)
                held = (params, design.cell_label(task.cell), group, digests)
                by_cell[task.cell] = held
            params, cell, group, digests = held
            meta = {"key": task.key, "cell": cell, "replicate": task.replicate, "run": self.run_id}
            # dispatch batches tasks of one group (the same heavy inputs) together
            yield Item(task.key, params, task.seed, meta, group=group, digests=digests)

    def digests(self, paths: tuple[str, ...] | None) -> tuple[str, ...]:
        """The digests the plan took of a Python model's input files (or of the files a
        program's params name by absolute path), in their order: the worker checks that it
        reads the same content (`campaign.execute.model_inputs`)."""
        sources = self.plan.sources
        if not paths or sources is None or any(p not in sources.inputs for p in paths):
            return ()
        return tuple(sources.inputs[path] for path in paths)


def task_items(plan: Plan | RunState, todo: Sequence[int], run_id: str) -> list[Item]:
    """The items of the tasks ``todo`` of a plan, all at once (see `TaskItems`)."""
    return list(TaskItems(plan, todo, run_id))
