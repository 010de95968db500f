"""The replicate policy of a selection: stages of a ranking-and-selection procedure.

It answers what `campaign.plan.replicates.Replicates` asks, like the fixed count and the
precision rounds beside it: each system (cell) runs the replicates its group's stages gave
it so far (the ``window``); after each stored stage, `campaign.analysis.selection` replays
the procedure over the stored results of every group, so the stages follow from the spec and
the stored results alone, whatever the workers and wherever a run was interrupted.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from campaign.analysis.selection import (
    STATES,
    SelectionRule,
    Selections,
    selection_stages,
)
from campaign.design.groups import selection_groups
from campaign.design.tasks import Design
from campaign.errors import CampaignError
from campaign.models.contract import Model
from campaign.results.ledger_table import TaskTable, first_finished, read_table
from campaign.results.status import STATUS_FAILED, STATUS_MISSING
from campaign.spec.load import Spec
from campaign.spec.selection import systems_share_seeds
from campaign.spec.types import Selection
from campaign.store.ledger import Ledger


class SelectionRounds:
    """Each group's systems run the replicates of its stages so far; the next stage is decided
    once every replicate of the last one is stored. A failed task (or an undefined or infinite
    value of the metric) holds its group's next decision until a rerun retries it.

    The first finished task's metrics must include the selection metric: a misspelt name
    stops the run once the tasks sent have ended.
    """

    rounds = None
    this_round = " in this stage"
    may_clash = False  # the status is the task table's, read whole

    def __init__(self, design: Design, selection: Selection):
        self.design = design
        self.selection = selection
        spec = design.spec
        factors = [factor.name for factor in spec.factors]
        common = systems_share_seeds(selection, factors, list(spec.paired))
        self.rule = SelectionRule.of(selection, common)
        self.groups = selection_groups(design)
        self.most = selection.max_replicates
        self.values = np.full(design.size, np.nan)
        self.stages: Selections | None = None
        self.window = np.zeros((len(design.cells), self.most), dtype=bool)
        self.metrics_checked = False
        self.unchecked: dict[str, Any] | None = None

    def read(
        self, ledger: Ledger, check: bool = True, table: TaskTable | None = None
    ) -> np.ndarray:
        """Per task its stored status and the metric's value, and the stages they give;
        ``check``: refuse a selection metric the stored results lack (``table``: the records
        read whole already)."""
        table = read_table(ledger, self.design) if table is None else table
        if check:
            self.metrics_checked = check_selection_metric(self.design.spec, first_finished(table))
        status = np.full(self.design.size, STATUS_MISSING, dtype=np.int8)
        self.replay(table, status)
        return status

    def replay(self, table: TaskTable, status: np.ndarray) -> None:
        """Set ``status`` from the stored records' task table, as a results file holds them,
        with the metric's values and the stages they give."""
        status[:] = table.status
        self.values = table.column(self.selection.metric).copy()
        self.decide(status)

    def enter(self, record: dict[str, Any], index: int) -> None:
        """Keep a finished task's value of the metric (and the first one's record, to check)."""
        if not self.metrics_checked and self.unchecked is None:
            self.unchecked = record
        self.values[index] = record["metrics"].get(self.selection.metric, np.nan)

    def forget(self, indices: list[int]) -> None:
        """Drop the metric's values of tasks whose results are set aside."""
        self.values[indices] = np.nan

    def decide(self, status: np.ndarray) -> None:
        """Where each group stands after the stored results, and each system's replicates."""
        if self.unchecked is not None:
            record, self.unchecked = self.unchecked, None
            self.metrics_checked = check_selection_metric(self.design.spec, [record])
        grid = status.reshape(-1, self.most)
        values = self.values.reshape(grid.shape)
        finished = grid != STATUS_MISSING  # a NaN or infinite value holds its group too
        self.stages = selection_stages(
            values, finished, grid == STATUS_FAILED, self.groups, self.rule
        )
        self.window = np.arange(self.most) < self.stages.replicates[:, None]

    def first(self, todo: list[int], done: int, model: Model) -> list[int]:
        """One task first, when nothing is done and the model declares no metrics: it shows
        whether the selection metric exists."""
        return todo[:1] if not done and not model.metrics else todo

    def scope(self) -> str:
        selection, groups = self.selection, len(self.groups)
        systems = len(self.groups[0])
        return (
            f"{groups} {'group' if groups == 1 else 'groups'} of {systems} systems, "
            f"{selection.procedure} selection in stages (at most {self.most} replicates each)"
        )


def check_selection_metric(spec: Spec, records: Iterable[dict[str, Any]]) -> bool:
    """Refuse a selection metric that the first finished task did not return (a misspelt
    name); whether there was a finished task to look at."""
    for record in records:
        if record["status"] != "ok":
            continue
        returned = record.get("metrics") or {}
        if spec.selection.metric not in returned:
            raise CampaignError(
                f"{spec.path or 'spec'}: select.metric: {spec.selection.metric!r} is not a "
                f"metric model {spec.model} returns; it returned: {', '.join(returned) or 'none'}"
            )
        return True
    return False


def selection_summary(state: np.ndarray, output: object) -> str:
    """One line on where a selection's systems stand (``state``: per cell, `STATES` codes)."""
    state = np.ravel(state)
    words = {
        "selected": "selected",
        "eliminated": "eliminated",
        "not_selected": "not selected (the procedure ended without eliminating them)",
        "running": "in contention",
        "waiting": "waiting on failed tasks or undefined (NaN) or infinite values (a rerun "
        "retries failed tasks)",
    }
    parts = [
        f"{count} {words[name]}"
        for name, code in STATES.items()
        if (count := int(np.count_nonzero(state == code)))
    ]
    return f"selection: systems {', '.join(parts)}; `campaign select {output}` shows each group"
