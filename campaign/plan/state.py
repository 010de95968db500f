"""A plan, and where each of its tasks stands: done, failed or missing, as the output folder
holds it.

The `Plan` does not change: what a spec asks for. The `RunState` is read from the ledger
once (`campaign.plan.plan.make_plan`) and follows a run: each stored batch is entered, and
with a precision target the next round is decided from the stored results
(`campaign.plan.replicates`). Only the tasks of the replicate window count.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from campaign.analysis.selection import Selections
from campaign.analysis.stats import Rounds
from campaign.design.tasks import Design
from campaign.models.contract import Model
from campaign.plan.replicates import Replicates, replicates_of
from campaign.plan.sources import Change, Sources
from campaign.results.ledger_table import TaskTable, read_table
from campaign.results.status import STATUS_FAILED, STATUS_MISSING, STATUS_OK
from campaign.spec.load import Spec
from campaign.store.folder import RESULTS_FILE
from campaign.store.ledger import Ledger
from campaign.store.scan import Heads


@dataclass(frozen=True)
class Plan:
    """What a spec asks for: the spec, its checked model, its design, and the digests of the
    model's code and inputs as of now (None when not taken)."""

    spec: Spec
    model: Model
    design: Design
    sources: Sources | None = None


class RunState:
    """A plan against what its output folder holds (task indices in task order).

    ``change``: how the sources differ from those of the stored results; ``changed``: done
    tasks computed from other sources; ``rerun_changed``: they are set aside, and those the
    window holds (``again``) count as to run.
    """

    def __init__(self, plan: Plan, ledger: Ledger, replicates: Replicates | None = None):
        self.plan = plan
        self.ledger = ledger
        self.replicates = replicates or replicates_of(plan.design)
        self.status = np.full(plan.design.size, STATUS_MISSING, dtype=np.int8)
        self.done = 0
        self.failed: list[int] = []
        self.missing: list[int] = []
        self.damaged: str | None = None  # one line on damaged ledger records skipped, if any
        self.change: Change | None = None
        self.changed: list[int] = []
        self.rerun_changed = False
        self.again: list[int] = []  # tasks of changed results in the window, to compute again
        self.beyond = 0  # kept changed results of cells the design does not have (`changed_beyond`)
        self.table: TaskTable | None = None  # the records read whole, once taken

    @property
    def spec(self) -> Spec:
        return self.plan.spec

    @property
    def model(self) -> Model:
        return self.plan.model

    @property
    def design(self) -> Design:
        return self.plan.design

    @property
    def sources(self) -> Sources | None:
        return self.plan.sources

    @property
    def rounds(self) -> Rounds | None:
        """With a precision target: where each cell stands."""
        return self.replicates.rounds

    @property
    def stages(self) -> Selections | None:
        """With a selection: where each group stands."""
        return self.replicates.stages

    @property
    def tasks(self) -> int:
        """Tasks of the design the replicate window holds (with a precision target, those its
        rounds gave the cells so far)."""
        return int(np.count_nonzero(self.replicates.window))

    @property
    def to_run(self) -> list[int]:
        """Missing tasks and failed ones (a rerun retries failures, e.g. after a model fix),
        and with --rerun-changed those computed from other sources than now."""
        return self.failed + self.missing + self.again

    @property
    def results_path(self) -> Path:
        return self.spec.output / RESULTS_FILE

    def read(self, check: bool = True, whole: bool = False) -> None:
        """Every task's stored status from the ledger (``check``: with a precision target,
        refuse precision metrics the stored results lack), and where the window stands;
        ``whole``: from the records read whole, kept as the ``table`` (one read of the
        ledger, where the heads and then the records took two)."""
        table = read_table(self.ledger, self.design) if whole else None
        self.status = self.replicates.read(self.ledger, check, table)
        self.damaged = self.ledger.damage_note()
        self.count()
        if table is not None:
            self.table = table

    def take_table(self, table: TaskTable) -> None:
        """Count the tasks as results.nc does, from ``table`` (the records read whole): a
        stored success whose metrics clash with other tasks' (a number where others give a
        sample), known only once every record is read, is failed; its error is the table's."""
        self.table = table
        refused = (self.status == STATUS_OK) & (table.status == STATUS_FAILED)
        if refused.any():
            self.status = np.where(refused, STATUS_FAILED, self.status).astype(np.int8)
            self.count()

    def replay(self, table: TaskTable) -> None:
        """Decide the rounds of a precision campaign from its stored records' task table, as
        a results file holds them (`campaign.results.ledger_table`)."""
        self.replicates.replay(table, self.status)
        self.count()

    def count(self) -> None:
        """Done, failed and missing tasks within the window, and (with ``rerun_changed``)
        those of the changed results, set aside to compute again (``again``)."""
        planned = np.flatnonzero(self.replicates.window.ravel())
        status = self.status[planned]
        self.failed = planned[status == STATUS_FAILED].tolist()
        missing = planned[status == STATUS_MISSING].tolist()
        aside = set(self.changed) if self.rerun_changed else set()
        self.missing = [i for i in missing if i not in aside]
        self.again = [i for i in missing if i in aside]
        self.done = int(np.count_nonzero(status == STATUS_OK))

    def set_changed_aside(self) -> None:
        """Count as a run does once it has set the changed results aside to compute them
        again: their tasks are missing, and with a precision target or a selection the rounds
        are decided without them (a run sets them aside before it decides), so that the
        counts are the run's (not 60 tasks of rounds that stale results asked for)."""
        self.rerun_changed = True
        self.status[self.changed] = STATUS_MISSING
        self.replicates.forget(self.changed)
        self.replicates.decide(self.status)
        self.count()

    def mark_changed(self, change: Change) -> None:
        """The done tasks of the window that ``change`` affects: computed from other sources
        than now."""
        planned = np.flatnonzero(self.replicates.window.ravel())
        done = planned[self.status[planned] == STATUS_OK]
        keys = self.design.keys()
        self.change = change
        self.changed = [int(i) for i in done if change.affects(keys[i])]

    def source_choice(self, on_change: str) -> dict[str, Any]:
        """What a run does with the changed results, for the provenance: kept, they are those
        of the design and those of cells the spec no longer has (``beyond``), which a spec
        bringing their levels back counts as done."""
        beyond = self.beyond if on_change != "rerun" else 0
        return {
            "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "choice": "rerun" if on_change == "rerun" else "accept",
            "change": self.change.describe(self.spec.model) if self.change else "",
            "results": len(self.changed) + beyond,
            **({"beyond": beyond} if beyond else {}),
            **({"every_cell": True} if self.change and self.change.cells is None else {}),
        }

    def changed_beyond(self) -> int:
        """Stored successes of cells the design does not have (a level taken out of the spec)
        computed from other sources than now: a run keeping the changed results keeps them
        too, and a spec that brings their level back counts them as done."""
        design, change = self.design, self.change
        if change is None:
            return 0

        def fold(chunks: Iterator[Heads]) -> int:
            found: set[str] = set()
            for chunk in chunks:
                outside = design.lookup.indices(chunk.keys) < 0
                for key, beyond, ok in zip(chunk.keys, outside, chunk.ok):
                    if beyond and ok and change.affects(key):
                        found.add(key)
            return len(found)

        return self.ledger.fold_heads(fold)

    def stored(
        self, records: Sequence[dict[str, Any]], indices: Mapping[str, int] | None = None
    ) -> None:
        """Enter records just stored in the ledger, as the ledger reads them back: a success
        beats a failure, a later record an earlier one (``indices``: task key -> task index,
        when the caller holds them; else looked up)."""
        status = self.status
        keys = [record["key"] for record in records]
        if indices is None:
            found = self.design.lookup.indices(keys).tolist()
        else:
            found = [indices.get(key, -1) for key in keys]
        for record, index in zip(records, found):
            if index < 0:
                continue
            if record["status"] != "ok":
                if status[index] != STATUS_OK:
                    status[index] = STATUS_FAILED
                continue
            status[index] = STATUS_OK
            self.replicates.enter(record, index)

    def next_round(self) -> None:
        """Where each cell stands after the batches entered, and the tasks of its window."""
        self.replicates.decide(self.status)
        self.count()
